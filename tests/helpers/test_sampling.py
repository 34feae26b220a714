"""Tests of helpers.sampling: the textbook LCG, its printed (wrong) Laplace formula, and the
corrected composition method. KS tests run at alpha = 1e-6, so a correct sampler fails with
probability 1e-6. Seeds are fixed."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from helpers.sampling import (
    LCG_M,
    TextbookLCG,
    composition_laplace,
    lcg_period,
    lcg_states,
    lcg_uniforms,
    textbook_printed_laplace,
)

ALPHA = 1e-6


def c_code_lcg(seed: int, count: int) -> list[int]:
    """The book's uniform_data loop (laplace.c) in plain Python integers."""
    out = []
    for _ in range(count):
        seed = 2045 * seed + 1
        seed = seed - (seed // 1048576) * 1048576
        out.append(seed)
    return out


@pytest.mark.parametrize("seed", [0, 1, 10000, 19999, LCG_M - 1, 5 * LCG_M + 3])
def test_lcg_matches_the_c_recurrence(seed):
    np.testing.assert_array_equal(lcg_states(seed, 3000), c_code_lcg(seed % LCG_M, 3000))
    np.testing.assert_array_equal(lcg_uniforms(seed, 3000), np.array(c_code_lcg(seed % LCG_M, 3000)) / 2**20)


def test_lcg_period_is_two_to_the_twenty():
    assert LCG_M == 1048576 == 2**20
    assert lcg_period(0) == 2**20
    assert lcg_period(10000) == 2**20
    # One full cycle visits every state exactly once: the period cannot be longer than m.
    cycle = lcg_states(12345, 2**20)
    assert np.unique(cycle).size == 2**20
    assert lcg_states(int(cycle[-1]), 1)[0] == cycle[0]  # X_{m+1} = X_1
    # Hull–Dobell conditions, and 2045 is not prime (the book says it is).
    assert math.gcd(1, 2**20) == 1 and (2045 - 1) % 4 == 0
    assert 2045 == 5 * 409


def test_lcg_sizes_and_validation():
    assert lcg_states(3, 0).shape == (0,)
    for n in (1, 2, 3, 7, 1000, 1025):
        np.testing.assert_array_equal(lcg_states(99, n), c_code_lcg(99, n))
    u = lcg_uniforms(5, 10_000)
    assert u.min() >= 0.0 and u.max() < 1.0
    with pytest.raises(ValueError, match=r"lcg_states: parameter 'seed'"):
        lcg_states(-1, 3)
    with pytest.raises(ValueError, match=r"lcg_states: parameter 'seed'"):
        lcg_states(1.5, 3)
    with pytest.raises(ValueError, match=r"lcg_states: parameter 'size'"):
        lcg_states(1, -3)


def test_textbook_lcg_object_continues_the_stream():
    g = TextbookLCG(10000)
    first = g.random()
    rest = g.random((2, 3))
    more = g.uniform(-1.0, 1.0, 4)
    stream = lcg_uniforms(10000, 11)
    assert type(first) is float and first == stream[0]
    np.testing.assert_array_equal(rest.ravel(), stream[1:7])
    np.testing.assert_allclose(more, -1.0 + 2.0 * stream[7:11])
    assert g.state == lcg_states(10000, 11)[-1]
    with pytest.raises(ValueError, match=r"parameter 'high'"):
        g.uniform(1.0, 1.0)
    with pytest.raises(ValueError, match=r"parameter 'size'"):
        g.random(-2)
    with pytest.raises(ValueError, match=r"parameter 'seed'"):
        TextbookLCG(-5)


def test_printed_formula_exact_values():
    beta = 2.0
    u1 = np.array([0.25, 0.5, 0.75, 0.9])
    u2 = np.array([0.1, 0.2, 0.3, 0.4])
    expected = [
        beta * math.log(0.5) + 0.1,
        beta * math.log(1.0) + 0.2,
        0.3 - beta * math.log(0.5),
        0.4 - beta * math.log(0.2),
    ]
    np.testing.assert_allclose(textbook_printed_laplace(u1, u2, beta), expected, rtol=1e-14)
    assert textbook_printed_laplace(0.0, 0.5, 1.0) == -math.inf  # ln(2 * 0), as printed
    assert type(textbook_printed_laplace(0.3, 0.5, 1.0)) is float


def _laplace_plus_uniform_cdf(x: np.ndarray, b: float) -> np.ndarray:
    """CDF of Lap(b) + U(0, 1): the integral of the Laplace CDF over [x - 1, x]."""

    def antiderivative(s):
        s = np.asarray(s, dtype=float)
        return np.where(s < 0, 0.5 * b * np.exp(np.minimum(s, 0) / b),
                        s + 0.5 * b * np.exp(-np.maximum(s, 0) / b))

    return antiderivative(x) - antiderivative(x - 1.0)


def test_printed_formula_is_laplace_plus_uniform_not_laplace():
    """The printed formula gives Lap(β) + U(0, 1), with mean 1/2, so a KS test against Lap(β)
    rejects it. A KS test against Lap(β) + U(0, 1) accepts it (alpha = 1e-6 both ways)."""
    rng = np.random.default_rng(7)
    n = 100_000
    beta = 1.0
    x = textbook_printed_laplace(rng.random(n), rng.random(n), beta)
    assert abs(x.mean() - 0.5) < 6 * math.sqrt((2 * beta**2 + 1 / 12) / n)
    assert stats.kstest(x, stats.laplace(scale=beta).cdf).pvalue < ALPHA
    assert stats.kstest(x, lambda t: _laplace_plus_uniform_cdf(t, beta)).pvalue > ALPHA


@pytest.mark.parametrize("b", [0.1, 1.0, 10.0])
def test_composition_method_is_laplace_with_power_check(b):
    """KS against Lap(b), n = 100 000, alpha = 1e-6; scale 0.9 b and 1.1 b must be rejected."""
    rng = np.random.default_rng(int(b * 1000))
    n = 100_000
    lap = stats.laplace(scale=b).cdf
    assert stats.kstest(composition_laplace(rng.random(n), rng.random(n), b), lap).pvalue > ALPHA
    for factor in (0.9, 1.1):
        wrong = composition_laplace(rng.random(n), rng.random(n), b * factor)
        assert stats.kstest(wrong, lap).pvalue < ALPHA


def test_composition_method_exact_values():
    b = 3.0
    got = composition_laplace([0.25, 0.75, 0.5, 0.9], [0.5, 0.5, 0.0, 0.75], b)
    np.testing.assert_allclose(got, [-b * math.log(2), b * math.log(2), 0.0, b * math.log(4)])
    assert math.isfinite(composition_laplace(0.1, 0.0, b))


def test_composition_method_with_lcg_uniforms_is_close_to_laplace():
    """The demo pairs (u1, u2) from consecutive outputs of the textbook LCG. Over 50 000 pairs
    the result passes the same KS test (alpha = 1e-6): the LCG is good enough for a histogram,
    but (see the period test) never for privacy."""
    u = lcg_uniforms(10000, 100_000)
    x = composition_laplace(u[0::2], u[1::2], 1.0)
    assert stats.kstest(x, stats.laplace(scale=1.0).cdf).pvalue > ALPHA


@pytest.mark.parametrize("func", [textbook_printed_laplace, composition_laplace])
def test_uniform_inputs_and_scale_are_validated(func):
    scale = "beta" if func is textbook_printed_laplace else "b"
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match=rf"parameter '{scale}'"):
            func(0.3, 0.3, bad)
    for bad in (1.0, -0.1, float("nan"), "x"):
        with pytest.raises(ValueError, match=r"parameter 'u1'"):
            func(bad, 0.3, 1.0)
        with pytest.raises(ValueError, match=r"parameter 'u2'"):
            func(0.3, bad, 1.0)


def test_docstring_examples_of_helpers_sampling():
    import doctest

    import helpers.sampling

    result = doctest.testmod(helpers.sampling, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
