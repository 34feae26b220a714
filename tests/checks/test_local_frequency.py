"""The graded assignment ``local_frequency`` (issue 12): GRR, its unbiased estimator and variance,
the asymmetric two-dice correction, and an ε-LDP audit of the student's perturbation.

* the checks against the reference implementation in :mod:`helpers.ldp` (they must agree);
* the corpus (``tests/corpus/local_frequency``) executed directly (fast): every correct
  solution passes every cell, every wrong one fails the cells its manifest names, with a
  bilingual message;
* through ``build.grade`` (the real grading path, one nbgrader/trusted-grader run): the source
  solutions, the blank release notebook, every correct solution and one wrong solution per
  graded cell (``GRADED_WRONG``), 11 notebooks, 30-45 s on the shared 2 cores. Set
  ``DP_FULL_CORPUS=1`` to send every wrong solution through ``build.grade`` too (~90 s).
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import numpy as np
import pytest

import helpers.checks.local_frequency as lf
import helpers.ldp as ldp

HERE = Path(__file__).resolve().parent
from tests.support import corpus as build
from tests.support import notebooks

ASSIGNMENT = "local_frequency"
#: One wrong solution per graded cell, graded through build.grade (the others directly).
GRADED_WRONG = ("wrong_grr_perturb_global_rng", "wrong_grr_perturb_binary_p", "wrong_grr_estimate_clipped",
                "wrong_grr_variance_no_f_term", "wrong_asymmetric_correct_no_validation")


def _cells(version: str = "source") -> list:
    return notebooks.read(ASSIGNMENT, version).cells


def _failing_cells(solutions: dict[str, str]) -> dict[str, str]:
    return notebooks.failing_cells(ASSIGNMENT, solutions)


def _source_solutions() -> dict[str, str]:
    return notebooks.solution_cells(ASSIGNMENT)


def test_references_agree_with_helpers_ldp():
    for k, eps in ((2, math.log(4)), (4, 1.0), (10, 0.3), (3, 30.0)):
        assert np.allclose(lf.reference_grr_probabilities(k, eps), ldp.grr_probabilities(k, eps), rtol=1e-14)
        for f in (0.0, 0.3, 1.0):
            assert math.isclose(lf.reference_grr_variance(500, k, eps, f), ldp.grr_variance(500, k, eps, f), rel_tol=1e-12)
    # the exact cases really are expectations: counts = E[C] for the stated true counts
    for counts, k, e_eps, truth in lf._EXACT_CASES:
        p, q = lf.reference_grr_probabilities(k, math.log(e_eps))
        n = sum(counts)
        expected = np.array(truth) * p + (n - np.array(truth)) * q
        assert np.allclose(expected, counts, rtol=1e-9), (counts, expected)


def test_notebook_structure():
    cells = _cells()
    graded = [c.metadata["nbgrader"] for c in cells if c.metadata.get("nbgrader", {}).get("grade")]
    assert sum(m["points"] for m in graded) == 10 and len(graded) >= 5
    solutions = [c.metadata["nbgrader"]["grade_id"] for c in cells if c.metadata.get("nbgrader", {}).get("solution")]
    assert solutions == list(build.load_manifest()[ASSIGNMENT]["correct"])
    for cell in cells:
        if cell.metadata.get("nbgrader", {}).get("grade"):
            assert "from helpers.checks.local_frequency import" in cell.source
    assert "NBGRADER_EXECUTION" in cells[-1].source
    assert any("rules" == c.metadata.get("nbgrader", {}).get("grade_id") for c in cells)


def test_source_solutions_pass_directly():
    assert _failing_cells(_source_solutions()) == {}


@pytest.mark.xdist_group("corpus-direct")   # with test_diagnosis.py, which reads the same runs
def test_corpus_directly():
    manifest = build.load_manifest()[ASSIGNMENT]
    assert len(manifest["wrong"]) >= 10
    assert all(len(v) >= 3 for v in manifest["correct"].values())
    problems = build.corpus_problems(ASSIGNMENT, _failing_cells)
    assert not problems, "\n".join(problems)


def test_audit_accepts_the_reference_and_catches_a_too_large_keep_probability():
    def reference(values, k, epsilon, rng):
        return np.asarray(ldp.grr_perturb(values, k, epsilon, rng))

    lf.check_grr_perturb_privacy(reference, seed=1, k=6, epsilon=0.7)

    def leaky(values, k, epsilon, rng):  # claims ε but runs GRR at 1.3 ε
        return np.asarray(ldp.grr_perturb(values, k, 1.3 * epsilon, rng))

    with pytest.raises(AssertionError, match="audit"):
        lf.check_grr_perturb_privacy(leaky, seed=1, k=6, epsilon=0.7)


@pytest.mark.nbgrader
@pytest.mark.slow
def test_release_and_corpus_through_build_grade(tmp_path):
    release = _cells("release")
    text = build.notebook_path(build.REPO / "release", ASSIGNMENT).read_text(encoding="utf-8")
    assert "BEGIN SOLUTION" not in text and "HIDDEN TESTS" not in text and "raise NotImplementedError()" in text
    assert len(release) == len(_cells())
    entries = [e for e in build.corpus_entries(ASSIGNMENT)
               if e["kind"] == "correct" or e["id"] in GRADED_WRONG or os.environ.get("DP_FULL_CORPUS")]
    assert len(entries) >= 9
    submissions = {"source_solution": _source_solutions(), "release_blank": {}}
    for entry in entries:
        submissions[re.sub(r"[^a-z0-9_]", "_", entry["id"].lower())] = entry["solutions"]
    results = build.grade(ASSIGNMENT, submissions, tmp_path / "course")
    problems = []
    if results["source_solution"]["score"] != 10 or results["source_solution"]["max_score"] != 10:
        problems.append(f"source solution: {results['source_solution']}")
    if results["release_blank"]["score"] != 0:
        problems.append(f"release blank: {results['release_blank']}")
    for entry in entries:
        got = results[re.sub(r"[^a-z0-9_]", "_", entry["id"].lower())]
        if got["score"] is None:
            problems.append(f"{entry['id']}: crashed the grader")
        elif entry["kind"] == "correct" and got["score"] != got["max_score"]:
            problems.append(f"{entry['id']} is correct but scored {got['score']}: {got['cells']}")
        elif entry["kind"] == "wrong":
            zero = [c for c in entry["expect_zero"] if got["cells"].get(c) != 0]
            if got["score"] >= got["max_score"] or zero:
                problems.append(f"{entry['id']} ({entry['why']}) scored {got['score']}; expected 0 in {entry['expect_zero']}: {got['cells']}")
    # issue 19: the class report agrees with the outputs, and the grader recorded each audit's lower
    # bound on ε (trusted side channel): above the claim for binary p, not for the correct ones
    from tests.support import classreport as report_checks
    problems += report_checks.report_problems(tmp_path / "course")
    from autograder.reports.classreport import REPORT_NAME, build_report

    cell = next(c for c in build_report([tmp_path / "course"], tmp_path / REPORT_NAME)["summary"][ASSIGNMENT]["cells"]
                if c["grade_id"] == "test_perturb_privacy")
    exceeded = {a["student"] for a in cell["audits"] if a["exceeded"]}
    audited = {a["student"] for a in cell["audits"]}
    if exceeded != {"wrong_grr_perturb_binary_p"} or not {"source_solution", "correct_0"} <= audited:
        problems.append(f"audits in the report: {cell['audits']}")
    assert not problems, "\n".join(problems)
