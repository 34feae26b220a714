"""The exam papers (docs/exam/*.md, `make exam`): built from the tagged question bank (docs/questions.toml),
up to date, 100 points, every 学习要求 of the unit covered, papers A and B parallel with no shared question,
and every short-answer and calculation question with its 评分细则 (issue 34 §3)."""

from __future__ import annotations

import collections
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from autograder import dist

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("build_guide", REPO / "docs" / "build_guide.py")
build_guide = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build_guide)
question_bank = build_guide.question_bank


@pytest.fixture(scope="module")
def plan():
    return build_guide.plan_json()


@pytest.fixture(scope="module")
def papers(plan):
    _, built = build_guide.bank(plan)
    return {(p.unit, p.form): p for p in built}


def _unit_requirements(plan, unit):
    return {r["id"] for r in plan["requirements"] if unit in r["units"]}


def test_papers_on_disk_are_the_built_ones():
    done = subprocess.run([sys.executable, str(REPO / "docs" / "build_guide.py"), "--check"], capture_output=True,
                          text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
    names = sorted(p.name for p in (REPO / "docs" / "exam").glob("*.md"))
    assert names == sorted(f"{u}-{f}{k}.md" for u in ("2h", "4h") for f in "AB" for k in ("", "-key"))


def test_each_paper_has_100_points_and_covers_its_units_requirements(papers, plan):
    assert set(papers) == {(u, f) for u in ("2h", "4h") for f in "AB"}
    for (unit, form), paper in papers.items():
        assert paper.points == 100, (unit, form)
        covered = {r for q in paper.questions for r in q.requirements}
        assert _unit_requirements(plan, unit) <= covered, (unit, form, _unit_requirements(plan, unit) - covered)
        paths = {q.path for q in paper.questions}
        assert paths <= ({"2"} if unit == "2h" else {"2", "4"}), (unit, form, paths)  # never 选学
    assert "R6" not in _unit_requirements(plan, "2h") and "R6" in _unit_requirements(plan, "4h")


def test_a_and_b_are_parallel_and_share_no_question(papers):
    for unit in ("2h", "4h"):
        a, b = papers[(unit, "A")], papers[(unit, "B")]
        assert not {q.id for q in a.questions} & {q.id for q in b.questions}
        assert len(a.questions) == len(b.questions)
        for qa, qb in zip(a.questions, b.questions):  # slot by slot
            assert (qa.kind, qa.requirements[0], qa.difficulty, qa.points) == \
                   (qb.kind, qb.requirements[0], qb.difficulty, qb.points), (qa.id, qb.id)
        mix = lambda p: collections.Counter((q.kind, q.difficulty) for q in p.questions)  # noqa: E731
        assert mix(a) == mix(b)


def test_the_papers_students_get_hold_no_answers_and_the_keys_hold_every_rubric(papers, plan):
    requirements = {r["id"]: r for r in plan["requirements"]}
    for (unit, form), paper in papers.items():
        student = (REPO / "docs" / "exam" / f"{unit}-{form}.md").read_text(encoding="utf-8")
        key = (REPO / "docs" / "exam" / f"{unit}-{form}-key.md").read_text(encoding="utf-8")
        assert student == question_bank.render_paper(paper, requirements, key=False)
        assert "> 答案" not in student and "参考答案" not in student and "评分细则" not in student and not re.search(r"\bQ\d+\b", student)
        for q in paper.questions:
            assert q.text.split("\n")[0] in student and q.answer in key
            for points, text in q.rubric:  # partial credit named, line by line
                assert f"> - {points} 分：{text}" in key
            if q.kind == "choice":
                assert f"选 {q.key} 得 {q.points} 分" in key
        numbers = [int(n) for n in re.findall(r"^\*\*(\d+)\.\*\*", student, re.M)]
        assert numbers == list(range(1, len(paper.questions) + 1))


def test_a_printed_paper_has_name_lines_a_score_table_and_room_to_answer(papers):
    """What a Chinese teacher prints (browser walkthrough, s14): 姓名/学号/班级, a 得分 row per part,
    a blank block under every 简答/计算 question and none under a 选择题; the keys have none of it;
    the lecturer pack's page centres the title and keeps an answer block on one printed page."""
    for (unit, form), paper in papers.items():
        student = (REPO / "docs" / "exam" / f"{unit}-{form}.md").read_text(encoding="utf-8")
        key = (REPO / "docs" / "exam" / f"{unit}-{form}-key.md").read_text(encoding="utf-8")
        assert re.search(r"^姓名：＿+　+学号：＿+　+班级：＿+$", student, re.M)
        parts = re.findall(r"^## ([一二三])、", student, re.M)
        assert re.search(r"^\| 题型 \| " + r" \| ".join(parts) + r" \| 总分 \|$", student, re.M), parts
        assert "| 得分 |" in student and "姓名：＿" not in key and 'class="answer"' not in key
        blocks = student.split("\n**")[1:]
        for q, block in zip(paper.questions, blocks):
            assert ('<div class="answer"' in block) == (q.kind != "choice"), (unit, form, q.id)
    assert "h1{text-align:center}" in dist.PAGE.replace("{{", "{").replace("}}", "}")
    page = dist.PAGE.replace("{{", "{").replace("}}", "}")
    assert ".answer,.q{break-inside:avoid}" in page and "@page{size:A4" in page


def test_build_refuses_a_slot_the_bank_cannot_fill_twice():
    questions, blueprints = question_bank.load()
    blueprints = [dict(blueprints[0], slots=blueprints[0]["slots"] + [["short", "R7", "难"]])]
    with pytest.raises(question_bank.BankError, match=r"slot \(short, R7, 难\) needs two unused questions"):
        question_bank.build_papers(questions, blueprints)


def test_bank_refuses_a_rubric_that_does_not_add_up():
    text = question_bank.BANK.read_text(encoding="utf-8")
    broken = text.replace('[4, "b = Δf/ε = 2（写成 ε/Δf 的不给分）"]', '[3, "b = Δf/ε = 2（写成 ε/Δf 的不给分）"]')
    assert broken != text
    with pytest.raises(question_bank.BankError, match=r"'Q18'.*add up to 10; got \[3, 3, 3\]"):
        question_bank.load(broken)


def test_bank_refuses_a_requirement_the_plan_does_not_have(plan):
    text = question_bank.BANK.read_text(encoding="utf-8")
    broken = text.replace('id = "Q3"\nkind = "choice"\npath = "2"\nrequirements = ["R4"]',
                          'id = "Q3"\nkind = "choice"\npath = "2"\nrequirements = ["R9"]')
    assert broken != text
    with pytest.raises(question_bank.BankError, match=r"'Q3'.*requirements \['R9'\]"):
        question_bank.load(broken, {r["id"]: r for r in plan["requirements"]})


def test_papers_follow_the_guides_chinese_typography_and_terms():
    for path in sorted((REPO / "docs" / "exam").glob("*.md")):
        text = re.sub(r"<!--.*?-->", " ", re.sub(r"`[^`\n]*`", " ", path.read_text(encoding="utf-8")), flags=re.S)
        assert not re.findall(r".{0,12}[\u4e00-\u9fff][,;:?!()].{0,12}", text), path.name
        assert not re.findall(r".{0,12}[,;:?!(][\u4e00-\u9fff].{0,12}", text), path.name
        for wrong in ("敏感度", "顺序组合", "花掉", "花费", "本地差分隐私"):
            assert wrong not in text, (path.name, wrong)
