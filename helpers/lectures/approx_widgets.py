"""Slider figures of the depth lab on (ε, δ)-DP (lab-approximate-dp; Definition 6-1, §6.1.3, §6.2.1).

Same pattern as :mod:`helpers.lectures.widgets`: a builder returns a :class:`helpers.lectures.widgets.LiveFigure`,
axes are fixed, only the artists' data change, and ``update`` returns the numbers shown.
"""

from __future__ import annotations

from functools import cache

import math
from typing import Any

import ipywidgets as W
import numpy as np

from helpers import approx_dp
from helpers._validation import check_epsilon, check_int, check_probability, fail
from helpers.budget import advanced_composition, gaussian_rdp_epsilon
from helpers.fonts import SMALL_TEXT_PT, TITLE_PT
from helpers.gaussian import analytic_gaussian_sigma
from helpers.lectures.plots import label, new_figure
from helpers.lectures.widgets import LiveFigure, _assemble, epsilon_slider

__all__ = ["posterior_widget", "dimension_widget", "composition_widget", "composition_curves", "exact_epsilon_curve"]


def posterior_widget(epsilon: float = 1.0, prior: float = 0.1) -> LiveFigure:
    """Prior → largest and smallest posterior after an ε-DP release (odds × e^{±ε})."""
    func = "posterior_widget"
    check_epsilon(epsilon, func=func)
    check_probability(prior, func=func, name="prior", low_open=True, high_open=True)
    x = np.linspace(0.0, 1.0, 401)
    fig, ax = new_figure((7.0, 3.6))
    ax.plot(x, x, color="0.6", lw=1, ls=":", label=label(zh="不发布：后验 = 先验", en="no release: posterior = prior"))
    (upper,) = ax.plot(x, x, color="C3", lw=2, label=label(zh=r"后验上界 $p\,e^{\varepsilon}/(p\,e^{\varepsilon}+1-p)$", en=r"largest posterior $p\,e^{\varepsilon}/(p\,e^{\varepsilon}+1-p)$"))
    (lower,) = ax.plot(x, x, color="C0", lw=2, ls="--", label=label(zh=r"后验下界（$e^{-\varepsilon}$）", en=r"smallest posterior ($e^{-\varepsilon}$)"))
    (segment,) = ax.plot([prior, prior], [prior, prior], color="k", lw=3, solid_capstyle="butt")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel(label(zh="攻击者的先验概率 p（例如：Alice 患癌）", en="attacker's prior p (e.g. Alice has cancer)"))
    ax.set_ylabel(label(zh="看到输出后的后验概率", en="posterior after seeing the output"))
    ax.legend(fontsize=SMALL_TEXT_PT, loc="lower right")
    title = ax.set_title("")

    def update(epsilon: float, prior: float) -> dict:
        hi = approx_dp.posterior_bound(x, epsilon)
        lo = x * math.exp(-epsilon) / (x * math.exp(-epsilon) + 1 - x)  # odds divided by e^ε
        upper.set_ydata(hi)
        lower.set_ydata(lo)
        post_hi = approx_dp.posterior_bound(prior, epsilon)
        post_lo = prior * math.exp(-epsilon) / (prior * math.exp(-epsilon) + 1 - prior)
        segment.set_data([prior, prior], [post_lo, post_hi])
        title.set_text(label(zh=f"ε = {epsilon:.3g}：先验 {prior:.1%} → 后验在 [{post_lo:.1%}，{post_hi:.1%}] 之内",
                             en=f"ε = {epsilon:.3g}: prior {prior:.1%} → posterior within [{post_lo:.1%}, {post_hi:.1%}]"))
        return {"posterior_max": post_hi, "posterior_min": post_lo, "odds_factor": math.exp(epsilon)}

    prior_slider = W.FloatSlider(value=prior, min=0.01, max=0.99, step=0.01, description="p",
                                 readout_format=".2f", layout=W.Layout(width="320px"))
    return _assemble(fig, {"epsilon": epsilon_slider(epsilon, -2.0, 1.0), "prior": prior_slider}, update,
                     {"upper": upper, "lower": lower, "segment": segment, "title": title}, height_px=370)


def _log10_delta_slider(value: float, minimum: int, maximum: int, description: str) -> W.FloatLogSlider:
    return W.FloatLogSlider(value=value, base=10, min=minimum, max=maximum, step=0.5, description=description,
                            readout_format=".0e", layout=W.Layout(width="320px"))


def dimension_widget(epsilon: float = 1.0, delta: float = 1e-6, d: int = 10) -> LiveFigure:
    """Noise sd per coordinate of a d-dimensional query (Δ1 = d, Δ2 = √d): Laplace vs Gaussian."""
    func = "dimension_widget"
    check_epsilon(epsilon, func=func)
    check_probability(delta, func=func, name="delta", low_open=True, high_open=True)
    check_int(d, func=func, name="d", minimum=1)
    dims = np.unique(np.round(np.logspace(0, 4, 161)).astype(np.int64))
    fig, ax = new_figure((7.5, 3.6))
    (lap,) = ax.plot(dims, dims * 0 + 1.0, color="C0", lw=2, label=label(zh="拉普拉斯：√2·Δ1/ε,Δ1 = d", en="Laplace: √2·Δ1/ε, Δ1 = d"))
    (gau,) = ax.plot(dims, dims * 0 + 1.0, color="C3", lw=2, label=label(zh="高斯（解析 σ）：Δ2 = √d", en="Gaussian (analytic σ): Δ2 = √d"))
    (cla,) = ax.plot(dims, dims * 0 + 1.0, color="C3", lw=1, ls=":", label=label(zh="高斯（经典 σ，仅 ε < 1）", en="Gaussian (classic σ, ε < 1 only)"))
    marker = ax.axvline(d, color="k", lw=1, ls="--")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(1, 1e4)
    ax.set_ylim(1e-2, 1e6)
    ax.set_xlabel(label(zh="查询的维数 d", en="dimension d of the query"))
    ax.set_ylabel(label(zh="每个坐标的噪声标准差", en="noise sd per coordinate"))
    ax.legend(fontsize=SMALL_TEXT_PT, loc="upper left")
    title = ax.set_title("")

    def update(epsilon: float, delta: float, d: float) -> dict:
        d = int(round(d))
        sd = approx_dp.per_coordinate_sd(dims, epsilon, delta)
        lap.set_ydata(sd["laplace"])
        gau.set_ydata(sd["gaussian"])
        classic = (approx_dp.per_coordinate_sd(dims, epsilon, delta, method="classic")["gaussian"]
                   if epsilon < 1 else np.full(dims.size, np.nan))
        cla.set_ydata(classic)
        marker.set_xdata([d, d])
        at = approx_dp.per_coordinate_sd([d], epsilon, delta)
        unit = float(approx_dp.per_coordinate_sd([1], epsilon, delta)["gaussian"][0])
        crossover = (unit * epsilon) ** 2 / 2  # √2 d/ε = unit·√d  ⇔  d = (unit·ε)²/2
        title.set_text(label(
            zh=f"d = {d}：拉普拉斯 {at['laplace'][0]:.3g}，高斯 {at['gaussian'][0]:.3g}；d > {crossover:.3g} 时高斯更小",
            en=f"d = {d}: Laplace {at['laplace'][0]:.3g}, Gaussian {at['gaussian'][0]:.3g}; Gaussian smaller for d > {crossover:.3g}"))
        return {"d": d, "laplace": float(at["laplace"][0]), "gaussian": float(at["gaussian"][0]),
                "crossover": crossover}

    d_slider = W.FloatLogSlider(value=d, base=10, min=0, max=4, step=0.05, description="d",
                                readout_format=".0f", layout=W.Layout(width="320px"))
    return _assemble(fig, {"epsilon": epsilon_slider(epsilon, -1.3, 1.0), "delta": _log10_delta_slider(delta, -12, -3, "δ"),
                           "d": d_slider}, update,
                     {"laplace": lap, "gaussian": gau, "classic": cla, "marker": marker, "title": title}, height_px=370)


def _gaussian_delta(sigma: float, shift: np.ndarray, epsilon: np.ndarray) -> np.ndarray:
    """:func:`helpers.gaussian.gaussian_delta` for arrays of shifts (√k·Δ) and ε, elementwise."""
    from scipy import special

    a = shift / (2.0 * sigma)
    s = epsilon * sigma / shift
    return np.maximum(np.exp(special.log_ndtr(a - s)) - np.exp(epsilon + special.log_ndtr(-a - s)), 0.0)


def exact_epsilon_curve(sigma: float, ks: np.ndarray, delta: np.ndarray) -> np.ndarray:
    r""":func:`helpers.budget.gaussian_exact_epsilon` (sensitivity 1) for every ``ks[i]`` at ``delta[i]``.

    The same bisection, run on the whole array at once: each element doubles its bracket from
    [0, 1] until δ(hi) ≤ δ, then halves it until ``hi − lo ≤ 1e-12·hi`` (the other elements wait),
    and returns ``hi``; 0.0 where already δ(0) ≤ δ. One call per point of the curve cost
    7-13 ms per move of ε0 or δ′ (issue 36); this costs well under 1 ms. The δ(ε) it inverts is
    the Gaussian mechanism's privacy profile (Balle & Wang 2018) at shift ``√k``:

    .. math:: \delta(\varepsilon) = \Phi\Bigl(\frac{\sqrt{k}}{2\sigma} - \frac{\varepsilon\sigma}{\sqrt{k}}\Bigr)
              - e^{\varepsilon}\,\Phi\Bigl(-\frac{\sqrt{k}}{2\sigma} - \frac{\varepsilon\sigma}{\sqrt{k}}\Bigr)

    Parameters
    ----------
    sigma : float
        Noise standard deviation of each mechanism (sensitivity 1).
    ks : numpy.ndarray
        Numbers of composed mechanisms, ``>= 1``.
    delta : numpy.ndarray
        The target δ for each ``ks[i]`` (or one δ for all).

    Returns
    -------
    numpy.ndarray
        The smallest ε (within a relative 1e-12) per element.
    """
    shift = np.sqrt(np.asarray(ks, dtype=float))
    delta = np.broadcast_to(np.asarray(delta, dtype=float), shift.shape)
    zero = _gaussian_delta(sigma, shift, np.zeros_like(shift)) <= delta
    lo, hi = np.zeros_like(shift), np.ones_like(shift)
    while (grow := ~zero & (_gaussian_delta(sigma, shift, hi) > delta)).any():
        lo, hi = np.where(grow, hi, lo), np.where(grow, 2.0 * hi, hi)
    while (open_ := ~zero & (hi - lo > 1e-12 * hi)).any():
        mid = 0.5 * (lo + hi)
        above = _gaussian_delta(sigma, shift, mid) > delta
        lo, hi = np.where(open_ & above, mid, lo), np.where(open_ & ~above, mid, hi)
    return np.where(zero, 0.0, hi)


def composition_curves(ks: np.ndarray, eps0: float, delta0: float, delta_prime: float) -> dict:
    """Total ε of k Gaussian mechanisms, each (ε0, δ0)-DP with the analytic σ, by four accountings.

    ``basic`` = kε0 (total δ = kδ0); ``advanced`` = the advanced composition theorem and
    ``rdp`` = Rényi DP, both at total δ = kδ0 + δ′; ``exact`` = the true ε of the composition
    at that same δ (:func:`helpers.budget.gaussian_exact_epsilon`).
    """
    sigma = analytic_gaussian_sigma(1.0, eps0, delta0)
    ks = np.asarray(ks, dtype=np.int64)
    total_delta = ks * delta0 + delta_prime
    return {"sigma": sigma, "k": ks, "basic": ks * eps0,
            "advanced": np.array([advanced_composition(eps0, delta0, int(k), delta_prime)[0] for k in ks]),
            "rdp": np.array([gaussian_rdp_epsilon(sigma, 1.0, int(k), float(dt)) for k, dt in zip(ks, total_delta)]),
            "exact": exact_epsilon_curve(sigma, ks, total_delta),
            "delta_total": total_delta}


def composition_widget(eps0: float = 0.1, delta0: float = 1e-8, delta_prime: float = 1e-5, k: int = 100) -> LiveFigure:
    """Total ε against the number k of Gaussian mechanisms: basic, advanced, RDP and exact (§6.1.3)."""
    func = "composition_widget"
    check_epsilon(eps0, func=func, name="eps0")
    check_probability(delta0, func=func, name="delta0", low_open=True, high_open=True)
    check_probability(delta_prime, func=func, name="delta_prime", low_open=True, high_open=True)
    check_int(k, func=func, name="k", minimum=1)
    if 10_000 * delta0 + delta_prime >= 1:
        raise fail(func, "delta0", "small enough that 10000·δ0 + δ′ < 1", delta0)
    ks = np.unique(np.round(np.logspace(0, 4, 41)).astype(np.int64))
    fig, ax = new_figure((7.5, 3.8))
    styles = (("basic", "C0", "-", label(zh="基本组合 kε0（定理 6-2）", en="basic kε0 (Theorem 6-2)")),
              ("advanced", "C1", "--", label(zh="高级组合定理", en="advanced composition")),
              ("rdp", "C3", "-", label(zh="Rényi DP（矩记账器）", en="Rényi DP (moments accountant)")),
              ("exact", "k", ":", label(zh="精确值（高斯机制）", en="exact (Gaussian mechanism)")))
    lines = {key: ax.plot(ks, ks * 0.0 + 1.0, color=c, ls=ls, lw=2, label=text)[0] for key, c, ls, text in styles}
    marker = ax.axvline(k, color="0.4", lw=1, ls="--")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(1, 1e4)
    ax.set_ylim(1e-2, 1e4)
    ax.set_xlabel(label(zh="组合的机制个数 k", en="number k of composed mechanisms"))
    ax.set_ylabel(label(zh="总 ε", en="total ε"))
    ax.legend(fontsize=SMALL_TEXT_PT, loc="upper left")
    title = ax.set_title("", fontsize=TITLE_PT)

    # The four curves depend on ε0 and δ′ only: moving k reuses them.
    curves_for = cache(lambda eps0, delta_prime: composition_curves(ks, eps0, delta0, delta_prime))

    def update(eps0: float, delta_prime: float, k: float) -> dict:
        k = int(round(k))
        curves = curves_for(eps0, delta_prime)
        for key in lines:
            lines[key].set_ydata(curves[key])
        marker.set_xdata([k, k])
        at = composition_curves(np.array([k]), eps0, delta0, delta_prime)
        shown = {key: float(at[key][0]) for key in ("basic", "advanced", "rdp", "exact")}
        title.set_text(label(
            zh=f"k = {k}，σ = {curves['sigma']:.3g}：基本 {shown['basic']:.3g}，高级 {shown['advanced']:.3g}，"
               f"RDP {shown['rdp']:.3g}，精确 {shown['exact']:.3g}（δ = {at['delta_total'][0]:.2g}）",
            en=f"k = {k}, σ = {curves['sigma']:.3g}: basic {shown['basic']:.3g}, advanced {shown['advanced']:.3g}, "
               f"RDP {shown['rdp']:.3g}, exact {shown['exact']:.3g} (δ = {at['delta_total'][0]:.2g})"))
        return {**shown, "k": k, "sigma": curves["sigma"], "delta_total": float(at["delta_total"][0]), "curves": curves}

    k_slider = W.FloatLogSlider(value=k, base=10, min=0, max=4, step=0.05, description="k",
                                readout_format=".0f", layout=W.Layout(width="320px"))
    return _assemble(fig, {"eps0": epsilon_slider(eps0, -2.0, 0.0, description="ε0"),
                           "delta_prime": _log10_delta_slider(delta_prime, -10, -3, "δ′"), "k": k_slider}, update,
                     {**lines, "marker": marker, "title": title}, height_px=390)
