"""Tests of helpers.gaussian: the classic and analytic calibrations of the Gaussian mechanism."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from helpers.gaussian import (
    analytic_gaussian_sigma,
    classic_gaussian_sigma,
    gaussian_delta,
    gaussian_mechanism,
)

ALPHA = 1e-6
EPSILONS_BELOW_ONE = [0.01, 0.1, 0.5, 0.9, 0.999]
DELTAS = [1e-10, 1e-6, 1e-5, 1e-3, 0.05]


def hockey_stick(sigma: float, sensitivity: float, epsilon: float) -> float:
    """δ(ε) straight from the definition: ∫ max(0, p(x) - e^ε q(x)) dx with p = N(Δ, σ²),
    q = N(0, σ²). Computed by quadrature, independently of the closed form."""
    p, q = stats.norm(sensitivity, sigma), stats.norm(0.0, sigma)
    # p/q = exp((2xΔ - Δ²)/(2σ²)) exceeds e^ε exactly for x > t:
    t = sensitivity / 2 + epsilon * sigma**2 / sensitivity
    value, _ = integrate.quad(lambda x: p.pdf(x) - math.exp(epsilon) * q.pdf(x), t, np.inf,
                              epsabs=1e-14, epsrel=1e-10)
    return value


def test_classic_formula():
    assert classic_gaussian_sigma(1.0, 0.5, 1e-5) == pytest.approx(math.sqrt(2 * math.log(1.25e5)) / 0.5)
    assert classic_gaussian_sigma(3.0, 0.5, 1e-5) == pytest.approx(3 * classic_gaussian_sigma(1.0, 0.5, 1e-5))


@pytest.mark.parametrize("epsilon", [1.0, 2.0, 10.0])
def test_classic_refuses_epsilon_at_least_one(epsilon):
    with pytest.raises(ValueError, match=r"classic_gaussian_sigma: parameter 'epsilon' must be < 1.*analytic_gaussian_sigma"):
        classic_gaussian_sigma(1.0, epsilon, 1e-5)
    with pytest.raises(ValueError, match=r"parameter 'epsilon'"):
        gaussian_mechanism(0.0, 1.0, epsilon, 1e-5, np.random.default_rng(0), method="classic")


@pytest.mark.parametrize("sigma,epsilon", [(0.5, 0.1), (1.0, 1.0), (3.0, 0.3), (0.3, 5.0), (7.0, 0.0)])
def test_closed_form_delta_equals_hockey_stick_integral(sigma, epsilon):
    assert gaussian_delta(sigma, 1.0, epsilon) == pytest.approx(hockey_stick(sigma, 1.0, epsilon), rel=1e-7, abs=1e-13)


def test_delta_at_epsilon_zero_is_total_variation():
    for sigma in (0.5, 2.0):
        assert gaussian_delta(sigma, 1.0, 0.0) == pytest.approx(2 * stats.norm.cdf(1 / (2 * sigma)) - 1)


@pytest.mark.parametrize("epsilon", EPSILONS_BELOW_ONE)
@pytest.mark.parametrize("delta", DELTAS)
def test_analytic_is_tight_and_never_worse_than_classic(epsilon, delta):
    sigma = analytic_gaussian_sigma(1.0, epsilon, delta)
    assert gaussian_delta(sigma, 1.0, epsilon) <= delta  # the condition holds at σ ...
    assert gaussian_delta(sigma * (1 - 1e-9), 1.0, epsilon) > delta  # ... and σ is the smallest
    assert sigma <= classic_gaussian_sigma(1.0, epsilon, delta)


@pytest.mark.parametrize("epsilon,delta", [(1.0, 1e-5), (2.0, 1e-6), (10.0, 1e-9), (100.0, 1e-3)])
def test_analytic_for_epsilon_at_least_one(epsilon, delta):
    sigma = analytic_gaussian_sigma(2.0, epsilon, delta)
    assert 0 < sigma < math.inf
    assert gaussian_delta(sigma, 2.0, epsilon) <= delta < gaussian_delta(sigma * (1 - 1e-9), 2.0, epsilon)
    assert hockey_stick(sigma, 2.0, epsilon) <= delta * (1 + 1e-6)


def test_analytic_regression_value():
    """Pinned value for Δ = 1, ε = 1, δ = 1e-5, where the classic formula does not apply.
    It was computed by this module and checked against the hockey-stick integral above
    (test_analytic_for_epsilon_at_least_one). A change of calibration shows up here."""
    assert analytic_gaussian_sigma(1.0, 1.0, 1e-5) == pytest.approx(3.7306, abs=1e-4)


def test_mechanism_adds_normal_noise_with_that_sigma():
    sigma = analytic_gaussian_sigma(1.0, 0.5, 1e-6)
    value = np.arange(6.0).reshape(2, 3)
    got = gaussian_mechanism(value, 1.0, 0.5, 1e-6, np.random.default_rng(3))
    np.testing.assert_array_equal(got, value + np.random.default_rng(3).normal(0.0, sigma, (2, 3)))
    scalar = gaussian_mechanism(4, 1.0, 0.5, 1e-6, np.random.default_rng(3))
    assert type(scalar) is float and scalar == 4 + np.random.default_rng(3).normal(0.0, sigma)


def test_mechanism_ks_with_power_check():
    """KS against N(0, σ²), n = 100 000, alpha = 1e-6 (false failure 1e-6); σ × 0.9 / 1.1 rejected."""
    sigma = classic_gaussian_sigma(1.0, 0.5, 1e-5)
    rng = np.random.default_rng(8)
    zeros = np.zeros(100_000)
    normal = stats.norm(0.0, sigma).cdf
    assert stats.kstest(gaussian_mechanism(zeros, 1.0, 0.5, 1e-5, rng, method="classic"), normal).pvalue > ALPHA
    for factor in (0.9, 1.1):
        wrong = gaussian_mechanism(zeros, factor, 0.5, 1e-5, rng, method="classic")
        assert stats.kstest(wrong, normal).pvalue < ALPHA


@pytest.mark.parametrize("delta", [0.0, 1.0, -1e-5, 2.0, float("nan"), "1e-5"])
def test_delta_must_be_in_open_unit_interval(delta):
    for func in (classic_gaussian_sigma, analytic_gaussian_sigma):
        with pytest.raises(ValueError, match=r"parameter 'delta'"):
            func(1.0, 0.5, delta)


@pytest.mark.parametrize("epsilon", [0.0, -0.5, float("nan"), float("inf")])
def test_epsilon_must_be_positive(epsilon):
    for func in (classic_gaussian_sigma, analytic_gaussian_sigma):
        with pytest.raises(ValueError, match=r"parameter 'epsilon'"):
            func(1.0, epsilon, 1e-5)


@pytest.mark.parametrize("sensitivity", [0.0, -1.0, float("nan")])
def test_sensitivity_must_be_positive(sensitivity):
    with pytest.raises(ValueError, match=r"analytic_gaussian_sigma: parameter 'sensitivity'"):
        analytic_gaussian_sigma(sensitivity, 1.0, 1e-5)
    with pytest.raises(ValueError, match=r"gaussian_delta: parameter 'sensitivity'"):
        gaussian_delta(1.0, sensitivity, 1.0)


def test_mechanism_rejects_bad_arguments():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"parameter 'method'"):
        gaussian_mechanism(1.0, 1.0, 0.5, 1e-5, rng, method="exact")
    with pytest.raises(ValueError, match=r"parameter 'rng'"):
        gaussian_mechanism(1.0, 1.0, 0.5, 1e-5, 0)
    with pytest.raises(ValueError, match=r"parameter 'value'"):
        gaussian_mechanism([1.0, float("nan")], 1.0, 0.5, 1e-5, rng)
    with pytest.raises(ValueError, match=r"parameter 'sigma'"):
        gaussian_delta(0.0, 1.0, 1.0)
    with pytest.raises(ValueError, match=r"parameter 'rtol'"):
        analytic_gaussian_sigma(1.0, 1.0, 1e-5, rtol=0.5)
