"""The course objectives (docs/objectives.toml, 课程目标) agree with what they name: graded cells that exist,
exam questions with the papers' numbers, points and 学习要求, and every 学习要求 served (issue 34 §4)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from autograder.reports import attainment

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("build_guide", REPO / "docs" / "build_guide.py")
build_guide = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build_guide)


@pytest.fixture(scope="module")
def objectives():
    goals, threshold = attainment.load_objectives(REPO / "docs" / "objectives.toml")
    assert 0 < threshold <= 1
    return goals


@pytest.fixture(scope="module")
def plan():
    return build_guide.plan_json()


def test_every_graded_cell_named_exists(objectives):
    cells = {f"{a}:{r['grade_id']}" for a, rows in build_guide.graded_cells().items() for r in rows}
    named = [c for o in objectives for p in o.parts for c in p.cells]
    assert set(named) <= cells, set(named) - cells
    assert len(named) == len(set(named))  # a cell assesses one objective
    assert set(named) == cells  # and every graded cell assesses one


def test_exam_questions_match_the_papers(objectives, plan):
    _, papers = build_guide.bank(plan)
    where = {}
    for o in objectives:
        for p in o.parts:
            for question, top in p.exam.items():
                assert question not in where, question  # one objective per question
                where[question] = (o, top)
    for paper in papers:
        for number, q in enumerate(paper.questions, start=1):
            key = f"{paper.unit}:{number}"
            assert key in where, key  # every question of every paper counts towards an objective
            objective, top = where[key]
            assert top == q.points, (key, top, q.points)
            assert q.requirements[0] in objective.requirements, (key, q.id, objective.id)
    assert len(where) == sum(len(p.questions) for p in papers if p.form == "A")


def test_every_learning_requirement_is_served(objectives, plan):
    served = {r for o in objectives for r in o.requirements}
    assert served == {r["id"] for r in plan["requirements"]}
