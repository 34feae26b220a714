"""Tests of helpers.budget: sequential composition (Theorem 6-2), parallel composition
(Theorem 6-3) and refusals past the budget."""

from __future__ import annotations

import re

import numpy as np
import pytest

from helpers import i18n
from helpers.budget import BudgetAccountant, BudgetExceededError, RELATIVE_TOLERANCE
from helpers.mechanisms import exponential_mechanism, laplace_mechanism


@pytest.fixture(autouse=True)
def _english_messages():
    """The accountant's messages follow helpers.i18n (Chinese by default); these tests read English."""
    previous = i18n.get_lang()
    i18n.set_lang("en")
    yield
    i18n.set_lang(previous)


def test_refusal_and_repr_follow_the_notebook_language():
    acc = BudgetAccountant(1.0)
    acc.spend(0.6, label="q1")
    i18n.set_lang("zh")
    assert repr(acc) == "BudgetAccountant(已消耗 ε = 0.6 / 1，δ = 0 / 0，共 1 个查询)"
    with pytest.raises(BudgetExceededError, match=r"拒绝查询 'q2'：它要消耗 ε = 0.5，但总预算 1 中已消耗 0.6，只剩 0.4") as refusal:
        acc.spend(0.5, label="q2")
    assert not any("a" <= ch <= "z" for ch in re.split("[:：]", str(refusal.value), maxsplit=1)[1].replace("'q2'", ""))
    i18n.set_lang("en")
    assert repr(acc) == "BudgetAccountant(spent ε = 0.6 of 1, δ = 0 of 0, 1 queries)"


def test_seed_001_split_is_accepted_exactly_and_one_more_query_refused():
    acc = BudgetAccountant(1.0)
    for eps, label in [(0.5, "sum"), (0.3, "mean"), (0.2, "clusters")]:
        acc.spend(eps, label=label)
    assert acc.spent == 1.0
    assert acc.remaining == 0.0
    with pytest.raises(BudgetExceededError, match=r"'extra' refused: it requests ε = 0.001.*ε = 1 of 1 is already spent.*only 0 remains"):
        acc.spend(1e-3, label="extra")
    assert [r.label for r in acc.history] == ["sum", "mean", "clusters"]
    assert acc.spent == 1.0  # the refused query spent nothing


def test_decimal_budgets_that_do_not_add_exactly_in_binary():
    acc = BudgetAccountant(1.0)
    for _ in range(10):
        acc.spend(0.1)
    assert acc.remaining == 0.0
    acc2 = BudgetAccountant(0.6)
    acc2.spend(0.1)
    acc2.spend(0.2)
    acc2.spend(0.3)  # 0.1 + 0.2 + 0.3 > 0.6 in naive float addition
    assert 0.1 + 0.2 + 0.3 > 0.6


def test_tolerance_is_tiny():
    acc = BudgetAccountant(1.0)
    acc.spend(1.0)
    with pytest.raises(BudgetExceededError):
        acc.spend(1e-9)
    assert RELATIVE_TOLERANCE <= 1e-12


def test_refused_query_spends_nothing_and_later_smaller_query_fits():
    acc = BudgetAccountant(1.0)
    acc.spend(0.7)
    with pytest.raises(BudgetExceededError):
        acc.spend(0.4, label="too big")
    assert acc.spent == pytest.approx(0.7)
    acc.spend(0.3)
    assert acc.remaining == pytest.approx(0.0, abs=1e-15)


def test_budget_error_is_a_value_error():
    assert issubclass(BudgetExceededError, ValueError)


def test_parallel_composition_charges_the_maximum():
    acc = BudgetAccountant(1.0)
    record = acc.parallel([0.1, 0.4, 0.2, 0.1, 0.1], label="age histogram")
    assert record.epsilon == 0.4 and record.composition == "parallel"
    assert record.parts == (0.1, 0.4, 0.2, 0.1, 0.1)
    assert acc.spent == pytest.approx(0.4)
    acc.parallel([0.6] * 5)
    assert acc.remaining == pytest.approx(0.0, abs=1e-15)
    with pytest.raises(BudgetExceededError, match="refused"):
        acc.parallel([0.01, 0.01])


def test_delta_adds_up_sequentially_and_max_in_parallel():
    acc = BudgetAccountant(1.0, total_delta=1e-5)
    acc.spend(0.2, delta=4e-6)
    acc.parallel([0.1, 0.1], deltas=[1e-6, 5e-6])
    assert acc.spent_delta == pytest.approx(9e-6)
    with pytest.raises(BudgetExceededError, match=r"requests δ = 2e-06"):
        acc.spend(0.1, delta=2e-6)
    pure = BudgetAccountant(1.0)
    with pytest.raises(BudgetExceededError, match="δ"):
        pure.spend(0.1, delta=1e-9)


def test_laplace_spends_then_releases_with_the_mechanism():
    acc = BudgetAccountant(1.0)
    got = acc.laplace(90.0, 1.0, 0.5, np.random.default_rng(5), label="zoo count")
    assert got == laplace_mechanism(90.0, 1.0, 0.5, np.random.default_rng(5))
    assert acc.history[-1].label == "zoo count" and acc.spent == 0.5
    rng = np.random.default_rng(6)
    state = rng.bit_generator.state
    with pytest.raises(BudgetExceededError, match="'second' refused"):
        acc.laplace(90.0, 1.0, 0.6, rng, label="second")
    assert rng.bit_generator.state == state  # a refused query draws no noise
    with pytest.raises(ValueError, match=r"parameter 'sensitivity'"):
        acc.laplace(90.0, -1.0, 0.1, rng)
    assert acc.spent == 0.5  # an invalid query spends nothing
    idx = acc.exponential([30, 25, 8, 2], 1.0, 0.5, np.random.default_rng(9))
    assert idx == exponential_mechanism([30, 25, 8, 2], 0.5, 1.0, np.random.default_rng(9))
    assert acc.remaining == 0.0


@pytest.mark.parametrize("epsilon", [0.0, -0.1, float("nan"), float("inf"), "0.1", None])
def test_invalid_epsilon_is_a_value_error_naming_it(epsilon):
    acc = BudgetAccountant(1.0)
    with pytest.raises(ValueError, match=r"BudgetAccountant.spend: parameter 'epsilon'"):
        acc.spend(epsilon)
    with pytest.raises(ValueError, match=r"BudgetAccountant: parameter 'total_epsilon'"):
        BudgetAccountant(epsilon)
    with pytest.raises(ValueError, match=r"parameter 'epsilons'"):
        acc.parallel([0.1, epsilon])
    assert acc.spent == 0.0


@pytest.mark.parametrize("delta", [-1e-6, 1.0, 1.5, float("nan")])
def test_invalid_delta(delta):
    with pytest.raises(ValueError, match=r"parameter 'total_delta'"):
        BudgetAccountant(1.0, delta)
    with pytest.raises(ValueError, match=r"parameter 'delta'"):
        BudgetAccountant(1.0, 1e-5).spend(0.1, delta=delta)


def test_other_invalid_arguments():
    acc = BudgetAccountant(1.0)
    with pytest.raises(ValueError, match=r"parameter 'epsilons'"):
        acc.parallel([])
    with pytest.raises(ValueError, match=r"parameter 'deltas'"):
        acc.parallel([0.1, 0.2], deltas=[0.0])
    with pytest.raises(ValueError, match=r"parameter 'label'"):
        acc.spend(0.1, label=3)
    with pytest.raises(ValueError, match=r"parameter 'rng'"):
        acc.laplace(1.0, 1.0, 0.1, rng=42)
    assert acc.spent == 0.0 and acc.history == []
    assert "0 of 1" in repr(acc)


def test_docstring_examples_of_helpers_budget():
    import doctest

    import helpers.budget

    result = doctest.testmod(helpers.budget, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
