"""Ready-made samplers in a student's function, read from its syntax tree (a note; the
grade's rng rule is enforced by the generator the student receives).
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable

import numpy as np

from helpers.checks import dependency, digest, pairs
from helpers.checks.scan import _function_source, find_forbidden_calls  # noqa: F401  (re-exported)
from helpers.checks.single_uniform import new_values as _new_values
from helpers.checks.single_uniform import probe_kept_counts, probe_single_uniforms, reflected_within
from helpers.checks.core import (
    RecordingGenerator,
    _after_call,
    _call,
    _fail,
    _say,
    _state,
)

# --- forbidden calls (syntax tree): helpers/checks/scan.py --------------------------

def _check_no_forbidden(func: Callable) -> None:
    found = find_forbidden_calls(func)
    if found:
        name = getattr(func, "__name__", "function")
        listed = ", ".join(found)
        raise _fail(
            f"{name} 使用了不允许的随机数来源或现成的抽样器：{listed}。随机数只能来自传入的 rng 的 rng.random(...)"
            f"（np.exp、scipy.special.expit 这类确定性的函数可以用）。",
            f"{name} uses a forbidden randomness source or ready-made sampler: {listed}. Random numbers must come "
            f"from rng.random(...) of the rng you are given (deterministic functions such as np.exp or "
            f"scipy.special.expit are fine).",
            diagnosis="common.forbidden_sampler",
        )


def _check_rng_discipline(func: Callable, call: Callable[[np.random.Generator], Any], name: str, seed: int, *,
                          outcomes: int | None = None) -> None:
    """Same seed ⇒ same output; other seed ⇒ other output; rng.random used; the output is built
    from the draws (:func:`_check_built_from_draws`; ``outcomes`` as there)."""
    fname = getattr(func, "__name__", "function")
    outputs = []
    rngs = []
    for index, s in enumerate((seed, seed, seed + 1)):
        rng = RecordingGenerator(s, keep=index == 0)
        before = _state(rng)
        out = _call(lambda: call(rng), rng=rng, name=fname)
        _after_call(func, rng)
        outputs.append(np.asarray(out, dtype=float))
        rngs.append((rng, before))
    rng, before = rngs[0]
    if rng.calls == 0 or _state(rng) == before:
        raise _fail(
            f"{fname} 没有使用传入的 rng（rng.random 被调用了 0 次）。请用 rng.random(...) 产生随机数，不要用 np.random.* 或自己新建生成器。",
            f"{fname} did not use the rng it was given (rng.random was called 0 times). Draw your uniforms with "
            f"rng.random(...), not np.random.* or a generator you create yourself.",
            diagnosis="common.rng_unused",
        )
    if outputs[0].shape != outputs[1].shape or not np.array_equal(outputs[0], outputs[1], equal_nan=True):
        raise _fail(
            f"{fname}：相同种子的 rng 给出了不同的输出。随机性必须全部来自传入的 rng（不要用 np.random.*、random 模块或全局状态）。",
            f"{fname}: two rngs with the same seed gave different outputs. All randomness must come from the rng "
            f"you are given (no np.random.*, no random module, no global state).",
            diagnosis="common.rng_not_reproducible",
        )
    if outputs[0].shape == outputs[2].shape and np.array_equal(outputs[0], outputs[2], equal_nan=True):
        raise _fail(
            f"{fname}：不同种子的 rng 给出了完全相同的输出。是否在函数里固定了种子，或没有用 rng？",
            f"{fname}: rngs with different seeds gave identical outputs. Is a seed fixed inside the function, or "
            f"is the rng not used?",
            diagnosis="common.rng_seed_fixed",
        )
    _check_built_from_draws(func, call, rng.drawn(), outputs[0], seed, outcomes=outcomes)
    _say(name, seed, f"same seed -> same output, other seed -> other output; rng.random called {rng.calls} time(s); "
                     f"output built from the draws",
         zh=f"相同种子给出相同输出，不同种子给出不同输出；rng.random 调用了 {rng.calls} 次；输出由抽到的随机数构成")


def _check_replayed(func: Callable, call: Callable[[np.random.Generator], Any], drawn: np.ndarray, base: Any) -> None:
    """``call``'s output ``base`` came from the uniforms ``drawn`` it was served: handed the same
    draws again, where ``func.elsewhere()`` sends the call (in grading a second sandbox, which never
    saw them), it gives the same output. A cheap part of :func:`_check_built_from_draws` for checks
    whose points belong to building the sampler but that make only a few small calls (issue 35:
    ``np.random.laplace`` kept the points of every cell but the rng ones)."""
    fname = getattr(func, "__name__", "function")
    if drawn.size == 0:
        raise _fail(
            f"{fname} 没有使用传入的 rng（rng.random 一个数也没有抽）。请用 rng.random(...) 产生均匀随机数，再自己变换；"
            f"不要用 np.random.*、自己新建的生成器或现成的抽样器。",
            f"{fname} drew nothing from the rng it was given. Draw uniforms with rng.random(...) and transform them "
            f"yourself; no np.random.*, no generator of your own, no ready-made sampler.",
            diagnosis="common.rng_unused",
        )
    base = np.asarray(base, dtype=float)
    elsewhere = getattr(func, "elsewhere", None)
    with elsewhere() if callable(elsewhere) else contextlib.nullcontext():
        rng = RecordingGenerator(_REPLAY_SEED, tape=drawn)
        out = np.asarray(_call(lambda: call(rng), rng=rng, name=fname), dtype=float)
        _after_call(func, rng)
    if out.shape != base.shape or not np.array_equal(out, base, equal_nan=True):
        raise _fail(
            f"{fname}：把同样的 rng.random 抽样再给一次，输出却不同。输出必须只由 rng.random 给出的数决定"
            f"（不能来自 np.random.*、自己新建的生成器或现成的抽样器）。",
            f"{fname}: handed the same rng.random draws again, it returned a different output. The output must depend "
            f"only on the numbers rng.random gives (not on np.random.*, a generator of your own or a ready-made sampler).",
            diagnosis="common.output_not_from_draws",
        )


#: Seed of the generator behind a replay's tape (only reached when the replay draws more than the tape holds).
_REPLAY_SEED = 0x5EED


#: Stretches of the draws changed one at a time by :func:`_check_built_from_draws`.
_STRETCHES = 8
#: Most outputs one uniform may serve in the replaced-stretch check. A correct sampler may serve several
#: values from one uniform (the residual of ``u < p`` is uniform again: 2 bits, 3 with the residual's
#: residual); the allowance ⌈outputs / draws⌉ without a cap let a block of 20-400 outputs read from numpy's
#: own sampler seeded by a coarse cell of one uniform through (reverted, d1dcc6c). Blocks of at most 4
#: outputs are judged by :func:`helpers.checks.pairs.check_positions_independent` (RESULTS.md); 5: session 14.
_SERVED_CAP = 5
#: Stretches replaced (with other uniforms) to learn whether a sampler's number of draws ever changes,
#: before more changed discrete elements than replaced uniforms fail it.
_COUNT_PROBES = 24


def _check_built_from_draws(func: Callable, call: Callable[[np.random.Generator], Any], drawn: np.ndarray,
                            base: np.ndarray, seed: int, *, judged: bool = False, outcomes: int | None = None,
                            agree: float | None = None, close: float = 0.0, calls: bool = False) -> int:
    """The output is a function of the uniforms drawn, each output element built from its own.

    Replaying the same uniforms (from a generator of another seed, so nothing
    but the draws is shared) must give the same output. Then the draws are cut
    into ``_STRETCHES`` stretches, and each stretch in turn is replaced by other
    uniforms: every honest construction (inverse CDF, sign × exponential,
    difference of exponentials, Gumbel-max, loops) builds each output element
    from uniforms of its own, so changing ``k`` uniforms changes at most ``k``
    output elements. A generator seeded from the draws (or any mixing of all
    draws) changes every element at once. A vectorised rejection sampler changes more (the
    accepted values of later rounds move to other elements), so such a stretch is judged again
    by moving one uniform at a time (below). Not deterministic for rejection samplers: all
    :data:`_SPARSE_TRIES` single moves cross an acceptance threshold with probability ≲ 0.05⁸
    ≈ 4 × 10⁻¹¹ per stretch (measured: Cauchy-proposal Laplace samplers in
    ``tests/power/measure_rejection_rng.py``); for every other honest construction no false failure.
    Last, every uniform is nudged by about 10⁻⁶ and by about 10⁻⁹ (:data:`_NUDGES`; random sizes
    in [½, 1] of that and random signs, which the student's code cannot undo; in grading in another
    process that never saw the original draws, so that no memory of them can answer):
    every honest construction is a continuous map of its uniforms away from
    a few points (u near 0, 1 or a branch point such as 1/2 of the sign, or a
    category boundary of a discrete output), so an output element moves by
    more than a small share of the outputs' spread only when one of its
    uniforms lies within about 10⁴ × the nudge of such a point: about 10⁻⁴
    of the elements for a few uniforms each. A ready-made sampler seeded per
    element from its own draws (``default_rng(int(u * 2**32)).laplace()``)
    draws anew under any nudge that changes its seed: almost every element
    jumps. The check fails when at least max(5, 1%) of the elements jump (an
    honest sampler's expected count is below 0.1 for 1,000 elements; the
    Poisson tail at 5 is below 10⁻⁷). A changed stretch run that used another number of draws than
    the original (rejection sampling: every later element then reads shifted draws) is tried again
    with one uniform of the stretch moved by :data:`_STRETCH_MOVE` until a run keeps the count (then
    at most one element may change), and fails as below when none does; a nudged run that did is tried again with sparse nudges (:data:`_SPARSE`) until one keeps the
    count, and when none does the check fails (``common.draw_count_unstable``): a count that
    changes under every tiny move is computed from all the draws (a sampler hiding from these
    checks), while an honest one changes only when a uniform sits at a decision threshold.
    A seed or table index so coarse that neither nudge changes it (``int(u * 1024)``) is caught
    by the digest tests below. What it cannot see: a fixed generator's numbers with the draws
    added at a weight that keeps every element moving (a table value plus a sawtooth of the
    uniform, ``tests/checks/test_digest.py``'s strict xfail), or a digest spread over many
    uniforms per element (``tests/power/RESULTS.md``).

    A replaced stretch that changed the count or more elements than it has uniforms is judged by
    the output's *values* when they are continuous (more than half distinct): a rejection sampler
    puts the same values in other places (later rounds read shifted draws) and re-decides some
    acceptances, a generator reseeded from the draws makes every value new; at most
    :func:`_new_values_allowed` values absent from the original output may appear (red team,
    issue 35: the single-uniform moves let a sampler seeded once from ``floor(Σu)`` through, as one
    move of 0.01 leaves such a floor unchanged). Discrete outputs (bits, indices) keep the
    single-uniform moves: their values cannot tell a reseed from a rejection.

    ``judged``: the output of a call whose values a statistical check judges (the distribution
    checks), not of a call made to test the rule: the rule must hold for the outputs that earn the
    points, whatever their size or arguments (issue 35: a sampler honest at the rng checks' small
    sizes and a ready-made one from its own OS-seeded generator at the distribution checks' 100,000
    values had full marks). No draws at all fail; the exact replay, one stretch chosen by ``seed``
    and the two nudges (not the other seven stretches) all run where ``func.elsewhere()`` sends
    them, the second sandbox, which never saw these draws.

    Looked up by a coarse digest of the draws (red team s11, A1: numpy's own sampler behind
    ``T[int(1024 u) * 1024 + int(1024 v)]``, which no nudge above moves): continuous outputs must
    move under the nudge of 10⁻⁶ (:func:`helpers.checks.digest.check_elements_move`, no extra run),
    discrete ones (``outcomes`` possible values; default: the values seen, at least 2) must rarely
    change under one of about 2⁻¹⁰ (:func:`helpers.checks.digest.check_coarse_moves`: one more run,
    more only for a rejection sampler whose count changed), both where the nudges run.

    ``agree``: for a judged call whose output positions are independent draws of a known law, the
    chance Σ_v p_v² that two independent draws at one position are equal (continuous ones: within
    ``close``); one more run on independent
    draws (first, where the others run) must agree with ``base`` at no more positions than
    Binomial(n, ``agree``) allows (:func:`helpers.checks.pairs.check_positions_independent`: outputs
    read from a ready-made sampler seeded by a coarse cell of the uniforms that serve them).
    Fixed-count judged calls: :func:`helpers.checks.dependency.check_dependencies` (``calls``: by the caller).
    """
    fname = getattr(func, "__name__", "function")

    used = []

    def run(tape, s):
        rng = RecordingGenerator(s, tape=tape)
        out = _call(lambda: call(rng), rng=rng, name=fname)
        _after_call(func, rng)
        used.append(object.__getattribute__(rng, "draws"))
        return np.asarray(out, dtype=float)

    def changed(out):
        if out.shape != base.shape:
            return base.size
        return int(np.sum(~((out == base) | (np.isnan(out) & np.isnan(base)))))

    if drawn.size == 0:
        if judged:
            raise _fail(
                f"{fname} 没有使用传入的 rng（rng.random 一个数也没有抽）：被检验分布的输出必须由 rng.random 给出的均匀数构造，"
                f"不能来自 np.random.*、自己新建的生成器或现成的抽样器。",
                f"{fname} drew nothing from the rng it was given: the output whose distribution is tested must be built "
                f"from the uniforms rng.random gives, not from np.random.*, a generator of your own or a ready-made sampler.",
                diagnosis="common.rng_unused",
            )
        return
    elsewhere = getattr(func, "elsewhere", None)
    with elsewhere() if judged and callable(elsewhere) else contextlib.nullcontext():
        if agree is not None:
            # First in the second sandbox, which has not yet seen these draws (nor what they gave).
            fresh = run(np.random.default_rng([seed, 41]).random(drawn.size), seed + 3)
            pairs.check_positions_independent(fname, fresh, base, agree, close)
        fixed, served = _judge_draws(func, run, used, changed, drawn, base, seed, judged, outcomes) or (0, 1)
        if judged and fixed and not calls:
            dependency.check_dependencies(fname, lambda tape: run(tape, seed), lambda: used[-1] != drawn.size, drawn,
                                          base, seed, continuous=fixed > 1, agree=agree, calls=calls, served=served)
        elif judged and not calls and base.size >= dependency._LEAST and \
                np.unique(base[np.isfinite(base)]).size > base.size // 2:
            # the count varies (a rejection sampler, or a decoy round that switches the count above off): single
            # uniforms replaced, judged where the count is kept (session 14's attacker, A1)
            probe_kept_counts(fname, lambda tape: run(tape, seed), lambda: used[-1] != drawn.size, drawn, base, seed,
                              served)
    return fixed


def _judge_draws(func, run, used, changed, drawn, base, seed, judged, outcomes=None) -> tuple[int, int] | None:
    """The replay, stretches and nudges of :func:`_check_built_from_draws`; (0 if the number of draws
    varies, else 1 discrete or 2 continuous; the outputs one uniform may serve), None for tiny outputs."""
    fname = getattr(func, "__name__", "function")

    def shifted():
        # A sampler whose number of draws depends on their values (rejection sampling, a loop
        # until a condition holds) reads every later element's draws shifted once one changes:
        # such a run says nothing about mixing by positions (a seeded or mixing sampler with a
        # fixed number of draws, the case the positions are for, is still judged by them).
        return used[-1] != drawn.size

    replay = run(drawn, seed + 2)
    if changed(replay):
        raise _fail(
            f"{fname}：把同样的 rng.random 抽样再给一次，输出却不同（{changed(replay)} 个元素变了）。输出必须只由 rng.random 给出的数决定。",
            f"{fname}: handed the same rng.random draws again, it returned a different output ({changed(replay)} "
            f"element(s) changed). The output must depend only on the numbers rng.random gives.",
            diagnosis="common.output_not_from_draws",
        )
    if base.size < 2:
        return
    edges = np.linspace(0, drawn.size, min(_STRETCHES, drawn.size) + 1).astype(int)
    other = np.random.default_rng([seed, 17]).random(drawn.size)
    moves = np.random.default_rng([seed, 23])
    stretches = list(zip(edges[:-1], edges[1:]))
    if judged:
        stretches = [stretches[int(moves.integers(len(stretches)))]]
    continuous = np.unique(base[np.isfinite(base)]).size > base.size // 2
    # Outputs one uniform may serve: one, or up to _SERVED_CAP when the sampler draws fewer uniforms than
    # it returns values (a correct rr_perturb reuses the residual u/p or (u - p)/(1 - p) for a second bit).
    share = served = min(_SERVED_CAP, max(1, -(-base.size // max(drawn.size, 1))))
    counts_vary = False  # whether some replaced stretch changed the number of draws (see below)
    for number, (lo, hi) in enumerate(stretches):
        if hi == lo:
            continue
        tape = drawn.copy()
        tape[lo:hi] = other[lo:hi]
        out = run(tape, seed)
        moved, width = changed(out), (hi - lo) * share
        counts_vary = counts_vary or shifted()
        if not continuous and moved > width and not counts_vary:
            # Discrete values cannot tell a reseed from a rejection sampler's shifted draws, but only a
            # sampler whose number of draws depends on their values shifts them: when no replaced
            # stretch (all eight, the judged check's others run now) changes the count, more changed
            # elements than replaced uniforms is mixing, and no single-uniform retry excuses it (issue
            # 35: a bit pattern drawn from a generator seeded by floor(10 Σu) passed those retries).
            # Up to _COUNT_PROBES other stretches are replaced until one changes the count: an honest
            # rejection sampler keeps it in about a third of them (0.34 measured, 64 exponential-mechanism
            # calls), all of them with probability about 0.34²⁴ < 10⁻¹¹.
            fills = np.random.default_rng([seed, 37])
            for probe_number in range(_COUNT_PROBES):
                if counts_vary:
                    break
                at = probe_number % (len(edges) - 1)
                probe_lo, probe_hi = edges[at], edges[at + 1]
                probe = drawn.copy()
                probe[probe_lo:probe_hi] = fills.random(probe_hi - probe_lo)
                run(probe, seed)
                counts_vary = shifted()
            if not counts_vary:
                raise _fail(
                    f"{fname}：只换掉 rng.random 抽到的 {hi - lo} 个数（第 {lo + 1}–{hi} 个），就有 {moved} 个输出元素变了，"
                    f"而抽样次数始终不变。每个输出应由它自己用到的均匀数构造；用抽到的数做种子新建生成器、或把所有抽样混在一起，"
                    f"都不是自己实现抽样。",
                    f"{fname}: replacing {hi - lo} of the numbers drawn with rng.random (numbers {lo + 1}-{hi}) changed "
                    f"{moved} output elements, with the same number of draws every time. Each output must be built from "
                    f"uniforms of its own; seeding a new generator from the draws, or mixing all draws together, is not "
                    f"building the sampler yourself.",
                    diagnosis="common.generator_seeded_from_draws",
                )
        if continuous and (shifted() or moved > width):
            new = _new_values(out, base)
            if new > _new_values_allowed(width, base.size) and not (
                    reflected_within(lambda tape: run(tape, seed), shifted, drawn, base, lo, hi,
                                     _new_values_allowed(width, base.size))):
                raise _fail(
                    f"{fname}：只换掉 rng.random 抽到的 {hi - lo} 个数（第 {lo + 1}–{hi} 个），输出中就有 {new} 个值"
                    f"（共 {base.size} 个）是原输出里没有的新值，最多允许 {_new_values_allowed(width, base.size)} 个。"
                    f"拒绝抽样换了抽样次数，也只是把同样的值放到别的位置；用抽到的数做种子新建生成器，所有值都会变。",
                    f"{fname}: replacing {hi - lo} of the numbers drawn with rng.random (numbers {lo + 1}-{hi}) made "
                    f"{new} of the {base.size} output values new (absent from the original output; at most "
                    f"{_new_values_allowed(width, base.size)} allowed). A rejection sampler that draws another number of "
                    f"uniforms puts the same values in other places; a generator seeded from the draws makes them all new.",
                    diagnosis="common.generator_seeded_from_draws",
                )
            continue
        for _ in range(_SPARSE_TRIES if shifted() or moved > width else 0):
            # The count changed, or more elements than uniforms did: a vectorised rejection sampler
            # hands the draws of a later round to the elements still rejected (one acceptance that
            # changes gives every later one other draws) or concatenates the accepted values and
            # truncates (every later value moves up or down by one place), and a count computed from
            # all the draws could hide a mixing sampler from this check. Move one uniform of the
            # stretch by _STRETCH_MOVE until a run keeps the count and changes at most one element
            # (an honest run changes more only when that uniform crosses a decision threshold),
            # then judge that run; a sampler mixing all the draws changes every element each time.
            tape, at = drawn.copy(), int(moves.integers(lo, hi))
            step = _STRETCH_MOVE if moves.random() < 0.5 else -_STRETCH_MOVE
            tape[at] = tape[at] + step if 0.0 <= tape[at] + step < 1.0 else tape[at] - step
            moved, width = changed(run(tape, seed)), share
            if not shifted() and moved <= width:
                break
        if shifted() and drawn.size >= _STRETCHES:
            raise _fail(
                f"{fname}：rng.random 抽到的数里只要有一个移动 {_STRETCH_MOVE:g}（试了 {_SPARSE_TRIES} 次），函数用的均匀数个数就变了"
                f"（原来 {drawn.size} 个，这次 {used[-1]} 个）。自己实现的抽样只有在这个数恰好越过判断阈值时才会改变抽样次数；"
                f"次次都变，说明抽样次数由全部抽样混合决定。",
                f"{fname}: moving a single number drawn with rng.random by {_STRETCH_MOVE:g} ({_SPARSE_TRIES} tries) changed "
                f"how many uniforms the function drew every time ({drawn.size} originally, {used[-1]} the last time). "
                f"A sampler you build changes its number of draws only when that uniform crosses a decision threshold; "
                f"a count that changes every time is computed from all the draws mixed together.",
                diagnosis="common.draw_count_unstable",
            )
        if moved > width and not shifted():
            raise _fail(
                f"{fname}：只换掉 rng.random 抽到的 {hi - lo} 个数（第 {lo + 1}–{hi} 个），就有 {moved} 个输出元素变了。"
                f"每个输出应由它自己用到的均匀数构造；用抽到的数做种子新建生成器、或把所有抽样混在一起，都不是自己实现抽样。",
                f"{fname}: replacing {hi - lo} of the numbers drawn with rng.random (numbers {lo + 1}-{hi}) changed "
                f"{moved} output elements. Each output must be built from uniforms of its own; seeding a new generator "
                f"from the draws, or mixing all draws together, is not building the sampler yourself.",
                diagnosis="common.generator_seeded_from_draws",
            )
    fixed = 0 if counts_vary or shifted() else 1 + continuous  # returned: 0 count varies, 1 discrete, 2 continuous
    if fixed and (share > 1 or not continuous):
        probe_single_uniforms(fname, run, used, changed, drawn, base, seed, share, continuous, other)
    if base.size < 20:
        return fixed, served
    finite = base[np.isfinite(base)]
    spread = float(np.subtract(*np.percentile(finite, [75, 25]))) if finite.size else 0.0
    # In grading the nudged runs go to another process that ran the same cells and never saw the
    # original draws (a grading proxy's ``elsewhere``), coarse nudge first: a sampler that remembers
    # its first output and gives it back for nearby draws answers the first nudged run there from
    # nothing. Nudges of random size in [nudge/2, nudge] and random sign cannot be undone.
    elsewhere = getattr(func, "elsewhere", None)
    pattern = np.random.default_rng([seed, 29])
    with elsewhere() if callable(elsewhere) and not judged else contextlib.nullcontext():
        for nudge, share in _NUDGES:
            out, part = run(_nudged(drawn, nudge, pattern), seed), 1.0
            for _ in range(_SPARSE_TRIES if shifted() else 0):
                # The count changed: a uniform sat within the nudge of a decision (rejection sampling),
                # or the count is made to change with every draw so that no changed run is judged.
                # Nudge a sparse random part of the draws until a run keeps the count.
                out, part = run(_nudged(drawn, nudge, pattern, _SPARSE), seed), _SPARSE
                if not shifted():
                    break
            if shifted():
                raise _fail(
                    f"{fname}：把 rng.random 抽到的数只移动约 {nudge:g}（{_SPARSE_TRIES + 1} 种方式，每次只动其中一部分），"
                    f"函数每次都用了不同个数的均匀数（原来 {drawn.size} 个，这次 {used[-1]} 个）。自己实现的抽样只有在某个均匀数"
                    f"恰好落在判断阈值附近时才会改变抽样次数（拒绝抽样等）；每一次微小改动都改变抽样次数，说明抽样次数由全部抽样混合决定。",
                    f"{fname}: with every number drawn with rng.random (or a sparse part of them, {_SPARSE_TRIES + 1} "
                    f"ways) moved by about {nudge:g}, the function drew another number of uniforms every time "
                    f"({drawn.size} originally, {used[-1]} the last time). A sampler you build changes its number of "
                    f"draws only when a uniform lies right at a decision threshold (rejection sampling and the like); a "
                    f"count that changes under every tiny move is computed from all the draws mixed together.",
                    diagnosis="common.draw_count_unstable",
                )
            def jumps(out):
                if out.shape != base.shape:
                    return base.size
                same = (np.abs(out - base) <= share * spread) | (np.isnan(out) & np.isnan(base))
                return int(np.sum(~same))

            jumped, limit = jumps(out), max(5, 0.01 * base.size)
            for _ in range(_SPARSE_TRIES if jumped >= limit else 0):
                # A nudged uniform crossed an acceptance threshold without changing the count (a
                # vectorised rejection sampler: the accepted values of later rounds move to other
                # elements; measured about once in 1,000 runs). Nudge half of the uniforms instead,
                # until a run keeps the count and its elements: a sampler seeded per element from its
                # draws still makes about half of them jump in every run.
                out = run(_nudged(drawn, nudge, pattern, _HALF), seed)
                if not shifted():
                    part, jumped = _HALF, jumps(out)
                    if jumped < limit:
                        break
            if jumped >= limit:
                raise _fail(
                    f"{fname}：把 rng.random 抽到的每个数只移动 {nudge:g}，{base.size} 个输出元素中就有 {jumped} 个跳到了完全不同的值"
                    f"（变化超过输出四分位距的 {share:g} 倍）。自己实现的抽样（逆 CDF、符号 × 指数、指数之差、Gumbel-max……）是均匀数的连续变换，"
                    f"这样微小的移动几乎不会改变输出；用抽到的数给每个元素的现成抽样函数做种子（例如 np.random.default_rng(int(u * 2**32))）"
                    f"不是自己实现抽样。",
                    f"{fname}: moving every number drawn with rng.random by only {nudge:g} made {jumped} of {base.size} "
                    f"output elements jump to unrelated values (by more than {share:g} times the outputs' interquartile "
                    f"range). A sampler you build (inverse CDF, sign × exponential, difference of exponentials, "
                    f"Gumbel-max...) is a continuous map of its uniforms, which such a tiny move almost never changes; "
                    f"seeding a ready-made sampler per element from the draws (e.g. np.random.default_rng(int(u * 2**32))) "
                    f"is not building the sampler yourself.",
                    diagnosis="common.sampler_seeded_per_element",
                )
            if continuous and nudge == _NUDGES[0][0]:
                # only the coarser nudge: a float32 copy of u (spacing 6 × 10⁻⁸ near 1) ignores 10⁻⁹
                digest.check_elements_move(fname, out, base, nudge, spread, part)
        if continuous:
            digest.check_coarse_jumps(fname, lambda tape: run(tape, seed), shifted, drawn, base, pattern, _nudged, spread)
        else:
            digest.check_coarse_moves(fname, lambda tape: run(tape, seed), shifted, changed, drawn, base, pattern,
                                      outcomes if outcomes else np.unique(base[np.isfinite(base)]).size, _nudged,
                                      lambda: any(count != drawn.size for count in used),
                                      np.random.default_rng([seed, 43]), served=served)
    return fixed, served


def _new_values_allowed(width: int, size: int) -> int:
    """Most new values (:func:`_new_values`) a run with ``width`` replaced uniforms may show.

    Each replaced uniform can make at most one value new; a rejection sampler whose later rounds
    read shifted draws also re-decides acceptances there, which brings values never accepted
    before: measured for the course's Cauchy-proposal samplers (``tests/power/measure_rejection_rng.py``),
    at most 1.06 × ``width`` in all, i.e. 41% of the elements, against the allowance ``width`` +
    ``size``/4 (63% for 1,000 Laplace values); a generator reseeded from the draws makes ~100% new.
    """
    return width + size // 4


#: (largest nudge of every uniform, share of the outputs' interquartile range an element may move) of
#: :func:`_check_built_from_draws`, coarse first; each uniform moves by nudge × U[1/2, 1]: 10⁻⁹
#: changes any seed finer than 2³¹ steps (``int(u * 2**32)``), 10⁻⁶ any seed finer than 2 × 10⁶
#: steps; an honest element moves by about nudge × |d output / d u|.
_NUDGES = ((1e-6, 0.05), (1e-9, 1e-3))
#: When a nudged run used another number of draws: up to ``_SPARSE_TRIES`` runs that nudge each
#: uniform with probability ``_SPARSE`` (random sign). An honest sampler's count changes only when
#: a nudged uniform sits within the nudge of a decision threshold; with m such uniforms (their
#: expected number is below 0.01 at 10⁻⁹ and about 2 × 10⁻⁶ per decision at 10⁻⁶) a sparse run
#: keeps the count with probability >= (1 - _SPARSE)^m, so all tries change it with probability
#: (1 - 7/8^m)^8: 2 × 10⁻¹⁰ for m = 1, and m >= 2 is itself rare. Enough nudged elements stay
#: (1/8 of them) for a per-element seeded sampler to show its jumps.
_SPARSE, _SPARSE_TRIES = 1 / 8, 8
#: When a nudged run kept the count but too many elements jumped: up to ``_SPARSE_TRIES`` runs that nudge
#: each uniform with probability ``_HALF``. An honest rejection sampler's run jumps when a nudged
#: uniform crossed an acceptance threshold (about 10⁻³ per run at 10⁻⁶, 1,000 elements): all tries
#: do with probability about (5 × 10⁻⁴)⁸; a per-element seeded sampler's half-nudged elements jump.
_HALF = 1 / 2
#: When a replaced stretch changed the number of draws: one uniform of the stretch moved by this much,
#: up to ``_SPARSE_TRIES`` times. An honest count changes only when the moved uniform crosses a
#: decision threshold (probability about this much times the threshold density per try, ≲ 0.05 for
#: the course's rejection samplers: all tries change it with probability ≲ 4 × 10⁻¹¹); a count
#: computed from a fine function of all the draws (``floor(100 · Σu)``) changes at every try.
_STRETCH_MOVE = 0.01


def _nudged(drawn: np.ndarray, nudge: float, pattern: np.random.Generator, part: float = 1.0) -> np.ndarray:
    """``drawn`` with each uniform moved (with probability ``part``) by nudge × U[1/2, 1] of random sign,
    the sign turned where the move would leave [0, 1)."""
    step = nudge * (0.5 + 0.5 * pattern.random(drawn.size)) * np.where(pattern.random(drawn.size) < 0.5, -1.0, 1.0)
    if part < 1.0:
        step = np.where(pattern.random(drawn.size) < part, step, 0.0)
    moved = drawn + step
    return np.where((moved >= 0.0) & (moved < 1.0), moved, drawn - step)
