"""Tests of helpers.queries: counting queries, histograms, their Laplace releases, and the
repeated-query attack (the exact danger probability is checked against closed forms, the
normal approximation and a simulation)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from helpers.data import load_ages, load_medical, load_zoo
from helpers.mechanisms import laplace_mechanism, laplace_noise
from helpers.queries import (
    abs_noise_quantile,
    averaged_noisy_answers,
    count_greater,
    count_query,
    danger_probability,
    histogram_counts,
    noisy_count,
    noisy_histogram,
    simulated_danger_probability,
)

ALPHA = 1e-6


def test_counting_queries_on_the_zoo():
    zoo, nb = load_zoo(), load_zoo(neighbour=True)
    assert count_greater(zoo.carrots, 55) == 90
    assert count_greater(nb.carrots, 55) == 89
    assert count_query(zoo.carrots, lambda c: c >= 55) == 90
    assert count_query(zoo.animal, lambda a: a == "Dugong") == 1
    assert count_greater([1, 2, 3], 2) == 1  # strict
    assert type(count_greater(zoo.carrots, 55)) is int


def test_histogram_counts_table_6_5():
    assert histogram_counts(load_ages().age, [12, 13, 14, 15]).tolist() == [2, 2, 0, 2]
    assert histogram_counts(["a", "b", "a"], ["a", "b", "c"]).tolist() == [2, 1, 0]
    with pytest.raises(ValueError, match=r"histogram_counts: parameter 'values'"):
        histogram_counts([12, 16], [12, 13, 14, 15])
    with pytest.raises(ValueError, match=r"parameter 'categories'"):
        histogram_counts([1], [])
    with pytest.raises(ValueError, match=r"parameter 'categories'"):
        histogram_counts([1], [1, 1])


def test_count_query_validation():
    with pytest.raises(ValueError, match=r"count_query: parameter 'predicate'"):
        count_query([1, 2], "c > 1")
    with pytest.raises(ValueError, match=r"count_query: parameter 'predicate'"):
        count_query([1, 2], lambda c: c + 1)
    with pytest.raises(ValueError, match=r"count_greater: parameter 'values'"):
        count_greater([[1, 2]], 1)
    with pytest.raises(ValueError, match=r"count_greater: parameter 'threshold'"):
        count_greater([1, 2], float("nan"))
    with pytest.raises(ValueError, match=r"count_greater: parameter 'values'"):
        count_greater([1, float("nan")], 0)


def test_noisy_releases_use_the_laplace_mechanism():
    counts = load_medical().counts
    got = noisy_histogram(counts, 0.1, np.random.default_rng(4))
    np.testing.assert_array_equal(got, counts + laplace_noise(10.0, counts.shape, np.random.default_rng(4)))
    assert noisy_count(90, 0.5, np.random.default_rng(4)) == laplace_mechanism(90.0, 1.0, 0.5, np.random.default_rng(4))
    assert type(noisy_count(90, 0.5, np.random.default_rng(4))) is float
    twice = noisy_histogram(counts, 0.1, np.random.default_rng(4), sensitivity=2.0)
    np.testing.assert_allclose(twice - counts, 2 * (got - counts))


@pytest.mark.parametrize("counts", [[], np.zeros((2, 2)), [1.0, float("nan")], "abc", [[]]])
def test_noisy_histogram_rejects_bad_counts(counts):
    with pytest.raises(ValueError, match=r"noisy_histogram: parameter 'counts'"):
        noisy_histogram(counts, 1.0, np.random.default_rng(0))


@pytest.mark.parametrize("epsilon", [0.0, -1.0, float("nan"), float("inf")])
def test_noisy_releases_reject_bad_epsilon(epsilon):
    with pytest.raises(ValueError, match=r"parameter 'epsilon'"):
        noisy_histogram([1, 2], epsilon, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"parameter 'epsilon'"):
        noisy_count(3, epsilon, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"parameter 'epsilon'"):
        danger_probability(epsilon, 10)
    with pytest.raises(ValueError, match=r"parameter 'epsilon'"):
        averaged_noisy_answers(0, epsilon, 10, np.random.default_rng(0))


def test_noisy_releases_reject_bad_rng():
    with pytest.raises(ValueError, match=r"parameter 'rng'"):
        noisy_histogram([1, 2], 1.0, 42)
    with pytest.raises(ValueError, match=r"parameter 'rng'"):
        averaged_noisy_answers(0, 1.0, 3, None)


def test_averaged_noisy_answers_is_the_mean_of_laplace_noise():
    b, k = 10.0, 50
    one = averaged_noisy_answers(7.0, 0.1, k, np.random.default_rng(1))
    assert type(one) is float
    assert one == pytest.approx(7.0 + laplace_noise(b, k, np.random.default_rng(1)).mean(), rel=1e-12)
    many = averaged_noisy_answers(7.0, 0.1, k, np.random.default_rng(1), trials=30)
    expected = 7.0 + laplace_noise(b, (30, k), np.random.default_rng(1)).mean(axis=1)
    np.testing.assert_allclose(many, expected, rtol=1e-12)
    # Chunked path (k * trials > 2**22) draws the same stream in the same order.
    k_big = 2**21
    chunked = averaged_noisy_answers(0.0, 1.0, k_big, np.random.default_rng(2), trials=3)
    direct = laplace_noise(1.0, (3, k_big), np.random.default_rng(2)).mean(axis=1)
    np.testing.assert_allclose(chunked, direct, rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match=r"parameter 'k'"):
        averaged_noisy_answers(0, 1.0, 0, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"parameter 'trials'"):
        averaged_noisy_answers(0, 1.0, 2, np.random.default_rng(0), trials=0)


def test_abs_noise_quantile_is_exponential_quantile():
    q = np.array([0.5, 0.9, 0.95, 0.99, 0.999])
    for eps in (1.0, 0.1, 0.01):
        np.testing.assert_allclose(abs_noise_quantile(q, eps), stats.expon.ppf(q, scale=1 / eps), rtol=1e-12)
    assert abs_noise_quantile(0.0, 1.0) == 0.0
    with pytest.raises(ValueError, match=r"parameter 'q'"):
        abs_noise_quantile(1.0, 1.0)


def test_danger_probability_closed_forms():
    """k = 1: P(|Y| < h) = 1 - e^{-h/b}. k = 2: the sum S of two Lap(b) has
    P(|S| < t) = 1 - e^{-t/b}(1 + t/(2b)), with t = 2h."""
    for eps in (0.01, 0.1, 1.0, 3.0):
        b = 1 / eps
        assert danger_probability(eps, 1) == pytest.approx(1 - math.exp(-0.5 / b), abs=1e-9)
        t = 1.0
        assert danger_probability(eps, 2) == pytest.approx(1 - math.exp(-t / b) * (1 + t / (2 * b)), abs=1e-9)


def test_danger_probability_matches_normal_approximation_for_large_k():
    """For k >= 1000 the mean of k Laplace variables is normal to within about 1e-3 (its excess
    kurtosis is 3/k). The quadrature must agree with the normal law to that order."""
    for eps in (1.0, 0.1, 0.01):
        for k in (1000, 10_000, 100_000):
            sd = math.sqrt(2) / (eps * math.sqrt(k))
            normal = 1 - 2 * stats.norm.sf(0.5 / sd)
            assert danger_probability(eps, k) == pytest.approx(normal, abs=2e-3)


@pytest.mark.parametrize("eps,k,trials", [(0.1, 100, 20_000), (1.0, 10, 20_000), (0.01, 1000, 4_000)])
def test_danger_probability_matches_simulated_attack(eps, k, trials):
    """Run the attack `trials` times with laplace_noise. The number of successes is
    Binomial(trials, p_exact); a two-sided binomial test at alpha = 1e-6 must accept."""
    rng = np.random.default_rng(int(1e4 * eps) + k)
    p_hat = simulated_danger_probability(eps, k, trials, rng)
    p = danger_probability(eps, k)
    assert stats.binomtest(round(p_hat * trials), trials, p).pvalue > ALPHA
