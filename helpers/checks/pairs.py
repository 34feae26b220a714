"""Position by position, two runs on independent draws must agree no more often than the mechanism's
law allows, a part of :func:`helpers.checks.forbidden._check_built_from_draws` for the judged calls.

A submission may serve a block of 2-4 outputs from one uniform through numpy's own sampler seeded by a
coarse cell of it (``default_rng([block, int(4 u)]).random(2) < p``: attacker, session 12). Its pooled
output has the right law (every block has seeds of its own), its number of changed outputs per replaced
uniform is within the allowance a correct residual-reusing sampler needs, and a nudge rarely crosses one
of its few cells: the replaced stretches, the nudges and the distribution tests all pass. But the law of
one *position* is a mixture of K ready-made draws, not the mechanism's law: two runs on independent
draws give the same value at a position with probability Σ_v E[q_v²] = Σ_v p_v² + Σ_v Var(q_v) > Σ_v p_v²,
when an honest sampler's positions are independent draws of the law p (each run's position reads its own
uniforms): the number of agreements among n positions is exactly Binomial(n, Σ_v p_v²). With many
independent runs of the same calls (the exponential mechanism's 20 batches), the equal pairs at each
position are counted (:func:`check_repeats_across_runs`).
"""

from __future__ import annotations

import numpy as np

from helpers.checks.core import _fail
from helpers.checks.digest import _TAIL, _upper_bound


def laplace_agree(b: float) -> tuple[float, float]:
    """``(agree, close)`` for Laplace(0, b) values: two independent ones differ by D, of density
    (1 + |t|/b) e^(-|t|/b) / (4b), so P(|D| ≤ close) = 1 - (1 + close/(2b)) e^(-close/b) ≈ 0.005 at
    close = b/100 (a copy of the same ready-made value plus a small term of u lands there)."""
    close = b / 100
    return float(-np.expm1(-close / b) - close / (2 * b) * np.exp(-close / b)), close


def check_positions_independent(fname: str, first: np.ndarray, second: np.ndarray, agree: float,
                                close: float = 0.0) -> None:
    """Fail when the outputs ``first`` and ``second`` of the same call on independent draws agree at
    more positions than Binomial(n, ``agree``) allows at the tail :data:`helpers.checks.digest._TAIL`
    (10⁻¹⁰: a correct sampler fails with at most that probability; ``agree`` = Σ_v p_v², the chance
    that two independent draws of the law at one position are equal; for continuous values, the chance
    that they differ by at most ``close``, see :func:`laplace_agree`)."""
    a, b = np.asarray(first, dtype=float).ravel(), np.asarray(second, dtype=float).ravel()
    if a.shape != b.shape or a.size < 20 or not 0.0 < agree < 1.0:
        return
    same = int(np.sum(np.abs(a - b) <= close)) if close else int(np.sum(a == b))
    limit = _upper_bound(a.size, agree)
    if same <= limit:
        return
    raise _fail(
        f"{fname}：用两组互相独立的 rng.random 抽样各调用一次，{a.size} 个位置中有 {same} 个位置两次的输出相同；"
        f"按机制的分布，每个位置的输出是独立抽样，相同的概率是 {agree:.4f}，正确的实现最多约 {limit} 个（误判概率 ≤ 10⁻¹⁰）。"
        f"这么多位置重复，说明每个位置的输出只有少数几种可能：用均匀数的粗略区间（例如 int(4 * u)）做种子、"
        f"交给现成的抽样器（np.random.default_rng(...)）得到的，这不是自己实现抽样。",
        f"{fname}: called twice on independent rng.random draws, it gave the same output at {same} of {a.size} "
        f"positions; by the mechanism's law each position is an independent draw, equal with probability {agree:.4f}, "
        f"so a correct implementation gives at most about {limit} (false-failure probability ≤ 1e-10). So many repeats "
        f"mean each position has only a few possible outputs: a ready-made sampler (np.random.default_rng(...)) seeded "
        f"by a coarse cell of the uniforms (e.g. int(4 * u)), which is not building the sampler yourself.",
        diagnosis="common.output_from_coarse_digest",
    )


def _repeats_law(probs: np.ndarray, runs: int) -> np.ndarray:
    """The law of Σ_v C(n_v, 2), the number of equal pairs among ``runs`` independent draws of ``probs``
    (n ~ Multinomial(runs, probs)), exactly: a dynamic programme over the outcomes."""
    pairs = runs * (runs - 1) // 2
    factorial = np.cumprod(np.r_[1.0, np.arange(1, runs + 1)])
    table = np.zeros((runs + 1, pairs + 1))
    table[0, 0] = 1.0
    for p in np.asarray(probs, dtype=float):
        new = np.zeros_like(table)
        for used in range(runs + 1):
            row = table[used]
            if not row.any():
                continue
            for a in range(runs - used + 1):
                shift = a * (a - 1) // 2
                new[used + a, shift:] += row[:pairs + 1 - shift] * (p ** a / factorial[a])
        table = new
    law = np.clip(table[runs] * factorial[runs], 0.0, None)
    return law / law.sum()


def check_repeats_across_runs(fname: str, outputs: list, probs: np.ndarray) -> None:
    """Fail when ``outputs`` (independent runs of the same calls, compared call by call) repeat each
    other more than ``probs`` allows.

    At each position the ``m`` runs' values are independent draws of ``probs``; the number of equal
    pairs among them, T, has the exact law :func:`_repeats_law`, and positions are independent, so the
    sum S over n positions has P(S ≥ t) ≤ min_λ e^(−λt) E[e^(λT)]^n (Chernoff). The check fails when that
    bound at the observed S is at most :data:`helpers.checks.digest._TAIL` (10⁻¹⁰: a correct sampler
    fails with at most that probability). With 20 runs a position holds 190 pairs, against 10 for
    disjoint pairs of runs: a sampler serving each position from K seeded cells adds about
    190 (1 − Σp²)/K equal pairs per position.
    """
    size = min(len(out) for out in outputs)
    if len(outputs) < 2 or size < 20:
        return
    values = np.array([np.asarray(out, dtype=float)[:size] for out in outputs])
    ordered = np.sort(values, axis=0)
    runs_equal = np.diff(ordered, axis=0) == 0
    # equal pairs per position: Σ C(length, 2) over the runs of equal sorted values
    observed = 0
    for column in runs_equal.T:
        length = 1
        for same in column:
            if same:
                length += 1
            else:
                observed += length * (length - 1) // 2
                length = 1
        observed += length * (length - 1) // 2
    law = _repeats_law(probs, len(outputs))
    support = np.arange(law.size, dtype=float)
    mean = float(np.sum(law * support)) * size
    if observed <= mean:
        return
    with np.errstate(divide="ignore"):
        log_law = np.log(law)
    bound = min(float(-lam * observed + size * np.logaddexp.reduce(log_law + lam * support))
                for lam in np.geomspace(1e-4, 2.0, 200))
    if bound > np.log(_TAIL):
        return
    raise _fail(
        f"{fname}：{len(outputs)} 批互相独立的调用逐次比较，同一次序上相同输出的对数共 {observed} 对，"
        f"按机制的分布期望约 {mean:.0f} 对（误判概率 ≤ 10⁻¹⁰ 的界：e^{bound:.0f}）。这么多重复，说明每个位置的输出只有少数几种可能："
        f"用均匀数的粗略区间（例如 int(4 * u)）做种子、交给现成的抽样器（np.random.default_rng(...)）得到的，这不是自己实现抽样。",
        f"{fname}: {len(outputs)} batches of calls on independent draws, compared call by call, hold {observed} equal "
        f"pairs at the same place; by the mechanism's law about {mean:.0f} are expected (a correct implementation "
        f"reaches this with probability at most e^{bound:.0f} ≤ 1e-10). So many repeats mean each position has only a "
        f"few possible outputs: a ready-made sampler (np.random.default_rng(...)) seeded by a coarse cell of the "
        f"uniforms (e.g. int(4 * u)), which is not building the sampler yourself.",
        diagnosis="common.output_from_coarse_digest",
    )
