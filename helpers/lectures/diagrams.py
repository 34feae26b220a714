"""The chapter's diagrams: Fig. 6-1 (composition), Fig. 6-2 (release models), Fig. 6-12 (RAPPOR).

Where the textbook draws a flow chart, the course draws it with the notebook's own numbers: the
composition diagram carries the budgets the notebook spends, and RAPPOR's is one real client of
:class:`helpers.ldp.RapporClient`, so its rows are the bits the notebook just printed.  No diagram
uses equal aspect: the slide build enlarges every text to 17 pt, and the gaps must still hold it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

from helpers._validation import fail
from helpers.fonts import SMALL_TEXT_PT, TITLE_PT
from helpers.lectures.plots import label

__all__ = ["plot_rappor_flow", "plot_composition_diagram", "plot_release_diagram"]

_ONE, _ZERO, _FLIP = "#1f4e79", "#ffffff", "#d62728"


def _bit_row(name: str, bits: Any, k: int) -> np.ndarray:
    row = np.asarray(bits)
    if row.shape != (k,) or not np.all((row == 0) | (row == 1)):
        raise fail("plot_rappor_flow", name, f"{k} bits, each 0 or 1 (the length of the Bloom filter)", bits)
    return row.astype(int)


def plot_rappor_flow(ax: Axes, bloom: Any, permanent: Any, reports: list[Any], *,
                     value: str, f: float, p: float, q: float) -> dict[str, Any]:
    """§6.5.1, Fig. 6-12: one user's Bloom filter B, permanent response B′ and reports S₁, S₂, ….

    Each row is drawn as k cells (dark = 1). B′ is drawn from B once (each bit kept with
    probability 1 − f/2; a red frame marks a flipped bit); every report Sₜ is drawn afresh from B′
    (1 with probability q where B′ᵢ = 1, p where B′ᵢ = 0). All reports come from the same memoized
    B′, so however many there are, they reveal at most B′ (Theorem 6-1).

    Parameters
    ----------
    ax : the axes to draw on.
    bloom, permanent : the k bits of B and B′.
    reports : the reports S₁, S₂, … (k bits each), in order.
    value : the reported value v (shown in the title).
    f, p, q : RAPPOR's parameters (shown in the title and the stage notes).

    Returns
    -------
    dict with ``"cells"`` (one list of rectangles per row, top row first) and ``"flips"`` (per row,
    the bits that differ from the row it was drawn from: B′ from B, each report from B′; 0 for B).
    """
    if not reports:
        raise fail("plot_rappor_flow", "reports", "a list of at least one report", reports)
    b = np.asarray(bloom)
    k = int(b.size)
    rows = [_bit_row("bloom", bloom, k), _bit_row("permanent", permanent, k)]
    rows += [_bit_row(f"reports[{t}]", s, k) for t, s in enumerate(reports)]
    names = [label(zh="B 布隆过滤器", en="B  Bloom filter"), label(zh="B′ 永久响应", en="B′ permanent")]
    names += [label(zh=f"S{t + 1} 第 {t + 1} 次上报", en=f"S{t + 1} report {t + 1}") for t in range(len(reports))]
    # The two stages' notes sit in the gaps: the permanent step happens once, the instantaneous one per report.
    # No equal aspect: the slide build enlarges every text to 17 pt, and the gaps must still hold a line.
    ys = [0.0, -2.2] + [-4.4 - 1.15 * t for t in range(len(reports))]
    cells, flips = [], []
    for i, (row, y) in enumerate(zip(rows, ys)):
        # Only B′'s flips are framed: they are the ones no number of reports can undo.
        changed = row != rows[0] if i == 1 else np.zeros(k, dtype=bool)
        patches = [ax.add_patch(Rectangle((j, y), 0.9, 0.85, facecolor=_ONE if row[j] else _ZERO,
                                          edgecolor=_FLIP if changed[j] else "0.6",
                                          linewidth=2.2 if changed[j] else 0.6)) for j in range(k)]
        cells.append(patches)
        flips.append(int((row != (rows[0] if i == 1 else rows[1])).sum()) if i else 0)
        ax.text(-0.6, y + 0.45, names[i], ha="right", va="center", fontsize=10)
    note = dict(ha="left", va="center", fontsize=SMALL_TEXT_PT, color="0.2")
    ax.text(0, ys[1] + 1.45, label(
        zh=f"↓ 永久随机响应，只做一次：每位不变的总概率 $(1 - f) + f/2 = {1 - f / 2:g}$（红框：被翻转）",
        en=f"↓ permanent RR, once: a bit stays unchanged w.p. $(1 - f) + f/2 = {1 - f / 2:g}$ in all (red: flipped)"),
        **note)
    ax.text(0, ys[2] + 1.45, label(
        zh="↓ 瞬时随机响应，每次上报：$B'_i = 1$ 报 1 的概率为 $q$，$B'_i = 0$ 为 $p$",
        en="↓ instantaneous RR, each report: 1 w.p. $q$ where $B'_i = 1$, $p$ where $B'_i = 0$"), **note)
    ax.set_xlim(-0.2, k + 0.2)
    ax.set_ylim(ys[-1] - 0.1, 0.95)
    ax.set_axis_off()
    ax.set_title(label(zh=f"一个用户的 RAPPOR：v = {value}，$f = {f:g}$，$p = {p:g}$，$q = {q:g}$",
                       en=f"One user's RAPPOR: v = {value}, $f = {f:g}$, $p = {p:g}$, $q = {q:g}$"),
                 fontsize=TITLE_PT)
    return {"cells": cells, "flips": flips}


def _box(ax: Axes, x: float, y: float, w: float, h: float, text: str, *, color: str = "#dbe8f5",
         dashed: bool = False, fontsize: float = 10) -> Any:
    patch = ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0.02,rounding_size=0.15",
                                        facecolor=color, edgecolor="0.3", linestyle="--" if dashed else "-",
                                        linewidth=1.0))
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize)
    return patch


def _arrow(ax: Axes, start: tuple[float, float], end: tuple[float, float], text: str = "", *,
           offset: tuple[float, float] = (0.0, 0.25), fontsize: float = SMALL_TEXT_PT, both: bool = False) -> Any:
    arrow = ax.add_patch(FancyArrowPatch(start, end, arrowstyle="<|-|>" if both else "-|>", mutation_scale=12, linewidth=1.2,
                                         color="0.25", shrinkA=2, shrinkB=2))
    if text:
        ax.text((start[0] + end[0]) / 2 + offset[0], (start[1] + end[1]) / 2 + offset[1], text,
                ha="center", va="center", fontsize=fontsize, color="0.2")
    return arrow


def plot_composition_diagram(ax_seq: Axes, ax_par: Axes, epsilons: list[float]) -> dict[str, float]:
    """§6.1.3, Fig. 6-1: sequential composition on one dataset against parallel composition on a partition.

    Left, mechanisms Mᵢ with budgets εᵢ all query the same D: the total is Σ εᵢ (Theorem 6-2).
    Right, each Mᵢ queries its own disjoint part Dᵢ of D: the total is max εᵢ (Theorem 6-3), since
    each person is in one part and is looked at once.

    Returns
    -------
    dict with the two totals, ``"sequential"`` (Σ εᵢ) and ``"parallel"`` (max εᵢ), as drawn.
    """
    eps = [float(e) for e in epsilons]
    if not eps or not all(np.isfinite(e) and e > 0 for e in eps):
        raise fail("plot_composition_diagram", "epsilons", "a non-empty list of finite budgets > 0", epsilons)
    n = len(eps)
    xs = [10 * (i + 0.5) / n for i in range(n)]
    width = min(2.6, 9.0 / n)
    totals = {"sequential": float(np.sum(eps)), "parallel": max(eps)}
    for ax, kind in ((ax_seq, "sequential"), (ax_par, "parallel")):
        if kind == "sequential":
            _box(ax, 5, 5, 3.2, 1.0, label(zh="数据集 $D$", en="dataset $D$"), color="#f2f2f2")
            tops = [(5 + (x - 5) * 0.35, 4.5) for x in xs]
        else:
            _box(ax, 5, 5, 9.8, 1.3, "", color="#f2f2f2", dashed=True)
            for i, x in enumerate(xs):
                _box(ax, x, 5, width * 0.9, 0.8, label(zh=f"$D_{i + 1}$", en=f"$D_{i + 1}$"), color="white")
            ax.text(0.15, 5.85, label(zh="$D$ 划分为互不相交的子集", en="$D$ split into disjoint parts"),
                    ha="left", va="bottom", fontsize=SMALL_TEXT_PT, color="0.25")
            tops = [(x, 4.6) for x in xs]
        for i, (x, top) in enumerate(zip(xs, tops)):
            _arrow(ax, top, (x, 2.95))
            _box(ax, x, 2.35, width, 1.1, f"$M_{i + 1}$\n$\\varepsilon_{i + 1} = {eps[i]:g}$")
        parts = " + ".join(f"{e:g}" for e in eps)
        total = label(zh=f"总消耗 $\\sum\\varepsilon_i = {parts} = {totals['sequential']:g}$",
                      en=f"total $\\sum\\varepsilon_i = {parts} = {totals['sequential']:g}$") if kind == "sequential" \
            else label(zh=f"总消耗 $\\max\\varepsilon_i = {totals['parallel']:g}$",
                       en=f"total $\\max\\varepsilon_i = {totals['parallel']:g}$")
        ax.text(5, 0.75, total, ha="center", va="center", fontsize=11)
        ax.set_title(label(zh="串行组合（定理 6-2）：同一个数据集", en="Sequential (Theorem 6-2): the same dataset")
                     if kind == "sequential" else
                     label(zh="并行组合（定理 6-3）：不相交的子集", en="Parallel (Theorem 6-3): disjoint parts"),
                     fontsize=10)
        ax.set_xlim(-0.1, 10.1)
        ax.set_ylim(0.2, 6.3)
        ax.set_axis_off()
    return totals


def plot_release_diagram(ax_int: Axes, ax_non: Axes) -> None:
    """§6.1.4, Fig. 6-2: (a) interactive and (b) non-interactive release.

    (a) The analyst sends queries f₁, f₂, … one at a time; the mechanism answers each from D with
    noise and spends budget on each, until the budget is gone. (b) The mechanism releases noisy data
    once (a noisy histogram, synthetic data) with the whole budget; every later query is answered
    from the release: post-processing (Theorem 6-1), no more budget.
    """
    xs, w, h = (1.3, 5.0, 8.7), 2.4, 1.1
    left, right = (lambda i: xs[i] - w / 2), (lambda i: xs[i] + w / 2)
    for ax, kind in ((ax_int, "interactive"), (ax_non, "non-interactive")):
        _box(ax, xs[0], 1.5, w, h, label(zh="数据集 $D$", en="dataset $D$"), color="#f2f2f2")
        _box(ax, xs[2], 1.5, w, h, label(zh="分析者", en="analyst"), color="#fdf0d5")
        # Arrow labels sit above and below the row of boxes: at slide size the gaps hold no text.
        if kind == "interactive":
            _box(ax, xs[1], 1.5, w, h, label(zh="差分隐私机制\n（记账器）", en="DP mechanism\n(accountant)"))
            _arrow(ax, (left(2), 1.75), (right(1), 1.75),
                   label(zh="查询 $f_1, f_2, \\dots$", en="queries $f_1, f_2, \\dots$"), offset=(0, 0.75))
            _arrow(ax, (right(1), 1.25), (left(2), 1.25), label(zh="$f_i(D)$ + 噪声", en="$f_i(D)$ + noise"),
                   offset=(0, -0.75))
            _arrow(ax, (left(1), 1.5), (right(0), 1.5), both=True)  # the mechanism reads D for every query
            note = label(zh="每个答案都消耗预算，预算耗尽即停止", en="each answer spends budget; it stops when the budget is gone")
            title = label(zh="（a）交互式发布", en="(a) interactive release")
        else:
            _box(ax, xs[1], 1.5, w, h, label(zh="加噪的发布\n（直方图、合成数据）", en="noisy release\n(histogram, synthetic)"))
            _arrow(ax, (right(0), 1.5), (left(1), 1.5), label(zh="一次，$\\varepsilon$", en="once, $\\varepsilon$"),
                   offset=(0, 0.95))
            _arrow(ax, (left(2), 1.5), (right(1), 1.5), label(zh="任意多次查询", en="any number of queries"),
                   offset=(0, 0.95))
            note = label(zh="之后的查询都是后处理（定理 6-1），不再消耗预算",
                         en="later queries are post-processing (Theorem 6-1): no more budget")
            title = label(zh="（b）非交互式发布", en="(b) non-interactive release")
        ax.text(5.0, 0.05, note, ha="center", va="center", fontsize=SMALL_TEXT_PT, color="0.2")
        ax.set_title(title, fontsize=TITLE_PT, loc="left")
        ax.set_xlim(0, 10)
        ax.set_ylim(-0.3, 2.75)
        ax.set_axis_off()
