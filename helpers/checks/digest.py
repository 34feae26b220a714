"""Outputs looked up from a coarse digest of the draws (red team s11, finding A1), a part of
:func:`helpers.checks.forbidden._check_built_from_draws`.

A submission may read numpy's own sampler through a table indexed by a few bits of each served
uniform (``T[floor(1024 u) * 1024 + floor(1024 v)]``, or ``default_rng(digest).choice(...)``): the
output is a function of the draws, each element of its own, and the nudges of 10⁻⁶ and 10⁻⁹ almost
never cross a 1/1024 cell, so the replay, the replaced stretches and the jumps all pass (10/10 in the
three generator assignments, 15 of 15 runs). Such a map is piecewise constant with 2²⁰ pieces; every
honest sampler is piecewise continuous with a few pieces per element (one branch point of a sign, the
k - 1 thresholds of an inverse CDF, the argmax of k keys...). Two tests tell them apart:

* continuous outputs (:func:`check_elements_move`): under the nudge of about 10⁻⁶ every element of an
  honest sampler moves by about nudge × |d output / d u| ≥ nudge × b / 2 for Laplace(b), while a
  table's elements stay exactly where they were;
* discrete outputs (:func:`check_coarse_moves`): a moderate nudge of about 2⁻¹⁰ changes an honest
  element with probability about (number of thresholds) × nudge, at most ``_SLOPE`` × outcomes ×
  nudge for the course's constructions (measured, ``tests/power/measure_digest.py``), while a digest
  finer than the nudge draws every element anew: it changes with probability 1 - Σp².
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from scipy.special import bdtr, bdtrc

from helpers.checks.core import _fail

#: An element "moved" under a nudge when it moved by more than this share of nudge × the outputs'
#: interquartile range. An honest Laplace(b) element moves by nudge × U[1/2, 1] × |dx/du| with
#: |dx/du| ≥ b on the uniform that sets its magnitude (sign × exponential: b/u; inverse CDF:
#: ≥ 2b; a difference of exponentials can cancel, rarely): ≥ 0.36 × nudge × IQR, 360 times the line.
_MOVE_SHARE = 1e-3
#: Least share of the nudged elements an honest sampler moves (measured: all but ≤ 0.2%, see
#: tests/power/RESULTS.md); the test fails only far below it (lower tail ≤ _TAIL).
_HONEST_MOVED = 0.9
#: Tail probability of each binomial bound below: a correct sampler fails a test with at most this.
_TAIL = 1e-10
#: Largest moderate nudge of each uniform (sizes U[1/2, 1] of it, random signs): coarser than a cell
#: of any digest with 10 bits or more of one uniform, fine enough that an honest element rarely changes.
COARSE_NUDGE = 2.0 ** -10
_SHOWN = "2⁻¹⁰ ≈ 0.001"
#: Bound of an honest discrete element's change probability under the moderate nudge, per outcome
#: and per unit of nudge: inverse CDF 0.75 (k - 1); Gumbel-max, exponential race ≲ 0.75 k (measured).
_SLOPE = 2.0
#: Sparse moderate runs, after the full one, for a sampler whose number of draws depends on their
#: values: a share of the uniforms nudged, three runs at each of four shares, each a quarter of the
#: last, until a run keeps the number of draws. A count changes when a nudged uniform crosses a
#: decision threshold; the first share nudges about ``_SPARSE_TARGET`` uniforms (at most 1/32), where a
#: sampler whose every draw is a decision (a Bernoulli(p) built from fair coins u < 1/2, 120,000-
#: 200,000 draws for 100,000 bits: about 146 crossings under the full nudge, so every 1/32 run changed
#: its count: an independent reviewer's correct sampler lost 3 points) expects about 0.2 crossings. The
#: course's exponential-mechanism rejection sampler (500 calls, about 1.6 crossings under the full
#: nudge) changes its count in a 1/32 run with probability ≲ 0.1. A sampler with C crossings under the
#: full nudge fails all eleven runs with probability below Π (1 - e^(-C·share)) over the shares:
#: < 10⁻¹¹ for both.
_SPARSE_TARGET = 256
_SPARSE_SHARES = (1, 1 / 4, 1 / 16, 1 / 64)
_SPARSE_RUNS = (3, 3, 3, 2)


def coarse_parts(draws: int) -> tuple[float, ...]:
    """Shares of the uniforms nudged in the moderate runs, in order: all, then the sparse ones."""
    # at least 1.5 x _LEAST_NUDGED uniforms in the first sparse runs when the draws are few (a vectorised
    # rejection sampler's 500-value call draws ~1,500: 1/32 of them was 47, below the least, so no sparse
    # run was tried and one re-decided acceptance failed a correct sampler; session 14's reviewer, L09)
    first = min(max(1 / 32, 1.5 * _LEAST_NUDGED / max(int(draws), 1)), 1 / 4, _SPARSE_TARGET / max(int(draws), 1))
    return (1.0,) + tuple(first * share for share, runs in zip(_SPARSE_SHARES, _SPARSE_RUNS) for _ in range(runs))


def check_elements_move(fname: str, out: np.ndarray, base: np.ndarray, nudge: float, spread: float,
                        part: float) -> None:
    """Fail when too few elements of a continuous output moved under a nudge of every uniform by
    about ``nudge`` (each with probability ``part``).

    An honest element moves when the uniform that sets it was nudged: at least ``part`` ×
    :data:`_HONEST_MOVED` of them on average. Fails when fewer moved than the binomial lower tail
    at :data:`_TAIL` allows (a correct sampler: at most 10⁻¹⁰). A table indexed by a digest keeps
    all but the few elements whose uniforms crossed a cell (0.3% for 2 × 10 bits).
    """
    both = np.isfinite(out) & np.isfinite(base)
    n = int(np.sum(both))
    if out.shape != base.shape or not spread > 0 or n < 20:
        return
    moved = int(np.sum(np.abs(out[both] - base[both]) > _MOVE_SHARE * nudge * spread))
    floor = _lower_bound(n, _HONEST_MOVED * part)
    if moved >= floor:
        return
    raise _fail(
        f"{fname}：把 rng.random 抽到的数{'' if part == 1 else f'（随机抽取其中约 {part:.0%}）'}各移动约 {nudge:g}，"
        f"{n} 个输出元素中只有 {moved} 个跟着变（变化超过 {_MOVE_SHARE:g} × 移动量 × 四分位距），自己实现的抽样至少会有 {floor} 个。"
        f"逆 CDF、符号 × 指数这类变换是均匀数的连续函数，每个输出都会随它的均匀数一起移动；输出原封不动，"
        f"说明它是按均匀数的粗略区间（例如 int(u * 1024)）从一张表或一个现成抽样器里查出来的，这不是自己实现抽样。",
        f"{fname}: with the numbers drawn with rng.random{'' if part == 1 else f' (a random {part:.0%} of them)'} moved "
        f"by about {nudge:g}, only {moved} of {n} output elements moved (by more than {_MOVE_SHARE:g} × the move × "
        f"the interquartile range); a sampler you build moves at least {floor}. An inverse CDF or sign × exponential "
        f"is a continuous map of its uniforms, so every output moves with its uniform; outputs that stay put are "
        f"looked up by a coarse cell of the uniforms (e.g. int(u * 1024)) in a table or a ready-made sampler, which "
        f"is not building the sampler yourself.",
        diagnosis="common.output_from_coarse_digest",
    )


def check_coarse_moves(fname: str, run: Callable[[np.ndarray], np.ndarray], shifted: Callable[[], bool],
                       changed: Callable[[np.ndarray], int], drawn: np.ndarray, base: np.ndarray,
                       pattern: np.random.Generator, outcomes: int, nudged: Callable, varies: Callable[[], bool],
                       fills: np.random.Generator, served: int = 1) -> None:
    """Fail when a moderate nudge (:data:`COARSE_NUDGE`) changes far more elements of a discrete
    output than an honest sampler with ``outcomes`` possible values changes.

    ``n`` elements, each changing with probability at most :data:`_SLOPE` × outcomes × nudge ×
    part, exceed the binomial upper tail at :data:`_TAIL` with probability ≤ 10⁻¹⁰. First every
    uniform is nudged; a run that keeps the number of draws is judged. A sampler whose number of
    draws depends on their values (a rejection sampler: ``varies()``, some run so far changed it,
    or one of up to :data:`_COUNT_PROBES` stretches replaced by other uniforms from ``fills`` does)
    is then tried on sparse nudges (:func:`coarse_parts`) until a run keeps the count and stays
    within the bound: a full run may have changed the count, or kept it through two crossings
    that cancel and shifted the calls between them. A sampler whose count never changes gets no
    second try. A digest finer than the nudge changes each nudged element with probability 1 - Σp².
    ``served``: outputs one uniform serves (the capped ⌈outputs / draws⌉): a sampler reusing the residual
    crosses more thresholds per output (:func:`residual_thresholds`), and the bound is twice 0.75 times that.
    """
    n = base.size
    if n < 20:
        return
    outcomes = max(2, int(outcomes))
    slope = max(_SLOPE * outcomes, _SLOPE * 0.75 * residual_thresholds(outcomes, served))
    worst = None
    parts = coarse_parts(drawn.size)
    for number, part in enumerate(parts):
        out = run(nudged(drawn, COARSE_NUDGE, pattern, part))
        if not shifted():
            moved = changed(out)
            limit = _upper_bound(n, min(1.0, slope * COARSE_NUDGE * part))
            if moved <= limit:
                return
            worst = (moved, limit, part) if worst is None or moved - limit > worst[0] - worst[1] else worst
        if number == 0 and not shifted() and not _count_varies(run, shifted, drawn, varies, fills):
            break
    if worst is None:
        raise _fail(
            f"{fname}：把 rng.random 抽到的数移动约 {_SHOWN}（全部移动一次，再 {len(parts) - 1} 次只随机移动其中很小的一部分，"
            f"最少约 {parts[-1]:.2g}），"
            f"函数每次用的均匀数个数都变了（原来 {drawn.size} 个）。拒绝抽样只有在被移动的数恰好越过接受阈值时才会改变抽样次数；"
            f"次次都变，说明抽样次数由抽样的粗略区间决定。",
            f"{fname}: with the numbers drawn with rng.random moved by about {_SHOWN} (all of them once, then a "
            f"small random part of them {len(parts) - 1} times, down to about {parts[-1]:.2g}), the function drew "
            f"another number of uniforms every "
            f"time ({drawn.size} originally). A rejection sampler changes its count only when a moved number crosses "
            f"an acceptance threshold; a count that changes every time is set by coarse cells of the draws.",
            diagnosis="common.draw_count_unstable",
        )
    moved, limit, part = worst
    raise _fail(
        f"{fname}：把 rng.random 抽到的数{'' if part == 1 else f'（随机抽取其中约 {part:.2%}）'}各移动约 {_SHOWN}，"
        f"{n} 个输出中有 {moved} 个变成了别的值；自己实现的抽样（逆 CDF、Gumbel-max、指数竞赛……）只有在均匀数越过少数几个阈值时"
        f"才会改变输出（{outcomes} 种取值，最多约 {limit} 个）。这么多输出同时改变，说明输出是按均匀数的粗略区间"
        f"（例如 int(u * 1024)）从一张表里查出、或用它做种子交给现成的抽样器（default_rng(...).choice）得到的，这不是自己实现抽样。",
        f"{fname}: with the numbers drawn with rng.random{'' if part == 1 else f' (a random {part:.2%} of them)'} moved by "
        f"about {_SHOWN}, {moved} of {n} outputs changed; a sampler you build (inverse CDF, Gumbel-max, "
        f"exponential race...) changes an output only when a uniform crosses one of a few thresholds ({outcomes} "
        f"possible values: at most about {limit}). So many changes mean the outputs are looked up by a coarse cell "
        f"of the uniforms (e.g. int(u * 1024)) in a table, or drawn by a ready-made sampler seeded with it "
        f"(default_rng(...).choice), which is not building the sampler yourself.",
        diagnosis="common.output_from_coarse_digest",
    )


#: Share of the outputs' interquartile range a continuous element must move by to "jump" under the
#: moderate nudge, and the most elements an honest sampler makes jump per nudged element (measured on
#: the course's and strangers' Laplace samplers, tests/power/RESULTS.md: at most about 3%; the ziggurat's
#: layer index, a 1/128 cell of a uniform, among them).
_JUMP_SHARE, _HONEST_JUMPS = 0.05, 0.10
#: Fewest uniforms a sparse run of :func:`check_coarse_jumps` must nudge to be judged: a run that nudges
#: few passes whatever the sampler (250 draws at 1/512 nudge about 0.5).
_LEAST_NUDGED = 64


def check_coarse_jumps(fname: str, run: Callable[[np.ndarray], np.ndarray], shifted: Callable[[], bool],
                       drawn: np.ndarray, base: np.ndarray, pattern: np.random.Generator, nudged: Callable,
                       spread: float) -> None:
    """Fail when the moderate nudge (:data:`COARSE_NUDGE`) makes far more elements of a continuous
    output jump (by more than :data:`_JUMP_SHARE` × the interquartile range) than an honest sampler.

    An honest element is a continuous map of its uniforms away from a few points: it jumps only when
    its uniform lies within about nudge / (0.05 × IQR / b) of 0, 1 or a branch point, a few percent of
    them (:data:`_HONEST_JUMPS` bounds it, with the binomial upper tail at :data:`_TAIL`). numpy's own
    sampler seeded by a cell of 1/1000 of a uniform plus a small continuous term of it (attacker,
    session 12: the term keeps every element moving under the fine nudges) draws anew whenever the
    nudge crosses a cell: about 3/4 of the elements jump. A rejection sampler that concatenates its
    accepted values moves every later value one place when the nudge re-decides one acceptance (with or
    without changing its number of draws): when the full run fails, sparse runs (:func:`coarse_parts`,
    each nudging at least :data:`_LEAST_NUDGED` uniforms) are tried until one keeps the count and stays
    within its bound, which scales with the share nudged; such a sampler re-decides no acceptance in most
    of them. A block-seeded sampler gains nothing from them: with m uniforms nudged it makes about
    0.73 m × (outputs per uniform) values jump, against a bound of about 0.1 m × (outputs per uniform)
    plus its tail (m ≥ 64: 47 against at most 28 for one output per uniform). When no run keeps the
    count, this test says nothing (the fine nudges judge such counts).
    """
    n = base.size
    if n < 20 or not spread > 0:
        return
    worst = None
    for number, part in enumerate(coarse_parts(drawn.size)):
        tape = nudged(drawn, COARSE_NUDGE, pattern, part)
        if part < 1 and np.sum(tape != drawn) < _LEAST_NUDGED:
            continue
        out = run(tape)
        if not shifted() and out.shape == base.shape:
            both = np.isfinite(out) & np.isfinite(base)
            jumped = int(np.sum(np.abs(out[both] - base[both]) > _JUMP_SHARE * spread))
            limit = _upper_bound(int(np.sum(both)), min(1.0, _HONEST_JUMPS * part))
            if jumped <= limit:
                return
            worst = (jumped, limit, part) if worst is None or jumped - limit > worst[0] - worst[1] else worst
    if worst is None:
        return
    jumped, limit, part = worst
    raise _fail(
        f"{fname}：把 rng.random 抽到的数{'' if part == 1 else f'（随机抽取其中约 {part:.2%}）'}各移动约 {_SHOWN}，"
        f"{n} 个输出中有 {jumped} 个跳到了完全不同的值（变化超过四分位距的 {_JUMP_SHARE:g} 倍），自己实现的抽样最多约 {limit} 个。"
        f"逆 CDF、符号 × 指数这类变换是均匀数的连续函数，这么小的移动只会让输出稍稍移动；这么多输出同时跳变，说明它们是用均匀数的"
        f"粗略区间（例如 int(u * 1000)）做种子交给现成的抽样器得到的，这不是自己实现抽样。",
        f"{fname}: with the numbers drawn with rng.random{'' if part == 1 else f' (a random {part:.2%} of them)'} moved "
        f"by about {_SHOWN}, {jumped} of {n} outputs jumped to unrelated values (by more than {_JUMP_SHARE:g} times "
        f"the interquartile range); a sampler you build gives at most about {limit}. An inverse CDF or sign × "
        f"exponential is a continuous map of its uniforms, which such a move only shifts a little; so many jumps "
        f"mean the outputs come from a ready-made sampler seeded by a coarse cell of the uniforms (e.g. "
        f"int(u * 1000)), which is not building the sampler yourself.",
        diagnosis="common.output_from_coarse_digest",
    )


#: Stretches (1/8 of the draws each, in turn) replaced by other uniforms to learn whether a sampler's
#: number of draws ever changes: the course's exponential-mechanism rejection sampler keeps it in 34%
#: of them (tests/power/RESULTS.md), all of them with probability 0.34²⁴ < 10⁻¹¹.
_COUNT_PROBES = 24


def _count_varies(run: Callable, shifted: Callable[[], bool], drawn: np.ndarray, varies: Callable[[], bool],
                  fills: np.random.Generator) -> bool:
    """Whether the number of draws depends on their values: some run so far changed it, or a probe does."""
    if varies():
        return True
    edges = np.linspace(0, drawn.size, 9).astype(int)
    for probe in range(_COUNT_PROBES):
        lo, hi = edges[probe % 8], edges[probe % 8 + 1]
        tape = drawn.copy()
        tape[lo:hi] = fills.random(hi - lo)
        run(tape)
        if shifted():
            return True
    return False


def residual_thresholds(outcomes: int, served: int) -> float:
    """Mean number of points per output where an output changes, for one uniform serving ``served``
    outputs by reusing its residual (u/p, (u - p)/(1 - p), ...: uniform again on each piece): output i has
    (k - 1) k^i thresholds, and crossing one changes every later output of the uniform (the residual
    jumps from one end of [0, 1) to the other), so ((k - 1)/s) Σ_{i<s} k^i (s - i). One output: k - 1, an
    inverse CDF; five bits: 11.4 (an independent reviewer's correct rr_perturb, session 13: measured
    8.2-8.9 × 0.75 × 2⁻¹⁰ per bit for p in 0.55-0.73, which the bound 2k × 2⁻¹⁰ refused)."""
    k, s = max(2, int(outcomes)), max(1, int(served))
    return (k - 1) / s * sum(k ** i * (s - i) for i in range(s))


def _upper_bound(n: int, p: float) -> int:
    """The least ``t`` with P(Binomial(n, p) > t) ≤ :data:`_TAIL`."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) // 2
        if bdtrc(mid, n, p) <= _TAIL:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _lower_bound(n: int, p: float) -> int:
    """The largest ``t`` with P(Binomial(n, p) < t) ≤ :data:`_TAIL`."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if mid == 0 or bdtr(mid - 1, n, p) <= _TAIL:
            lo = mid
        else:
            hi = mid - 1
    return lo
