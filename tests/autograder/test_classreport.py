"""The class report (issue 19) on synthetic grading outputs: shards join, plots draw every
Chinese glyph, grades_by_question.csv. Its numbers against real grading are checked in
``tests/checks/test_assignments.py`` and ``tests/checks/test_local_frequency.py``; the page in Chromium in
``tests/browser/test_class_report.py``."""

from __future__ import annotations

import base64
import csv
import warnings
from pathlib import Path

import numpy as np
import pytest

from autograder.reports import report
from autograder.reports.classreport import build_report

HERE = Path(__file__).resolve().parent
from tests.support import report_bench as bench


def test_shards_join_and_plots_have_every_glyph(tmp_path):
    rows = bench.synthetic_rows("laplace", 60, np.random.default_rng(3))
    for k in (0, 1):  # two shards of one assignment
        report.write_outputs(tmp_path / f"shard{k}", rows[k::2], {"runs": []})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        built = build_report([tmp_path / "shard0", tmp_path / "shard1"], tmp_path)
    assert not [str(w.message) for w in caught if "Glyph" in str(w.message)]  # tofu in a plot
    page = (tmp_path / "class_report.html").read_text(encoding="utf-8")
    summary = built["summary"]["laplace"]
    assert summary["n"] == 60 and summary["students"] == sorted(r["student"] for r in rows)
    assert summary["zeros"] == sum(r["score"] == 0 for r in rows)
    images = page.split('src="data:image/png;base64,')[1:]
    assert len(images) == 4  # scores, pass rates, one audited cell, grading time
    assert all(base64.b64decode(i.split('"', 1)[0])[:8] == b"\x89PNG\r\n\x1a\n" for i in images)
    assert "http" not in page.replace("http-equiv", "")  # nothing loaded from the network
    with pytest.raises(ValueError, match="graded twice"):
        build_report([tmp_path / "shard0", tmp_path / "shard0"], tmp_path / "twice.html")


def test_grades_by_question_matches_the_cells(tmp_path):
    rows = bench.synthetic_rows("exponential", 5, np.random.default_rng(4))
    report.write_outputs(tmp_path, rows, {"runs": []})
    with open(tmp_path / "grades_by_question.csv", newline="", encoding="utf-8") as handle:
        got = [(r["student"], r["assignment"], r["cell"], float(r["score"]), float(r["max"]))
               for r in csv.DictReader(handle)]
    assert got == [(r["student"], r["assignment"], c["grade_id"], c["score"], c["points"])
                   for r in rows for c in r["cells"]]


def test_failures_outside_the_checks_get_a_framework_id_or_none():
    from autograder.jail import SandboxError
    from autograder.scorer import diagnosis_of
    from helpers.checks import CheckFailure

    assert diagnosis_of(CheckFailure("中", "en", "laplace.scale_inverted")) == "laplace.scale_inverted"
    assert diagnosis_of(CheckFailure("中", "en", "<b>forged</b>")) is None  # not an id: dropped
    assert diagnosis_of(NameError("laplace_noise")) == "common.function_missing"
    assert diagnosis_of(TimeoutError()) == "common.timeout"
    assert diagnosis_of(SandboxError("killed")) == "common.sandbox_failed"
    assert diagnosis_of(AssertionError("a plain assert")) is None
