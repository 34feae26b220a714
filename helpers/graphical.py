"""Dependency graphs of the attributes for §6.5.3 (Fig. 6-14): drawn with matplotlib only.

* :data:`DEMO_NETWORK`: the Bayesian network that generates :func:`helpers.synthetic.demo_dataset`
  (age → education; age, education, sex → income), with age as the root like Fig. 6-14.
* :func:`model_edges`: the graph a select–measure–estimate model uses: one undirected edge per
  measured 2-way marginal, weighted by the mutual information of the pair in the fitted model
  (a function of noisy answers only: post-processing, no budget).
* :func:`draw_graph`: nodes on a circle, arrows or lines, optional edge labels.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from helpers._validation import fail
from helpers.fonts import SMALL_TEXT_PT, TITLE_PT

__all__ = ["DEMO_NETWORK", "mutual_information", "model_edges", "draw_graph"]

#: Parents → child edges of the network behind ``demo_dataset`` (columns age 0, education 1,
#: income 2, sex 3).
DEMO_NETWORK = ((0, 1), (0, 2), (1, 2), (3, 2))


def mutual_information(table: np.ndarray) -> float:
    """Mutual information (nats) of a 2-D probability or count table: ``Σ p log(p / (p_a p_b))``."""
    p = np.asarray(table, dtype=float)
    if p.ndim != 2 or np.any(p < 0) or not p.sum() > 0:
        raise fail("mutual_information", "table", "a 2-D table of non-negative numbers with a positive sum", p.shape)
    p = p / p.sum()
    outer = p.sum(axis=1, keepdims=True) * p.sum(axis=0, keepdims=True)
    mask = p > 0
    return float(np.sum(p[mask] * np.log(p[mask] / outer[mask])))


def model_edges(model) -> dict[tuple[int, int], float]:
    """``{(a, b): mutual information in the model}`` for every 2-way marginal the model measured."""
    edges = {}
    for m in model.measurements:
        if len(m["attrs"]) == 2:
            pair = tuple(sorted(m["attrs"]))
            edges[pair] = mutual_information(model.marginal(pair))
    return edges


def draw_graph(ax, names: Sequence[str], edges: Sequence[tuple[int, int]] | dict, *, directed: bool = False,
               title: str = "", edge_labels: bool = False) -> dict:
    """Draw attributes as nodes on a circle and ``edges`` between them; returns node positions.

    ``edges`` is a sequence of pairs or a dict pair → weight (line width grows with the weight;
    with ``edge_labels`` the weight is written on the edge).
    """
    n = len(names)
    angles = math.pi / 2 + 2 * math.pi * np.arange(n) / n
    pos = {i: (math.cos(a), math.sin(a)) for i, a in enumerate(angles)}
    weights = dict(edges) if isinstance(edges, dict) else {tuple(e): None for e in edges}
    top = max([w for w in weights.values() if w is not None], default=1.0) or 1.0
    placed: list[tuple[float, float]] = []
    for (a, b), w in weights.items():
        if not (0 <= a < n and 0 <= b < n):
            raise fail("draw_graph", "edges", f"pairs of node indices in [0, {n - 1}]", (a, b))
        width = 1.5 if w is None else 1.0 + 5.0 * w / top
        ax.annotate("", xy=pos[b], xytext=pos[a],
                    arrowprops=dict(arrowstyle="-|>" if directed else "-", lw=width, color="C0",
                                    shrinkA=22, shrinkB=22, mutation_scale=16))
        if edge_labels and w is not None:
            # At the edge's middle, unless another label is there already (two diagonals of a
            # square cross at their middles): then a third of the way along.
            points = [(pos[a][0] + s * (pos[b][0] - pos[a][0]), pos[a][1] + s * (pos[b][1] - pos[a][1]))
                      for s in (0.5, 0.3, 0.7)]
            mx, my = next((q for q in points if all(math.dist(q, u) > 0.3 for u in placed)), points[0])
            placed.append((mx, my))
            ax.text(mx, my, f"{w:.3f}", fontsize=SMALL_TEXT_PT, ha="center", va="center",
                    bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none"))
    for i, name in enumerate(names):
        ax.text(*pos[i], name, ha="center", va="center", fontsize=SMALL_TEXT_PT,
                bbox=dict(boxstyle="round,pad=0.35", fc="#fff3d6", ec="0.3"))
    ax.set_xlim(-1.45, 1.45)
    ax.set_ylim(-1.35, 1.35)
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=TITLE_PT)
    return pos
