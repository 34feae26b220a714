"""Sensitivity notions and hierarchical histograms (seed 003, §3 and §4 of the survey).

* Global sensitivity (survey Def. 2) depends only on the query; local
  sensitivity (Def. 3) on the query *and* the dataset; smooth sensitivity
  (Def. 8, Nissim, Raskhodnikova, Smith 2007) is a smooth upper bound that
  may be used to calibrate noise. The median is the classic example: its
  global sensitivity is the whole range hi - lo, its local sensitivity on
  typical data is tiny.
* Histograms for range queries: the flat Laplace histogram (Dwork) has range
  error growing linearly with the range length (MSE = |r|·2/ε²); a b-ary
  tree of noisy counts (Qardaji et al. 2013) answers any range from at most
  about 2(b-1)h nodes; constrained inference (Hay et al. 2010: weighted
  averaging bottom-up, mean consistency top-down) makes the tree consistent
  and lowers the error further.

Ranges are half-open, like Python slices: ``[lo, hi)`` means leaves
lo, ..., hi-1. Trees are lists of levels, leaves first, root last.
Neighbouring datasets differ by adding/removing one record (one leaf count
changes by 1), the course's default relation; the median functions follow Nissim,
Raskhodnikova and Smith (2007) and use replacement (n fixed), as their docstrings say.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
from numpy.typing import ArrayLike

from helpers._validation import check_epsilon, check_int, check_positive, check_real, check_rng, fail
from helpers.mechanisms import laplace_noise

__all__ = [
    "NEIGHBOURS", "global_sensitivity_count", "global_sensitivity_sum", "global_sensitivity_histogram",
    "global_sensitivity_median",
    "median_index", "local_sensitivity_median", "smooth_sensitivity_median",
    "flat_histogram", "tree_height", "pad_counts", "build_tree", "hierarchical_histogram",
    "constrained_inference", "is_consistent", "range_query_flat", "range_nodes", "range_query_tree",
    "flat_range_mse", "tree_range_variance", "ci_range_variance", "range_mse_by_length",
]


# ---------------------------------------------------------------------------
# sensitivity
# ---------------------------------------------------------------------------

#: The two neighbouring relations of textbook Definition 6-1 (§6.1.2). The course uses
#: "add_remove" (D' is D with one record added or removed) everywhere unless it says otherwise.
NEIGHBOURS = ("add_remove", "replace")


def _check_neighbours(neighbours: Any, func: str) -> str:
    if neighbours not in NEIGHBOURS:
        raise fail(func, "neighbours", "'add_remove' or 'replace'", neighbours)
    return neighbours


def global_sensitivity_count(neighbours: str = "add_remove") -> float:
    """Global sensitivity of a count query: 1 under both neighbouring relations.

    Adding or removing a record changes a count by at most 1; replacing a record
    (one record leaves the predicate, another enters or not) also changes it by at most 1.
    """
    _check_neighbours(neighbours, "global_sensitivity_count")
    return 1.0


def global_sensitivity_histogram(neighbours: str = "add_remove") -> float:
    r"""ℓ1 global sensitivity of a histogram (counts of disjoint bins), textbook §6.2.4.

    ``neighbours="add_remove"``: 1 (the added or removed record is in exactly one bin);
    ``neighbours="replace"``: 2 (the replaced record can leave one bin and enter another,
    :math:`\|f(D) - f(D')\|_1 = |{-1}| + |{+1}| = 2`). So ``Lap(1/ε)`` per bin is ε-DP
    under add/remove but only 2ε-DP under replacement.
    """
    neighbours = _check_neighbours(neighbours, "global_sensitivity_histogram")
    return 1.0 if neighbours == "add_remove" else 2.0


def global_sensitivity_sum(lo: float, hi: float, neighbours: str = "add_remove") -> float:
    """Global sensitivity of a sum of values clipped to [lo, hi].

    ``neighbours="add_remove"``: max(|lo|, |hi|) (one record appears or not);
    ``neighbours="replace"``: hi - lo (one record changes value).
    """
    func = "global_sensitivity_sum"
    lo, hi = _check_bounds(lo, hi, func)
    if _check_neighbours(neighbours, func) == "add_remove":
        return max(abs(lo), abs(hi))
    return hi - lo


def global_sensitivity_median(lo: float, hi: float) -> float:
    """Global sensitivity of the median of values in [lo, hi]: hi - lo.

    (Data with half the values at lo and half at hi: replacing one record
    moves the median from lo to hi.)
    """
    lo, hi = _check_bounds(lo, hi, "global_sensitivity_median")
    return hi - lo


def _check_bounds(lo: Any, hi: Any, func: str) -> tuple[float, float]:
    lo = check_real(lo, func=func, name="lo")
    hi = check_real(hi, func=func, name="hi")
    if not lo < hi:
        raise fail(func, "hi", f"greater than lo={lo}", hi)
    return lo, hi


def _check_sorted(sorted_data: Any, lo: float, hi: float, func: str) -> np.ndarray:
    x = np.asarray(sorted_data, dtype=float)
    if x.ndim != 1 or x.size == 0 or not np.all(np.isfinite(x)):
        raise fail(func, "sorted_data", "a non-empty 1-D array of finite numbers", sorted_data)
    if np.any(np.diff(x) < 0):
        raise fail(func, "sorted_data", "sorted in increasing order (use np.sort)", sorted_data)
    if x[0] < lo or x[-1] > hi:
        raise fail(func, "sorted_data", f"values inside [lo, hi] = [{lo}, {hi}]", sorted_data)
    return x


def median_index(n: int) -> int:
    """Index m = (n - 1) // 2 of the median in sorted data (the lower median for even n)."""
    return (check_int(n, func="median_index", name="n", minimum=1) - 1) // 2


def local_sensitivity_median(sorted_data: ArrayLike, lo: float, hi: float) -> float:
    """Local sensitivity of the median x_m, m = (n-1)//2, under replace-one neighbours.

    Replacing one record can move the m-th order statistic to anywhere
    between x_{m-1} and x_{m+1}, so
    ``LS(x) = max(x_m - x_{m-1}, x_{m+1} - x_m)`` with x_{-1} = lo and
    x_n = hi (survey Def. 3; Nissim et al. 2007). It depends on the data,
    so noise scaled to it is *not* DP by itself (see
    :func:`smooth_sensitivity_median`).
    """
    func = "local_sensitivity_median"
    lo, hi = _check_bounds(lo, hi, func)
    x = _check_sorted(sorted_data, lo, hi, func)
    padded = np.concatenate([[lo], x, [hi]])
    m = median_index(x.size) + 1  # index in the padded array
    return float(max(padded[m] - padded[m - 1], padded[m + 1] - padded[m]))


def smooth_sensitivity_median(sorted_data: ArrayLike, lo: float, hi: float, beta: float) -> float:
    """β-smooth sensitivity of the median (survey Def. 8; Nissim et al. 2007, Prop. 3.4).

    ``S*(x) = max_{k=0..n} e^{-kβ} max_{t=0..k+1} (x_{m+t} - x_{m+t-k-1})``
    with x_i = lo for i < 0 and x_i = hi for i >= n. It is >= the local
    sensitivity and changes by at most a factor e^β between neighbours.
    """
    func = "smooth_sensitivity_median"
    lo, hi = _check_bounds(lo, hi, func)
    x = _check_sorted(sorted_data, lo, hi, func)
    beta = check_positive(beta, func=func, name="beta")
    n = x.size
    m = median_index(n)

    def at(i: np.ndarray) -> np.ndarray:
        return np.where(i < 0, lo, np.where(i >= n, hi, x[np.clip(i, 0, n - 1)]))

    best = 0.0
    for k in range(n + 1):
        t = np.arange(k + 2)
        width = float(np.max(at(m + t) - at(m + t - k - 1)))
        best = max(best, math.exp(-k * beta) * width)
        if math.exp(-k * beta) * (hi - lo) <= best:
            break  # later terms cannot beat the current maximum
    return best


# ---------------------------------------------------------------------------
# flat and hierarchical histograms
# ---------------------------------------------------------------------------

def _check_counts(counts: Any, func: str) -> np.ndarray:
    c = np.asarray(counts, dtype=float)
    if c.ndim != 1 or c.size == 0 or not np.all(np.isfinite(c)):
        raise fail(func, "counts", "a non-empty 1-D array of finite counts", counts)
    return c


def flat_histogram(counts: ArrayLike, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """Dwork's flat histogram: every count + Lap(1/ε) (ε-DP; one record changes one count)."""
    func = "flat_histogram"
    c = _check_counts(counts, func)
    epsilon = check_epsilon(epsilon, func=func)
    rng = check_rng(rng, func=func)
    return c + laplace_noise(1.0 / epsilon, c.shape, rng)


def tree_height(n_leaves: int, b: int) -> int:
    """h with b**h == n_leaves (the tree then has h + 1 levels including the root)."""
    func = "tree_height"
    n_leaves = check_int(n_leaves, func=func, name="n_leaves", minimum=1)
    b = check_int(b, func=func, name="b", minimum=2)
    h = 0
    while b ** h < n_leaves:
        h += 1
    if b ** h != n_leaves:
        raise fail(func, "n_leaves", f"a power of b={b} (pad with pad_counts)", n_leaves)
    return h


def pad_counts(counts: ArrayLike, b: int = 2) -> np.ndarray:
    """Append zero counts up to the next power of b (padding bins hold no records)."""
    c = _check_counts(counts, "pad_counts")
    b = check_int(b, func="pad_counts", name="b", minimum=2)
    size = 1
    while size < c.size:
        size *= b
    return np.concatenate([c, np.zeros(size - c.size)])


def build_tree(counts: ArrayLike, b: int = 2) -> list[np.ndarray]:
    """Exact b-ary tree of counts: ``[leaves, level 1, ..., root]``; each parent = sum of its b children."""
    c = _check_counts(counts, "build_tree")
    tree_height(c.size, b)
    levels = [c]
    while levels[-1].size > 1:
        levels.append(levels[-1].reshape(-1, b).sum(axis=1))
    return levels


def tree_sensitivity(n_leaves: int, b: int = 2, neighbours: str = "add_remove") -> float:
    r"""ℓ1 global sensitivity of the whole b-ary tree of counts over ``n_leaves`` bins (L = h + 1 levels).

    ``neighbours="add_remove"``: :math:`L` — the record is counted in one node
    per level, root included. ``neighbours="replace"``: :math:`2(L-1)` — the
    record leaves one leaf-to-root path and enters another; the two paths
    share the root (the total count does not change), and differ at every
    other level when the two leaves lie under different children of the
    root, each differing level contributing :math:`|{-1}| + |{+1}| = 2`.
    Not :math:`2L`. ``tests/helpers/test_histograms.py`` checks both by enumeration.
    """
    func = "tree_sensitivity"
    neighbours = _check_neighbours(neighbours, func)
    levels = tree_height(n_leaves, b) + 1
    return float(levels if neighbours == "add_remove" else 2 * (levels - 1))


def hierarchical_histogram(counts: ArrayLike, epsilon: float, rng: np.random.Generator,
                           b: int = 2) -> list[np.ndarray]:
    """Noisy b-ary tree: every node + Lap(L/ε), L = h + 1 levels (ε-DP).

    One record is counted in one node per level, so under add/remove the
    whole tree has L1 sensitivity L (:func:`tree_sensitivity`). Returns noisy
    levels, leaves first.
    """
    func = "hierarchical_histogram"
    epsilon = check_epsilon(epsilon, func=func)
    rng = check_rng(rng, func=func)
    levels = build_tree(counts, b)
    scale = len(levels) / epsilon
    return [lv + laplace_noise(scale, lv.shape, rng) for lv in levels]


def _constrained_inference_batch(levels: list[np.ndarray], b: int) -> list[np.ndarray]:
    """Hay et al. on arrays whose last axis indexes the nodes of a level."""
    n_levels = len(levels)
    # weighted averaging, bottom-up (survey eq. 9; height i = 1 at the leaves)
    z = [levels[0].astype(float)]
    for idx in range(1, n_levels):
        i = idx + 1
        child_sum = z[-1].reshape(*z[-1].shape[:-1], -1, b).sum(axis=-1)
        w_self = (b ** i - b ** (i - 1)) / (b ** i - 1)
        w_kids = (b ** (i - 1) - 1) / (b ** i - 1)
        z.append(w_self * levels[idx] + w_kids * child_sum)
    # mean consistency, top-down (eq. 10)
    out: list[np.ndarray] = [None] * n_levels  # type: ignore[list-item]
    out[-1] = z[-1]
    for idx in range(n_levels - 2, -1, -1):
        parent = out[idx + 1]
        child_sum = z[idx].reshape(*z[idx].shape[:-1], -1, b).sum(axis=-1)
        correction = (parent - child_sum) / b
        out[idx] = z[idx] + np.repeat(correction, b, axis=-1)
    return out


def constrained_inference(levels: Sequence[ArrayLike], b: int = 2) -> list[np.ndarray]:
    """Constrained inference of Hay et al. (VLDB 2010), as in survey eqs. (9)-(10).

    1. Weighted averaging, leaves to root (height i, leaves i = 1):
       ``z[v] = n[v]`` at the leaves, else
       ``z[v] = (b^i - b^{i-1})/(b^i - 1) n[v] + (b^{i-1} - 1)/(b^i - 1) Σ_children z[u]``.
    2. Mean consistency, root to leaves:
       ``n̄[root] = z[root]``, ``n̄[v] = z[v] + (n̄[parent] - Σ_siblings z[w]) / b``.

    The result is consistent (every parent equals the sum of its children),
    linear in the noisy counts, and leaves an already consistent tree
    unchanged, so it is unbiased; it is the least-squares consistent tree
    when all levels have the same noise scale. Post-processing: no privacy cost.
    """
    func = "constrained_inference"
    b = check_int(b, func=func, name="b", minimum=2)
    lv = [np.asarray(level, dtype=float) for level in levels]
    if not lv or lv[-1].shape[-1] != 1:
        raise fail(func, "levels", "a list of tree levels, leaves first, ending with the root (size 1)", len(lv))
    for idx in range(len(lv) - 1):
        if lv[idx].shape[-1] != b * lv[idx + 1].shape[-1] or not np.all(np.isfinite(lv[idx])):
            raise fail(func, "levels", f"finite levels whose sizes shrink by the factor b={b}",
                       [x.shape[-1] for x in lv])
    return _constrained_inference_batch(lv, b)


def is_consistent(levels: Sequence[ArrayLike], b: int = 2, *, rtol: float = 1e-9) -> bool:
    """True when every parent equals the sum of its b children (up to rounding)."""
    lv = [np.asarray(level, dtype=float) for level in levels]
    for idx in range(len(lv) - 1):
        kids = lv[idx].reshape(*lv[idx].shape[:-1], -1, b).sum(axis=-1)
        scale = max(1.0, float(np.max(np.abs(lv[idx]))) * lv[idx].shape[-1])
        if not np.allclose(kids, lv[idx + 1], rtol=0, atol=rtol * scale):
            return False
    return True


def _check_range(lo: Any, hi: Any, n: int, func: str) -> tuple[int, int]:
    lo = check_int(lo, func=func, name="lo", minimum=0)
    hi = check_int(hi, func=func, name="hi", minimum=0)
    if not lo < hi <= n:
        raise fail(func, "hi", f"with lo < hi <= {n} (half-open range [lo, hi))", (lo, hi))
    return lo, hi


def range_query_flat(leaves: ArrayLike, lo: int, hi: int) -> float:
    """Sum of leaves[lo:hi] (half-open range)."""
    x = _check_counts(leaves, "range_query_flat")
    lo, hi = _check_range(lo, hi, x.size, "range_query_flat")
    return float(x[lo:hi].sum())


def range_nodes(lo: int, hi: int, n_leaves: int, b: int = 2) -> list[tuple[int, int]]:
    """Fewest tree nodes covering [lo, hi): a list of (level, index), level 0 = leaves."""
    func = "range_nodes"
    h = tree_height(n_leaves, b)
    lo, hi = _check_range(lo, hi, n_leaves, func)
    nodes: list[tuple[int, int]] = []

    def visit(level: int, index: int) -> None:
        start, stop = index * b ** level, (index + 1) * b ** level
        if stop <= lo or start >= hi:
            return
        if lo <= start and stop <= hi:
            nodes.append((level, index))
            return
        for child in range(index * b, index * b + b):
            visit(level - 1, child)

    visit(h, 0)
    return nodes


def range_query_tree(levels: Sequence[ArrayLike], lo: int, hi: int, b: int = 2) -> float:
    """Answer [lo, hi) from a (noisy) tree with the fewest nodes (:func:`range_nodes`)."""
    lv = [np.asarray(level, dtype=float) for level in levels]
    nodes = range_nodes(lo, hi, lv[0].size, b)
    return float(sum(lv[level][index] for level, index in nodes))


def flat_range_mse(length: ArrayLike, epsilon: float) -> Any:
    """MSE of a flat-histogram range of |r| bins: |r|·2/ε² (Dwork; survey §4)."""
    epsilon = check_epsilon(epsilon, func="flat_range_mse")
    r = np.asarray(length, dtype=float)
    out = r * 2.0 / epsilon ** 2
    return float(out) if out.ndim == 0 else out


def tree_range_variance(lo: int, hi: int, n_leaves: int, epsilon: float, b: int = 2) -> float:
    """Variance of :func:`range_query_tree` on the raw noisy tree: (#nodes)·2(L/ε)²."""
    epsilon = check_epsilon(epsilon, func="tree_range_variance")
    levels = tree_height(n_leaves, b) + 1
    return len(range_nodes(lo, hi, n_leaves, b)) * 2.0 * (levels / epsilon) ** 2


def ci_range_variance(lo: int, hi: int, n_leaves: int, epsilon: float, b: int = 2) -> float:
    """Exact variance of a range answered after constrained inference.

    Constrained inference is linear, ``leaves = A · noisy_nodes``, so the
    range answer has variance ``2 (L/ε)² · ||Σ_{leaves in range} A_row||²``.
    A is obtained by running :func:`constrained_inference` on unit vectors
    (fine for a few thousand nodes).
    """
    epsilon = check_epsilon(epsilon, func="ci_range_variance")
    h = tree_height(n_leaves, b)
    lo, hi = _check_range(lo, hi, n_leaves, "ci_range_variance")
    sizes = [n_leaves // b ** k for k in range(h + 1)]
    total = sum(sizes)
    if total > 20_000:
        raise fail("ci_range_variance", "n_leaves", "a tree of at most 20,000 nodes", n_leaves)
    eye = np.eye(total)
    offsets = np.cumsum([0] + sizes)
    unit_levels = [eye[:, offsets[k]:offsets[k + 1]] for k in range(h + 1)]
    leaves = _constrained_inference_batch(unit_levels, b)[0]  # row i: leaves from unit noise on node i
    weights = leaves[:, lo:hi].sum(axis=1)
    return float(2.0 * ((h + 1) / epsilon) ** 2 * np.sum(weights ** 2))


def range_mse_by_length(counts: ArrayLike, epsilon: float, rng: np.random.Generator, *, b: int = 2,
                        lengths: ArrayLike | None = None, n_trials: int = 200, n_ranges: int = 50) -> dict:
    """Empirical MSE of range queries vs range length: flat, tree, tree + constrained inference.

    For every length, ``n_ranges`` start positions are drawn once; each of
    ``n_trials`` independent releases answers all of them. Returns a dict
    with ``lengths`` and arrays ``flat``, ``tree``, ``tree_ci`` (empirical
    MSE) and ``flat_theory`` (|r|·2/ε²). Each release (flat or tree) is
    ε-DP on its own; they are compared, not combined.
    """
    func = "range_mse_by_length"
    c = _check_counts(counts, func)
    epsilon = check_epsilon(epsilon, func=func)
    rng = check_rng(rng, func=func)
    b = check_int(b, func=func, name="b", minimum=2)
    n_trials = check_int(n_trials, func=func, name="n_trials", minimum=1)
    n_ranges = check_int(n_ranges, func=func, name="n_ranges", minimum=1)
    n = c.size
    h = tree_height(n, b)
    if lengths is None:
        lens = np.unique(np.round(np.geomspace(1, n, 12)).astype(int))
    else:
        lens = np.asarray(lengths)
        if lens.ndim != 1 or lens.size == 0 or np.any(lens < 1) or np.any(lens > n) or np.any(lens != np.round(lens)):
            raise fail(func, "lengths", f"integers in [1, {n}]", lengths)
        lens = lens.astype(int)
    ranges = [(int(s), int(s + L)) for L in lens for s in rng.integers(0, n - L + 1, size=n_ranges)]

    # every node of every level in one flat vector; ranges as 0/1 node indicators
    true_levels = build_tree(c, b)
    offsets = np.cumsum([0] + [lv.size for lv in true_levels])
    indicator = np.zeros((offsets[-1], len(ranges)))
    leaf_indicator = np.zeros((n, len(ranges)))
    for j, (lo, hi) in enumerate(ranges):
        leaf_indicator[lo:hi, j] = 1
        for level, index in range_nodes(lo, hi, n, b):
            indicator[offsets[level] + index, j] = 1
    truth = c @ leaf_indicator

    flat = c + laplace_noise(1.0 / epsilon, (n_trials, n), rng)
    scale = (h + 1) / epsilon
    noisy_levels = [lv + laplace_noise(scale, (n_trials, lv.size), rng) for lv in true_levels]
    ci_leaves = _constrained_inference_batch(noisy_levels, b)[0]
    err_flat = (flat @ leaf_indicator - truth) ** 2
    err_tree = (np.concatenate(noisy_levels, axis=1) @ indicator - truth) ** 2
    err_ci = (ci_leaves @ leaf_indicator - truth) ** 2

    def per_length(err: np.ndarray) -> np.ndarray:
        return err.mean(axis=0).reshape(lens.size, n_ranges).mean(axis=1)

    return {"lengths": lens, "flat": per_length(err_flat), "tree": per_length(err_tree),
            "tree_ci": per_length(err_ci), "flat_theory": flat_range_mse(lens, epsilon)}
