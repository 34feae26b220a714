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


def test_long_messages_are_cut_at_whole_sentences():
    from autograder.reports.classreport import whole_sentences

    en = ("privacy audit failed: private_mean claims ε = 3-DP, but on the neighbouring datasets [-1, 1], ε = 3: "
          "d = 20 record(s) at the lower bound, d' = d + [1000] the event x > 0.5 has frequencies 100/68000 vs "
          "900/68000, which proves ε >= 3.412 > 3 with confidence 1 - 1e-6 (seed = 5; a correct implementation "
          "fails with probability <= 1e-06). Hint: spending ε on both the sum and the count doubles the budget.")
    zh = "隐私审计失败：" + "相邻数据集上的事件概率之比超过了 e^ε。" * 20
    short = whole_sentences(f"CheckFailure: \n{zh}\n{en}", 300)
    lines = short.splitlines()
    assert lines[0].strip() == "CheckFailure:" and len(lines) == 3
    for original, cut in zip((zh, en), lines[1:]):
        assert cut.endswith(" …") and len(cut) <= 302
        kept = cut[:-2]
        assert original.startswith(kept) and kept[-1] in "。.;；!?！？", kept[-20:]
    assert "a correct im" not in short  # the cut the lecturer saw: mid-word
    assert whole_sentences("short. message", 300) == "short. message"
    # no sentence end in reach: cut at a space, never inside a word
    words = whole_sentences("word " * 100, 42)
    assert words.endswith("word …") and set(words[:-2].split()) == {"word"}


def test_histogram_counts_students_in_whole_numbers():
    from autograder.reports.classreport import score_figure

    for scores in ([10.0], [10.0, 7.0, 7.0, 3.0], [float(i % 11) for i in range(150)]):
        a = {"scores": scores, "max_score": 10.0, "median": 7.0, "q1": 5.0, "q3": 9.0}
        _, ax = score_figure(a)
        ticks = [t for t in ax.get_yticks() if ax.get_ylim()[0] <= t <= ax.get_ylim()[1]]
        assert len(ticks) >= 2 and all(float(t).is_integer() for t in ticks), ticks


def test_student_table_has_every_student_with_cells_flags_and_feedback(tmp_path):
    rows = bench.synthetic_rows("laplace", 40, np.random.default_rng(5))
    rows[0]["flags"] = ["laplace cell 3: calls eval"]
    rows[1]["cells"][1].update(score=0.0, diagnosis="laplace.scale_inverted", message="AssertionError: x")
    report.write_outputs(tmp_path, rows, {"runs": []})
    built = build_report([tmp_path], tmp_path)
    table = built["summary"]["laplace"]["table"]
    assert [t["student"] for t in table] == sorted(r["student"] for r in rows)
    by_student = {t["student"]: t for t in table}
    for row in rows:
        entry = by_student[row["student"]]
        assert entry["score"] == row["score"]
        for cell in row["cells"]:
            got = entry["cells"][cell["grade_id"]]
            assert got["passed"] == (cell["score"] >= cell["points"])
            assert got["diagnosis"] == (None if got["passed"] else (cell["diagnosis"] or "unlabelled:AssertionError"))
    assert any("静态扫描" in f for f in by_student[rows[0]["student"]]["flags"])
    assert by_student[rows[1]["student"]]["cells"]["test_noise_distribution"]["diagnosis"] == "laplace.scale_inverted"
    page = (tmp_path / "class_report.html").read_text(encoding="utf-8")
    table_html = page.split('<table class="sortable students" data-assignment="laplace">')[1].split("</table>")[0]
    assert table_html.count("<tr>") == 41  # header + one row per student
    assert table_html.count('class=feedback href="feedback/') == 40
    # a diagnosis is explained by the checks' table, in both languages
    assert "尺度写成了 ε/Δf" in page and "The scale is ε/Δf" in page
