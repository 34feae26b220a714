"""Slider figure of §6.3: pricing pumpkins with the exponential mechanism on a price grid.

Buyers: the chapter's Alice and Bob (budget 1 yuan) and Charlie (3 yuan), repeated ``copies``
times. Candidates: the prices of ``price_grid``; score = revenue ``p · #{budget >= p}``. Adding or
removing one buyer changes the revenue at price p by at most p, so ``Δq = max(price_grid)``.
"""

from __future__ import annotations

import math
from functools import cache

import ipywidgets as W
import numpy as np

from helpers import mechanisms as mech
from helpers import selection
from helpers._validation import check_epsilon, check_int
from helpers.fonts import SMALL_TEXT_PT, TITLE_PT
from helpers.i18n import tr  # widget text; figure text uses label (CJK-font aware)
from helpers.lectures.plots import label, new_figure
from helpers.lectures.widgets import LiveFigure, _assemble, epsilon_slider

__all__ = ["PUMPKIN_BUDGETS", "pumpkin_prices", "pumpkin_revenue", "pricing_summary", "pricing_curves", "pricing_widget"]

#: The chapter's buyers (§6.3.1): Alice and Bob pay at most 1 yuan, Charlie 3.
PUMPKIN_BUDGETS = np.array([1.0, 1.0, 3.0])


def pumpkin_prices() -> np.ndarray:
    """The price grid 0.1, 0.2, ..., 4.0 yuan (40 candidates)."""
    return np.round(np.arange(1, 41) * 0.1, 10)


def pumpkin_revenue(prices: np.ndarray, copies: int = 1) -> np.ndarray:
    """Revenue ``p · #{buyers with budget >= p}`` with the chapter's buyers repeated ``copies`` times."""
    copies = check_int(copies, func="pumpkin_revenue", name="copies", minimum=1)
    prices = np.asarray(prices, dtype=float)
    # a tiny tolerance: 0.1·10 is stored as 1.0000000000000002 > 1
    buyers = (PUMPKIN_BUDGETS[None, :] >= prices[:, None] - 1e-9).sum(axis=1)
    return prices * buyers * copies


def pricing_summary(epsilon: float, copies: int = 1, t: float = math.log(20)) -> dict:
    """Expected revenue of the exponential mechanism, its (1 − e^{−t}) guarantee and exact quantile.

    Returns ``prices, revenue, probabilities, opt, sensitivity, expected, threshold`` (the
    guarantee ``OPT − 2Δq(ln|O| + t)/ε``) and ``tail`` = the exact ``Pr[revenue <= threshold]``,
    which the theorem bounds by ``e^{−t}``.
    """
    epsilon = check_epsilon(epsilon, func="pricing_summary")
    prices = pumpkin_prices()
    revenue = pumpkin_revenue(prices, copies)
    sensitivity = float(prices.max())
    probs = mech.exponential_probabilities(revenue, epsilon, sensitivity)
    opt = float(revenue.max())
    threshold = selection.utility_threshold(opt, prices.size, epsilon, sensitivity, t)
    return {"prices": prices, "revenue": revenue, "probabilities": probs, "opt": opt, "sensitivity": sensitivity,
            "expected": float(probs @ revenue), "threshold": threshold,
            "tail": selection.exact_tail(revenue, probs, threshold), "t": t}


@cache
def pricing_curves(copies: int, eps_grid: tuple[float, ...], t: float = math.log(20)) -> tuple[np.ndarray, np.ndarray]:
    """Expected revenue / OPT and the guarantee's threshold / OPT (at least 0) for every ε of ``eps_grid``.

    The values of :func:`pricing_summary` at each ε, computed for the whole grid at once
    (Pr[p] ∝ exp(ε·revenue(p)/(2Δq)), shifted by the largest exponent before ``exp``) and kept
    per ``copies``: a move of the ε slider reuses them (81 calls of ``pricing_summary`` cost
    8-17 ms per move, issue 36). Textbook §6.3.1 (pricing) and the utility theorem of §6.3.

    Parameters
    ----------
    copies : int
        How many times the chapter's three buyers are repeated (``>= 1``).
    eps_grid : tuple of float
        The ε values (a tuple: the result is cached per argument).
    t : float
        The guarantee holds with probability ``1 − e^{−t}`` (default ``ln 20``: 95 %).

    Returns
    -------
    (expected, guarantee) : tuple of numpy.ndarray
        ``E[revenue] / OPT`` and ``max(OPT − 2Δq(ln|O| + t)/ε, 0) / OPT`` per ε; read-only (shared
        by every caller through the cache).
    """
    copies = check_int(copies, func="pricing_curves", name="copies", minimum=1)
    eps = np.asarray(eps_grid, dtype=float)[:, None]
    prices = pumpkin_prices()
    revenue = pumpkin_revenue(prices, copies)
    sensitivity = float(prices.max())
    opt = float(revenue.max())
    exponent = eps * (revenue[None, :] - opt) / (2 * sensitivity)
    weights = np.exp(exponent)
    expected = (weights @ revenue) / weights.sum(axis=1)
    threshold = opt - 2 * sensitivity * (math.log(prices.size) + t) / eps[:, 0]
    curves = (expected / opt, np.maximum(threshold, 0.0) / opt)
    for curve in curves:
        curve.setflags(write=False)
    return curves


def pricing_widget(epsilon: float = 1.0, copies: int = 1) -> LiveFigure:
    """Left: Pr[price] under the exponential mechanism. Right: expected revenue / OPT against ε."""
    check_epsilon(epsilon, func="pricing_widget")
    check_int(copies, func="pricing_widget", name="copies", minimum=1)
    prices = pumpkin_prices()
    eps_grid = np.logspace(-2, 2, 81)
    grid = tuple(eps_grid.tolist())
    fig, (ax_p, ax_r) = new_figure((9.2, 3.6), 1, 2)
    bars = ax_p.bar(prices, np.zeros(prices.size), width=0.08, color="C0")
    ax_p.axhline(1 / prices.size, color="0.5", ls=":", lw=1, label=label(zh="均匀 1/40", en="uniform 1/40"))
    ax_p.set_xlim(0, 4.1)
    ax_p.set_ylim(0, 0.6)
    ax_p.set_xlabel(label(zh="定价（元）", en="price (yuan)"))
    ax_p.set_ylabel(label(zh="被选中的概率", en="probability of being chosen"))
    ax_p.legend(fontsize=SMALL_TEXT_PT, loc="upper right")
    title_p = ax_p.set_title("", fontsize=TITLE_PT)
    (expected,) = ax_r.plot(eps_grid, eps_grid * 0, color="C0", lw=2, label=label(zh="期望收益 / OPT", en="expected revenue / OPT"))
    (guarantee,) = ax_r.plot(eps_grid, eps_grid * 0, color="C3", lw=1.5, ls="--",
                             label=label(zh="保证：以 ≥95% 的概率不低于", en="guarantee: ≥ this with prob. ≥ 95%"))
    (dot,) = ax_r.plot([epsilon], [0], "o", color="k")
    ax_r.axhline(1.0, color="0.5", ls=":", lw=1)
    ax_r.set_xscale("log")
    ax_r.set_xlim(eps_grid[0], eps_grid[-1])
    ax_r.set_ylim(0, 1.3)  # room for the legend above OPT's dotted line at 1
    ax_r.set_xlabel("ε")
    ax_r.set_ylabel(label(zh="收益 / 最优收益 OPT", en="revenue / optimal revenue OPT"))
    ax_r.legend(fontsize=SMALL_TEXT_PT, loc="upper left")
    title_r = ax_r.set_title("", fontsize=TITLE_PT)

    def update(epsilon: float, copies: int) -> dict:
        copies = int(copies)
        now = pricing_summary(epsilon, copies)
        for bar, h in zip(bars, now["probabilities"]):
            bar.set_height(min(h, 0.6))
        expected_curve, guarantee_curve = pricing_curves(copies, grid)
        expected.set_ydata(expected_curve)
        guarantee.set_ydata(guarantee_curve)
        dot.set_data([epsilon], [now["expected"] / now["opt"]])
        title_p.set_text(label(zh=f"{3 * copies} 位买家，Δq = {now['sensitivity']:g}，ε = {epsilon:.3g}",
                               en=f"{3 * copies} buyers, Δq = {now['sensitivity']:g}, ε = {epsilon:.3g}"))
        title_r.set_text(label(zh=f"OPT = {now['opt']:g} 元；期望收益 {now['expected']:.3g} 元",
                               en=f"OPT = {now['opt']:g} yuan; expected revenue {now['expected']:.3g} yuan"))
        return {"expected": now["expected"], "opt": now["opt"], "threshold": now["threshold"],
                "tail": now["tail"], "probabilities": now["probabilities"]}

    copies_slider = W.IntSlider(value=copies, min=1, max=100, description=tr(zh="份数 m", en="copies m"),
                                layout=W.Layout(width="320px"))
    return _assemble(fig, {"epsilon": epsilon_slider(epsilon, -2.0, 2.0), "copies": copies_slider}, update,
                     {"bars": bars, "expected": expected, "guarantee": guarantee, "dot": dot,
                      "title_p": title_p, "title_r": title_r}, height_px=370)
