"""Diagrams of the chapter's flow figures, drawn from the course's own data (§6.5).

The textbook's Fig. 6-12 shows RAPPOR's perturbation as a flow chart; here the same flow is drawn
for one real client of :class:`helpers.ldp.RapporClient`, so the rows are the bits the notebook just
printed and the flipped bits can be counted on the picture.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.patches import Rectangle

from helpers._validation import fail
from helpers.lectures.plots import label

__all__ = ["plot_rappor_flow"]

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
    note = dict(ha="left", va="center", fontsize=9, color="0.2")
    ax.text(0, ys[1] + 1.45, label(
        zh=f"↓ 永久随机响应，只做一次：每位以 $1 - f/2 = {1 - f / 2:g}$ 保持（红框：被翻转）",
        en=f"↓ permanent RR, once: each bit kept w.p. $1 - f/2 = {1 - f / 2:g}$ (red: flipped)"), **note)
    ax.text(0, ys[2] + 1.45, label(
        zh="↓ 瞬时随机响应，每次上报：$B'_i = 1$ 报 1 的概率为 $q$，$B'_i = 0$ 为 $p$",
        en="↓ instantaneous RR, each report: 1 w.p. $q$ where $B'_i = 1$, $p$ where $B'_i = 0$"), **note)
    ax.set_xlim(-0.2, k + 0.2)
    ax.set_ylim(ys[-1] - 0.1, 0.95)
    ax.set_axis_off()
    ax.set_title(label(zh=f"一个用户的 RAPPOR：v = {value}，$f = {f:g}$，$p = {p:g}$，$q = {q:g}$",
                       en=f"One user's RAPPOR: v = {value}, $f = {f:g}$, $p = {p:g}$, $q = {q:g}$"),
                 fontsize=10)
    return {"cells": cells, "flips": flips}
