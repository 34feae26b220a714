"""Composition beyond Theorem 6-2 (§6.1.3): advanced composition and Rényi DP for the Gaussian
mechanism (helpers.budget), checked against closed forms, a numeric minimisation and the exact ε;
and the numbers lab-approximate-dp prints or states."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize

from helpers import InvalidParameterError
from helpers.budget import (advanced_composition, basic_composition, gaussian_exact_epsilon,
                            gaussian_rdp_epsilon, gaussian_rdp_optimal_order)
from helpers.gaussian import analytic_gaussian_sigma, gaussian_delta


@pytest.mark.parametrize("eps, delta, k, dp", [(0.1, 1e-8, 100, 1e-5), (1.0, 0.0, 1, 0.5), (0.01, 1e-9, 10_000, 1e-6),
                                               (2.0, 1e-6, 7, 1e-3)])
def test_advanced_composition_is_the_closed_form(eps, delta, k, dp):
    total, total_delta = advanced_composition(eps, delta, k, dp)
    assert total == pytest.approx(eps * math.sqrt(2 * k * math.log(1 / dp)) + k * eps * (math.exp(eps) - 1), rel=1e-14)
    assert total_delta == pytest.approx(k * delta + dp, rel=1e-14)


def test_advanced_composition_known_values_and_crossover():
    # ε = 0.1, k = 100, δ′ = 1e-5: 0.1·√(200 ln 1e5) + 10(e^0.1 − 1) = 4.7985 + 1.0517
    assert advanced_composition(0.1, 1e-8, 100, 1e-5)[0] == pytest.approx(5.8502350929, abs=1e-9)
    # lab-approximate-dp: it beats kε0 from k = 29 on (ε0 = 0.1, δ′ = 1e-5); the exact crossing
    # solves √(2k ln 1e5)·0.1 = k·0.1·(2 − e^0.1): k = 2 ln(1e5) / (2 − e^0.1)² = 28.76
    crossing = 2 * math.log(1e5) / (2 - math.exp(0.1)) ** 2
    assert crossing == pytest.approx(28.76, abs=0.01)
    assert advanced_composition(0.1, 1e-8, 28, 1e-5)[0] > 2.8
    assert advanced_composition(0.1, 1e-8, 29, 1e-5)[0] < 2.9
    assert basic_composition(0.1, 1e-8, 29) == pytest.approx((2.9, 2.9e-7))


@pytest.mark.parametrize("sigma, sens, k, delta", [(45.937, 1.0, 100, 1.1e-5), (1.0, 1.0, 1, 1e-5), (3.0, 2.0, 50, 1e-8),
                                                   (0.5, 1.0, 3, 0.1), (200.0, 1.0, 10_000, 1e-6)])
def test_rdp_epsilon_matches_numeric_minimisation(sigma, sens, k, delta):
    def eps_of(alpha: float) -> float:
        return k * alpha * sens ** 2 / (2 * sigma ** 2) + math.log(1 / delta) / (alpha - 1)

    alpha_star = gaussian_rdp_optimal_order(sigma, sens, k, delta)
    rho = k * sens ** 2 / (2 * sigma ** 2)
    assert alpha_star == pytest.approx(1 + math.sqrt(math.log(1 / delta) / rho), rel=1e-14)
    closed = gaussian_rdp_epsilon(sigma, sens, k, delta)
    assert closed == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1 / delta)), rel=1e-14)
    assert closed == pytest.approx(eps_of(alpha_star), rel=1e-12)
    # numeric minimisation over log(α − 1), α in (1 + 1e-9, 1 + 1e9)
    res = optimize.minimize_scalar(lambda t: eps_of(1 + math.exp(t)), bounds=(-20.7, 20.7), method="bounded",
                                   options={"xatol": 1e-10})
    assert res.fun == pytest.approx(closed, rel=1e-8)
    assert 1 + math.exp(res.x) == pytest.approx(alpha_star, rel=1e-4)
    grid = 1 + np.logspace(-6, 6, 2001)
    assert closed <= min(eps_of(a) for a in grid) + 1e-12


def test_rdp_is_an_upper_bound_on_the_exact_epsilon_and_exact_inverts_gaussian_delta():
    sigma = analytic_gaussian_sigma(1.0, 0.1, 1e-8)
    assert sigma == pytest.approx(45.94, abs=0.01)
    for k in (1, 10, 100, 1000, 10_000):
        delta = k * 1e-8 + 1e-5
        exact = gaussian_exact_epsilon(sigma, 1.0, k, delta)
        assert gaussian_delta(sigma, math.sqrt(k), exact) == pytest.approx(delta, rel=1e-6)
        assert exact < gaussian_rdp_epsilon(sigma, 1.0, k, delta)
    # k Gaussians = one Gaussian with sensitivity √k: k = 4, σ = 2 is as private as σ = 1 once
    assert gaussian_exact_epsilon(2.0, 1.0, 4, 1e-5) == pytest.approx(gaussian_exact_epsilon(1.0, 1.0, 1, 1e-5), rel=1e-9)
    # tiny shift: already (0, δ)
    assert gaussian_exact_epsilon(1e6, 1.0, 1, 0.5) == 0.0


def test_lab_table_numbers():
    """The composition table and the claims of lab-approximate-dp (ε0 = 0.1, δ0 = 1e-8, δ′ = 1e-5)."""
    from helpers.lectures.approx_widgets import composition_curves

    c = composition_curves(np.array([1, 10, 100, 1000, 10_000]), 0.1, 1e-8, 1e-5)
    assert np.round(c["advanced"], 3).tolist() == [0.490, 1.623, 5.850, 25.691, 153.156]
    assert np.round(c["rdp"], 3).tolist() == [0.105, 0.333, 1.064, 3.439, 11.664]
    assert np.round(c["exact"], 3).tolist() == [0.064, 0.227, 0.791, 2.740, 9.832]
    # "several times better (3.4 against 25.7 at k = 1000), not far from the exact value (2.7)"
    assert c["advanced"][3] / c["rdp"][3] > 7


@pytest.mark.parametrize("call, name", [
    (lambda: advanced_composition(0, 0, 1, 1e-5), "epsilon"),
    (lambda: advanced_composition(0.1, 1.0, 1, 1e-5), "delta"),
    (lambda: advanced_composition(0.1, 0.0, 0, 1e-5), "k"),
    (lambda: advanced_composition(0.1, 0.0, 2.5, 1e-5), "k"),
    (lambda: advanced_composition(0.1, 0.0, 2, 0.0), "delta_prime"),
    (lambda: advanced_composition(float("nan"), 0.0, 2, 0.1), "epsilon"),
    (lambda: gaussian_rdp_epsilon(0, 1, 1, 1e-5), "sigma"),
    (lambda: gaussian_rdp_epsilon(1, -1, 1, 1e-5), "sensitivity"),
    (lambda: gaussian_rdp_epsilon(1, 1, 0, 1e-5), "k"),
    (lambda: gaussian_rdp_epsilon(1, 1, 1, 0.0), "delta"),
    (lambda: gaussian_rdp_epsilon(1, 1, 1, "1e-5"), "delta"),
    (lambda: gaussian_exact_epsilon(1, 1, 1, 1.0), "delta"),
])
def test_bad_arguments_name_the_parameter(call, name):
    with pytest.raises(InvalidParameterError, match=f"parameter '{name}' must be"):
        call()


def test_exact_epsilon_curve_is_gaussian_exact_epsilon_elementwise():
    """The composition figure's exact curve (one vectorised bisection) equals the library's
    gaussian_exact_epsilon at every k, including the ε = 0 case."""
    from helpers.gaussian import analytic_gaussian_sigma
    from helpers.lectures.approx_widgets import exact_epsilon_curve

    ks = np.unique(np.round(np.logspace(0, 4, 41)).astype(np.int64))
    for eps0 in (0.01, 0.1, 1.0):
        for delta_prime in (1e-10, 1e-5, 1e-3):
            sigma = analytic_gaussian_sigma(1.0, eps0, 1e-8)
            delta = ks * 1e-8 + delta_prime
            reference = [gaussian_exact_epsilon(sigma, 1.0, int(k), float(d)) for k, d in zip(ks, delta)]
            np.testing.assert_allclose(exact_epsilon_curve(sigma, ks, delta), reference, rtol=1e-12)
    assert exact_epsilon_curve(1e6, np.array([1]), np.array([0.5])).tolist() == [0.0]
