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
uniforms): the number of agreements among n positions is exactly Binomial(n, Σ_v p_v²).
"""

from __future__ import annotations

import numpy as np

from helpers.checks.core import _fail
from helpers.checks.digest import _upper_bound


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
