"""slides/build.py without a browser: the slide sources against the plan, and what the build refuses."""

from __future__ import annotations

import importlib.util
import re
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


def test_a_caption_with_brackets_is_a_figure():
    """Issue 34: "灰色区域是 $[-b, b]$" in a caption left the slide as raw ![…](figure 1) text."""
    text = "# s\n## 噪声\n![密度（$\\varepsilon = 1$）；灰色区域是 $[-b, b]$](figure 1)\n???\n讲稿\n"
    (slide,) = slides.parse_slides(text, "demo.md")["s"]
    assert slide.figure == (1, "密度（$\\varepsilon = 1$）；灰色区域是 $[-b, b]$") and not slide.body


@pytest.mark.parametrize("fragment", [
    "<p>![拉普拉斯噪声的密度；灰色区域是 [−b,b]](figure 1)</p>",
    "<p>见 [笔记本](6.2-laplace.ipynb)</p>",
    "<ul><li>**粗体**没有渲染</li></ul>",
    "<p>## 小节标题</p>",
])
def test_raw_markdown_in_a_rendered_slide_is_found(fragment):
    assert slides.raw_markdown(fragment)


def test_math_code_and_rendered_markdown_are_not_raw():
    rendered = slides._markdown(["- **粗体** 与 $[a](b)$、`f(**kw)`", "- 第 #1 名"])
    assert "<strong>" in rendered and slides.raw_markdown(rendered) == []


@pytest.mark.parametrize("line, shown", [
    ("1. 单列合成：表 6-5 → 表 6-6", "1. 单列合成：表 6-5 → 表 6-6"),
    ("- 减号开头", "- 减号开头"),
    ("# 井号开头", "# 井号开头"),
    ("隐私均值（$\\varepsilon$）", None),
])
def test_one_line_of_text_stays_inline(line, shown):
    """A numbered section title (6.5b's "1. 单列合成…") as a crumb or a 课后 item stays one line of text,
    not an ordered list above the slide title."""
    rendered = slides._inline(line)
    assert "<ol" not in rendered and "<ul" not in rendered and "<h1" not in rendered and "<p" not in rendered
    if shown is not None:
        assert rendered == shown


@pytest.mark.parametrize("text, message", [
    ("# s\n## 空\n???\n讲稿\n", "is empty"),
    ("# s\n## 无讲稿\n- 一行\n", "has no speaker notes"),
])
def test_an_empty_slide_and_a_slide_without_notes_are_refused(text, message):
    with pytest.raises(slides.SlideError, match=message):
        slides.parse_slides(text, "demo.md")


def test_a_slide_that_would_show_raw_markdown_fails_the_build(monkeypatch):
    """The build refuses (rather than writes) a deck with Markdown left as text on a slide."""
    plan, sources = slides.load_sources()
    path = plan.paths[0]
    meeting = plan.meetings[path["id"]][0]
    section = meeting.sections[0]
    sources[section.stem][section.id][0].body = ["- 见 ![图](figure x)"]
    sources[section.stem][section.id][0].figure = None
    with pytest.raises(slides.SlideError, match="raw Markdown"):
        slides.deck_html(plan, path, meeting, sources, {})


def _every_page(sources, plan, slider: bool = False):
    """(deck, page) for every slide of every deck, with stand-in figure names (no figure is drawn)."""
    suffix = ".slider.png" if slider else ".png"
    figures = {stem: {sid: [f"{stem}--{sid}--{n}{suffix}" for n in range(1, 1 + max(
        [s.figure[0] for s in shown if s.figure] or [0]))] for sid, shown in sections.items()}
        for stem, sections in sources.items()}
    for path in plan.paths:
        for meeting in plan.meetings[path["id"]]:
            for page in slides.deck_pages(plan, path, meeting, sources, figures):
                yield f"{path['id']}-{meeting.number}", page


def test_no_slide_title_tells_the_room_to_drag():
    """On a slide a slider figure is a still picture: no title says 拖动 / drag ("拖动 ε：两个分布有多像？"
    was one), and every slide of a slider figure asks for the live demo in its speaker notes."""
    plan, sources = slides.load_sources()
    titles = [(deck, page.title) for deck, page in _every_page(sources, plan)]
    assert len(titles) > 50
    dragging = [(deck, title) for deck, title in titles if re.search(r"拖动|拖到|drag", title, re.I)]
    assert not dragging, dragging
    for deck, page in _every_page(sources, plan, slider=True):
        if page.figure:
            assert re.search("拖动|拖到", "".join(page.notes)), (deck, page.title, page.notes)


def test_a_drag_title_is_refused_and_a_slider_figure_gets_the_live_note():
    with pytest.raises(slides.SlideError, match="tells the room to drag"):
        slides.parse_slides("# s\n## 拖动 $\\varepsilon$ 与 $k$\n![图](figure 1)\n???\n讲稿\n", "demo.md")
    plan, sources = slides.load_sources()
    path = plan.paths[0]
    meeting = next(m for m in plan.meetings[path["id"]] if any(
        sl.figure for s in m.sections for sl in sources[s.stem][s.id]))
    section = next(s for s in meeting.sections if any(sl.figure for sl in sources[s.stem][s.id]))
    slide = next(sl for sl in sources[section.stem][section.id] if sl.figure)
    slide.notes = ["只讲结论，不提演示。"]
    for suffix, wanted in ((".slider.png", True), (".png", False)):
        figures: dict = {}
        for s in meeting.sections:
            figures.setdefault(s.stem, {})[s.id] = ["y.png"] * 9
        figures[section.stem][section.id] = [f"x{suffix}"] * slide.figure[0]
        pages = slides.deck_pages(plan, path, meeting, sources, figures)
        page = next(p for p in pages if p.title == slide.title)
        assert (slides.LIVE_NOTE in page.notes) is wanted and (slides.LIVE_NOTE in page.html) is wanted


def _table_of(sources, stem: str, title: str) -> list[list[str]]:
    (slide,) = [s for sid in sources[stem].values() for s in sid if s.title.startswith(title)]
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in slide.body if line.lstrip().startswith("|")]
    return [row for row in rows if not all(re.fullmatch(r":?-{3,}:?", c) for c in row)]


def test_textbook_tables_6_1_and_6_2_are_tables_on_the_slides():
    """表 6-1 and 表 6-2 as the textbook prints them (course/data/ holds them copied exactly, README
    there): every row and column, a <table> on the slide, not a bullet about the table."""
    import csv

    plan, sources = slides.load_sources()
    with open(ROOT / "course" / "data" / "table6_1_students.csv", encoding="utf-8") as f:
        students = [[r["name"], r["sex"], r["result"]] for r in csv.DictReader(f)]
    with open(ROOT / "course" / "data" / "table6_2_patients.csv", encoding="utf-8") as f:
        patients = [[r["name"], {"yes": "是", "no": "否"}[r["cancer"]]] for r in csv.DictReader(f)]
    assert _table_of(sources, "6.1-basics", "表 6-1") == [["姓名", "性别", "成绩"]] + students
    assert _table_of(sources, "6.1-basics", "表 6-2") == [["姓名", "是否患癌症"]] + patients
    shown = {}
    for deck, page in _every_page(sources, plan):
        if page.title.startswith(("表 6-1", "表 6-2")):
            shown.setdefault(page.title[:5], []).append(deck)
            assert page.html.count("<table>") == 1 and page.html.count("<tr>") in (6, 8), page.html
            assert "<li>表 6-" not in page.html
    assert set(shown) == {"表 6-1", "表 6-2"} and all(len(decks) == 2 for decks in shown.values()), shown


def test_textbook_table_6_3_is_two_tables_of_the_exact_values():
    """表 6-3 in two slide tables (the textbook's nine columns do not fit one), each cell the exact
    value the notebook's helpers compute (rounded to two decimals), the header's 10000 corrected to
    100000 and the 27.73 erratum in place of the printed 25.59."""
    from helpers import queries

    plan, sources = slides.load_sources()
    left = _table_of(sources, "6.2-laplace", "表 6-3（左）")
    right = _table_of(sources, "6.2-laplace", "表 6-3（右）")
    assert left[0][1:] == ["90%", "95%", "99%", "99.9%"] and right[0][1:] == ["$k = 100$", "1000", "10000", "100000"]
    epsilons = [1, 0.1, 0.01]
    assert [float(row[0]) for row in left[1:]] == epsilons == [float(row[0]) for row in right[1:]]
    for row, eps in zip(left[1:], epsilons):
        assert row[1:] == [f"{queries.abs_noise_quantile(q, eps):.2f}" for q in (0.9, 0.95, 0.99, 0.999)], row
    for row, eps in zip(right[1:], epsilons):
        assert row[1:] == [f"{100 * queries.danger_probability(eps, k):.2f}" for k in (100, 1000, 10_000, 100_000)], row
    assert right[2][1] == "27.73"
    for deck, page in _every_page(sources, plan):
        if page.title.startswith("表 6-3"):
            assert page.html.count("<table>") == 1 and page.html.count("<tr>") == 4, page.html


@pytest.mark.parametrize("body, message", [
    ("- 一\n- 二\n- 三\n- 四\n| a | b |\n|---|---|\n| 1 | 2 |\n", "at most 3 short lines and 8 rows"),
    ("| a |\n|---|\n" + "| 1 |\n" * 8, "a table of 9 rows"),
    ("| a |\n|---|\n| 1 |\n- 表下面的一行\n", "a table comes last"),
])
def test_a_table_slide_that_would_not_fit_is_refused(body, message):
    with pytest.raises(slides.SlideError, match=message):
        slides.parse_slides(f"# s\n## 表\n{body}???\n讲稿\n", "demo.md")


def test_the_after_class_slide_lists_the_examined_reading_the_path_skips():
    """A path that leaves an examined section out of class (plan.toml ``reading``) lists it on the
    课后 slide as 必读, apart from 【选学】 (which the exam leaves out): the 2-hour path's meeting 1
    sets 6.1.4 and 6.2.2-6.2.4 (both 2-hour papers test them); and the assignment line names both
    ways of getting an assignment (the laptop's 作业/ folder, the class server's Assignment List)."""
    plan, sources = slides.load_sources()
    decks = {}
    for deck, page in _every_page(sources, plan):
        if page.title == "课后":
            decks[deck] = page
    first = decks["2h-1"]
    reading = first.html.split("必读", 1)[1].split("</ul>", 1)[0]
    # 6.2.2 too: the laplace assignment set in that meeting is 6.2.2, and the guide calls it 必读
    assert all(n in reading for n in ("6.1.4", "6.2.2", "6.2.3", "6.2.4")), reading
    # 选学 is further reading: not the notebooks' 小结, 练习 or 自测 (4h-3 listed its in-class 自测)
    for deck, page in decks.items():
        chosen = page.html.split("选学", 1)[1] if "选学" in page.html else ""
        assert not any(word in chosen for word in ("小结", "练习", "自测")), (deck, chosen[:300])
    assert "必读部分课上不讲，但在考试范围内" in "".join(first.notes)
    assert "必读" not in decks["2h-2"].html and not any("必读" in p.html for d, p in decks.items() if d.startswith("4h"))
    assert "作业/" in first.html and "Assignment List" in first.html
