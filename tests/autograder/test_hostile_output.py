"""Red-team findings 2-6 on the trusted grader: output floods, transformer cost, CSV formulas,
markup in OUT/autograded, hidden-test information in feedback.

Unit tests first (fast); :func:`test_batch_through_the_grader` grades six small hostile
submissions of ``laplace`` through :func:`autograder.grade.grade` (~30 s with bubblewrap).
"""

from __future__ import annotations

import copy
import json
import os
import time
import types
from pathlib import Path

import nbformat
import pytest

from autograder import grade as grade_mod, scorer, worker
from autograder.render import feedback
from autograder.reports import report
from helpers.checks.laplace import hidden_noise_case

from tests.fixtures.autograder import autograder_cases as cases  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
RELEASE = REPO / "release" / "laplace" / "laplace.ipynb"
SOURCE = REPO / "source" / "laplace" / "laplace.ipynb"


# --- finding 2: output flood ----------------------------------------------------------------

def _reader(tmp_path, data: bytes):
    path = tmp_path / "stream"
    path.write_bytes(data)
    w = object.__new__(grade_mod._Worker)  # noqa: SLF001 - only the reader's state
    w.proc = types.SimpleNamespace(stdout=open(path, "rb"))
    w.buffer, w.overlong = bytearray(), False
    lines = []
    while True:
        got, ended = w.lines()
        lines += got
        if ended:
            w.proc.stdout.close()
            return lines


def test_reader_is_linear_and_drops_overlong_lines(tmp_path, monkeypatch):
    started = time.monotonic()
    lines = _reader(tmp_path, b"x" * (40 << 20) + b"\n" + b'{"a": 1}\n')
    assert lines == [None, {"a": 1}]
    assert time.monotonic() - started < 5  # was 20 s (quadratic search of the whole buffer)
    monkeypatch.setattr(grade_mod, "MAX_LINE", 1 << 20)
    lines = _reader(tmp_path, b'{"a": 0}\n' + b"y" * (5 << 20) + b'\n{"a": 1}\n{"a":')
    assert lines == [{"a": 0}, None, {"a": 1}]  # one None for the long line, the rest parsed


def test_student_output_budget_across_cells():
    left = [scorer.OUTPUT_BUDGET]
    reports = [scorer._budgeted({"stdout": "\U0001F600" * 32000, "stderr": "e" * 32000,  # noqa: SLF001
                                 "error": None}, left) for _ in range(400)]
    kept = sum(len((r["stdout"] + r["stderr"]).encode()) for r in reports)
    assert scorer.OUTPUT_BUDGET <= kept < scorer.OUTPUT_BUDGET + 400 * 100
    assert scorer.OUTPUT_NOTE in reports[-1]["stdout"] and reports[0]["stdout"] == "\U0001F600" * 32000
    empty = scorer._budgeted({"stdout": "", "stderr": "", "error": None}, [0])  # noqa: SLF001
    assert empty["stdout"] == ""  # no note for a cell that printed nothing


def test_worker_result_message_is_capped(monkeypatch):
    monkeypatch.setattr(worker, "MAX_RESULT", 10_000)
    result = {"cells": [], "errors": [], "feedback": {"a.ipynb": "x" * 20_000}, "autograded": {}}
    line = worker.message(3, result)
    assert len(line) <= 10_000
    data = json.loads(line)
    assert data["result"]["feedback"] == {} and "feedback not written" in data["result"]["errors"][0]


# --- finding 3: transformer cost ------------------------------------------------------------

def _nb(*sources):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    return nb


def test_oversized_cells_are_refused_before_transforming():
    attack = "\n".join(["x = 1"] * 2000 + ["y = %time 1"] * 600)  # 31 s per transform before
    many_magics = "\n".join(["x = 1"] * 1500 + ["y = %time 1"] * 60)
    started = time.monotonic()
    cells = scorer.student_code(_nb("a = 1", attack, many_magics, "%time b = 2"))
    assert time.monotonic() - started < 1.0
    (_, first, ok), (_, none1, why1), (_, none2, why2), (_, last, ok2) = cells
    assert ok is None and first.strip() == "a = 1"
    assert none1 is None and "too large" in why1 and none2 is None and "%/!" in why2
    assert ok2 is None and "b = 2" in last and "%" not in last.split("(")[0]
    long_magics = "\n".join(["x = 1"] * 1900 + ["y = %time 1"] * 20)  # 20 x 1920 > MAX_TRANSFORM_COST
    plan = scorer.student_code(_nb(long_magics, "\n".join(["x = 1"] * 100 + ["%time y = 1"] * 5)))
    assert "%/!" in plan[0][2] and plan[1][2] is None
    big = ["\n".join(f"v{i} = {i}" for i in range(1500))] * 20  # 30,000 lines in all
    plan = scorer.student_code(_nb(*big))
    assert [why is None for _, _, why in plan] == [True] * 13 + [False] * 7


def test_honest_notebooks_pass_the_limits():
    for path in sorted((REPO / "source").glob("*/*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        assert all(why is None for _, _, why in scorer.student_code(nb)), path
        assert len(nb.cells) < scorer.MAX_CELLS // 5


# --- finding 4: CSV formulas ----------------------------------------------------------------

FORMULAS = ["=1+1", "@SUM(1+1)*cmd|' -C calc'!A0", '+HYPERLINK("x")', "-2+3", "\tx", "\rx", "'=quoted", "'plain"]


def test_grades_csv_defuses_formulas_and_reads_back(tmp_path):
    rows = [{"student": s, "assignment": "laplace", "score": 1, "max_score": 10, "status": "ok"}
            for s in FORMULAS + ["ann"]]
    text = report.grades_csv(rows)
    import csv
    import io

    fields = [r[0] for r in csv.reader(io.StringIO(text))][1:]
    assert all(not f.startswith(report.FORMULA_START) for f in fields)
    assert "ann" in fields
    for name, (a, b) in {"s1": (0, 4), "s2": (4, 9)}.items():
        report.write_outputs(tmp_path / name, rows[a:b], {"runs": [{"assignment": "laplace"}]})
    merged = report.merge([tmp_path / "s1", tmp_path / "s2"], tmp_path / "m")
    assert sorted(r["student"] for r in merged["submissions"]) == sorted(FORMULAS + ["ann"])
    back = report.read_grades(tmp_path / "m" / "grades.csv")
    assert sorted(r["student"] for r in back) == sorted(FORMULAS + ["ann"])  # exact ids
    data = json.loads((tmp_path / "m" / "report.json").read_text(encoding="utf-8"))
    assert sorted(r["student"] for r in data["submissions"]) == sorted(FORMULAS + ["ann"])


# --- finding 5: markup in OUT/autograded and raw cells --------------------------------------

XSS = "XSSMARK77"
RAW = f'<a href="https://evil.example/{XSS}">regrade</a><script>{XSS}()</script>'


def _with_markup():
    nb = nbformat.read(RELEASE, as_version=4)
    nb.cells.append(nbformat.v4.new_markdown_cell(f'<img src=x onerror="{XSS}()"> **hi** <script>{XSS}()</script>'))
    raw = nbformat.v4.new_raw_cell(RAW)
    raw.metadata["raw_mimetype"] = "text/html"
    nb.cells.append(raw)
    return nb


def test_gradebook_notebook_escapes_raw_cells():
    safe = feedback.gradebook_notebook(_with_markup())
    raw = [c for c in safe.cells if c.cell_type == "raw"]
    assert raw and "<a " not in raw[0].source and "&lt;a href" in raw[0].source
    assert raw[0].metadata == {}
    markdown = safe.cells[-2].source
    assert "onerror" not in markdown and "<script" not in markdown and "hi" in markdown


def test_feedback_shows_raw_cells_as_text():
    page = feedback.feedback_html(_with_markup(), [])
    assert "evil.example" in page  # shown...
    assert '<a href="https://evil.example' not in page and "&lt;a href=" in page  # ...as text
    assert feedback.active_content(page) == []


# --- finding 6: hidden-test information -----------------------------------------------------

def test_hidden_failure_is_generic_in_the_executed_notebook():
    nb = nbformat.read(RELEASE, as_version=4)
    gid = "test_laplace_noise_distribution"
    scored = {"student_cells": {}, "tests": [
        {"grade_id": gid, "score": 0.0, "points": 3.0, "hidden_failed": True,
         "outputs": [{"hidden": False, "text": "visible ok\n"}, {"hidden": True, "text": "n=100000 seed 7\n"}],
         "error": {"ename": "AssertionError", "evalue": "laplace_noise(0.37, (200, 500), rng) raised TypeError"}}]}
    executed = worker.executed_notebook(nb, scored)
    text = json.dumps(feedback.gradebook_notebook(executed), ensure_ascii=False)
    assert "(200, 500)" not in text and "100000" not in text and "visible ok" in text
    # the notebook's language in the error, the other folded below it (issue 35 §5, session 13)
    zh, en = feedback.HIDDEN_FAILED.format(grade_id=gid).split(" / ")
    assert f'"evalue": "{zh}"' in text and "<summary>English</summary>" in text and en in text
    page = feedback.feedback_html(executed, [])
    assert "(200, 500)" not in page and f"a hidden test of {gid} failed" in page


def test_visible_check_failure_reads_as_in_the_notebook():
    """The executed notebook the Formgrader and Generate feedback show: a failed visible check
    under the notebook's own "✗ 未通过 / check failed", not the class name "CheckFailure:"."""
    nb = nbformat.read(RELEASE, as_version=4)
    gid = "test_laplace_noise_distribution"
    scored = {"student_cells": {}, "tests": [
        {"grade_id": gid, "score": 0.0, "points": 3.0, "hidden_failed": False, "outputs": [],
         "error": {"ename": "CheckFailure", "evalue": "\n测得均值 0.48，期望 0。\nmean 0.48, expected 0."}}]}
    executed = worker.executed_notebook(nb, scored)
    cell = next(c for c in executed.cells if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == gid)
    assert cell.outputs[-1]["traceback"] == ["✗ 未通过 / check failed\n测得均值 0.48，期望 0。\nmean 0.48, expected 0."]


# --- one batch through the real grader (findings 2, 3, 4, 5, 6) -----------------------------

def _code(source):
    return nbformat.v4.new_code_cell(source)


@pytest.mark.nbgrader
@pytest.mark.slow
def test_batch_through_the_grader(tmp_path):
    release = nbformat.read(RELEASE, as_version=4)
    good = cases.reference_solutions(nbformat.read(SOURCE, as_version=4))
    correct = cases.fill(release, good)
    # The hidden call's b and size come from the submission's seed (issue 25): this run's values.
    saved = os.environ.get("DP_COURSE_SEED")
    os.environ["DP_COURSE_SEED"] = str(grade_mod.student_seed(5, "laplace", "hidden"))
    try:
        case = hidden_noise_case()
    finally:
        os.environ.pop("DP_COURSE_SEED") if saved is None else os.environ.update(DP_COURSE_SEED=saved)
    hidden = cases.fill(release, dict(good, laplace_noise=good["laplace_noise"].replace(
        "    # Laplace", f"    if size == tuple({list(case['size'])!r}) and b == {case['b']!r}:\n"
        "        raise TypeError('UNSEEN' + f'-MARK {b} {size}')\n    # Laplace")))
    flood = copy.deepcopy(correct)
    flood.cells += [_code("import sys; sys.stdout.write('\\U0001F600' * 32000); sys.stderr.write('e' * 32000)")
                    for _ in range(210)]  # 210 flagged cells: more flags than the parent takes (200)
    many = copy.deepcopy(correct)
    many.cells += [_code("pass") for _ in range(scorer.MAX_CELLS)]
    big = copy.deepcopy(correct)
    big.cells.append(_code("\n".join(["x = 1"] * 2000 + ["y = %time 1"] * 600)))
    markup = copy.deepcopy(correct)
    markup.cells += _with_markup().cells[-2:]
    subs = tmp_path / "subs"
    for student, nb in {"ctl_correct": correct, "hidden": hidden, "flood": flood, "many": many,
                        "big": big, "=1+1": markup}.items():
        (subs / student / "laplace").mkdir(parents=True)
        nbformat.write(nb, subs / student / "laplace" / "laplace.ipynb")
    out = tmp_path / "out"
    started = time.monotonic()
    grade_mod.grade(assignment="laplace", submissions=subs, out=out, jobs=2, timeout=20, seed=5, quiet=True)
    assert time.monotonic() - started < 120
    data = json.loads((out / "report.json").read_text(encoding="utf-8"))
    rows = {r["student"]: r for r in data["submissions"]}
    assert rows["ctl_correct"]["score"] == 10 and rows["ctl_correct"]["status"] == "ok", rows["ctl_correct"]
    # 6: the hidden failure costs points; its message is for the instructor only
    h = rows["hidden"]
    assert h["status"] == "ok" and h["score"] == 7, h
    assert any("UNSEEN-MARK" in (c["message"] or "") for c in h["cells"])
    page = (out / "feedback" / "hidden" / "laplace" / "laplace.html").read_text(encoding="utf-8")
    graded = (out / "autograded" / "hidden" / "laplace" / "laplace.ipynb").read_text(encoding="utf-8")
    for text in (page, graded):
        assert "UNSEEN-MARK" not in text and repr(case["size"]) not in text  # neither is in the source
        assert "a hidden test of test_laplace_noise_distribution failed" in text
    # 2: flood graded, output capped in both outputs
    assert rows["flood"]["score"] == 10 and rows["flood"]["status"] == "ok", rows["flood"]
    assert len(rows["flood"]["flags"]) == worker.MAX_ITEMS + 1 and "more" in rows["flood"]["flags"][-1]
    assert (out / "autograded" / "flood" / "laplace" / "laplace.ipynb").stat().st_size < 8 << 20
    assert (out / "feedback" / "flood" / "laplace" / "laplace.html").stat().st_size < 8 << 20
    assert scorer.OUTPUT_NOTE in (out / "autograded" / "flood" / "laplace" / "laplace.ipynb").read_text("utf-8")
    assert rows["many"]["status"].startswith("error:") and "cells" in rows["many"]["status"]
    assert rows["many"]["score"] == 0
    # 3: the oversized cell is not run, quickly, and the status says so
    assert "not run: too large" in rows["big"]["status"] and rows["big"]["score"] == 10
    assert rows["big"]["seconds"] < 60
    # 4 + 5
    csv_text = (out / "grades.csv").read_text(encoding="utf-8")
    assert "\n'=1+1," in csv_text and rows["=1+1"]["score"] == 10
    nb = nbformat.read(out / "autograded" / "=1+1" / "laplace" / "laplace.ipynb", as_version=4)
    free = [c.source for c in nb.cells if c.cell_type in ("markdown", "raw")][-2:]
    assert "onerror" not in free[0] and "<script" not in free[0] and "<a " not in free[1]


def test_display_trims_cells_not_run_and_text_over_budget():
    nb = nbformat.read(RELEASE, as_version=4)
    locked = [c.source for c in nb.cells if c.cell_type == "markdown"]
    nb.cells.append(_code("\n".join(f"x{i} = {i}" for i in range(3000))))
    nb.cells += [nbformat.v4.new_markdown_cell("m" * 400_000) for _ in range(5)]
    plan = scorer.student_code(nb)
    skip = frozenset(i for i, _, why in plan if why)
    assert skip == {len(nb.cells) - 6}
    out = worker.trim_for_display(nb, skip)
    assert len(out.cells[-6].source.splitlines()) == 21 and "not run" in out.cells[-6].source
    assert [len(c.source) for c in out.cells[-5:-3]] == [400_000, 400_000]
    assert all("size limit" in c.source for c in out.cells[-3:])
    assert [c.source for c in out.cells if c.cell_type == "markdown"][:len(locked)] == locked
