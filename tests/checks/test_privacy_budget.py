"""The graded assignment ``privacy_budget`` (issue 12): a functional (plain-data) budget
accountant with exact refusals, noise that matches the budget spent, parallel composition for
histograms, and the averaging attack of Table 6-3.

* the checks' constants (exact probabilities of Table 6-3, boundary sequences) and their power
  on hand-made mistakes;
* the corpus (``tests/corpus/privacy_budget``) executed directly (fast): every correct
  solution passes every cell, every wrong one fails the cells its manifest names, with a
  bilingual message;
* through ``build.grade`` (the real grading path, one nbgrader/trusted-grader run): the source
  solutions, the blank release notebook, every correct solution and one wrong solution per
  graded cell (``GRADED_WRONG``), 11 notebooks, 30-45 s on the shared 2 cores. Set
  ``DP_FULL_CORPUS=1`` to send every wrong solution through ``build.grade`` too (~90 s).
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import re
from pathlib import Path

import numpy as np
import pytest

import helpers.checks as checks
import helpers.checks.privacy_budget as pb
from helpers.checks.privacy_budget._shared import _is_plain
from helpers.checks.privacy_budget.accountant import _HIDDEN_SEQUENCES, _VISIBLE_SEQUENCES
from helpers.budget import BudgetAccountant, BudgetExceededError

HERE = Path(__file__).resolve().parent
from tests.support import corpus as build
from tests.support import notebooks

ASSIGNMENT = "privacy_budget"
#: One wrong solution per graded cell, graded through build.grade (the others directly).
GRADED_WRONG = ("wrong_make_accountant_fraction_state", "wrong_answer_count_fraction_exact",
                "wrong_answer_count_scale_remaining", "wrong_answer_histogram_sequential",
                "wrong_averaging_attack_median", "wrong_answer_count_charge_in_place",
                # what the hidden 1,000-step sequence detects, its ledgers left in the sandbox (call_sequence keep)
                "wrong_answer_count_keeps_last_128")


def _cells(version: str = "source") -> list:
    return notebooks.read(ASSIGNMENT, version).cells


def _failing_cells(solutions: dict[str, str]) -> dict[str, str]:
    return notebooks.failing_cells(ASSIGNMENT, solutions)


def _source_solutions() -> dict[str, str]:
    return notebooks.solution_cells(ASSIGNMENT)


def test_exact_probabilities_are_table_6_3s():
    from helpers.queries import danger_probability

    for (epsilon, k), value in pb.EXACT_DANGER.items():
        assert math.isclose(value, danger_probability(epsilon, k), rel_tol=1e-12)


@pytest.mark.parametrize("sequences", [_VISIBLE_SEQUENCES, _HIDDEN_SEQUENCES])
def test_boundary_sequences_follow_the_decimal_rule(sequences):
    """Each expected verdict is the decimal rule; helpers.budget's accountant agrees with all of them."""
    from decimal import Decimal

    tripped = set()
    for total, sequence in sequences:
        spent, floats, acc = Decimal(0), [], BudgetAccountant(total)
        for epsilon, accept in sequence:
            fits = math.isfinite(epsilon) and spent + Decimal(repr(epsilon)) <= Decimal(repr(total))
            assert fits == accept, (total, sequence)
            try:
                acc.spend(epsilon)
                assert accept, (total, epsilon)
            except (BudgetExceededError, ValueError):
                assert not accept, (total, epsilon)
            if accept:
                if sum(floats) + epsilon > total:
                    tripped.add("naive")
                if math.fsum(floats + [epsilon]) > total:
                    tripped.add("fsum")
                spent += Decimal(repr(epsilon))
                floats.append(epsilon)
    # each set of sequences trips both naive float sums and fsum without a tolerance
    assert tripped == {"naive", "fsum"}


def test_notebook_structure():
    cells = _cells()
    graded = [c.metadata["nbgrader"] for c in cells if c.metadata.get("nbgrader", {}).get("grade")]
    assert sum(m["points"] for m in graded) == 10 and len(graded) >= 5
    solutions = [c.metadata["nbgrader"]["grade_id"] for c in cells if c.metadata.get("nbgrader", {}).get("solution")]
    assert solutions == list(build.load_manifest()[ASSIGNMENT]["correct"])
    for cell in cells:
        if cell.metadata.get("nbgrader", {}).get("grade"):
            assert "from helpers.checks.privacy_budget import" in cell.source
    assert "NBGRADER_EXECUTION" in cells[-1].source
    assert any("rules" == c.metadata.get("nbgrader", {}).get("grade_id") for c in cells)


def test_source_solutions_pass_directly():
    assert _failing_cells(_source_solutions()) == {}


def test_corpus_directly():
    manifest = build.load_manifest()[ASSIGNMENT]
    assert len(manifest["wrong"]) >= 10
    assert all(len(v) >= 3 for v in manifest["correct"].values())
    problems = build.corpus_problems(ASSIGNMENT, _failing_cells)
    assert not problems, "\n".join(problems)


def test_state_must_be_plain_data():
    assert _is_plain({"total": 1.0, "spent": [0.1, "0.2", {"q": None, "ok": True}]})
    from fractions import Fraction

    for bad in ({"total": Fraction(1, 3)}, {"spent": np.array([0.1])}, {1: 0.5}, {"s": {0.1}}):
        assert not _is_plain(bad), bad


@pytest.mark.parametrize("factor", [0.5, 2.0])
def test_noise_check_catches_a_scale_off_by_a_factor_of_two(factor):
    def make_accountant(total):
        return {"total": total, "spent": 0.0}

    def answer_count(state, values, threshold, epsilon, rng):
        if not epsilon > 0 or state["spent"] + epsilon > state["total"] * (1 + 1e-12):
            raise ValueError("refused")
        true = int(np.sum(np.asarray(values) > threshold))
        return true + rng.laplace(0, factor / epsilon), {"total": state["total"], "spent": state["spent"] + epsilon}

    with pytest.raises(AssertionError, match="Lap"):
        pb.check_noise_matches_budget(make_accountant, answer_count, seed=3)


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
    assert not problems, "\n".join(problems)


def _histogram_failure(variant: str) -> checks.CheckFailure:
    ns = {"np": np, "math": math, "__name__": "__main__"}
    for name, code in _source_solutions().items():
        checks.load_student_code(code, ns, filename=f"<{name}>")
    checks.load_student_code(build.snippet(ASSIGNMENT, "answer_histogram", variant), ns, filename=f"<{variant}>")
    with pytest.raises(checks.CheckFailure) as failure, contextlib.redirect_stdout(io.StringIO()):
        pb.check_histogram_parallel(ns["make_accountant"], ns["answer_count"], ns["answer_histogram"], seed=1)
    return failure.value


@pytest.mark.parametrize("variant, diagnosis", [
    ("sequential", "privacy_budget.histogram_overcharged"),                   # charges k·ε, Lap(1/ε)
    ("split_epsilon", "privacy_budget.histogram_noise_larger_than_needed"),   # charges ε, Lap(k/ε)
])
def test_conservative_private_histogram_fails_as_wasteful_not_as_a_leak(variant, diagnosis):
    """Issue 18 review item 3: the task asks for the least noise and charge the composition theorems allow
    (stated in the task text); a conservative answer is private, fails, and is told so."""
    failure = _histogram_failure(variant)
    assert failure.diagnosis == diagnosis
    assert "仍满足差分隐私" in failure.zh and "still differentially private" in failure.en
    text = "".join(c.source for c in _cells()[:1])
    assert "least noise and the least charge the composition theorems allow" in text and "最小值" in text


@pytest.mark.parametrize("variant, diagnosis", [
    ("no_charge", "privacy_budget.histogram_undercharged"),                   # nothing charged
    ("noise_eps_times_k", "privacy_budget.histogram_noise_too_small"),        # charges ε, Lap(1/(kε))
])
def test_non_private_histogram_fails_as_a_leak(variant, diagnosis):
    failure = _histogram_failure(variant)
    assert failure.diagnosis == diagnosis
    assert "不满足" in failure.zh and "not" in failure.en and "still differentially private" not in failure.en


def test_ledger_replay_cell_runs_the_claim():
    """Issue 18 review item 4: an analyst who passes back an old ledger resets the budget and the averaging
    attack recovers the true count; the same functions behind a holder that keeps the ledger refuse after
    total/ε answers. Runs the notebook's own demonstration cell on the source solutions."""
    cells = _cells()
    replay = next(c for c in cells if c.metadata.get("nbgrader", {}).get("grade_id") == "ledger_replay")
    ns = {"np": np, "math": math, "__name__": "__main__"}
    exec(next(c.source for c in cells if c.metadata.get("nbgrader", {}).get("grade_id") == "setup"), ns)
    for name, code in _source_solutions().items():
        checks.load_student_code(code, ns, filename=f"<{name}>")
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.MonkeyPatch.context() as mp:
        mp.delenv("NBGRADER_EXECUTION", raising=False)
        exec(replay.source, ns)
    true_count = int(np.sum(ns["carrots"] > 55))
    assert len(ns["replayed"]) == 2000 and ns["averaging_attack"](np.array(ns["replayed"])) == true_count
    # the mean of 2000 Lap(2) noises is within 1/2 of 0 except with probability < 1e-12: the attack succeeds
    assert len(ns["answered"]) == 2  # total 1 at ε = 0.5
    assert "2000" in out.getvalue() and "预算只允许 2 个" in out.getvalue()
