"""helpers/checks/private_mean/worked_example.py: private_mean's visible worked example of the sensitivities."""

from __future__ import annotations

import pytest

from helpers.checks.core import CheckFailure
from helpers.checks.private_mean import SUM_CASES
from helpers.checks.private_mean.worked_example import (
    EXAMPLE_RANGES,
    check_count_sensitivity_example,
    check_sum_sensitivity_example,
)


def test_the_example_ranges_are_not_hidden_test_ranges():
    assert not set(EXAMPLE_RANGES) & set(SUM_CASES)


def right_sum(lower, upper, relation):
    return float(max(abs(lower), abs(upper)) if relation == "add_remove" else upper - lower)


def right_count(relation):
    return 1.0 if relation == "add_remove" else 0.0


def test_a_correct_solution_passes(capsys):
    check_sum_sensitivity_example(right_sum)
    check_count_sensitivity_example(right_count)
    assert capsys.readouterr().out.count("✓") == 2


@pytest.mark.parametrize("wrong, diagnosis", [
    (lambda lo, hi, r: float(hi - lo), "private_mean.sensitivity_wrong_relation"),      # U - L for both
    (lambda lo, hi, r: float(hi) if r == "add_remove" else float(hi - lo), None),         # forgets |lower|
    (lambda lo, hi, r: right_sum(lo, hi, "replace" if r == "add_remove" else "add_remove"),
     "private_mean.sensitivity_wrong_relation"),
])
def test_the_usual_sum_mistakes_are_caught_before_submitting(wrong, diagnosis):
    with pytest.raises(CheckFailure) as failure:
        check_sum_sensitivity_example(wrong)
    assert "Definition 6-2 gives" in failure.value.en and "定义 6-2" in failure.value.zh
    if diagnosis:
        assert failure.value.diagnosis == diagnosis


@pytest.mark.parametrize("wrong, diagnosis", [
    (lambda r: 1.0, "private_mean.sensitivity_wrong_relation"),
    (lambda r: 1.0 if r == "add_remove" else 2.0, "private_mean.count_sensitivity_replace_counts_change"),
    (lambda r: 0.0 if r == "add_remove" else 1.0, "private_mean.sensitivity_wrong_relation"),
])
def test_the_usual_count_mistakes_are_caught_before_submitting(wrong, diagnosis):
    with pytest.raises(CheckFailure) as failure:
        check_count_sensitivity_example(wrong)
    assert failure.value.diagnosis == diagnosis
