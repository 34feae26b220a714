"""The teaching plan (course/_src/plan.toml, course/builder/teaching_plan.py): labels in the built headings,
the plan tables in course/README.md, and every plan the build refuses (issue 23)."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "course" / "build.py"
PLAN = ROOT / "course" / "_src" / "plan.toml"

spec = importlib.util.spec_from_file_location("course_build", BUILD)
build = importlib.util.module_from_spec(spec)
sys.modules["course_build"] = build
spec.loader.exec_module(build)
teaching_plan = build.teaching_plan


@pytest.fixture(scope="module")
def parsed():
    return build.parse_all()


@pytest.fixture(scope="module")
def plan(parsed):
    return build.load_plan(parsed)


def _refused(parsed, text: str) -> str:
    with pytest.raises(build.SourceError) as caught:
        build.load_plan(parsed, text)
    return str(caught.value)


def _plan_text() -> str:
    return PLAN.read_text(encoding="utf-8")


def _set(text: str, section_id: str, key: str, value: str) -> str:
    """plan.toml with ``key = value`` set in the [[notebook.section]] whose id is ``section_id``."""
    block = re.search(rf'\[\[notebook\.section\]\]\nid = "{re.escape(section_id)}"\n(?:(?!\n\n).)*', text, re.S)
    assert block, section_id
    body = block[0]
    if re.search(rf"^{key} = ", body, re.M):
        new = re.sub(rf"^{key} = .*$", f"{key} = {value}", body, flags=re.M)
    else:
        new = body + f"\n{key} = {value}"
    return text.replace(body, new)


def test_the_paths_fit_their_class_hours(plan):
    """2 课时: at most 90 min in two meetings; 4 课时: at most 180 min in four; each meeting <= 45 min."""
    limits = {"2h": (90, 2), "4h": (180, 4)}
    for path in plan.paths:
        meetings = plan.meetings[path["id"]]
        budget, count = limits[path["id"]]
        assert len(meetings) == count
        assert sum(m.minutes for m in meetings) <= budget
        assert all(0 < m.minutes <= 45 for m in meetings)
    assert [m.assignments for m in plan.meetings["2h"]] == [["laplace"], ["randomized_response"]]


def test_every_section_of_every_built_notebook_carries_its_label_in_both_languages(plan):
    marks = {"zh": {"【核心】": "core", "【4 课时】": "4h", "【选学】": "optional"},
             "en": {"[core]": "core", "[4-hour]": "4h", "[optional]": "optional"}}
    for stem, sections in plan.notebooks.items():
        for lang, folder in build.OUT_DIRS.items():
            nb = nbformat.read(folder / f"{stem}.ipynb", as_version=4)
            headings = [line for c in nb.cells if c.cell_type == "markdown" for line in c.source.splitlines()
                        if line.startswith("## ")]
            assert len(headings) == len(sections), (stem, lang, headings)
            for heading, section in zip(headings, sections):
                found = [label for mark, label in marks[lang].items() if heading.endswith(mark)]
                assert found == [section.label], (stem, lang, heading, section.label)


def test_core_path_is_a_lesson_on_its_own(plan):
    """Everything a core section needs is core too (the 2-hour path never points to a skipped section)."""
    ids = plan.by_id()
    for section in ids.values():
        if section.label == "core":
            assert all(ids[n].label == "core" for n in section.needs), section.id


def test_readme_holds_the_generated_plan_tables(plan):
    readme = (ROOT / "course" / "README.md").read_text(encoding="utf-8")
    for lang in ("zh", "en"):
        region = readme.split(f"<!-- plan:{lang} -->")[1].split(f"<!-- /plan:{lang} -->")[0]
        assert teaching_plan.plan_tables(plan, lang) in region
    zh = readme.split("<!-- plan:zh -->")[1].split("<!-- /plan:zh -->")[0]
    total = sum(m.minutes for m in plan.meetings["2h"])
    assert "| 第 1 次课 | [6.1-basics](6.1-basics.ipynb) |" in zh and f"| 合计 | | | {total} | |" in zh
    assert "`laplace`" in zh and "`randomized_response`" in zh


def test_minutes_follow_the_stated_method(plan):
    """One section recomputed by hand from its counts and the [method] numbers."""
    m = plan.method
    section = plan.by_id()["definition"]
    seconds = (60 * section.chars / m["chars_per_minute"] + m["seconds_per_inline_formula"] * section.inline_math
               + m["seconds_per_display_formula"] * section.display_math + m["seconds_per_code_cell"] * section.code_cells
               + m["seconds_per_figure"] * section.figures + m["seconds_per_live_figure"] * section.live_figures)
    assert section.live_figures == 1 and section.chars > 100
    assert section.minutes == -(-(seconds + 60 * m["question_minutes"]) // 60)


def test_count_text_leaves_out_answers_math_and_links():
    text = "差分隐私 ε-DP[数据](data/README.md) $x^2$ $$y$$ <details><summary>答案</summary>很长的答案</details>"
    chars, inline, display = teaching_plan.count_text(text)
    assert (chars, inline, display) == (4 + 1 + 2, 1, 1)  # 差分隐私, DP, 数据; the answer is not counted


def test_plan_json_on_the_command_line():
    result = subprocess.run([sys.executable, str(BUILD), "--plan-json"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert {p["id"]: p["total_minutes"] <= p["minutes"] for p in data["paths"]} == {"2h": True, "4h": True}


# --- the refusals ------------------------------------------------------------------------------

def test_refuses_a_2_hour_path_over_90_minutes(parsed):
    text = _set(_plan_text(), "histogram", "label", '"core"')
    text = text.replace('"synth-one-column"]\nassignments', '"synth-one-column", "histogram"]\nassignments', 1)
    message = _refused(parsed, text)
    assert re.search(r"path 2h \(2 课时\) takes \d+ min, more than its 90 min", message), message
    assert "path 2h (2 课时), meeting 2 takes" in message


def test_refuses_a_4_hour_path_over_180_minutes(parsed):
    # the slowest honest presenter: every section's question takes 3 minutes
    text = _plan_text().replace("question_minutes = 2", "question_minutes = 3")
    message = _refused(parsed, text)
    assert re.search(r"path 4h \(4 课时\) takes \d+ min, more than its 180 min", message), message


def test_refuses_a_plan_naming_a_section_that_does_not_exist(parsed):
    text = _plan_text().replace("heading = '6.2.1 Global sensitivity'", "heading = '6.2.1 Global sensitivities'")
    message = _refused(parsed, text)
    assert "no section with the English heading '6.2.1 Global sensitivities'" in message
    assert "has no label" in message  # and the real section is then unlabelled
    message = _refused(parsed, _plan_text().replace('"rr-when", "rr-mechanism", "summary-6-4"]',
                                                    '"rr-when", "rr-mechanism", "rr-summary"]'))
    assert "no section with id 'rr-summary'" in message
    message = _refused(parsed, _plan_text().replace('stem = "lab-budget"', 'stem = "lab-budgets"'))
    assert "notebook 'lab-budgets' does not exist" in message


def test_refuses_a_section_without_a_label(parsed):
    text = _plan_text()
    block = re.search(r'\[\[notebook\.section\]\]\nid = "noisy-max"\n(?:(?!\n\n).)*\n\n', text, re.S)[0]
    message = _refused(parsed, text.replace(block, ""))
    assert ("course/_src/6.3-exponential.md: section '## 6.3.4 Another sampler: add noise, report the max "
            "(course addition)'") in message and "has no label" in message
    message = _refused(parsed, _set(text, "noisy-max", "label", '"extra"'))
    assert "has label 'extra'; expected one of core, 4h, optional" in message


def test_refuses_a_core_section_that_needs_an_optional_one(parsed):
    text = _set(_plan_text(), "rr-mechanism", "needs", '["rr-when", "definition", "rr-variance"]')
    message = _refused(parsed, text)
    assert "section 'rr-mechanism'" in message and "needs 'rr-variance'" in message
    assert "path 2h: section 'rr-mechanism' (6.4.2 The randomized response mechanism) needs 'rr-variance'" in message


def test_refuses_a_section_taught_before_what_it_needs(parsed):
    """4 课时: release-models moved from meeting 1 to meeting 4, while meeting 1's properties needs it."""
    text = _plan_text().replace('"properties", "release-models"]', '"properties"]')
    text = text.replace('sections = ["rappor", "rappor-population", "esa",',
                        'sections = ["rappor", "rappor-population", "esa", "release-models",')
    text = _set(_set(text, "properties", "needs", '["definition", "release-models"]'), "properties", "label", '"4h"')
    message = _refused(parsed, text)
    assert "path 4h: section 'properties' (meeting 1) needs 'release-models', which comes later (meeting 4)" in message


def test_refuses_a_taught_section_with_nothing_under_its_heading(parsed):
    """Session 15: 6.5.2's heading was followed directly by the next section's, so the section took
    0 min and vanished from the slides' agenda and the guide's tables while a path still taught it."""
    source = (ROOT / "course" / "_src" / "6.5a-rappor-shuffle.md").read_text(encoding="utf-8")
    for heading, empty_after in (("## 6.5.2 Google ESA 模型（洗牌模型）\n", "## 洗牌器\n"),
                                 ("## 6.5.2 Google's ESA model (the shuffle model)\n", "## The shuffler\n")):
        assert source.count(heading) == 1
        source = source.replace(heading, heading + "\n" + empty_after)
    cells = dict(parsed, **{"6.5a-rappor-shuffle": build.parse_source(source, "6.5a-rappor-shuffle.md")})
    text = _plan_text().replace('[[notebook.section]]\nid = "local-price"',
                                '[[notebook.section]]\nid = "shuffler"\nheading = \'The shuffler\'\nlabel = "core"\n\n'
                                '[[notebook.section]]\nid = "local-price"', 1)
    text = text.replace('"rappor", "esa",\n', '"rappor", "esa", "shuffler",\n', 1)
    text = text.replace('"rappor-population", "esa",\n', '"rappor-population", "esa", "shuffler",\n', 1)
    message = _refused(cells, text)
    assert ("path 2h, meeting 2: section 'esa' ('## 6.5.2 Google ESA 模型（洗牌模型）') has nothing under its "
            "heading") in message
    assert "path 4h, meeting 4: section 'esa'" in message and "'shuffler'" not in message


def test_refuses_an_optional_section_in_a_path(parsed):
    text = _plan_text().replace('"synth-one-column"]\nassignments', '"synth-one-column", "amplification"]\nassignments', 1)
    message = _refused(parsed, text)
    assert "section 'amplification' (Privacy amplification) is labelled optional; path 2h teaches only core" in message


def test_refuses_sources_whose_languages_have_different_sections(parsed):
    cells = build.parse_source("# %% [markdown] zh\n## 一\n## 二\n# %% [markdown] en\n## One\n", "demo.md")
    with pytest.raises(teaching_plan.PlanError, match="2 Chinese '## ' headings but 1 English"):
        teaching_plan.sections("demo", cells)


def test_readme_without_plan_markers_is_refused(plan):
    with pytest.raises(build.SourceError, match="needs one line <!-- plan:zh -->"):
        build.readme_with_plan("# no markers\n", plan)


# --- 自测 in the meeting's budget, the chapter's schedule, the 学习要求 (issue 34 §2) ------------------

def test_every_meeting_fits_45_minutes_with_its_selfcheck(plan):
    for path in plan.paths:
        for m in plan.meetings[path["id"]]:
            assert m.selfcheck == plan.method["selfcheck_minutes"] >= 3
            assert m.minutes == sum(s.minutes for s in m.sections) + sum(m.intros.values()) + m.selfcheck <= 45


def test_refuses_a_meeting_that_does_not_fit_with_its_selfcheck(parsed):
    # 4h meeting 3 presents 42 min: with the guide's upper 5 min of 自测 it is 47
    message = _refused(parsed, _plan_text().replace("selfcheck_minutes = 3", "selfcheck_minutes = 5"))
    assert re.search(r"path 4h \(4 课时\), meeting 3 takes 47 min with its 5 min of 自测, more than a class "
                     r"meeting's 45 min", message), message


def test_position_paragraphs_are_generated_from_the_plan(plan):
    """Every notebook's "在课程中的位置" is the plan's (no hand-written one left to contradict it)."""
    for source in sorted((ROOT / "course" / "_src").glob("*.md")):
        text = source.read_text(encoding="utf-8")
        if source.name == "README.md":
            continue
        assert "**在课程中的位置**" not in text and "**Where this sits**" not in text, source.name
        assert text.count(teaching_plan.POSITION) == 2, source.name
    for stem in plan.notebooks:
        for lang, folder in build.OUT_DIRS.items():
            nb = nbformat.read(folder / f"{stem}.ipynb", as_version=4)
            assert teaching_plan.position(plan, stem, lang) in nb.cells[0].source, (stem, lang)
    rr = teaching_plan.position(plan, "6.4-randomized-response", "zh")
    assert "2 课时方案在第 2 次课讲 6.4.1、6.4.2" in rr and "教材的 2 课时进度没有 6.4" in rr
    assert "不含本节" not in rr
    laplace = teaching_plan.position(plan, "6.2-laplace", "zh")
    assert "6.2.2、6.2.3、6.2.4 只在 4 课时方案的课上讲，2 课时方案请课后自学" in laplace


def test_refuses_a_departure_from_the_chapters_schedule_without_a_reason(parsed):
    text = _plan_text()
    change = re.search(r'\[\[path\.change\]\]\nchapter = "6\.4"\n(?:(?!\n\n).)*\n', text, re.S)[0]
    message = _refused(parsed, text.replace(change, ""))
    assert "path 2h teaches 6.4 in meetings [2], the chapter's schedule in none" in message
    # and a reason where the plan follows the chapter is refused as stale
    stale = text.replace(change, change + '\n[[path.change]]\nchapter = "6.1"\nzh = "x"\nen = "x"\n')
    assert "[[path.change]] for chapter '6.1', but the path follows the chapter's schedule" in _refused(parsed, stale)


def test_refuses_a_requirement_a_path_leaves_out_without_saying_where(parsed):
    text = _plan_text()
    note = re.search(r'\[requirement\.elsewhere\.2h\]\nzh = "6\.2\.3（实验 6-1.*?\nen = .*?\n', text, re.S)[0]
    message = _refused(parsed, text.replace(note, ""))
    assert "path 2h leaves out ['experiment-6-1', 'histogram'] of requirement R5" in message


def test_every_requirement_is_met_in_each_path(plan):
    """Per 学习要求 and path: a meeting teaches all its sections, or the plan says where instead."""
    coverage = teaching_plan.requirement_coverage(plan)
    assert [r["id"] for r in coverage] == [f"R{i}" for i in range(1, 9)]
    for row in coverage:
        for pid, where in row["paths"].items():
            if pid not in row["units"]:
                continue  # R6: the chapter's own 2-hour schedule leaves 6.3 out too
            taught = {s for m in where["meetings"] for s in m["sections"]}
            assert taught == set(row["sections"]) or where["elsewhere"]["zh"], (row["id"], pid)
    assert [r["id"] for r in coverage if r["units"] != ["2h", "4h"]] == ["R6"]
    by_id = {r["id"]: r for r in coverage}
    assert by_id["R5"]["paths"]["2h"]["meetings"] == [] and "Q5、Q21" in by_id["R5"]["paths"]["2h"]["elsewhere"]["zh"]
    assert by_id["R3"]["paths"]["2h"]["elsewhere"] and by_id["R3"]["paths"]["4h"]["elsewhere"] is None
