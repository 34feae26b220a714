"""slides/build.py without a browser: the slide sources against the plan, and what the build refuses."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("slides_build", ROOT / "slides" / "build.py")
slides = importlib.util.module_from_spec(spec)
sys.modules["slides_build"] = slides
spec.loader.exec_module(slides)


def test_every_taught_section_has_slides():
    plan, sources = slides.load_sources()
    taught = {(s.stem, s.id) for ms in plan.meetings.values() for m in ms for s in m.sections}
    assert taught and all(sources[stem][sid] for stem, sid in taught)


def test_slide_format():
    text = "# attack\n## 标题 $x$\n- 一行\n???\n讲稿\n## 图\n![说明](figure 2)\n???\n讲稿\n"
    parsed = slides.parse_slides(text, "demo.md")
    first, second = parsed["attack"]
    assert first.title == "标题 $x$" and first.body == ["- 一行"] and first.notes == ["讲稿"]
    assert second.figure == (2, "说明") and second.body == []
    html = slides._markdown(["- $\\frac{1}{2}$ 与 $$a_b$$"])
    assert '<span class="tex" data-display="0">\\frac{1}{2}</span>' in html and 'data-display="1">a_b<' in html


@pytest.mark.parametrize("text, message", [
    ("# attack\n## 图\n- 一行\n![说明](figure 1)\n", "a few short lines or one figure, not both"),
    ("# attack\n## 长\n" + "- 行\n" * 8, "at most 7 short lines"),
    ("## 无节\n", "a slide before the first '# <section id>' line"),
    ("# attack\n## a\n# attack\n## b\n", "section 'attack' appears twice"),
])
def test_bad_slide_sources_are_refused(text, message):
    with pytest.raises(slides.SlideError, match=message):
        slides.parse_slides(text, "demo.md")


def test_refuses_a_taught_section_without_slides_and_an_unknown_section(tmp_path, monkeypatch):
    copy = tmp_path / "slides"
    shutil.copytree(slides.SLIDE_SRC, copy)
    source = copy / "6.4-randomized-response.md"
    text = source.read_text(encoding="utf-8")
    source.write_text(text.replace("# rr-when\n", "# rr-when-typo\n").replace("## 用硬币随机化", "## 硬币:随机化"),
                      encoding="utf-8")
    monkeypatch.setattr(slides, "SLIDE_SRC", copy)
    with pytest.raises(slides.SlideError) as caught:
        slides.load_sources()
    assert "no section 'rr-when-typo' in 6.4-randomized-response" in str(caught.value)
    assert "half-width ':' next to Chinese" in str(caught.value)
    assert "section 'rr-when' (6.4.1 适用场景) is taught in path 2h, meeting 2, but has no slide" in str(caught.value)


def test_slide_sources_use_the_glossary_terms():
    """The slide text and speaker notes say 消耗, 串行组合, 记账器… as the notebooks do (course/_src/terms.toml):
    a variant such as 花费 / 花一次 / 会计 outside a quotation fails, as it does in a notebook."""
    build = slides.course_build
    problems = []
    for path in sorted((ROOT / "course" / "_src" / "slides").glob("*.md")):
        problems += build.term_problems(path.read_text(encoding="utf-8"), "markdown", str(path.relative_to(ROOT)))
    assert not problems, "\n".join(problems)
    assert build.term_problems("每个查询都花费预算，矩会计", "markdown", "demo")  # the check fires
