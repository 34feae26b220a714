"""§6.3 additions: the exponential mechanism's utility guarantee, Gumbel-max = exponential mechanism
(report noisy max with Laplace / exponential noise is not), the pumpkin price grid, and the numbers
6.3-exponential.ipynb states."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from helpers import InvalidParameterError
from helpers import mechanisms as mech
from helpers import selection
from helpers.lectures.selection_widgets import pricing_summary, pricing_widget, pumpkin_prices, pumpkin_revenue

VOTES = np.array([30, 25, 8, 2])


def _rnm_exact(scores, epsilon, noise):
    """Exact selection probabilities of report noisy max (quadrature), independent of helpers.selection."""
    b = 2.0 / epsilon
    dist = stats.laplace(scale=b) if noise == "laplace" else stats.expon(scale=b)
    out = []
    for r in range(len(scores)):
        def f(x, r=r):
            return dist.pdf(x - scores[r]) * np.prod([dist.cdf(x - scores[j]) for j in range(len(scores)) if j != r])
        out.append(integrate.quad(f, -600, 700, points=list(map(float, scores)), limit=500)[0])
    return np.array(out)


def test_two_candidate_closed_forms_against_quadrature():
    for gap in (0.0, 0.5, 1.0, 3.0):
        for eps in (0.3, 1.0, 4.0):
            scores = np.array([gap, 0.0])
            assert selection.two_candidate_probability(gap, eps, 1, "gumbel") == pytest.approx(
                mech.exponential_probabilities(scores, eps, 1)[0], rel=1e-12)
            for noise in ("laplace", "exponential"):
                assert selection.two_candidate_probability(gap, eps, 1, noise) == pytest.approx(
                    _rnm_exact(scores, eps, noise)[0], abs=1e-7)
    # the numbers printed in 6.3 (gap 1, ε = 1)
    assert [round(selection.two_candidate_probability(1, 1, 1, n), 4) for n in selection.NOISES] == [0.6225, 0.6209, 0.6967]


def test_laplace_and_exponential_noise_differ_from_the_exponential_mechanism():
    """6.3 states football's exact probabilities 0.441 (Laplace) and 0.483 (exponential) vs 0.424."""
    em = mech.exponential_probabilities(VOTES, 0.1, 1)
    lap = _rnm_exact(VOTES.astype(float), 0.1, "laplace")
    expo = _rnm_exact(VOTES.astype(float), 0.1, "exponential")
    assert round(em[0], 3) == 0.424 and round(lap[0], 3) == 0.441 and round(expo[0], 3) == 0.483
    assert lap.sum() == pytest.approx(1, abs=1e-9) and expo.sum() == pytest.approx(1, abs=1e-9)
    # "standard deviation at most 0.0012" for a frequency of 200,000 draws: √(1/4 / 200000)
    assert math.sqrt(0.25 / 200_000) < 0.0012


@pytest.mark.parametrize("noise", selection.NOISES)
def test_report_noisy_max_frequencies_match_their_exact_distribution(noise):
    """Chi-square goodness of fit, 3 degrees of freedom, rejection at p < 1e-6 (false-failure
    probability 1e-6 per noise). Power: Gumbel draws tested against the Laplace distribution (and
    the other way round) give statistics far above the threshold (checked below)."""
    n = 200_000
    picks = selection.report_noisy_max(VOTES, 0.1, 1, np.random.default_rng(11), noise=noise, size=n)
    observed = np.bincount(picks, minlength=4)
    exact = mech.exponential_probabilities(VOTES, 0.1, 1) if noise == "gumbel" else _rnm_exact(VOTES.astype(float), 0.1, noise)
    threshold = stats.chi2.isf(1e-6, 3)
    assert np.sum((observed - n * exact) ** 2 / (n * exact)) < threshold
    if noise != "gumbel":  # power: these frequencies are far from the exponential mechanism
        em = mech.exponential_probabilities(VOTES, 0.1, 1)
        assert np.sum((observed - n * em) ** 2 / (n * em)) > 10 * threshold
    else:
        lap = _rnm_exact(VOTES.astype(float), 0.1, "laplace")
        assert np.sum((observed - n * lap) ** 2 / (n * lap)) > 10 * threshold


def test_gumbel_sampler_is_the_exponential_mechanism_for_random_scores():
    rng = np.random.default_rng(3)
    scores = rng.normal(0, 3, 6)
    n = 300_000
    picks = selection.report_noisy_max(scores, 0.7, 2.0, np.random.default_rng(4), size=n)
    p = mech.exponential_probabilities(scores, 0.7, 2.0)
    stat = np.sum((np.bincount(picks, minlength=6) - n * p) ** 2 / (n * p))
    assert stat < stats.chi2.isf(1e-6, 5)  # false-failure probability 1e-6


def test_pumpkin_grid_and_utility_guarantee():
    prices = pumpkin_prices()
    assert prices.size == 40 and prices[0] == pytest.approx(0.1) and prices[-1] == pytest.approx(4.0)
    rev = pumpkin_revenue(prices)
    assert rev.max() == pytest.approx(3.0) and set(np.round(prices[rev == rev.max()], 6)) == {1.0, 3.0}
    assert rev[prices > 3.0001].max() == 0
    # 2Δq ln|O| / ε at ε = 1: 8 ln 40 ≈ 29.5 (stated in 6.3)
    assert 8 * math.log(40) == pytest.approx(29.5, abs=0.05)
    s = pricing_summary(1.0, copies=100)
    assert s["opt"] == 300 and s["sensitivity"] == 4.0
    assert s["threshold"] == pytest.approx(300 - 8 * math.log(800), rel=1e-12) == pytest.approx(246.52, abs=0.005)
    for m in (1, 10, 100):
        for eps in np.logspace(-2, 2, 21):
            for t in (0.1, 1.0, math.log(20), 5.0):
                summary = pricing_summary(float(eps), copies=m, t=t)
                assert summary["tail"] <= math.exp(-t) + 1e-12  # the theorem, checked exactly
    # self-check 3 of 6.3: a grid of 4000 prices lowers the threshold by 8 ln 100 / ε ≈ 36.8/ε
    assert 8 * math.log(100) == pytest.approx(36.8, abs=0.05)


def test_guarantee_figure_of_the_notebook():
    """m = 100, ε = 0.5: the exact tail stays below e^−t (max ratio printed: 0.025)."""
    s = pricing_summary(0.5, copies=100)
    ts = np.linspace(0.05, 6, 120)
    thr = selection.utility_threshold(s["opt"], 40, 0.5, s["sensitivity"], ts)
    exact = selection.exact_tail(s["revenue"], s["probabilities"], thr)
    ratio = np.max(exact / np.exp(-ts))
    assert ratio <= 1 and round(ratio, 3) == 0.025


def test_pricing_widget_updates():
    live = pricing_widget(epsilon=1.0, copies=1)
    assert live.last["opt"] == 3.0 and live.last["threshold"] < 0
    heights = [b.get_height() for b in live.artists["bars"]]
    assert sum(heights) == pytest.approx(1.0)
    live.sliders["copies"].value = 100
    assert live.last["opt"] == 300.0 and live.last["expected"] / 300 > 0.98
    assert "300" in live.artists["title_p"].get_text()
    live.sliders["epsilon"].value = 0.01
    assert live.last["expected"] / 300 < 0.6


def test_selection_validation():
    with pytest.raises(InvalidParameterError, match="parameter 'noise'"):
        selection.report_noisy_max([1, 2], 1, 1, np.random.default_rng(0), noise="normal")
    with pytest.raises(InvalidParameterError, match="parameter 'rng'"):
        selection.report_noisy_max([1, 2], 1, 1, None)
    with pytest.raises(InvalidParameterError, match="parameter 't'"):
        selection.utility_threshold(3, 40, 1, 4, 0)
    with pytest.raises(InvalidParameterError, match="parameter 'gap'"):
        selection.two_candidate_probability(-1, 1, 1, "gumbel")
    with pytest.raises(InvalidParameterError, match="parameter 'probabilities'"):
        selection.exact_tail([1, 2], [0.5, 0.6], 1.5)
    assert isinstance(selection.report_noisy_max([1, 2], 1, 1, np.random.default_rng(0)), int)


def test_pricing_curves_are_pricing_summary_on_the_grid():
    """The widget's curves, computed for the whole ε grid at once, equal pricing_summary at each ε."""
    from helpers.lectures.selection_widgets import pricing_curves

    grid = np.logspace(-2, 2, 81)
    for m in (1, 7, 100):
        expected, guarantee = pricing_curves(m, tuple(grid.tolist()))
        reference = [pricing_summary(float(e), copies=m) for e in grid]
        np.testing.assert_allclose(expected, [s["expected"] / s["opt"] for s in reference], rtol=1e-12)
        np.testing.assert_allclose(guarantee, [max(s["threshold"], 0.0) / s["opt"] for s in reference],
                                   rtol=1e-12, atol=1e-15)
