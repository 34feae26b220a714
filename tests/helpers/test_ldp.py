"""Tests of helpers.ldp (textbook §6.4, §6.5.1; seed 004).

Statistical tests: each stated with its false-failure probability for a
correct implementation (<= 1e-6 per test, Bonferroni over the checks inside
a test). z-tests use |z| < Z (Z = 5.3 -> two-sided p = 1.2e-7 per check);
chi-square tests reject at p < 1e-7. Variance checks compare the sample
variance with the formula using the asymptotic normal law of s^2
(Var(s^2) ~ (m4 - s^4)/N), also at |z| < Z. Several tests also run the
same check on a deliberately broken sampler and require it to fail there
(a built-in power check); those power figures were measured as noted.
"""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from helpers import ldp
from helpers.mechanisms import rr_correct

Z = 5.3
P_CHI = 1e-7


def z_mean(samples, mean, var):
    samples = np.asarray(samples, dtype=float)
    return (samples.mean() - mean) / math.sqrt(var / samples.size)


def z_var(samples, var):
    x = np.asarray(samples, dtype=float)
    s2 = x.var(ddof=1)
    m4 = np.mean((x - x.mean()) ** 4)
    return (s2 - var) / math.sqrt((m4 - s2 ** 2) / x.size)


def chi2_p(observed, probs):
    observed = np.asarray(observed, dtype=float)
    return stats.chisquare(observed, observed.sum() * np.asarray(probs)).pvalue


# --------------------------------------------------------------------------- pure protocol formulas

def test_pure_estimate_exact_values():
    # k = 3, ε = ln 2: p = 2/4, q = 1/4; reports 0,0,1,2 -> C = (2, 1, 1)
    p, q = ldp.grr_probabilities(3, math.log(2))
    assert p == pytest.approx(0.5) and q == pytest.approx(0.25)
    assert ldp.grr_estimate([0, 0, 1, 2], 3, math.log(2)) == pytest.approx([4.0, 0.0, 0.0])
    assert ldp.pure_estimate([2, 1, 1], 4, 0.5, 0.25) == pytest.approx([4.0, 0.0, 0.0])


def test_grr_with_k2_is_the_textbook_example():
    # §6.4.2: 20 people, p = 0.8, 14 report "male" -> 16.7 / 3.3
    eps = math.log(0.8 / 0.2)
    reports = np.array([0] * 14 + [1] * 6)
    est = ldp.grr_estimate(reports, 2, eps)
    assert est == pytest.approx([rr_correct(20, 14, 0.8), rr_correct(20, 6, 0.8)])
    assert est[0] == pytest.approx(16.6667, abs=1e-3) and est[1] == pytest.approx(3.3333, abs=1e-3)


def test_pure_variance_formula_and_named_special_cases():
    n, eps = 1000, 1.3
    e = math.exp(eps)
    p, q = ldp.oue_probabilities(eps)
    assert ldp.oue_variance(n, eps) == pytest.approx(4 * n * e / (e - 1) ** 2)
    assert ldp.grr_variance(n, 5, eps) == pytest.approx(n * (e + 5 - 2) / (e - 1) ** 2)
    p, q = 0.7, 0.2
    assert ldp.pure_variance(n, p, q, 0.3) == pytest.approx(
        n * q * (1 - q) / (p - q) ** 2 + n * 0.3 * (1 - p - q) / (p - q))
    assert ldp.pure_variance(n, p, q, [0.0, 0.3]) == pytest.approx(
        [ldp.pure_variance(n, p, q), ldp.pure_variance(n, p, q, 0.3)])


def test_grr_probabilities_ratio_and_sum():
    for k, eps in [(2, 0.5), (4, 1.0), (10, 3.0), (3, 800.0)]:
        p, q = ldp.grr_probabilities(k, eps)
        assert p + (k - 1) * q == pytest.approx(1.0)
        if eps < 700:
            assert p / q == pytest.approx(math.exp(eps))
        assert math.isfinite(p) and math.isfinite(q)


# --------------------------------------------------------------------------- GRR / OUE sampling

def grr_broken(values, k, eps, rng):
    """Mistake: when not kept, draw from all k values (true value included)."""
    v = np.asarray(values)
    p, _ = ldp.grr_probabilities(k, eps)
    return np.where(rng.random(v.shape) < p, v, rng.integers(0, k, v.shape))


def test_grr_transition_probabilities_chi_square():
    # false failure <= 2 * 1e-7 (two chi-square tests). Power: the broken
    # sampler is rejected at n = 200,000 (p-value 0.0 in double precision, measured).
    k, eps, n = 4, 1.0, 200_000
    rng = np.random.default_rng(11)
    p, q = ldp.grr_probabilities(k, eps)
    out = ldp.grr_perturb(np.full(n, 2), k, eps, rng)
    expected = [q, q, p, q]
    assert chi2_p(np.bincount(out, minlength=k), expected) > P_CHI
    broken = grr_broken(np.full(n, 2), k, eps, rng)
    assert chi2_p(np.bincount(broken, minlength=k), expected) < P_CHI


def test_grr_shapes_scalar_and_seed():
    rng = np.random.default_rng(0)
    assert isinstance(ldp.grr_perturb(1, 3, 1.0, rng), int)
    out = ldp.grr_perturb(np.zeros((5, 7), dtype=int), 3, 1.0, rng)
    assert out.shape == (5, 7) and out.min() >= 0 and out.max() <= 2
    a = ldp.grr_perturb(np.arange(50) % 3, 3, 0.5, np.random.default_rng(42))
    b = ldp.grr_perturb(np.arange(50) % 3, 3, 0.5, np.random.default_rng(42))
    assert np.array_equal(a, b)


def test_grr_estimate_unbiased_and_variance():
    # R = 400 replicates of n = 2,000 users. Unbiasedness: 4 z-tests at Z
    # (<= 5e-7). Variance: (R-1)s^2/σ^2 within the chi-square(R-1) 1e-7 and
    # 1 - 1e-7 quantiles for each of 4 values (<= 8e-7; the estimates are
    # sums of 2,000 terms, normal to a good approximation).
    k, eps, n, reps = 4, 1.0, 2000, 400
    rng = np.random.default_rng(5)
    truth = np.repeat(np.arange(k), [800, 600, 400, 200])
    f = np.bincount(truth, minlength=k) / n
    reports = ldp.grr_perturb(np.tile(truth, reps), k, eps, rng).reshape(reps, n)
    est = np.array([ldp.grr_estimate(r, k, eps) for r in reports])
    var = ldp.grr_variance(n, k, eps, f)
    for v in range(k):
        assert abs(z_mean(est[:, v], n * f[v], var[v])) < Z
        ratio = (reps - 1) * est[:, v].var(ddof=1) / var[v]
        assert stats.chi2.ppf(1e-7, reps - 1) < ratio < stats.chi2.ppf(1 - 1e-7, reps - 1)


def test_oue_bits_and_estimate():
    # chi-square on the own bit and on another bit (2e-7); unbiasedness
    # z-tests on 3 values (3.6e-7).
    k, eps, n = 3, 1.0, 150_000
    rng = np.random.default_rng(3)
    truth = np.repeat([0, 1, 2], [75_000, 50_000, 25_000])
    bits = ldp.oue_perturb(truth, k, eps, rng)
    assert bits.shape == (n, k) and bits.dtype == np.uint8 and set(np.unique(bits)) <= {0, 1}
    p, q = ldp.oue_probabilities(eps)
    own = bits[truth == 0, 0]
    other = bits[truth == 0, 1]
    assert chi2_p([np.sum(own == 0), np.sum(own == 1)], [1 - p, p]) > P_CHI
    assert chi2_p([np.sum(other == 0), np.sum(other == 1)], [1 - q, q]) > P_CHI
    est = ldp.oue_estimate(bits, eps)
    f = np.array([0.5, 1 / 3, 1 / 6])
    var = ldp.oue_variance(n, eps, f)
    for v in range(k):
        assert abs((est[v] - n * f[v]) / math.sqrt(var[v])) < Z


def test_oue_variance_matches_simulation():
    # one value with f = 0.2; 500 replicates of n = 1,000; chi-square bound (2e-7)
    eps, n, reps = 0.8, 1000, 500
    rng = np.random.default_rng(8)
    truth = np.array([0] * 200 + [1] * 800)
    est = np.array([ldp.oue_estimate(ldp.oue_perturb(truth, 2, eps, rng), eps)[0] for _ in range(reps)])
    ratio = (reps - 1) * est.var(ddof=1) / ldp.oue_variance(n, eps, 0.2)
    assert stats.chi2.ppf(1e-7, reps - 1) < ratio < stats.chi2.ppf(1 - 1e-7, reps - 1)


# --------------------------------------------------------------------------- RAPPOR

def test_rappor_hash_is_reproducible_across_processes():
    here = ldp.rappor_hash_positions("chrome://settings", 64, 3, cohort=2).tolist()
    code = ("from helpers.ldp import rappor_hash_positions as r;"
            "print(r('chrome://settings', 64, 3, cohort=2).tolist())")
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert other.stdout.strip() == str(here)
    # different cohorts use different hash functions (for this value)
    assert here != ldp.rappor_hash_positions("chrome://settings", 64, 3, cohort=3).tolist()


def test_rappor_bloom_rows():
    bloom = ldp.rappor_bloom(["a", "b", "a", 7], 16, 2)
    assert bloom.shape == (4, 16) and bloom.dtype == np.uint8
    assert np.all((bloom.sum(axis=1) >= 1) & (bloom.sum(axis=1) <= 2))
    assert np.array_equal(bloom[0], bloom[2])
    assert np.array_equal(ldp.rappor_bloom("a", 16, 2), bloom[0])
    assert np.array_equal(np.flatnonzero(bloom[1]), np.unique(ldp.rappor_hash_positions("b", 16, 2)))
    x = ldp.rappor_bloom_matrix(["a", "b"], 16, 2)
    assert x.shape == (16, 2) and np.array_equal(x[:, 0], bloom[0])


def test_rappor_permanent_and_instantaneous_probabilities():
    # four chi-square tests (4e-7)
    rng = np.random.default_rng(21)
    n, f, p, q = 200_000, 0.5, 0.25, 0.75
    ones, zeros = np.ones(n, dtype=np.uint8), np.zeros(n, dtype=np.uint8)
    b1, b0 = ldp.rappor_permanent(ones, f, rng), ldp.rappor_permanent(zeros, f, rng)
    assert chi2_p([np.sum(b1 == 0), np.sum(b1 == 1)], [f / 2, 1 - f / 2]) > P_CHI
    assert chi2_p([np.sum(b0 == 0), np.sum(b0 == 1)], [1 - f / 2, f / 2]) > P_CHI
    s1, s0 = ldp.rappor_instantaneous(ones, p, q, rng), ldp.rappor_instantaneous(zeros, p, q, rng)
    assert chi2_p([np.sum(s1 == 0), np.sum(s1 == 1)], [1 - q, q]) > P_CHI
    assert chi2_p([np.sum(s0 == 0), np.sum(s0 == 1)], [1 - p, p]) > P_CHI


def test_rappor_permanent_extremes_are_exact():
    rng = np.random.default_rng(0)
    b = np.array([[1, 0, 1, 1, 0]], dtype=np.uint8)
    assert np.array_equal(ldp.rappor_permanent(b, 0.0, rng), b)         # f = 0 keeps everything
    assert np.array_equal(ldp.rappor_instantaneous(b, 0.0, 1.0, rng), b)  # p = 0, q = 1 copies B'


def test_rappor_epsilons():
    assert ldp.rappor_epsilon_infinity(0.5, 2) == pytest.approx(4 * math.log(3))
    assert ldp.rappor_epsilon_infinity(0.0, 2) == math.inf
    f, p, q, h = 0.5, 0.5, 0.75, 2
    qs = 0.5 * f * (p + q) + (1 - f) * q
    ps = 0.5 * f * (p + q) + (1 - f) * p
    assert ldp.rappor_epsilon_one(f, p, q, h) == pytest.approx(h * math.log(qs * (1 - ps) / (ps * (1 - qs))))
    # one report never reveals more than the permanent response
    assert ldp.rappor_epsilon_one(f, p, q, h) < ldp.rappor_epsilon_infinity(f, h)


def test_rappor_client_memoizes_permanent_response_per_value():
    client = ldp.RapporClient(32, 2, 0.5, 0.25, 0.75, np.random.default_rng(4))
    first = client.permanent("apple")
    reports = np.array([client.report("apple") for _ in range(3000)])
    assert np.array_equal(client.permanent("apple"), first)
    assert len({r.tobytes() for r in reports[:50]}) > 1          # fresh instantaneous noise
    # averaging many reports reveals B' (not B): mean -> q on B'=1, p on B'=0.
    # z-tests per bit with Bonferroni over 32 bits at Z = 5.9 (<= 1.2e-7).
    expect = np.where(first == 1, 0.75, 0.25)
    z = (reports.mean(axis=0) - expect) / np.sqrt(expect * (1 - expect) / len(reports))
    assert np.all(np.abs(z) < 5.9)
    # another value gets its own permanent response; same user, same value: reused
    other = client.permanent("banana")
    assert np.array_equal(client.permanent("banana"), other)
    assert len(client._memo) == 2


def test_rappor_estimate_bits_unbiased_and_decode():
    # per-bit z-tests, Bonferroni over 32 bits at Z = 5.9 (<= 1.2e-7)
    k_bits, h, f, p, q = 32, 2, 0.5, 0.25, 0.75
    rng = np.random.default_rng(9)
    values = ["a"] * 50_000 + ["b"] * 30_000 + ["c"] * 20_000
    bloom = ldp.rappor_bloom(values, k_bits, h)
    reports = ldp.rappor_instantaneous(ldp.rappor_permanent(bloom, f, rng), p, q, rng)
    t = ldp.rappor_estimate_bits(reports, f, p, q)
    true_t = bloom.sum(axis=0)
    n = len(values)
    p11 = q * (1 - f / 2) + p * f / 2
    p01 = p * (1 - f / 2) + q * f / 2
    sd = np.sqrt(true_t * p11 * (1 - p11) + (n - true_t) * p01 * (1 - p01)) / ((1 - f) * (q - p))
    assert np.all(np.abs((t - true_t) / sd) < 5.9)
    assert np.allclose(ldp.rappor_estimate_bits(reports.sum(axis=0), f, p, q, n=n), t)
    # decoding: exact bit counts decode exactly; noisy ones within 3,000: over
    # 200 seeds the per-candidate error had sd <= 441 and max |error| 1,290,
    # so 3,000 is about 6.8 sd (normal tail ~1e-11 per candidate).
    cands = ["a", "b", "c", "d", "e"]
    x = ldp.rappor_bloom_matrix(cands, k_bits, h)
    assert np.linalg.matrix_rank(x) == len(cands)
    assert ldp.rappor_decode(true_t.astype(float), cands, k_bits, h) == pytest.approx([50_000, 30_000, 20_000, 0, 0], abs=1e-6)
    est = ldp.rappor_decode(t, cands, k_bits, h)
    assert np.all(np.abs(est - [50_000, 30_000, 20_000, 0, 0]) < 3000)
    assert np.all(est >= 0)


# --------------------------------------------------------------------------- mean estimation

EPS = [0.5, 2.0]
T_VALUES = [-1.0, -0.3, 0.0, 0.8, 1.0]


@pytest.mark.parametrize("eps", EPS)
def test_duchi_distribution_unbiased_variance(eps):
    # per ε: chi-square on P(+B) for 5 inputs (5e-7); mean z-test (1.2e-7)
    rng = np.random.default_rng(31)
    n = 40_000
    b = ldp.duchi_bound(eps)
    assert b == pytest.approx((math.exp(eps) + 1) / (math.exp(eps) - 1))
    for t in T_VALUES:
        out = ldp.duchi_perturb(np.full(n, t), eps, rng)
        assert set(np.unique(out)) <= {b, -b}
        p_plus = 0.5 + t * (math.exp(eps) - 1) / (2 * math.exp(eps) + 2)
        counts = [np.sum(out < 0), np.sum(out > 0)]
        if 0 < p_plus < 1:
            assert chi2_p(counts, [1 - p_plus, p_plus]) > P_CHI
    t = rng.uniform(-1, 1, 200_000)
    out = ldp.duchi_perturb(t, eps, rng)
    assert abs(z_mean(out - t, 0.0, np.mean(ldp.duchi_variance(t, eps)))) < Z


@pytest.mark.parametrize("eps", EPS)
def test_piecewise_support_centre_mass_unbiased_variance(eps):
    # per ε: 9 z-tests (centre mass, mean, variance for 3 inputs) at |z| < 5.7
    # (9 * 1.2e-8 = 1.1e-7)
    rng = np.random.default_rng(32)
    n = 100_000
    c = ldp.piecewise_constant(eps)
    pc = math.exp(eps / 2) / (math.exp(eps / 2) + 1)
    for t in [-1.0, 0.0, 0.6]:
        out = ldp.piecewise_perturb(np.full(n, t), eps, rng)
        assert out.min() >= -c and out.max() <= c
        left = (c + 1) * t / 2 - (c - 1) / 2
        right = left + c - 1
        centre = np.mean((out >= left) & (out <= right))
        assert abs((centre - pc) / math.sqrt(pc * (1 - pc) / n)) < 5.7
        assert abs(z_mean(out, t, ldp.piecewise_variance(t, eps))) < 5.7
        assert abs(z_var(out, ldp.piecewise_variance(t, eps))) < 5.7
    # density ratio inside / outside is e^ε: compare the density on two pieces
    # of length 0.1. sd of the log ratio: 0.029 (ε = 0.5), 0.018 (ε = 2), so
    # 0.15 is >= 5.2 sd (<= 2e-7).
    out = ldp.piecewise_perturb(np.zeros(400_000), eps, rng)
    w = 0.1
    inside = np.mean(np.abs(out) <= w / 2)
    outside = np.mean((out > c - w))
    ratio = inside / outside
    assert abs(math.log(ratio) - eps) < 0.15


def test_piecewise_variance_check_has_power():
    # Power: a PM that forgets the /2 in C (uses e^ε) is caught by the same
    # variance z-test at n = 100,000 (|z| between 646 and 668 over 20 seeds, ε = 2, t = 0).
    rng = np.random.default_rng(1)
    eps = 2.0
    wrong = ldp.piecewise_perturb(np.zeros(100_000), 2 * eps, rng)  # what "C with e^ε" produces
    assert abs(z_var(wrong, ldp.piecewise_variance(0.0, eps))) > 5.7


def test_scalar_in_scalar_out():
    rng = np.random.default_rng(0)
    for f in (ldp.duchi_perturb, ldp.piecewise_perturb, ldp.dct_perturb):
        assert isinstance(f(0.3, 1.0, rng), float)
        assert f(np.zeros((2, 3)), 1.0, rng).shape == (2, 3)
    assert isinstance(ldp.duchi_variance(0.1, 1.0), float)
    assert ldp.piecewise_variance([0.0, 1.0], 1.0).shape == (2,)


def test_dct_keep_probability_and_flags():
    e = math.exp(1.5)
    assert ldp.dct_keep_probability(1.5) == pytest.approx((e - 1) / (e + 1))
    assert ldp.dct_keep_probability(3.0, "eq6_typo") == pytest.approx(1 - 2 / (1 + 3.0))
    with pytest.raises(ValueError, match="eq6_typo"):
        ldp.dct_keep_probability(0.5, "eq6_typo")
    with pytest.raises(ValueError, match="flip"):
        ldp.dct_perturb(0.0, 1.0, np.random.default_rng(0), flip="fixed")
    assert ldp.dct_half_width(2.0) == pytest.approx(0.1)
    assert ldp.dct_half_width(2.0, alpha=1.0) == pytest.approx(0.5)


@pytest.mark.parametrize("flip", ["algorithm3", "eq6_typo"])
def test_dct_output_is_t_plus_uniform(flip):
    # KS test of (output - t)/d against U[-1, 1] at p > 1e-7, per input t
    # (3 tests: 3e-7), mean z-test (1.2e-7). The whole distribution is the
    # same for both flip rules: the bit is a fair coin either way.
    rng = np.random.default_rng(40)
    eps = 2.0
    d = ldp.dct_half_width(eps)
    for t in [-1.0, 0.25, 1.0]:
        out = ldp.dct_perturb(np.full(50_000, t), eps, rng, flip=flip)
        assert out.min() >= t - d and out.max() <= t + d
        assert stats.kstest((out - t) / d, stats.uniform(loc=-1, scale=2).cdf).pvalue > 1e-7
    t = rng.uniform(-1, 1, 100_000)
    out = ldp.dct_perturb(t, eps, rng, flip=flip)
    assert abs(z_mean(out - t, 0.0, d * d / 3)) < Z
    assert ldp.dct_variance(0.3, eps) == pytest.approx(d * d / 3)
    assert abs(z_var(out - t, d * d / 3)) < Z


def test_dct_paper_variance_does_not_match_algorithm():
    # the printed variance (α = 5, t = 0, ε = 1) is 2/375; Algorithm 3 gives d²/3 = 1/75
    assert ldp.dct_paper_variance(0.0, 1.0) == pytest.approx(2 / 375)
    assert ldp.dct_variance(0.0, 1.0) == pytest.approx(1 / 75)


def test_dct_is_not_ldp_support_argument():
    # deterministic: supports of t = -1 and t = 1 are disjoint for d < 1
    rng = np.random.default_rng(0)
    a = ldp.dct_perturb(np.full(10_000, -1.0), 1.0, rng)
    b = ldp.dct_perturb(np.full(10_000, 1.0), 1.0, rng)
    assert a.max() < b.min()


def test_ldp_linear_regression_learns():
    # Measured over 100 seeds: max |β - β*| = 0.062, mean 0.021 (PM, ε = 4,
    # n = 60,000); the bound 0.3 is ~5x the worst case seen (an empirical
    # statement, not a proof; the seed here is fixed, so the test is deterministic).
    rng = np.random.default_rng(2)
    n, beta_true = 60_000, np.array([0.4, -0.3])
    x = rng.uniform(-1, 1, (n, 2))
    y = np.clip(x @ beta_true + 0.05 * rng.normal(size=n), -1, 1)
    res = ldp.ldp_linear_regression(x, y, 4.0, rng, mechanism="pm", group_size=600, lr=1.0)
    assert res["steps"] == 100 and res["history"].shape == (101, 2)
    assert np.max(np.abs(res["beta"] - beta_true)) < 0.3


# --------------------------------------------------------------------------- validation

RNG = np.random.default_rng(0)
BAD_CALLS = [
    (ldp.grr_probabilities, (1, 1.0)),
    (ldp.grr_probabilities, (3, 0.0)),
    (ldp.grr_probabilities, (3, float("nan"))),
    (ldp.grr_perturb, ([0, 3], 3, 1.0, RNG)),
    (ldp.grr_perturb, ([0.5], 3, 1.0, RNG)),
    (ldp.grr_perturb, ([0, 1], 3, 1.0, None)),
    (ldp.grr_estimate, ([], 3, 1.0)),
    (ldp.grr_variance, (0, 3, 1.0)),
    (ldp.oue_perturb, ([0, 1], 2, -1.0, RNG)),
    (ldp.oue_estimate, ([[0, 2], [1, 0]], 1.0)),
    (ldp.oue_estimate, ([0, 1], 1.0)),
    (ldp.pure_estimate, ([1, 2], 10, 0.5, 0.5)),
    (ldp.pure_variance, (10, 0.5, 0.2, 1.5)),
    (ldp.rappor_bloom, (["a"], 0, 2)),
    (ldp.rappor_bloom, (["a"], 8, 0)),
    (ldp.rappor_permanent, ([1, 0], 1.5, RNG)),
    (ldp.rappor_permanent, ([1, 2], 0.5, RNG)),
    (ldp.rappor_instantaneous, ([1, 0], -0.1, 0.5, RNG)),
    (ldp.rappor_estimate_bits, ([[1, 0]], 0.5, 0.5, 0.5)),
    (ldp.rappor_estimate_bits, ([[1, 0]], 1.0, 0.25, 0.75)),
    (ldp.rappor_estimate_bits, ([3.0, 1.0], 0.5, 0.25, 0.75)),
    (ldp.rappor_decode, ([1.0, 2.0], ["a"], 3, 1)),
    (ldp.rappor_decode, ([1.0, 2.0, 3.0], [], 3, 1)),
    (ldp.rappor_epsilon_infinity, (0.5, 0)),
    (ldp.duchi_perturb, (1.5, 1.0, RNG)),
    (ldp.duchi_perturb, (float("nan"), 1.0, RNG)),
    (ldp.piecewise_perturb, (0.0, 0.0, RNG)),
    (ldp.piecewise_variance, (2.0, 1.0)),
    (ldp.dct_perturb, (0.0, 1.0, RNG), {"alpha": 0.0}),
    (ldp.dct_half_width, (float("inf"),)),
    (ldp.ldp_linear_regression, (np.zeros((10, 2)), np.zeros(10), 1.0, RNG), {"mechanism": "laplace"}),
    (ldp.ldp_linear_regression, (np.full((10, 2), 2.0), np.zeros(10), 1.0, RNG)),
    (ldp.ldp_linear_regression, (np.zeros((10, 2)), np.zeros(9), 1.0, RNG)),
]


@pytest.mark.parametrize("call", BAD_CALLS, ids=lambda c: c[0].__name__)
def test_invalid_parameters_raise_value_error(call):
    func, args, *rest = call
    kwargs = rest[0] if rest else {}
    with pytest.raises(ValueError, match=func.__name__):
        func(*args, **kwargs)


def test_rappor_client_validation():
    with pytest.raises(ValueError, match="RapporClient"):
        ldp.RapporClient(8, 2, 1.0, 0.25, 0.75, np.random.default_rng(0))
    with pytest.raises(ValueError, match="rng"):
        ldp.RapporClient(8, 2, 0.5, 0.25, 0.75, 7)


SAMPLERS = [
    ("grr_perturb", lambda rng: ldp.grr_perturb(np.arange(200) % 5, 5, 1.0, rng)),
    ("oue_perturb", lambda rng: ldp.oue_perturb(np.arange(200) % 5, 5, 1.0, rng)),
    ("rappor_permanent", lambda rng: ldp.rappor_permanent(np.ones((20, 16), dtype=np.uint8), 0.5, rng)),
    ("rappor_instantaneous", lambda rng: ldp.rappor_instantaneous(np.ones((20, 16), dtype=np.uint8), 0.25, 0.75, rng)),
    ("duchi_perturb", lambda rng: ldp.duchi_perturb(np.zeros(200), 1.0, rng)),
    ("piecewise_perturb", lambda rng: ldp.piecewise_perturb(np.zeros(200), 1.0, rng)),
    ("dct_perturb", lambda rng: ldp.dct_perturb(np.zeros(200), 1.0, rng)),
]


@pytest.mark.parametrize("name,draw", SAMPLERS, ids=[s[0] for s in SAMPLERS])
def test_samplers_use_only_the_given_rng(name, draw):
    # same seed -> same output (catches global np.random use); another seed -> different
    assert np.array_equal(draw(np.random.default_rng(123)), draw(np.random.default_rng(123)))
    assert not np.array_equal(draw(np.random.default_rng(123)), draw(np.random.default_rng(124)))


def test_rappor_client_epsilon_properties():
    client = ldp.RapporClient(16, 2, 0.5, 0.25, 0.75, np.random.default_rng(0))
    assert client.epsilon_infinity == pytest.approx(ldp.rappor_epsilon_infinity(0.5, 2))
    assert client.epsilon_one == pytest.approx(ldp.rappor_epsilon_one(0.5, 0.25, 0.75, 2))


def test_ldp_linear_regression_duchi_and_default_group_size():
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (2000, 3))
    y = np.clip(x @ np.array([0.2, 0.1, -0.1]), -1, 1)
    res = ldp.ldp_linear_regression(x, y, 1.0, rng, mechanism="duchi")
    assert res["steps"] >= 10 and res["history"].shape == (res["steps"] + 1, 3)
    assert np.all(np.isfinite(res["beta"]))
