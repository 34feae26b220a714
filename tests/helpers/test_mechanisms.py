"""Tests of helpers.mechanisms: exact checks first, then statistical tests with stated error rates.

Statistical tests use fixed seeds, so every run gives the same result. The stated false-failure
probability is the chance, over seeds, that a *correct* sampler fails. Every test runs at
alpha = 1e-6. Every distribution test also has a *power check*: the same test, on the same
number of samples from a realistically wrong sampler (scale times 0.9 or 1.1, or a missing
factor 2 in the exponent), must reject. A test that could not fail would prove nothing.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from helpers.mechanisms import (
    exponential_mechanism,
    exponential_probabilities,
    laplace_cdf,
    laplace_mechanism,
    laplace_noise,
    laplace_pdf,
    laplace_scale,
    rr_correct,
    rr_keep_probability,
    rr_perturb,
)

ALPHA = 1e-6
N_KS = 100_000  # KS power at a 10% scale error is ~1.0 at this n (notes/dp-testing.md)


def inverse_cdf_reference(u: np.ndarray, b: float) -> np.ndarray:
    """The Laplace inverse CDF written out independently of helpers.mechanisms."""
    u = np.asarray(u, dtype=float)
    out = np.empty_like(u)
    low = u < 0.5
    out[low] = b * np.log(2.0 * np.maximum(u[low], 2.0**-54))  # u = 0 clamped, see laplace_noise
    out[~low] = -b * np.log(2.0 * (1.0 - u[~low]))
    return out


def chi_square_pvalue(observed: np.ndarray, probabilities: np.ndarray) -> float:
    """Pearson chi-square goodness of fit. Cells with expected count < 5 are merged (smallest
    first) so that the chi-square approximation holds."""
    observed = np.asarray(observed, dtype=float)
    expected = np.asarray(probabilities, dtype=float) * observed.sum()
    pairs = sorted(zip(expected, observed))
    while len(pairs) > 1 and pairs[0][0] < 5:
        (e0, o0), (e1, o1) = pairs[0], pairs[1]
        pairs = sorted([(e0 + e1, o0 + o1), *pairs[2:]])
    exp, obs = [p[0] for p in pairs], [p[1] for p in pairs]
    assert len(exp) >= 2, "not enough cells with expected count >= 5"
    return float(stats.chisquare(obs, exp).pvalue)


# --- deterministic checks ------------------------------------------------------------------


@pytest.mark.parametrize("b", [0.1, 1.0, 37.5])
@pytest.mark.parametrize("seed", [0, 1, 20240601])
def test_laplace_noise_is_the_inverse_cdf_of_rng_random(b, seed):
    got = laplace_noise(b, 10_000, np.random.default_rng(seed))
    u = np.random.default_rng(seed).random(10_000)
    np.testing.assert_allclose(got, inverse_cdf_reference(u, b), rtol=1e-12, atol=1e-300)


def test_laplace_noise_same_seed_same_output_different_seed_differs():
    a = laplace_noise(2.0, 1000, np.random.default_rng(7))
    b = laplace_noise(2.0, 1000, np.random.default_rng(7))
    c = laplace_noise(2.0, 1000, np.random.default_rng(8))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_laplace_noise_shapes_and_types():
    rng = np.random.default_rng(0)
    scalar = laplace_noise(1.0, None, rng)
    assert type(scalar) is float
    assert laplace_noise(1.0, 5, rng).shape == (5,)
    arr = laplace_noise(1.0, (2, 3), rng)
    assert arr.shape == (2, 3) and arr.dtype == np.float64
    assert laplace_noise(1.0, 0, rng).shape == (0,)
    assert laplace_noise(1.0, np.int64(4), rng).shape == (4,)
    assert np.all(np.isfinite(laplace_noise(1.0, 100_000, rng)))


def test_laplace_noise_finite_at_u_equal_zero():
    """rng.random can return 0.0, where b ln(2u) = -inf; the sample must stay finite."""

    class ZeroFirst(np.random.Generator):
        def random(self, size=None, dtype=np.float64, out=None):
            u = super().random(size)
            u.flat[0] = 0.0
            return u

    x = laplace_noise(1.0, 4, ZeroFirst(np.random.PCG64(0)))
    assert np.all(np.isfinite(x)) and x[0] == pytest.approx(math.log(2.0**-53))


def test_laplace_mechanism_is_value_plus_laplace_noise_with_same_seed():
    value = np.array([[1.0, 2.0], [3.0, 4.0]])
    got = laplace_mechanism(value, 2.0, 0.5, np.random.default_rng(3))
    expected = value + laplace_noise(4.0, (2, 2), np.random.default_rng(3))
    np.testing.assert_array_equal(got, expected)
    scalar = laplace_mechanism(10, 1.0, 1.0, np.random.default_rng(3))
    assert type(scalar) is float
    assert scalar == 10 + laplace_noise(1.0, None, np.random.default_rng(3))
    assert isinstance(laplace_mechanism([1, 2, 3], 1.0, 1.0, np.random.default_rng(0)), np.ndarray)


def test_formula_functions():
    assert laplace_scale(1.0, 0.1) == pytest.approx(10.0)
    assert laplace_scale(3.0, 1.5) == pytest.approx(2.0)
    x = np.linspace(-5, 5, 41)
    np.testing.assert_allclose(laplace_pdf(x, 1.5), stats.laplace.pdf(x, scale=1.5), rtol=1e-12)
    np.testing.assert_allclose(laplace_cdf(x, 1.5), stats.laplace.cdf(x, scale=1.5), rtol=1e-12)


def test_exponential_mechanism_is_inverse_cdf_of_one_uniform():
    scores = np.array([30.0, 25.0, 8.0, 2.0])
    probs = exponential_probabilities(scores, 0.1, 1.0)
    cumulative = np.cumsum(probs)
    for seed in range(200):
        u = np.random.default_rng(seed).random()
        expected = int(np.argmax(cumulative > u))
        assert exponential_mechanism(scores, 0.1, 1.0, np.random.default_rng(seed)) == expected


def test_exponential_probabilities_stable_for_huge_scores():
    p = exponential_probabilities([1e6, 1e6 - 1, -1e6], 10.0, 1.0)
    assert np.all(np.isfinite(p)) and p.sum() == pytest.approx(1.0)
    assert p[0] == pytest.approx(1 / (1 + math.exp(-5.0)))
    np.testing.assert_allclose(exponential_probabilities([3, 1, 2], 0.0, 1.0), [1 / 3] * 3)


def test_rr_perturb_keeps_iff_uniform_below_p():
    bits = np.array([0, 1, 1, 0, 1, 0, 0, 1] * 100)
    eps = 0.7
    p = rr_keep_probability(eps)
    got = rr_perturb(bits, eps, np.random.default_rng(11))
    u = np.random.default_rng(11).random(bits.shape)
    expected = np.where(u < p, bits, 1 - bits)
    np.testing.assert_array_equal(got, expected)
    assert set(np.unique(got)) <= {0, 1}
    assert type(rr_perturb(1, eps, np.random.default_rng(0))) is int
    np.testing.assert_array_equal(
        rr_perturb(bits.astype(bool), eps, np.random.default_rng(11)), expected
    )


def test_rr_keep_probability_and_inverse():
    for eps in [0.01, 0.5, math.log(4), 3.0, 10.0]:
        p = rr_keep_probability(eps)
        assert p == pytest.approx(math.exp(eps) / (math.exp(eps) + 1))
        assert math.log(p / (1 - p)) == pytest.approx(eps, rel=1e-9)
    assert rr_keep_probability(math.log(4)) == pytest.approx(0.8)
    assert rr_keep_probability(800.0) == 1.0  # no overflow


def test_rr_correct_is_unbiased_formula():
    assert rr_correct(20, 14, 0.8) == pytest.approx((20 * (0.8 - 1) + 14) / 0.6)
    np.testing.assert_allclose(rr_correct(20, np.array([14, 6]), 0.8), [50 / 3, 10 / 3])
    assert rr_correct(10, 3, 1.0) == pytest.approx(3.0)  # truthful answers need no correction
    assert rr_correct(10, 3, 0.0) == pytest.approx(7.0)  # always-lying answers are inverted


# --- statistical tests ---------------------------------------------------------------------


def ks_pvalue(sample: np.ndarray, b: float, loc: float = 0.0) -> float:
    return float(stats.kstest(sample, stats.laplace(loc=loc, scale=b).cdf).pvalue)


@pytest.mark.parametrize("b", [0.5, 10.0])
def test_laplace_noise_ks_with_power_check(b):
    """KS test against scipy's Laplace(0, b), n = 100 000, alpha = 1e-6.

    False-failure probability for a correct sampler: 1e-6 (the KS p-value is uniform under
    the null). Power check: samples drawn with scale 0.9 b and 1.1 b must be rejected at the
    same alpha and n, as Tumult does with its built-in power check.
    """
    rng = np.random.default_rng(1000 + int(b * 10))
    assert ks_pvalue(laplace_noise(b, N_KS, rng), b) > ALPHA
    for factor in (0.9, 1.1):
        wrong = laplace_noise(b * factor, N_KS, rng)
        assert ks_pvalue(wrong, b) < ALPHA, f"KS test cannot see a scale error of {factor}"


def test_laplace_mechanism_ks_with_power_check():
    """Laplace mechanism at value 5, Δ = 2, ε = 0.5: Laplace(loc 5, scale 4). Same alpha/power as above."""
    rng = np.random.default_rng(2024)
    values = np.full(N_KS, 5.0)
    assert ks_pvalue(laplace_mechanism(values, 2.0, 0.5, rng), 4.0, loc=5.0) > ALPHA
    for factor in (0.9, 1.1):
        wrong = laplace_mechanism(values, 2.0 * factor, 0.5, rng)
        assert ks_pvalue(wrong, 4.0, loc=5.0) < ALPHA


def test_exponential_mechanism_chi_square_with_power_check():
    """Chi-square on 20 000 draws (Table 6-4 scores, ε = 0.1), alpha = 1e-6.

    False-failure probability 1e-6 (asymptotic chi-square; all expected counts are >= 2000).
    Power check: a mechanism missing the factor 2 in exp(ε q / (2Δ)) is the same as running
    the correct one at 2ε. It must be rejected at the same n and alpha.
    """
    scores = [30.0, 25.0, 8.0, 2.0]
    probs = exponential_probabilities(scores, 0.1, 1.0)
    rng = np.random.default_rng(42)
    n = 20_000
    draws = [exponential_mechanism(scores, 0.1, 1.0, rng) for _ in range(n)]
    assert chi_square_pvalue(np.bincount(draws, minlength=4), probs) > ALPHA
    wrong = [exponential_mechanism(scores, 0.2, 1.0, rng) for _ in range(n)]
    assert chi_square_pvalue(np.bincount(wrong, minlength=4), probs) < ALPHA


def test_exponential_mechanism_merges_rare_cells():
    """At ε = 1 two of the four expected counts are below 5 and must be merged, not dropped."""
    scores = [30.0, 25.0, 8.0, 2.0]
    probs = exponential_probabilities(scores, 1.0, 1.0)
    rng = np.random.default_rng(5)
    draws = [exponential_mechanism(scores, 1.0, 1.0, rng) for _ in range(5_000)]
    assert chi_square_pvalue(np.bincount(draws, minlength=4), probs) > ALPHA


def test_rr_perturb_chi_square_with_power_check():
    """Chi-square on the 2x2 table (true bit, reported bit), 10**6 users, alpha = 1e-6.

    False-failure probability 1e-6. Power check: using ε/2 (a missing factor 2) changes the
    keep probability from 0.731 to 0.622, and the test must reject it.
    """
    rng = np.random.default_rng(99)
    n = 1_000_000
    bits = (rng.random(n) < 0.3).astype(np.uint8)
    n1 = int(bits.sum())
    n0 = n - n1

    def observed(reported):
        return np.array([
            np.sum((bits == 0) & (reported == 0)), np.sum((bits == 0) & (reported == 1)),
            np.sum((bits == 1) & (reported == 0)), np.sum((bits == 1) & (reported == 1)),
        ])

    p = rr_keep_probability(1.0)
    expected = np.array([n0 * p, n0 * (1 - p), n1 * (1 - p), n1 * p]) / n
    assert chi_square_pvalue(observed(rr_perturb(bits, 1.0, rng)), expected) > ALPHA
    assert chi_square_pvalue(observed(rr_perturb(bits, 0.5, rng)), expected) < ALPHA


# --- invalid parameters: every one is a ValueError naming the parameter --------------------

RNG = np.random.default_rng(0)
BAD_NUMBERS = [0.0, -1.0, float("nan"), float("inf"), "1", None, True]


@pytest.mark.parametrize("b", [0.0, -2.0, float("nan"), float("inf"), "1", None])
def test_laplace_noise_rejects_bad_scale(b):
    with pytest.raises(ValueError, match=r"laplace_noise: parameter 'b'"):
        laplace_noise(b, 3, RNG)


@pytest.mark.parametrize("size", [-1, 2.5, "3", (2, -1), [2, 3], True])
def test_laplace_noise_rejects_bad_size(size):
    with pytest.raises(ValueError, match=r"parameter 'size'"):
        laplace_noise(1.0, size, RNG)


@pytest.mark.parametrize("rng", [None, 0, np.random.RandomState(0), np.random])
def test_rng_must_be_a_generator(rng):
    for call in (
        lambda: laplace_noise(1.0, 3, rng),
        lambda: laplace_mechanism(1.0, 1.0, 1.0, rng),
        lambda: exponential_mechanism([1, 2], 1.0, 1.0, rng),
        lambda: rr_perturb([0, 1], 1.0, rng),
    ):
        with pytest.raises(ValueError, match=r"parameter 'rng' must be a numpy.random.Generator"):
            call()


@pytest.mark.parametrize("epsilon", BAD_NUMBERS)
def test_epsilon_must_be_positive_finite(epsilon):
    for call in (
        lambda: laplace_mechanism(1.0, 1.0, epsilon, RNG),
        lambda: laplace_scale(1.0, epsilon),
        lambda: rr_keep_probability(epsilon),
        lambda: rr_perturb([0, 1], epsilon, RNG),
    ):
        with pytest.raises(ValueError, match=r"parameter 'epsilon'"):
            call()


@pytest.mark.parametrize("epsilon", [-0.1, float("nan"), float("inf"), "0.1"])
def test_exponential_epsilon_must_be_nonnegative_finite(epsilon):
    with pytest.raises(ValueError, match=r"exponential_probabilities: parameter 'epsilon'"):
        exponential_probabilities([1, 2], epsilon, 1.0)
    with pytest.raises(ValueError, match=r"parameter 'epsilon'"):
        exponential_mechanism([1, 2], epsilon, 1.0, RNG)


@pytest.mark.parametrize("sensitivity", [0.0, -1.0, float("nan"), float("inf")])
def test_sensitivity_must_be_positive(sensitivity):
    with pytest.raises(ValueError, match=r"laplace_mechanism: parameter 'sensitivity'"):
        laplace_mechanism(1.0, sensitivity, 1.0, RNG)
    with pytest.raises(ValueError, match=r"parameter 'sensitivity'"):
        exponential_probabilities([1, 2], 1.0, sensitivity)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), [1.0, float("nan")], "abc"])
def test_laplace_mechanism_rejects_non_finite_value(value):
    with pytest.raises(ValueError, match=r"laplace_mechanism: parameter 'value'"):
        laplace_mechanism(value, 1.0, 1.0, RNG)


@pytest.mark.parametrize("scores", [[], [[1, 2]], [1, float("nan")], [1, float("inf")]])
def test_scores_must_be_nonempty_finite_1d(scores):
    with pytest.raises(ValueError, match=r"parameter 'scores'"):
        exponential_probabilities(scores, 1.0, 1.0)


@pytest.mark.parametrize("bits", [[0, 2], [0.5], [-1], ["0", "1"]])
def test_rr_perturb_rejects_non_binary(bits):
    with pytest.raises(ValueError, match=r"rr_perturb: parameter 'bits'"):
        rr_perturb(bits, 1.0, RNG)


@pytest.mark.parametrize("p", [0.5, -0.1, 1.2, float("nan"), float("inf")])
def test_rr_correct_rejects_bad_p(p):
    with pytest.raises(ValueError, match=r"rr_correct: parameter 'p'"):
        rr_correct(20, 14, p)


@pytest.mark.parametrize("n1", [-1, 21, float("nan"), [5, 25]])
def test_rr_correct_rejects_bad_n1(n1):
    with pytest.raises(ValueError, match=r"rr_correct: parameter 'n1'"):
        rr_correct(20, n1, 0.8)


@pytest.mark.parametrize("n", [0, -5, float("nan")])
def test_rr_correct_rejects_bad_n(n):
    with pytest.raises(ValueError, match=r"rr_correct: parameter 'n'"):
        rr_correct(n, 0, 0.8)
