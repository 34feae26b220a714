"""Slider figures for the §6.5 notebooks and the depth labs.

Same contract as :mod:`helpers.lectures.widgets` (whose :class:`~helpers.lectures.widgets.LiveFigure`
and assembly code are reused): a builder creates the figure once, returns a
``LiveFigure`` and displays nothing; moving a slider calls
``live.update(**values)``, a plain function of the parameters that changes
only the artists' data (fixed axes) and returns the numbers it shows.
Random draws are fixed: each update reuses the same seed, so the picture
changes only because a parameter changed.  Where that work takes longer than a
live redraw allows (150 ms in the browser), it is done once for every value of
the slider's grid when the figure is built (:func:`on_grid`), or the draws
themselves are made once (RAPPOR), and a slider move only looks the result up.

Mechanisms are never implemented here; they come from :mod:`helpers.ldp`,
:mod:`helpers.shuffle`, :mod:`helpers.synthetic` and :mod:`helpers.histograms`.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Callable, Iterable, Sequence, TypeVar

import ipywidgets as W
import numpy as np

from helpers import ldp
from helpers._validation import check_epsilon, check_int, check_probability, check_real, fail
from helpers.fonts import SMALL_TEXT_PT
from helpers.histograms import range_mse_by_length, tree_height
from helpers.lectures.plots import label, new_figure
from helpers.lectures.widgets import LiveFigure, _assemble, epsilon_slider
from helpers.shuffle import fmt_amplified_epsilon, fmt_is_valid
from helpers.synthetic import all_marginals, fit_marginal_model, sample_model, workload_error

__all__ = [
    "ldp_outputs_widget",
    "rappor_widget",
    "shuffle_amplification_widget",
    "synthetic_utility_widget",
    "range_mse_widget",
]

T = TypeVar("T")


def on_grid(compute: Callable[..., T], grid: Iterable[tuple]) -> Callable[..., T]:
    """``compute`` evaluated once at every point of a slider's grid; later calls are lookups.

    The draws of these figures are fixed (one seed), so a grid point has one answer: computing
    it when the figure is built makes every slider move a lookup. A value off the grid (set
    from code) is computed on first use and kept the same way.
    """
    compute = cache(compute)
    for key in grid:
        compute(*key)
    return compute


_LDP_MECHANISMS = (("Duchi", ldp.duchi_perturb), ("PM", ldp.piecewise_perturb), ("DCT", ldp.dct_perturb))


def _stairs_density(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    counts, _ = np.histogram(values, bins=edges)
    return counts / (values.size * np.diff(edges))


# --------------------------------------------------------------------- LDP mean (seed 004)


def ldp_outputs_widget(t: float = -0.5, t_prime: float = 0.5, epsilon: float = 1.0,
                       n: int = 100_000, seed: int = 1) -> LiveFigure:
    """Output densities of Duchi, PM and DCT for two inputs t, t' (seed 004), ε on a slider.

    Each panel shows the histogram densities of M(t) and M(t') (log scale)
    and reports the largest |ln ratio| over coarse bins (width 0.5, so that
    sampling noise stays small) where both have at least 50 draws, and the
    share of M(t)'s draws in fine bins that M(t') never reaches (> 0 means
    an infinite ratio: not ε-LDP).
    """
    func = "ldp_outputs_widget"
    for name, value in (("t", t), ("t_prime", t_prime)):
        if not -1.0 <= check_real(value, func=func, name=name) <= 1.0:
            raise fail(func, name, "a number in [-1, 1]", value)
    check_epsilon(epsilon, func=func)
    check_int(n, func=func, name="n", minimum=100)
    edges = np.linspace(-6.0, 6.0, 241)
    coarse = np.linspace(-6.0, 6.0, 25)
    fig, axes = new_figure((11.0, 3.3), 1, 3, sharey=True)
    artists: dict[str, Any] = {}
    for ax, (name, _) in zip(axes, _LDP_MECHANISMS):
        tiny = np.full(edges.size - 1, 1e-9)  # positive placeholder: the axis is logarithmic
        artists[name + "_t"] = ax.stairs(tiny, edges, color="C0", lw=1.5, label=f"M(t = {t:g})")
        artists[name + "_t2"] = ax.stairs(tiny, edges, color="C3", lw=1.5, ls="--", label=f"M(t' = {t_prime:g})")
        ax.set_yscale("log")
        ax.set_ylim(1e-3, 30)
        ax.set_xlim(edges[0], edges[-1])
        ax.set_xlabel(label(zh="输出", en="output"))
        artists[name + "_title"] = ax.set_title(name)
    axes[0].set_ylabel(label(zh="密度（对数）", en="density (log)"))
    axes[0].legend(fontsize=SMALL_TEXT_PT, loc="upper left")

    def densities(epsilon: float) -> dict:
        shown = {}
        for name, perturb in _LDP_MECHANISMS:
            draws = np.random.default_rng(seed)  # same draws at every ε: only ε changes the picture
            y1 = perturb(np.full(n, t), epsilon, draws)
            y2 = perturb(np.full(n, t_prime), epsilon, draws)
            d1, d2 = _stairs_density(y1, edges), _stairs_density(y2, edges)
            c1, _ = np.histogram(y1, bins=coarse)
            c2, _ = np.histogram(y2, bins=coarse)
            both = (c1 >= 50) & (c2 >= 50)
            ratio = float(np.max(np.abs(np.log(c1[both] / c2[both])))) if both.any() else float("nan")
            only_one = float(np.sum((d1 * np.diff(edges))[(d1 > 0) & (d2 == 0)]))
            if only_one > 0.01:  # some outputs of M(t) cannot come from M(t'): an infinite ratio
                text = f"{name}\n" + label(zh=f"比值 ∞：{only_one:.0%} 的输出在 t' 下不可能",
                                           en=f"ratio ∞: {only_one:.0%} of outputs impossible under t'")
            else:  # empirical, so give or take sampling noise
                text = f"{name}\nmax |ln ratio| ≈ {ratio:.2f}"
            shown[name] = {"max_abs_log_ratio": ratio, "mass_without_overlap": only_one, "densities": (d1, d2),
                           "text": text}
        return shown

    slider = epsilon_slider(epsilon, np.log10(0.5), np.log10(8.0))
    # 6 × n draws per ε: too slow for a live redraw, so done once per value of the slider
    densities = on_grid(densities, [(value,) for _, value in slider.options])

    def update(epsilon: float) -> dict:
        shown = densities(epsilon)
        for name, _ in _LDP_MECHANISMS:
            artists[name + "_t"].set_data(shown[name]["densities"][0])
            artists[name + "_t2"].set_data(shown[name]["densities"][1])
            artists[name + "_title"].set_text(shown[name]["text"])
        return {**{name: {k: shown[name][k] for k in ("max_abs_log_ratio", "mass_without_overlap")}
                   for name, _ in _LDP_MECHANISMS}, "epsilon": epsilon}

    return _assemble(fig, {"epsilon": slider}, update, artists, height_px=300)


# --------------------------------------------------------------------- §6.5.1 RAPPOR


def rappor_widget(values: Sequence[int], candidates: Sequence[str], *, k_bits: int = 32, h: int = 2,
                  f: float = 0.5, p: float = 0.5, q: float = 0.75, seed: int = 3) -> LiveFigure:
    """RAPPOR end to end (textbook §6.5.1) with sliders for f, p, q.

    ``values`` are the users' true values as indices into ``candidates``.
    Each update runs permanent RR (f) and instantaneous RR (p, q) for every
    user with the same random draws (made once, as :func:`helpers.ldp.rappor_permanent`
    and :func:`~helpers.ldp.rappor_instantaneous` make them), estimates the Bloom-bit counts and
    decodes candidate counts by non-negative least squares (all from
    :mod:`helpers.ldp`). The figure shows true and decoded counts; the title
    gives ε_∞ (any number of reports) and ε_1 (one report).
    """
    func = "rappor_widget"
    candidates = list(candidates)
    m = len(candidates)
    if m == 0:
        raise fail(func, "candidates", "a non-empty list of candidate strings", candidates)
    values = np.asarray(values)
    if values.ndim != 1 or values.size == 0 or not np.issubdtype(values.dtype, np.integer) \
            or values.min() < 0 or values.max() >= m:
        raise fail(func, "values", f"a non-empty 1-D integer array of indices in [0, {m})", values)
    for name, value in (("f", f), ("p", p), ("q", q)):
        check_probability(value, func=func, name=name)
    true = np.bincount(values, minlength=m)
    # every user's Bloom filter B is the filter of her candidate (same hash functions)
    bloom = ldp.rappor_bloom(candidates, k_bits, h)[values]
    fig, ax = new_figure((9.0, 3.4))
    x = np.arange(m)
    ax.bar(x - 0.2, true, width=0.4, color="0.6", label=label(zh="真实人数", en="true count"))
    decoded = ax.bar(x + 0.2, np.zeros(m), width=0.4, color="C0", label=label(zh="RAPPOR 解码", en="RAPPOR decoded"))
    ax.set_xticks(x, candidates, rotation=30, ha="right", fontsize=SMALL_TEXT_PT)
    ax.set_ylim(0, 1.5 * true.max())
    ax.set_ylabel(label(zh="人数", en="users"))
    ax.legend(fontsize=SMALL_TEXT_PT, loc="upper right")
    title = ax.set_title("")

    # The draws, made once: the uniforms that ldp.rappor_permanent and ldp.rappor_instantaneous
    # take from this seed. A user's report bit is 1 when (u_perm < f/2 and u_inst < q) or
    # (f/2 <= u_perm < f and u_inst < p) or (u_perm >= f and u_inst < q if her Bloom bit is 1
    # else p), so the collector's count of bit j is a sum of rectangle counts of the points
    # (u_perm, u_inst). On the sliders' grid (f/2 a multiple of 1/40, p and q of 1/20) these
    # come from one cumulative 2-D histogram per (candidate, bit): a move costs microseconds,
    # not the 2 × n × k comparisons (≈ 200 ms) of perturbing every user again.
    draws = np.random.default_rng(seed)
    u_perm, u_inst = draws.random(bloom.shape), draws.random(bloom.shape)
    a_steps, b_steps = 40, 20
    cell = ((values[:, None] * k_bits + np.arange(k_bits)) * (a_steps + 1)
            + np.minimum(u_perm * a_steps, a_steps - 1).astype(np.int64) + 1) * (b_steps + 1) \
        + np.minimum(u_inst * b_steps, b_steps - 1).astype(np.int64) + 1
    below = np.bincount(cell.ravel(), minlength=m * k_bits * (a_steps + 1) * (b_steps + 1))
    below = below.reshape(m, k_bits, a_steps + 1, b_steps + 1).cumsum(axis=2).cumsum(axis=3)  # #{u_perm < a/40, u_inst < b/20}
    bit_set = ldp.rappor_bloom(candidates, k_bits, h).astype(bool)                             # (m, k_bits)
    del cell, draws

    def bit_counts(f: float, p: float, q: float) -> np.ndarray:
        grid = np.array([f * a_steps / 2, f * a_steps, p * b_steps, q * b_steps])
        if np.all(np.abs(grid - np.round(grid)) < 1e-9):
            half, full, bp, bq = np.round(grid).astype(int)
            br = np.where(bit_set, bq, bp)
            idx = np.arange(m)[:, None], np.arange(k_bits)[None, :]
            per_candidate = (below[:, :, half, bq] + below[:, :, full, bp] - below[:, :, half, bp]
                             + below[idx + (a_steps, br)] - below[idx + (full, br)])
            return per_candidate.sum(axis=0)
        # off the grid (set from code): perturb every user with the same draws
        b_prime = np.where(u_perm < f / 2, True, np.where(u_perm < f, False, bloom == 1))
        return np.count_nonzero(np.where(b_prime, u_inst < q, u_inst < p), axis=0)

    def update(f: float, p: float, q: float) -> dict:
        if p == q:  # reports independent of the data: nothing to decode
            estimate = np.zeros(m)
        else:
            estimate = ldp.rappor_decode(ldp.rappor_estimate_bits(bit_counts(f, p, q), f, p, q, n=len(values)),
                                         candidates, k_bits, h)
        for bar, height in zip(decoded, estimate):
            bar.set_height(height)
        eps_inf = ldp.rappor_epsilon_infinity(f, h)
        eps_one = ldp.rappor_epsilon_one(f, p, q, h)
        rmse = float(np.sqrt(np.mean((estimate - true) ** 2)))
        title.set_text(f"f = {f:.2f}, p = {p:.2f}, q = {q:.2f}:  ε∞ = {eps_inf:.2f},  ε1 = {eps_one:.2f},  RMSE = {rmse:.0f}")
        return {"epsilon_infinity": eps_inf, "epsilon_one": eps_one, "rmse": rmse, "estimate": estimate}

    def prob_slider(name: str, value: float, low: float = 0.0, high: float = 1.0) -> W.FloatSlider:
        return W.FloatSlider(value=value, min=low, max=high, step=0.05, description=name,
                             readout_format=".2f", continuous_update=False, layout=W.Layout(width="300px"))

    sliders = {"f": prob_slider("f", f, 0.05, 0.95), "p": prob_slider("p", p), "q": prob_slider("q", q)}
    return _assemble(fig, sliders, update, {"decoded": decoded, "title": title}, height_px=320)


# --------------------------------------------------------------------- §6.5.2 shuffle model


def shuffle_amplification_widget(eps0: float = 2.0, delta: float = 1e-6,
                                 n_range: tuple[float, float] = (1e2, 1e8)) -> LiveFigure:
    """Central ε after shuffling n reports of an ε0-LDP randomizer (FMT 2021), ε0 on a slider.

    The curve is :func:`helpers.shuffle.fmt_amplified_epsilon`; where the
    closed form does not apply (ε0 > ln(n/(16 ln(2/δ)))) no amplification
    is claimed and the curve stays at ε0 (dotted part).
    """
    func = "shuffle_amplification_widget"
    check_epsilon(eps0, func=func, name="eps0")
    check_probability(delta, func=func, name="delta", low_open=True, high_open=True)
    if not 1 <= n_range[0] < n_range[1]:
        raise fail(func, "n_range", "(low, high) with 1 <= low < high", n_range)
    ns = np.unique(np.logspace(np.log10(n_range[0]), np.log10(n_range[1]), 121).astype(np.int64))
    fig, ax = new_figure((7.5, 3.6))
    (valid_line,) = ax.plot(ns, np.full(ns.size, np.nan), color="C0", lw=2,
                            label=label(zh="洗牌后的中心化 ε（FMT 界）", en="central ε after shuffling (FMT bound)"))
    # On top of the local ε0 line it coincides with, and thicker, or the red dashes hide it.
    (invalid_line,) = ax.plot(ns, np.full(ns.size, np.nan), color="C0", lw=3, ls=":", zorder=3,
                              label=label(zh="n 太小：界不适用，仍为 ε0", en="n too small: bound n/a, still ε0"))
    local = ax.axhline(eps0, color="C3", ls="--", lw=1.2, label=label(zh="本地 ε0（不洗牌）", en="local ε0 (no shuffling)"))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(ns[0], ns[-1])
    ax.set_ylim(1e-3, 12)
    ax.set_xlabel(label(zh="用户数 n", en="number of users n"))
    ax.set_ylabel("ε")
    ax.legend(fontsize=SMALL_TEXT_PT, loc="lower left")
    title = ax.set_title("")

    def update(eps0: float) -> dict:
        eps = np.array([fmt_amplified_epsilon(eps0, int(n), delta) for n in ns])
        valid = np.array([fmt_is_valid(eps0, int(n), delta) for n in ns])
        valid_line.set_ydata(np.where(valid, eps, np.nan))
        # the dotted part joins the solid part at the first valid n
        first = int(np.argmax(valid)) if valid.any() else ns.size
        invalid_line.set_ydata(np.where(np.arange(ns.size) <= first, eps0, np.nan))
        local.set_ydata([eps0, eps0])
        n_min = int(ns[first]) if valid.any() else None
        at_1e5 = fmt_amplified_epsilon(eps0, 100_000, delta)
        limit = f"{n_min:,}" if n_min is not None else "—"
        title.set_text(label(zh=f"ε0 = {eps0:.3g}，δ = {delta:g}：界从 n ≥ {limit} 起适用；n = 100,000 时 ε ≈ {at_1e5:.3g}",
                             en=f"ε0 = {eps0:.3g}, δ = {delta:g}: bound applies from n ≥ {limit}; at n = 100,000, ε ≈ {at_1e5:.3g}"))
        return {"epsilon": eps, "valid": valid, "n_min": n_min, "epsilon_at_1e5": at_1e5}

    slider = epsilon_slider(eps0, -0.5, np.log10(8.0), description="ε0")
    return _assemble(fig, {"eps0": slider}, update, {"valid": valid_line, "invalid": invalid_line,
                                                      "local": local, "title": title}, height_px=330)


# --------------------------------------------------------------------- seed 003 histograms


def range_mse_widget(counts: Sequence[float], epsilon: float = 1.0, b: int = 2, *,
                     branchings: Sequence[int] = (2, 4, 8, 16), n_trials: int = 100,
                     n_ranges: int = 30, seed: int = 5) -> LiveFigure:
    """Range-query MSE against range length: flat Laplace histogram vs b-ary tree (± constrained inference).

    The numbers come from :func:`helpers.histograms.range_mse_by_length`
    (same seed at every update). ε is fixed: every MSE here scales exactly
    as 1/ε² (the same draws, rescaled), so an ε slider would only move all
    curves together; the slider is the branching factor b.
    ``counts`` must have a length that is a power of every b in ``branchings``.
    """
    counts = np.asarray(counts, dtype=float)
    n = counts.size
    if b not in branchings:
        raise fail("range_mse_widget", "b", f"one of branchings={tuple(branchings)}", b)
    for branching in branchings:
        tree_height(n, branching)  # raises unless len(counts) is a power of every branching factor
    lengths = np.unique(np.round(np.geomspace(1, n, 14)).astype(int))
    fig, ax = new_figure((7.5, 3.8))
    nan = np.full(lengths.size, np.nan)
    (flat,) = ax.plot(lengths, nan, "o-", color="C3", label=label(zh="平坦直方图", en="flat histogram"))
    (theory,) = ax.plot(lengths, nan, color="C3", lw=0.8, ls=":", label="|r|·2/ε²")
    (tree,) = ax.plot(lengths, nan, "s-", color="C0", alpha=0.6, label=label(zh="b 叉树（原始）", en="b-ary tree (raw)"))
    (tree_ci,) = ax.plot(lengths, nan, "^-", color="C0", lw=2, label=label(zh="b 叉树 + 约束推理", en="b-ary tree + constrained inference"))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(0.8, n * 1.25)
    ax.set_ylim(0.5 / epsilon ** 2, 5e4 / epsilon ** 2)
    ax.set_xlabel(label(zh="范围长度 |r|（格数）", en="range length |r| (bins)"))
    ax.set_ylabel("MSE")
    ax.legend(fontsize=SMALL_TEXT_PT, loc="upper left")
    title = ax.set_title("")

    def mse(b: int) -> dict:
        return range_mse_by_length(counts, epsilon, np.random.default_rng(seed), b=b, lengths=lengths,
                                   n_trials=n_trials, n_ranges=n_ranges)

    mse = on_grid(mse, [(branching,) for branching in branchings])  # n_trials releases per b: once each

    def update(b: int) -> dict:
        result = mse(b)
        flat.set_ydata(result["flat"])
        theory.set_ydata(result["flat_theory"])
        tree.set_ydata(result["tree"])
        tree_ci.set_ydata(result["tree_ci"])
        better = lengths[result["tree_ci"] < result["flat"]]
        crossover = int(better.min()) if better.size else None
        title.set_text(label(zh=f"ε = {epsilon:.3g}，b = {b}：树 + 约束推理从 |r| ≥ {crossover} 起更准",
                             en=f"ε = {epsilon:.3g}, b = {b}: tree + inference wins from |r| ≥ {crossover}"))
        return {**result, "crossover": crossover}

    b_slider = W.SelectionSlider(options=list(branchings), value=b, description="b",
                                 continuous_update=False, layout=W.Layout(width="260px"))
    return _assemble(fig, {"b": b_slider}, update,
                     {"flat": flat, "theory": theory, "tree": tree, "tree_ci": tree_ci, "title": title},
                     height_px=340)


# --------------------------------------------------------------------- §6.5.3 synthetic data


def synthetic_utility_widget(data: np.ndarray, domains: Sequence[int], epsilon: float = 1.0, *,
                             group_col: int = 1, target_col: int = 2, target_level: int = 2,
                             group_names: Sequence[str] | None = None, ylabel: str | None = None,
                             seed: int = 11) -> LiveFigure:
    """Utility of DP synthetic data against ε (textbook §6.5.3), ε on a log slider.

    For each level of ``group_col`` the bars show P(``target_col`` =
    ``target_level`` | group) in the real data, in data from the
    select–measure–estimate synthesizer over 2-way marginals
    (:func:`helpers.synthetic.fit_marginal_model`) and in data from the
    1-way-only model (``rounds=0``: columns independent). The title gives the
    workload error (mean L1 distance) on all 2-way and all 3-way marginals.
    The same seed is used at every ε; ε steps through 0.1, 0.2, 0.5, 1, 2, 5, 10, each
    computed when the figure is built.
    """
    func = "synthetic_utility_widget"
    data = np.asarray(data)
    domains = tuple(int(d) for d in domains)
    if data.ndim != 2 or data.shape[1] != len(domains):
        raise fail(func, "data", f"an (n, {len(domains)}) integer array, one column per domain", f"shape {data.shape}")
    for name, col in (("group_col", group_col), ("target_col", target_col)):
        if not 0 <= check_int(col, func=func, name=name) < len(domains):
            raise fail(func, name, f"a column index in [0, {len(domains)})", col)
    check_epsilon(epsilon, func=func)
    levels = domains[group_col]
    names = list(group_names) if group_names is not None else [str(i) for i in range(levels)]
    two, three = all_marginals(len(domains), 2), all_marginals(len(domains), 3)

    def conditional(rows: np.ndarray) -> np.ndarray:
        out = np.zeros(levels)
        for g in range(levels):
            members = rows[:, group_col] == g
            out[g] = np.mean(rows[members, target_col] == target_level) if members.any() else 0.0
        return out

    fig, ax = new_figure((7.5, 3.4))
    x = np.arange(levels)
    ax.bar(x - 0.27, conditional(data), width=0.27, color="0.6", label=label(zh="真实数据", en="real data"))
    sme = ax.bar(x, np.zeros(levels), width=0.27, color="C0",
                 label=label(zh="合成：选择-测量-估计（二维边缘）", en="synthetic: select–measure–estimate (2-way)"))
    indep = ax.bar(x + 0.27, np.zeros(levels), width=0.27, color="C1",
                   label=label(zh="合成：只用一维边缘（各列独立）", en="synthetic: 1-way only (independent columns)"))
    ax.set_xticks(x, names)
    ax.set_ylim(0, 1)
    ax.set_ylabel(ylabel or label(zh=f"P(第 {target_col} 列 = {target_level} | 组)",
                                  en=f"P(column {target_col} = {target_level} | group)"))
    ax.legend(fontsize=SMALL_TEXT_PT, loc="upper left")
    title = ax.set_title("")

    def fit(epsilon: float) -> dict:
        draws = np.random.default_rng(seed)
        model = fit_marginal_model(data, domains, epsilon, draws)
        # synthetic sizes from the noisy totals (the exact n is not released)
        synthetic = sample_model(model, int(round(model.n_hat)), draws)
        independent = fit_marginal_model(data, domains, epsilon, draws, rounds=0)
        baseline = sample_model(independent, int(round(independent.n_hat)), draws)
        errors = {"sme_2way": workload_error(data, synthetic, two, domains),
                  "sme_3way": workload_error(data, synthetic, three, domains),
                  "indep_2way": workload_error(data, baseline, two, domains),
                  "indep_3way": workload_error(data, baseline, three, domains)}
        return {**errors, "selected": list(model.selected), "epsilon_spent": model.epsilon_spent,
                "sizes": (len(synthetic), len(baseline)), "heights": (conditional(synthetic), conditional(baseline))}

    # two model fits per ε (≈ 0.25 s): once per value of a 1-2-5 grid, so a move is a lookup
    slider = epsilon_slider(epsilon, -1.0, 1.0, mantissas=(1.0, 2.0, 5.0))
    fit = on_grid(fit, [(value,) for _, value in slider.options])

    def update(epsilon: float) -> dict:
        result = fit(epsilon)
        errors = result
        for bars, heights in zip((sme, indep), result["heights"]):
            for bar, height in zip(bars, heights):
                bar.set_height(height)
        title.set_text(label(
            zh=f"ε = {epsilon:.3g}：工作负载误差 二维 {errors['sme_2way']:.3f}（独立 {errors['indep_2way']:.3f}），三维 {errors['sme_3way']:.3f}（独立 {errors['indep_3way']:.3f}）",
            en=f"ε = {epsilon:.3g}: workload error 2-way {errors['sme_2way']:.3f} (indep. {errors['indep_2way']:.3f}), 3-way {errors['sme_3way']:.3f} (indep. {errors['indep_3way']:.3f})"))
        return {k: v for k, v in result.items() if k != "heights"}

    return _assemble(fig, {"epsilon": slider}, update,
                     {"sme": sme, "indep": indep, "title": title}, height_px=320)
