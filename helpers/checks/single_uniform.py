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
