"""Single served uniforms replaced one at a time, a part of the built-from-draws check
(:func:`helpers.checks.forbidden.check_built_from_draws`'s replay, stretches and nudges).

A stretch of replaced uniforms may change as many outputs as it holds uniforms (times the outputs one
uniform serves); a sampler seeding a block of outputs from coarse parts of several uniforms stays
within that on every stretch, but one replaced uniform changes its whole block half the time.
"""

from __future__ import annotations

import numpy as np

from helpers.checks.core import _fail


def new_values(out: np.ndarray, base: np.ndarray) -> int:
    """How many elements of ``out`` hold a value that no element of ``base`` holds."""
    if out.shape != base.shape:
        return base.size
    return int(np.sum(~np.isin(out.ravel(), base.ravel())))



#: Single uniforms replaced one at a time (fixed-count samplers): a block of outputs drawn from a generator
#: seeded by coarse bits of several uniforms changes many outputs half the time one of them is replaced
#: (red team, session 13: 8-14 one-bit cells per block passed every stretch under the 4-output allowance).
_SINGLE_PROBES = 4


def probe_single_uniforms(fname, run, used, changed, drawn, base, seed, share, continuous, other) -> None:
    """Replace single served uniforms by fresh ones: a fixed-count sampler changes at most ``share``
    outputs (continuous: new values), and at least 2 for a discrete one (a uniform on a stretch edge)."""
    allowed = share if continuous else max(share, 2)
    picks = np.random.default_rng([seed, 41]).choice(drawn.size, size=min(_SINGLE_PROBES, drawn.size), replace=False)
    for at in picks:
        tape = drawn.copy()
        tape[at] = other[at]
        out = run(tape, seed)
        if used[-1] != drawn.size:
            continue  # this uniform decided how many were drawn: judged by the stretches above
        moved = new_values(out, base) if continuous else changed(out)
        if moved > allowed:
            raise _fail(
                f"{fname}：只换掉 rng.random 抽到的第 {at + 1} 个数，就有 {moved} 个输出元素变了（最多允许 {allowed} 个），"
                f"而抽样次数不变。自己实现的抽样里，一个均匀数只决定它自己那一个（或少数几个）输出；用几个均匀数的粗略区间做种子"
                f"生成一整块输出，不是自己实现抽样。",
                f"{fname}: replacing only number {at + 1} drawn with rng.random changed {moved} output elements "
                f"(at most {allowed} allowed), with the same number of draws. In a sampler you build, one uniform decides "
                f"its own output (or a few); a block of outputs from a generator seeded by coarse parts of several "
                f"uniforms is not building the sampler yourself.",
                diagnosis="common.generator_seeded_from_draws",
            )


def reflected_within(run, shifted, drawn, base, lo, hi, allowed) -> bool:
    """Whether the stretch ``drawn[lo:hi]`` reflected (u → 1 − u) keeps the number of draws and makes at
    most ``allowed`` values new (a replaced stretch made more).

    Laplace built from polar-method normals (``b (Z1 Z2 + Z3 Z4)``, ``b √(2W) Z``: an independent reviewer,
    session 13) hands the later uniforms to other normals once an acceptance changes, so every later
    value pairs other normals and is new; a reflected pair keeps its place in the unit disc, so only the
    values whose normals it made change. A generator seeded by a coarse function of all the draws
    (``floor(10 Σu)``, issue 35) still changes every value: Σ(1 − u) is another sum."""
    tape = drawn.copy()
    tape[lo:hi] = np.where(drawn[lo:hi] > 0.0, 1.0 - drawn[lo:hi], drawn[lo:hi])
    out = run(tape)
    return not shifted() and new_values(out, base) <= allowed


#: Single uniforms replaced at a judged call of a sampler whose number of draws varies, with continuous outputs
#: (session 14's attacker, A1: a fake rejection round switched the dependency count off, 10/10). A probe that keeps
#: the count "exceeds" when more than _KEPT_VALUES values (or twice the outputs one uniform serves) are new: a
#: polar pair's uniform feeds both of its normals, so two values; the check fails at _KEPT_FAIL of them.
_KEPT_PROBES, _KEPT_FAIL, _KEPT_VALUES = 16, 6, 4


def probe_kept_counts(fname, run, shifted, drawn, base, seed, share) -> None:
    """Replace single served uniforms of a count-varying sampler with continuous outputs; fail when at least
    :data:`_KEPT_FAIL` of :data:`_KEPT_PROBES` runs keep the number of draws and still make more than
    max(:data:`_KEPT_VALUES`, 2 ``share``) values new (``share``: the outputs one uniform serves).

    A rejection sampler's replaced uniform either keeps every decision (then only the values it belongs to
    change: one, two for a polar pair whose normals both serve) or re-decides an acceptance, which nearly always changes the number of draws (such runs are not
    judged): a probe exceeds only when a re-decided acceptance leaves the total count unchanged by chance
    (measured per probe: 1 of 200 for a Cauchy-proposal redraw sampler with acceptance 1/3, 0 of 200 for the
    corpus's rejection samplers; tests/power/RESULTS.md). At a per-probe rate ρ ≤ 0.02, P(Binomial(16, ρ) ≥ 6)
    ≤ 5 × 10⁻⁷. Blocks of values hashed from coarse cells of many uniforms, with a decoy round that makes the
    count vary, rehash a block whenever the replaced uniform changes its cell: 122 of 175 kept runs exceeded.
    """
    picks = np.random.default_rng([seed, 53]).choice(drawn.size, size=min(_KEPT_PROBES, drawn.size), replace=False)
    fresh = np.random.default_rng([seed, 59]).random(picks.size)
    over, allowed = 0, max(_KEPT_VALUES, 2 * share)
    for number, (at, value) in enumerate(zip(picks, fresh)):
        if over + picks.size - number < _KEPT_FAIL:
            return  # cannot reach the line any more
        tape = drawn.copy()
        tape[at] = value
        out = run(tape)
        if shifted():
            continue
        over += new_values(out, base) > allowed
        if over >= _KEPT_FAIL:
            raise _fail(
                f"{fname}：每次只换掉 rng.random 抽到的一个数、且抽样次数不变时，{number + 1} 次中有 {over} 次输出里出现了"
                f"多于 {allowed} 个原输出里没有的新值。拒绝抽样里，一个不改变任何接受判断的均匀数只改变它自己的一两个输出；"
                f"一个数牵动一整块输出，说明每个输出取决于许多个均匀数的粗略区间（例如把好几个 int(4 * u) 拼起来做散列或做种子），"
                f"这不是自己实现抽样。",
                f"{fname}: with a single number drawn with rng.random replaced and the same number of draws, {over} of "
                f"{number + 1} runs made more than {allowed} output values new (absent from the original output). In a "
                f"rejection sampler a uniform that changes no acceptance changes only the value (or two) it belongs to; one "
                f"uniform moving a whole block of values means every value depends on coarse cells of many uniforms "
                f"(several int(4 * u) hashed together or used as a seed), which is not building the sampler yourself.",
                diagnosis="common.output_from_coarse_digest",
            )
