"""How many served uniforms each output depends on, a part of
:func:`helpers.checks.forbidden._check_built_from_draws` at the judged calls of a fixed-count sampler.

A second attacker (session 13) served blocks of outputs from a hash (or numpy's generator) of a coarse
cell of each of 8-10 uniforms: ``int(4u)`` or ``u >= 1/2``, plus a small continuous term of the value's own
uniform. Each uniform serves as few outputs as an honest one, so no replaced stretch or single uniform
exceeds its allowance, and 4¹⁰ seeds per block are too many for the pairs test. What such an output
has that an honest one has not is *many* uniforms it depends on through a coarse cell. Replace a random
share ``f`` of the served uniforms (each independently) and count the outputs that changed:

* resampling uniform ``j`` alone changes a discrete output with probability at most 1 - Σp² (Jensen: the
  output stays with probability E[Σ_v P(v | the other uniforms)²] ≥ Σ_v p_v²), and resampling a set
  changes it only if one of the single steps does (the intermediate draws have the same law), so an output
  depending on ``d`` uniforms changes with probability at most ``f`` · d · (1 - Σp²). The mechanisms need
  d ≤ :data:`PER_OUTPUT` (a bit: its own uniform, forced response's two; an index: an inverse CDF's one,
  Vose's two; an argmax of one key per candidate changes only when the winner does, at most 2 p_j (1 - p_j)
  for key j's uniform, 2 (1 - Σp²) in all);
* a continuous output changed by the replacement but not moved at all when the same uniforms are only
  nudged by about 10⁻⁶ depends on a replaced uniform through a decision only (a sign, a mixture's
  component): probability at most ``f`` · :data:`COARSE_PER_VALUE` for an honest Laplace value, whose
  magnitude moves with any of its uniforms. Counted by values absent from the original output, so a
  rejection sampler that only moves accepted values to other places is not charged for them.

The hash of 10 quarter cells changes a value with probability (1 - f)(1 - (1 - 3f/4)⁹) ≈ 0.50 at
f = 0.12 (the bound: 0.24); 2 bits from 8 coin cells (1 - (1 - f/2)⁸)(1 - Σp²) = 0.57 (1 - Σp²) at
f = 0.2 (bound 0.4); an index from 10 coin cells 0.54 (1 - Σp²) at f = 0.15 (bound 0.3).

Tails (:data:`digest._TAIL`, 10⁻¹⁰): the calls of ``exponential_mechanism`` read draws of their own, so
their changes are independent and the count is below Binomial(n, bound) (exact tail). The positions of
one call's array may share uniforms (residual reuse, Box-Muller pairs); McDiarmid's inequality on the
per-uniform blocks (the uniform, whether it is replaced, its replacement and nudge), each changing the
count by at most the outputs it serves (``served``, at least 2), over at most :data:`MOST_PER_VALUE`
uniforms per output: count ≤ mean + √(served · d · n · ln(1/tail) / 2).

Laplace samplers built from polar-method normals draw a fixed number of uniforms but hand them to other
values once an acceptance changes (independent reviewer, session 13: ``b (Z1 Z2 + Z3 Z4)``); reflecting the
chosen uniforms (u → 1 - u) keeps the disc's acceptances. A continuous output passes when the resampled
run or the reflected run is within the bound (both bounds hold for any replacement with the law of the
draws, so the false-failure probability is that of one run).
"""

from __future__ import annotations

import contextlib
import math
from typing import Any, Callable

import numpy as np

from helpers.checks.core import RecordingGenerator, _after_call, _call, _fail
from helpers.checks.digest import _TAIL, _upper_bound

#: Uniforms an honest discrete output depends on (see the module's docstring).
PER_OUTPUT = 2
#: Uniforms an honest Laplace value depends on through a decision only (a sign, a mixture's component).
COARSE_PER_VALUE = 2
#: Most uniforms an honest Laplace value depends on (Box-Muller normals in columns, Z1 Z2 + Z3 Z4: 8),
#: for the McDiarmid bound only.
MOST_PER_VALUE = 8
#: Share of the uniforms replaced: continuous, discrete positions, independent calls.
_PARTS = {"continuous": 0.12, "positions": 0.2, "calls": 0.15}
#: Nudge of the chosen uniforms in the continuous run (moves any value that depends on them continuously).
_NUDGE = 1e-6
#: Fewest outputs worth judging (the bound's slack dominates below).
_LEAST = 400


def check_dependencies(fname: str, run: Callable[[np.ndarray], np.ndarray], shifted: Callable[[], bool],
                       drawn: np.ndarray, base: np.ndarray, seed: int, *, continuous: bool, agree: float | None,
                       calls: bool, served: int) -> None:
    """Fail when replacing a random share of the served uniforms changes more outputs than outputs that
    each depend on a few of them can change (module docstring). Fixed-count samplers only: a run whose
    number of draws changes says nothing here and is not judged."""
    found = dependency_counts(run, shifted, drawn, base, seed, continuous=continuous, agree=agree, calls=calls,
                              served=served)
    if found is None or found[0] <= found[1]:
        return
    count, limit, part, rate = found
    n = base.size
    raise _fail(
        f"{fname}：随机换掉 rng.random 抽到的约 {part:.0%} 的数（每个数各自独立地换），{n} 个输出中有 {count} 个"
        f"{'变成了原输出里没有的新值（而同样这些数只移动约 10⁻⁶ 时它们纹丝不动）' if continuous else '变了'}；"
        f"每个输出只由它自己的少数几个均匀数构成时，最多约 {limit} 个（每个输出至多约 {rate} 的概率）。"
        f"这么多，说明每个输出都取决于许多个均匀数的粗略区间（例如把好几个 int(4 * u) 或 u >= 0.5 拼起来做散列或做种子），"
        f"这不是自己实现抽样。",
        f"{fname}: with a random {part:.0%} of the numbers drawn with rng.random replaced (each independently), "
        f"{count} of {n} outputs {'took values absent from the original output (and did not move at all when the same numbers were only moved by about 1e-6)' if continuous else 'changed'}; "
        f"outputs built each from a few uniforms of their own change at most about {limit} (each with probability "
        f"at most about {rate}). So many mean every output depends on coarse cells of many uniforms (several "
        f"int(4 * u) or u >= 0.5 hashed together or used as a seed), which is not building the sampler yourself.",
        diagnosis="common.output_from_coarse_digest",
    )


def check_call_dependencies(func: Callable, call: Callable[[int, np.random.Generator], Any],
                            batches: list[tuple[int, np.ndarray, np.ndarray]], seed: int, agree: float) -> None:
    """:func:`check_dependencies` for batches of calls of ``func`` (``exponential_mechanism``: each call reads
    draws of its own), each batch ``(size, drawn, chosen)`` made by ``call(size, rng)`` on a generator of its
    own, as when they were judged; the runs go where ``func.elsewhere()`` sends them (the second sandbox)."""
    fname = getattr(func, "__name__", "function")
    edges = np.cumsum([0] + [drawn.size for _, drawn, _ in batches])
    drawn = np.concatenate([drawn for _, drawn, _ in batches])
    base = np.concatenate([np.asarray(chosen, dtype=float) for _, _, chosen in batches])
    kept = []

    def run(tape):
        outs, kept[:] = [], [True]
        for (size, _, _), lo, hi in zip(batches, edges[:-1], edges[1:]):
            rng = RecordingGenerator(seed, tape=tape[lo:hi])
            outs.append(np.asarray(_call(lambda: call(size, rng), rng=rng, name=fname), dtype=float))
            _after_call(func, rng)
            kept[0] = kept[0] and object.__getattribute__(rng, "draws") == hi - lo
        return np.concatenate(outs)

    elsewhere = getattr(func, "elsewhere", None)
    with elsewhere() if callable(elsewhere) else contextlib.nullcontext():
        check_dependencies(fname, run, lambda: not kept[0], drawn, base, seed, continuous=False, agree=agree,
                           calls=True, served=1)


def dependency_counts(run, shifted, drawn, base, seed, *, continuous, agree, calls, served):
    """(changed outputs, their limit, share replaced, the per-output bound as text) of
    :func:`check_dependencies`, or None when not judged (too few outputs, the count of draws changed)."""
    n = base.size
    if n < _LEAST or drawn.size == 0 or (not continuous and agree is None):
        return None
    part = _PARTS["continuous" if continuous else "calls" if calls else "positions"]
    g = np.random.default_rng([seed, 47])
    chosen = g.random(drawn.size) < part
    fresh = g.random(drawn.size)
    if continuous:
        limit = int(part * COARSE_PER_VALUE * n
                    + math.sqrt(max(2, served) * MOST_PER_VALUE * n * math.log(1 / _TAIL) / 2))
        steps = _NUDGE * (0.5 + 0.5 * g.random(drawn.size)) * np.where(g.random(drawn.size) < 0.5, -1.0, 1.0)
        counts = []
        for tape in (np.where(chosen, fresh, drawn), np.where(chosen, 1.0 - drawn, drawn)):
            tape = np.where(tape < 1.0, tape, drawn)  # 1 - u is 1 only for u = 0
            count = _coarse_changes(run, shifted, tape, drawn, base, chosen, steps)
            if count is None:
                return None
            counts.append(count)
            if count <= limit:
                break
        return min(counts), limit, part, f"{COARSE_PER_VALUE} × {part:g}"
    per = PER_OUTPUT * (1.0 - agree)
    out = run(np.where(chosen, fresh, drawn))
    if shifted() or out.shape != base.shape:
        return None
    count = int(np.sum(out != base))
    limit = (_upper_bound(n, min(1.0, part * per)) if calls else
             int(part * per * n + math.sqrt(max(2, served) * PER_OUTPUT * n * math.log(1 / _TAIL) / 2)))
    return count, limit, part, f"{PER_OUTPUT} × {part:g} × (1 − Σp² = {1 - agree:.3f})"


def _coarse_changes(run, shifted, tape, drawn, base, chosen, steps) -> int | None:
    """Values new after ``tape`` (the chosen uniforms replaced) at positions that did not move when the
    chosen uniforms were only nudged; None when either run changed the number of draws."""
    replaced = run(tape)
    if shifted() or replaced.shape != base.shape:
        return None
    moved_tape = drawn + np.where(chosen, steps, 0.0)
    moved_tape = np.where((moved_tape >= 0.0) & (moved_tape < 1.0), moved_tape, drawn - np.where(chosen, steps, 0.0))
    nudged = run(moved_tape)
    if shifted() or nudged.shape != base.shape:
        return None
    new = ~np.isin(replaced.ravel(), base.ravel())
    still = (nudged.ravel() == base.ravel()) | (np.isnan(nudged.ravel()) & np.isnan(base.ravel()))
    return int(np.sum(new & still))
