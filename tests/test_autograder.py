"""End-to-end: grade 25 fixture submissions (honest, broken, tampering) of ``laplace``.

The batch runs as two shards (``--shard 1/2`` and ``2/2``, two workers each)
that are then merged, so one grading pass checks the pipeline, sharding and
merging. Every row of the merged ``grades.csv`` is checked against the
expectation written next to its fixture (tests/fixtures/autograder/autograder_cases.py).

All checks of the batch run inside ONE test function: with ``pytest -n 2``
(pytest-xdist, ``--dist load``) a module-scoped fixture would be built once
per xdist worker, doubling the most expensive part of the suite. Each check
still reports on its own: failures are collected and shown together.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder import feedback, report
from autograder.grade import grade, student_seed
from autograder.worker import prepare_template

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "autograder"))
import autograder_cases as cases  # noqa: E402

pytestmark = pytest.mark.nbgrader
REPO = Path(__file__).resolve().parents[1]
SEED = 20261122
TIMEOUT = 15  # per cell (the notebook is killed at TIMEOUT + 20 s); the correct notebook needs ~3 s


def _grade_batch(tmp):
    template = prepare_template(REPO, cases.ASSIGNMENT, tmp / "template", timeout=TIMEOUT)
    submissions = tmp / "submitted"
    expect = cases.build_cases(template / "release" / cases.ASSIGNMENT,
                               template / "source" / cases.ASSIGNMENT, submissions)
    shards = []
    for k in (1, 2):
        out = tmp / f"shard-{k}"
        grade(assignment=cases.ASSIGNMENT, submissions=submissions, out=out, jobs=2,
              timeout=TIMEOUT, seed=SEED, shard=f"{k}/2", quiet=True)
        shards.append(out)
    merged = tmp / "merged"
    report.merge(shards, merged)
    rows = {row["student"]: row for row in report.read_grades(merged / "grades.csv")}
    data = json.loads((merged / "report.json").read_text(encoding="utf-8"))
    results = {r["student"]: r for r in data["submissions"]}
    return {"tmp": tmp, "expect": expect, "rows": rows, "results": results, "report": data,
            "merged": merged, "shards": shards, "submissions": submissions, "template": template}


def test_fixture_batch(tmp_path):
    """Grade the 25 fixtures once; run every check on the result."""
    graded = _grade_batch(tmp_path)
    failures = []
    for check in (check_at_least_20_fixtures_and_one_row_each, check_every_row,
                  check_repairs_are_recorded, check_feedback_has_no_hidden_tests,
                  check_report_records_seeds_and_shards, check_cli_reproduces_a_grade_with_the_seed,
                  check_merge_refuses_a_student_graded_twice):
        try:
            (tmp_path / check.__name__).mkdir()
            check(graded, tmp_path / check.__name__)
        except AssertionError as exc:
            failures.append(f"{check.__name__}: {exc}")
    assert not failures, "\n\n".join(failures)


def check_at_least_20_fixtures_and_one_row_each(graded, tmp_path):
    expect, rows = graded["expect"], graded["rows"]
    assert len(expect) >= 20
    assert sorted(rows) == sorted(expect)
    with open(graded["merged"] / "grades.csv", newline="", encoding="utf-8") as handle:
        lines = list(csv.reader(handle))
    assert lines[0] == ["student", "assignment", "score", "max_score", "status"]
    assert len(lines) == len(expect) + 1


def check_every_row(graded, tmp_path):
    rows, expect = graded["rows"], graded["expect"]
    max_score = float(rows["01_correct"]["max_score"])
    wrong = float(rows["02_wrong"]["score"])
    assert max_score > 0 and 0 < wrong < max_score
    problems = []
    for student, want in sorted(expect.items()):
        row = rows[student]
        result = graded["results"][student]
        target = {"full": max_score, "zero": 0.0, "wrong": wrong}[want["score"]]
        if row["assignment"] != cases.ASSIGNMENT or float(row["max_score"]) != max_score:
            problems.append(f"{student}: assignment/max_score {row}")
        if not row["status"].split(":")[0] == want["status"]:
            problems.append(f"{student}: status {row['status']!r}, want {want['status']}")
        if want["reason"] and want["reason"] not in row["status"]:
            problems.append(f"{student}: reason {want['reason']!r} not in {row['status']!r}")
        if float(row["score"]) != target:
            problems.append(f"{student}: score {row['score']}, want {target} ({want['score']})")
        if want["gain"] and not result["nbgrader_score"] > float(row["score"]):
            problems.append(f"{student}: the attack did not fool nbgrader "
                            f"({result['nbgrader_score']}), so the case tests nothing")
        if float(row["score"]) > result["nbgrader_score"] or float(row["score"]) > result["recheck_score"]:
            problems.append(f"{student}: final score above nbgrader or recheck")
    assert not problems, "\n".join(problems)


def check_repairs_are_recorded(graded, tmp_path):
    results = graded["results"]
    assert any("duplicated grade_id" in r for r in results["05_duplicate_grade_id"]["repairs"])
    assert any("graded as" in r for r in results["04_renamed 张三"]["repairs"])


def check_feedback_has_no_hidden_tests(graded, tmp_path):
    source = graded["template"] / "source" / cases.ASSIGNMENT / f"{cases.ASSIGNMENT}.ipynb"
    import nbformat

    nb = nbformat.read(source, as_version=4)
    secrets = [line for c in nb.cells if c.cell_type == "code" for line in feedback.hidden_lines(c.source)]
    assert secrets, "the assignment has hidden tests"
    pages = sorted((graded["merged"] / "feedback").rglob("*.html"))
    students_with_feedback = {p.relative_to(graded["merged"] / "feedback").parts[0] for p in pages}
    assert {"01_correct", "02_wrong", "22_edited_tests"} <= students_with_feedback
    for page in pages:
        assert feedback.leaked_lines(page, secrets) == [], page
        text = feedback.html_text(page)
        assert "BEGIN HIDDEN TESTS" not in text
        # The check can fail: visible test code is there.
        assert "check_laplace_noise_basics(laplace_noise)" in text
    for student, result in graded["results"].items():
        assert result["feedback"] == [p.name for p in pages if p.parts[-3] == student]
    # The per-submission seed reached the kernel (the checks print the seed they use).
    page = graded["merged"] / "feedback" / "01_correct" / cases.ASSIGNMENT / f"{cases.ASSIGNMENT}.html"
    assert f"DP_COURSE_SEED={graded['results']['01_correct']['seed']}" in feedback.html_text(page)


def check_report_records_seeds_and_shards(graded, tmp_path):
    data = graded["report"]
    assert [run["shard"] for run in data["runs"]] == ["1/2", "2/2"]
    assert all(run["seed"] == SEED for run in data["runs"])
    for student, result in graded["results"].items():
        assert result["seed"] == student_seed(SEED, cases.ASSIGNMENT, student)
        assert set(result) >= {"cells", "flags", "errors", "repairs", "score", "max_score", "status"}
    # Round-robin over sorted students: shard 1 holds the 1st, 3rd, 5th...
    ordered = sorted(graded["expect"])
    shard1 = report.read_grades(graded["shards"][0] / "grades.csv")
    assert [r["student"] for r in shard1] == ordered[0::2]


def check_cli_reproduces_a_grade_with_the_seed(graded, tmp_path):
    subset = tmp_path / "subset"
    for student in ("01_correct", "02_wrong"):
        shutil.copytree(graded["submissions"] / student, subset / student)
    out = tmp_path / "out"
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    proc = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", "--assignment", cases.ASSIGNMENT,
         "--submissions", str(subset), "--out", str(out), "--jobs", "1",
         "--timeout", str(TIMEOUT), "--seed", str(SEED)],
        capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "[2/2]" in proc.stderr
    again = json.loads((out / "report.json").read_text(encoding="utf-8"))["submissions"]
    for result in again:
        before = graded["results"][result["student"]]
        assert result["seed"] == before["seed"]
        assert [c["score"] for c in result["cells"]] == [c["score"] for c in before["cells"]]
        assert result["status"] == before["status"]


@pytest.mark.parametrize("args", [
    ["--assignment", "no_such_assignment"],
    ["--assignment", "laplace", "--shard", "3/2"],
    ["--assignment", "laplace", "--jobs", "0"],
])
def test_cli_usage_errors_exit_2(tmp_path, args):
    (tmp_path / "subs").mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", "--submissions", str(tmp_path / "subs"),
         "--out", str(tmp_path / "out"), *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "error:" in proc.stderr


def check_merge_refuses_a_student_graded_twice(graded, tmp_path):
    with pytest.raises(ValueError, match="graded twice"):
        report.merge([graded["shards"][0], graded["shards"][0]], tmp_path / "twice")
