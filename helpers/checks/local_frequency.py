"""Checks behind the graded assignment ``source/local_frequency`` (§6.4 beyond one bit, §6.5.1).

The student writes k-ary generalized randomized response (GRR, "direct
encoding"), an unbiased frequency estimator for it, the variance of that
estimator, and the correction of the course's asymmetric two-dice scheme
(P(1 | 1) = a, P(1 | 0) = b) — none of the formulas is given. The checks
judge

* **privacy**: an ε-LDP audit of ``grr_perturb`` with :mod:`helpers.audit`
  (confidence 1 − 1e-6: a correct mechanism is reported as violating its
  claim with probability at most 1e-6). It catches p = e^ε/(e^ε + 1) used for
  k > 2, a replacement value drawn from all k values (the true one included),
  and other-value draws that never reach some value;
* **distribution**: chi-square goodness of fit of the reports against
  (p, q) = (e^ε, 1)/(e^ε + k − 1) (catches mechanisms that are too private
  as well);
* **exact values** of the estimator on report sets whose counts equal their
  expectation exactly (ε = ln 3, k = 4: p = 1/2, q = 1/6), where an unbiased
  estimator must return the true counts — including a negative estimate,
  which a clipped (biased) estimator does not return;
* **unbiasedness and variance against simulation**, and the variance
  formula's exact values.

Every student function is called with plain data (ints, floats, int64 and
float64 arrays) and ``numpy.random.Generator`` objects only, and its result
is treated as plain data, so the checks work unchanged when the student's
code runs in another process (BRIEF: trusted-grading contract). Messages
are bilingual (Chinese, then English), as in :mod:`helpers.checks`, whose
utilities (seeds, ``ALPHA``, chi-square) are reused.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from helpers.checks.core import (
    ALPHA,
    CheckFailure,
    _call,
    _call_batch,
    _expect_value_error,
    _fail,
    _passed,
    _say,
    _short,
    check_seed,
)
from helpers.checks.forbidden import find_forbidden_calls
from helpers.checks.stats import chi_square_test
from helpers.audit import epsilon_lower_bound

__all__ = [
    "reference_grr_probabilities",
    "reference_grr_variance",
    "check_grr_perturb_basics",
    "check_grr_perturb_distribution",
    "check_grr_perturb_privacy",
    "check_grr_estimate_values",
    "check_grr_estimate_unbiased",
    "check_grr_variance_simulation",
    "check_grr_variance_values",
    "check_asymmetric_correct_values",
    "check_asymmetric_correct_invalid",
]

#: Names under which a solution may receive its generator (the scan ignores their methods).
_RNG_NAMES = ("rng.", "generator.", "gen.", "random_state.")


# --- references -------------------------------------------------------------------


def reference_grr_probabilities(k: int, epsilon: float) -> tuple[float, float]:
    """(p, q) of GRR over k values: p = e^ε/(e^ε + k − 1), q = 1/(e^ε + k − 1) (p/q = e^ε)."""
    q = math.exp(-epsilon) / (1.0 + (k - 1) * math.exp(-epsilon))
    p = 1.0 / (1.0 + (k - 1) * math.exp(-epsilon))
    return p, q


def reference_grr_variance(n: int, k: int, epsilon: float, f: float) -> float:
    """Var of the count estimate of a value held by n·f of n users (true values fixed):
    n q(1 − q)/(p − q)² + n f (1 − p − q)/(p − q)."""
    p, q = reference_grr_probabilities(k, epsilon)
    return n * q * (1 - q) / (p - q) ** 2 + n * f * (1 - p - q) / (p - q)


#: An ε whose e^ε overflows a double (the largest is e^709.78), which the notebook's ε > 0 allows:
#: to double precision p = 1 and q = 0 (q < e^-800 < 1e-347), so GRR reports every true value, the
#: estimate is the counts and the variance 0 (issue 35: p = e^ε/(e^ε + k - 1) gave inf/inf = nan or an
#: OverflowError at full marks). A correct implementation meets these exactly (a keep rule u > 1 - p
#: could miss a draw u = 0: probability 1,000 · 2^-53 < 1e-12 for the 1,000 reports).
LARGE_EPSILON = 800.0


def _large_epsilon_failure(what_zh: str, what_en: str) -> AssertionError:
    return _fail(
        f"{what_zh}ε = {LARGE_EPSILON:g} 是合法的隐私预算（有限且 > 0），这时 p = 1、q = 0（在双精度下），但 e^ε 超出了浮点数的"
        f"范围（e^800 = inf，inf/inf = nan；math.exp(800) 抛出 OverflowError）。请把 p、q 写成只含 e^(-ε) 的形式："
        f"p = 1/(1 + (k-1) e^(-ε))，q = e^(-ε)/(1 + (k-1) e^(-ε))。",
        f"{what_en}ε = {LARGE_EPSILON:g} is a legal budget (finite and > 0); there p = 1 and q = 0 to double precision, "
        f"but e^ε overflows a float (e^800 = inf, inf/inf = nan; math.exp(800) raises OverflowError). Write p and q "
        f"with e^(-ε) only: p = 1/(1 + (k-1) e^(-ε)), q = e^(-ε)/(1 + (k-1) e^(-ε)).",
        diagnosis="local_frequency.large_epsilon_overflow",
    )


def _at_large_epsilon(call: Callable[[], Any]):
    """``call()``; a crash of the student's code (an OverflowError) is reported with the overflow-safe form."""
    try:
        return call()
    except CheckFailure as failure:
        if failure.diagnosis != "common.crashed":
            raise
        raise _large_epsilon_failure(failure.zh + "。", failure.en + ". ") from None


def _reference_perturb(values: np.ndarray, k: int, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    p, _ = reference_grr_probabilities(k, epsilon)
    keep = rng.random(values.shape) < p
    other = rng.integers(0, k - 1, size=values.shape)
    return np.where(keep, values, other + (other >= values))


def _reference_estimate(reports: np.ndarray, k: int, epsilon: float) -> np.ndarray:
    p, q = reference_grr_probabilities(k, epsilon)
    counts = np.apply_along_axis(np.bincount, -1, reports, minlength=k) if reports.ndim > 1 else np.bincount(reports, minlength=k)
    return (counts - reports.shape[-1] * q) / (p - q)


# --- calling student code (helpers.checks._call turns crashes into bilingual failures) ---


def _no_forbidden_sources(func: Callable) -> None:
    """No ``helpers`` (its reference GRR), no ``numpy.random`` globals, no ``random`` module.

    Every method of the generator passed as ``rng`` is allowed here
    (``rng.random``, ``rng.integers``, ``rng.choice``...).
    """
    # "helper: rng.integers" names a call inside a helper function: judge the last part
    found = [f for f in find_forbidden_calls(func) if not f.rsplit(": ", 1)[-1].startswith(_RNG_NAMES)]
    if found:
        name = getattr(func, "__name__", "function")
        listed = ", ".join(found)
        raise _fail(
            f"{name} 使用了不允许的随机数来源或现成的实现：{listed}。随机数只能来自传入的 rng（它的方法都可以用），也不能导入 helpers。",
            f"{name} uses a forbidden randomness source or ready-made implementation: {listed}. Randomness must come "
            f"from the rng you are given (any of its methods is fine), and helpers may not be imported.",
            diagnosis="common.forbidden_sampler",
        )


def _reports(out: Any, shape: tuple, k: int, args_text: str) -> np.ndarray:
    if not isinstance(out, np.ndarray) or out.shape != shape:
        raise _fail(
            f"grr_perturb({args_text}) 应返回形状为 {shape} 的 numpy 整数数组，实际返回 {type(out).__name__} {_short(out)}。",
            f"grr_perturb({args_text}) should return an integer numpy array of shape {shape}; it returned "
            f"{type(out).__name__} {_short(out)}.",
            diagnosis="local_frequency.wrong_output_type",
        )
    if not np.issubdtype(out.dtype, np.integer):
        raise _fail(
            f"grr_perturb 返回的 dtype 是 {out.dtype}，期望整数（例如 .astype(int)）。",
            f"grr_perturb returned dtype {out.dtype}; expected integers (e.g. .astype(int)).",
            diagnosis="local_frequency.not_integer",
        )
    if out.size and (out.min() < 0 or out.max() >= k):
        raise _fail(
            f"grr_perturb 返回了 0..{k - 1} 以外的值：{np.unique(out[(out < 0) | (out >= k)])[:10]}（k = {k}）。",
            f"grr_perturb returned values outside 0..{k - 1}: {np.unique(out[(out < 0) | (out >= k)])[:10]} (k = {k}).",
            diagnosis="local_frequency.value_out_of_range",
        )
    return out.astype(np.int64)


def _perturb(grr_perturb: Callable, values: np.ndarray, k: int, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """Call the student's ``grr_perturb`` in chunks of at most 50,000 values (arrays cross a process boundary)."""
    flat = values.ravel()
    pieces = []
    for start in range(0, flat.size, 50_000):
        chunk = np.ascontiguousarray(flat[start:start + 50_000], dtype=np.int64)
        out = _call(grr_perturb, chunk, k, epsilon, rng)
        pieces.append(_reports(out, chunk.shape, k, f"array of {chunk.size} values, {k}, {epsilon:g}, rng"))
    return np.concatenate(pieces).reshape(values.shape)


# --- grr_perturb -----------------------------------------------------------------------


def check_grr_perturb_basics(grr_perturb: Callable, seed: int | None = None) -> None:
    """Shapes and dtype (1-D, 2-D, list input), ValueErrors, and rng discipline. Deterministic."""
    name = "check_grr_perturb_basics"
    seed = check_seed(name, seed)
    _no_forbidden_sources(grr_perturb)
    rng = np.random.default_rng(seed)
    for values, k in ((np.array([0, 3, 1, 2, 2]), 4), (np.array([[1, 0, 2], [2, 2, 0]]), 3), ([1, 0, 1, 1], 2)):
        out = _call(grr_perturb, values, k, 1.0, rng)
        _reports(out, np.shape(values), k, f"{_short(values)}, {k}, 1.0, rng")
    for args, zh, en in (
        ((np.array([0, 4, 1]), 4, 1.0, rng), "取值必须在 0..k-1 内", "values must lie in 0..k-1"),
        ((np.array([0, -1, 1]), 4, 1.0, rng), "取值必须在 0..k-1 内", "values must lie in 0..k-1"),
        ((np.array([0, 1, 1]), 1, 1.0, rng), "k 至少为 2", "k must be at least 2"),
        ((np.array([0, 1, 1]), 4, 0.0, rng), "ε 必须 > 0", "epsilon must be > 0"),
        ((np.array([0, 1, 1]), 4, float("nan"), rng), "ε 必须是有限正数", "epsilon must be a finite number > 0"),
    ):
        _expect_value_error(grr_perturb, args, zh, en)
    values = np.arange(1000, dtype=np.int64) % 5
    out = _reports(_at_large_epsilon(lambda: _call(grr_perturb, values, 5, LARGE_EPSILON, rng)), values.shape, 5,
                   f"array of 1000 values, 5, {LARGE_EPSILON:g}, rng")
    changed = int(np.count_nonzero(out != values))
    if changed:
        raise _large_epsilon_failure(
            f"grr_perturb(1000 个取值, k = 5, ε = {LARGE_EPSILON:g}) 改动了 {changed} 个报告，而 p = 1 时每个报告都应是真实值。",
            f"grr_perturb(1000 values, k = 5, ε = {LARGE_EPSILON:g}) changed {changed} reports, but with p = 1 every "
            f"report is the true value. ")
    # rng discipline: same seed ⇒ same reports; other seed ⇒ other reports; the generator is used.
    values = np.arange(600, dtype=np.int64) % 5
    outs = []
    for s in (seed, seed, seed + 1):
        gen = np.random.default_rng(s)
        before = gen.bit_generator.state["state"]["state"]
        outs.append(np.asarray(_call(grr_perturb, values, 5, 0.5, gen)))
        used = gen.bit_generator.state["state"]["state"] != before
        if not used:
            raise _fail(
                "grr_perturb 没有使用传入的 rng（调用后它的状态没有变化）。请用 rng 的方法产生随机数，不要用 np.random.* 或自己新建生成器。",
                "grr_perturb did not use the rng it was given (its state did not change). Draw your random numbers "
                "with the rng's methods, not np.random.* or a generator you create yourself.",
                diagnosis="common.rng_unused",
            )
    if not np.array_equal(outs[0], outs[1]):
        raise _fail(
            "grr_perturb：相同种子的 rng 给出了不同的输出。随机性必须全部来自传入的 rng。",
            "grr_perturb: two rngs with the same seed gave different outputs. All randomness must come from the rng you are given.",
            diagnosis="common.rng_not_reproducible",
        )
    if np.array_equal(outs[0], outs[2]):
        raise _fail(
            "grr_perturb：不同种子的 rng 给出了完全相同的输出。是否在函数里固定了种子？",
            "grr_perturb: rngs with different seeds gave identical outputs. Is a seed fixed inside the function?",
            diagnosis="common.rng_seed_fixed",
        )
    _passed("check_grr_perturb_basics",
            "整数报告，形状 (5,)、(2, 3)、(4,)；取值 4、-1，k = 1，ε = 0、nan 抛出 ValueError；ε = 800 时报告真实值；"
            "相同种子得到相同报告，不同种子得到不同报告",
            "integer reports of shapes (5,), (2, 3), (4,); ValueError for values 4, -1, k = 1, ε = 0, nan; the true "
            "values at ε = 800; same seed -> same reports, other seed -> other reports")


def _diagnose_grr(freq: np.ndarray, v: int, k: int, epsilon: float) -> tuple[str, str, str]:
    p, q = reference_grr_probabilities(k, epsilon)
    kept = float(freq[v])
    others = np.delete(freq, v)
    binary = 1.0 / (1.0 + math.exp(-epsilon))
    p_all = p + (1 - p) / k
    if kept in (0.0, 1.0):
        return ("所有用户一起保留或一起替换：每个用户需要自己的随机数", "all users were kept or replaced together: each user needs her own random numbers",
                "local_frequency.one_coin_for_all")
    if np.any(others < 0.25 * q):
        return ("有的值从不（或很少）被报告为“其他值”：抽取其他值时是否漏掉了某个值（下标错位）？",
                "some value is never (or rarely) reported as an 'other' value: does the draw of the other value miss "
                "one value (an index off by one)?", "local_frequency.other_value_missed")
    if abs(kept - binary) < 0.01:
        return (f"保留真实值的频率 {kept:.3f} ≈ e^ε/(e^ε+1) = {binary:.3f}：这是 k = 2 时的概率，k 个取值时应使 p/q = e^ε",
                f"the true value is kept with frequency {kept:.3f} ≈ e^ε/(e^ε+1) = {binary:.3f}: that is the k = 2 "
                f"probability; with k values p/q must equal e^ε", "local_frequency.binary_p_for_k")
    if abs(kept - p_all) < 0.01:
        return (f"报告真实值的频率 {kept:.3f} ≈ p + (1-p)/k = {p_all:.3f}：替换值是从全部 k 个值中抽的（包括真实值），应只从其他 k-1 个值中抽",
                f"the true value is reported with frequency {kept:.3f} ≈ p + (1-p)/k = {p_all:.3f}: the replacement is "
                f"drawn from all k values (the true one included); draw it from the k-1 other values only",
                "local_frequency.replacement_includes_truth")
    for factor in (0.5, 2.0):
        if abs(kept - reference_grr_probabilities(k, factor * epsilon)[0]) < 0.01:
            return (f"保留真实值的频率 {kept:.3f} ≈ 用 {factor:g}ε 算出的 p：ε 多乘或多除了 2",
                    f"the true value is kept with frequency {kept:.3f}, the p of {factor:g}ε: ε multiplied or divided by 2",
                    "local_frequency.epsilon_factor_2")
    if abs(kept - math.exp(epsilon) / (math.exp(epsilon) + k)) < 0.01:
        return (f"保留真实值的频率 {kept:.3f} ≈ e^ε/(e^ε + k)：分母应为 e^ε + k - 1（p/q = e^ε）",
                f"the true value is kept with frequency {kept:.3f} ≈ e^ε/(e^ε + k): the denominator is e^ε + k - 1 "
                f"(so that p/q = e^ε)", "local_frequency.denominator_off_by_one")
    if float(np.max(others) - np.min(others)) > 0.05:
        return ("其他值的频率差别很大：替换值应在其他 k-1 个值中均匀抽取", "the other values have very different frequencies: "
                "the replacement must be uniform over the k-1 other values", "local_frequency.replacement_not_uniform")
    return (f"保留真实值的频率 {kept:.3f}，期望 p = {p:.3f}（每个其他值 q = {q:.3f}）",
            f"the true value is kept with frequency {kept:.3f}; expected p = {p:.3f} (q = {q:.3f} for each other value)",
            "local_frequency.keep_rate_wrong")


def check_grr_perturb_distribution(grr_perturb: Callable, seed: int | None = None, *, k: int = 4,
                                   epsilon: float = 1.0, n: int = 40_000) -> None:
    """Chi-square goodness of fit of the reports of users holding 0 and of users holding k − 1.

    ``n`` users hold value 0 and ``n`` hold value k − 1, in one shuffled
    array. Each group's report frequencies are tested against p for its own
    value and q for each other value, at level ``ALPHA / 2`` (k − 1 degrees
    of freedom; every expected count ≥ n·q ≫ 5): false-failure probability
    ≤ ``ALPHA`` = 1e-6 in total.
    """
    name = "check_grr_perturb_distribution"
    seed = check_seed(name + repr((k, epsilon, n)), seed)
    rng = np.random.default_rng(seed)
    values = np.repeat(np.array([0, k - 1], dtype=np.int64), n)
    values = values[np.random.default_rng(seed ^ 0x5EED).permutation(values.size)]
    out = _perturb(grr_perturb, values, k, epsilon, rng)
    p, q = reference_grr_probabilities(k, epsilon)
    texts = []
    for v in (0, k - 1):
        counts = np.bincount(out[values == v], minlength=k)
        expected = np.full(k, q * n)
        expected[v] = p * n
        result = chi_square_test(counts, expected)
        texts.append(f"users holding {v}: chi-square = {result.statistic:.1f}, p = {result.pvalue:.3g}")
        if result.pvalue < ALPHA / 2:
            freq = counts / n
            zh, en, mistake = _diagnose_grr(freq, v, k, epsilon)
            raise _fail(
                f"grr_perturb：持有 {v} 的 {n} 个用户的报告频率为 {np.round(freq, 4)}，期望 {np.round(expected / n, 4)}"
                f"（k = {k}，ε = {epsilon:g}；卡方 = {result.statistic:.1f}，p = {result.pvalue:.2g} < {ALPHA / 2:g}，seed = {seed}；"
                f"正确实现被误判的概率 ≤ {ALPHA:g}）。可能的错误：{zh}。",
                f"grr_perturb: the reports of {n} users holding {v} have frequencies {np.round(freq, 4)}; expected "
                f"{np.round(expected / n, 4)} (k = {k}, ε = {epsilon:g}; chi-square = {result.statistic:.1f}, "
                f"p = {result.pvalue:.2g} < {ALPHA / 2:g}, seed = {seed}; a correct implementation fails with probability "
                f"<= {ALPHA:g}). Likely mistake: {en}.",
                diagnosis=mistake,
            )
    _say(name, seed, f"k = {k}, ε = {epsilon:g}: " + "; ".join(texts) + " -> OK",
         zh=f"k = {k}，ε = {epsilon:g}：每个取值的报告分布都与 k 元随机响应相符（卡方检验）")


def check_grr_perturb_privacy(grr_perturb: Callable, seed: int | None = None, *, k: int = 4, epsilon: float = 1.0,
                              pair: tuple[int, int] = (0, 1), n_select: int = 20_000, n_final: int = 200_000) -> None:
    """ε-LDP audit: a lower bound on ε from the reports of two users with different values.

    :func:`helpers.audit.epsilon_lower_bound` with confidence 1 − ``ALPHA``:
    it chooses an event on a first batch (sets of reports ordered by their
    likelihood ratio, both directions), then bounds P[M(v) ∈ S] / P[M(v') ∈ S]
    from below on a fresh batch with Clopper–Pearson. A correct ε-LDP
    mechanism gets a bound above ε with probability at most ``ALPHA`` = 1e-6.
    """
    name = "check_grr_perturb_privacy"
    seed = check_seed(name + repr((k, epsilon, pair)), seed)
    rng = np.random.default_rng(seed)

    def sampler(value, generator, size):
        return _perturb(grr_perturb, np.full(size, value, dtype=np.int64), k, epsilon, generator)

    result = epsilon_lower_bound(None, pair[0], pair[1], rng, sampler=sampler, n_select=n_select, n_final=n_final,
                                 confidence=1 - ALPHA, claimed_epsilon=epsilon, events="discrete")
    text = (f"k = {k}, claimed ε = {epsilon:g}, users holding {pair[0]} vs {pair[1]}: ε >= {result.epsilon:.3f} "
            f"(confidence 1 - {ALPHA:g}; event {result.event}: {result.k1}/{result.n} vs {result.k2}/{result.n})")
    zh = f"审计测得 ε ≥ {result.epsilon:.3f}，不超过声称的 ε = {epsilon:g}（持有 {pair[0]} 与 {pair[1]} 的用户）"
    if result.violates():
        raise _fail(
            f"grr_perturb 不满足 ε = {epsilon:g} 的本地化差分隐私：审计给出 ε 的下界 {result.epsilon:.3f} > {epsilon:g}"
            f"（k = {k}；持有 {pair[0]} 与持有 {pair[1]} 的用户，事件 {result.event}：{result.k1}/{result.n} 对 {result.k2}/{result.n}；"
            f"置信度 1 - {ALPHA:g}，seed = {seed}：正确实现被误判的概率 ≤ {ALPHA:g}）。对任意两个真实值 v、v' 和任意报告 y，"
            f"必须有 P[y | v] ≤ e^ε P[y | v']：检查保留概率 p 与其他值的概率 q 之比是否恰为 e^ε，以及替换值是否只从其他 k-1 个值中均匀抽取。",
            f"grr_perturb is not ε-LDP for ε = {epsilon:g}: the audit proves ε >= {result.epsilon:.3f} > {epsilon:g} "
            f"(k = {k}; users holding {pair[0]} vs {pair[1]}, event {result.event}: {result.k1}/{result.n} vs "
            f"{result.k2}/{result.n}; confidence 1 - {ALPHA:g}, seed = {seed}: a correct implementation fails with "
            f"probability <= {ALPHA:g}). For any two true values v, v' and any report y, P[y | v] <= e^ε P[y | v'] must "
            f"hold: check that the keep probability p and the probability q of each other value have ratio exactly e^ε, "
            f"and that the replacement is drawn uniformly from the k-1 other values only.",
            diagnosis="local_frequency.ldp_epsilon_exceeded",
        )
    _say(name, seed, text + " -> OK", zh=zh)


# --- grr_estimate ----------------------------------------------------------------------


def _estimate(grr_estimate: Callable, reports: np.ndarray, k: int, epsilon: float, *made) -> np.ndarray:
    out = made[0] if made else _call(grr_estimate, reports, k, epsilon)  # made: what a batch's call returned
    try:
        arr = np.asarray(out, dtype=float)
    except (TypeError, ValueError):
        arr = None
    if arr is None or arr.shape != (k,):
        raise _fail(
            f"grr_estimate(reports, {k}, {epsilon:g}) 应返回长度为 k = {k} 的数组（每个取值一个估计人数），实际返回 {type(out).__name__} {_short(out)}。"
            f"（某个取值没有人报告时也要有它的估计：例如 np.bincount(..., minlength=k)。）",
            f"grr_estimate(reports, {k}, {epsilon:g}) should return an array of length k = {k} (one estimated count "
            f"per value); it returned {type(out).__name__} {_short(out)}. (A value nobody reported still needs its "
            f"estimate: e.g. np.bincount(..., minlength=k).)",
            diagnosis="local_frequency.estimate_wrong_length",
        )
    return arr


def _reports_with_counts(counts: list[int], seed: int) -> np.ndarray:
    reports = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    return reports[np.random.default_rng(seed).permutation(reports.size)]


#: (counts of reports per value, k, e^ε, true counts the unbiased estimator must return exactly).
#: The counts equal their expectations exactly, so any unbiased (affine) estimator returns the truth.
_EXACT_CASES = (
    ((200, 150, 150, 100), 4, 3.0, (300.0, 150.0, 150.0, 0.0)),
    ((80, 120, 200, 200), 4, 3.0, (-60.0, 60.0, 300.0, 300.0)),
    ((6, 14), 2, 4.0, (10 / 3, 50 / 3)),          # the textbook's 20 people, p = 0.8: 3.3 and 16.7
)
_HIDDEN_CASES = (
    ((30, 40, 50, 60, 20), 5, 2.0, None),
    ((7, 0, 0), 3, 1.5, None),
    ((500, 100, 100, 100, 100, 100), 6, 10.0, None),
)


def _estimate_diagnosis(got: np.ndarray, counts: np.ndarray, k: int, epsilon: float) -> tuple[str, str, str]:
    p, q = reference_grr_probabilities(k, epsilon)
    n = counts.sum()
    truth = (counts - n * q) / (p - q)
    if np.allclose(got, truth / n, rtol=1e-6, atol=1e-12):
        return ("返回了比例而不是人数（忘了乘 n）", "returned fractions instead of counts (forgot to multiply by n)",
                "local_frequency.returned_fractions")
    if np.allclose(got, np.maximum(truth, 0), rtol=1e-6, atol=1e-9) or (np.all(got >= 0) and np.any(truth < 0)):
        return ("把负的估计截成了 0：截断后的估计有偏（期望大于真实人数）；本作业要求无偏估计，负数要保留",
                "negative estimates were clipped to 0: the clipped estimator is biased upwards; this assignment asks for "
                "the unbiased one, so keep negative values", "local_frequency.clipped_negative")
    pb = 1.0 / (1.0 + math.exp(-epsilon))
    if np.allclose(got, (counts - n * (1 - pb)) / (2 * pb - 1), rtol=1e-6):
        return ("用了二值随机响应的 p、1-p：k 个取值时 q 不是 1-p", "used binary randomized response's p and 1-p: with k values q is not 1-p",
                "local_frequency.binary_q")
    if np.allclose(got, counts / p, rtol=1e-6):
        return ("只除以了 p，没有减去其他用户误报到这个值的 n·q", "divided by p but did not subtract the n·q reports that other users send to this value",
                "local_frequency.no_q_subtraction")
    return ("E[C(v)] = n_v p + (n - n_v) q，解出 n_v", "E[C(v)] = n_v p + (n - n_v) q: solve for n_v",
            "local_frequency.estimate_formula_wrong")


def _check_exact(grr_estimate: Callable, cases) -> None:
    for counts, k, e_eps, truth in cases:
        epsilon = math.log(e_eps)
        counts_arr = np.array(counts)
        reports = _reports_with_counts(list(counts), 17 + k)
        got = _estimate(grr_estimate, reports, k, epsilon)
        p, q = reference_grr_probabilities(k, epsilon)
        expected = (counts_arr - counts_arr.sum() * q) / (p - q) if truth is None else np.array(truth)
        if not np.allclose(got, expected, rtol=1e-9, atol=1e-7):
            zh, en, mistake = _estimate_diagnosis(got, counts_arr, k, epsilon)
            raise _fail(
                f"grr_estimate：k = {k}，ε = ln {e_eps:g}，各值的报告数 {list(counts)}（n = {counts_arr.sum()}）时返回 {np.round(got, 4)}，"
                f"期望 {np.round(expected, 4)}。这些报告数恰好等于它们的期望，所以无偏估计必须给出这组真实人数。可能的错误：{zh}。",
                f"grr_estimate: with k = {k}, ε = ln {e_eps:g} and report counts {list(counts)} (n = {counts_arr.sum()}) it "
                f"returned {np.round(got, 4)}; expected {np.round(expected, 4)}. These counts equal their expectations "
                f"exactly, so an unbiased estimator must return these true counts. Likely mistake: {en}.",
                diagnosis=mistake,
            )


def check_grr_estimate_values(grr_estimate: Callable, hidden: bool = False) -> None:
    """Exact values on report sets whose counts equal their expectation (deterministic).

    ε = ln 3, k = 4 gives p = 1/2, q = 1/6: 600 users of whom 300, 150, 150
    and 0 hold the four values report them 200, 150, 150, 100 times in
    expectation. The second case needs a negative estimate (−60), the third
    is the textbook's 20 people at p = 0.8 (k = 2). ``hidden=True`` adds
    three more cases (k = 5, 3, 6; e^ε = 2, 1.5, 10).
    """
    _check_exact(grr_estimate, _HIDDEN_CASES if hidden else _EXACT_CASES)
    counts = [3, 0, 5] if hidden else [4, 1, 0, 2]
    got = _at_large_epsilon(lambda: _estimate(grr_estimate, _reports_with_counts(counts, 5), len(counts), LARGE_EPSILON))
    if not np.array_equal(got, np.asarray(counts, dtype=float)):
        raise _large_epsilon_failure(
            f"grr_estimate：ε = {LARGE_EPSILON:g}、各值的报告数 {counts} 时返回 {np.round(got, 4)}，期望就是报告数 {counts}（p = 1，q = 0）。",
            f"grr_estimate: with ε = {LARGE_EPSILON:g} and report counts {counts} it returned {np.round(got, 4)}; "
            f"expected the counts themselves, {counts} (p = 1, q = 0). ")
    shown = ("k = 5, 3, 6" if hidden else "k = 4 (ε = ln 3, one estimate −60) and the textbook's k = 2, p = 0.8") \
        + f"; the counts at ε = {LARGE_EPSILON:g}"
    _passed("check_grr_estimate_values", "各用例的精确值都正确", f"exact values for {shown}")


def check_grr_estimate_unbiased(grr_estimate: Callable, seed: int | None = None, *, k: int = 5, epsilon: float = 0.8,
                                n: int = 1_000, runs: int = 600) -> None:
    """Mean of ``runs`` estimates from simulated reports against the true counts.

    Reports are simulated with the reference GRR; each component's mean is
    z-tested with the exact variance of the unbiased estimator,
    |z| <= 6 (two-sided normal tail 2e-9 per component; with k components
    and the normal approximation of a mean of 600 estimates, each a sum of
    1,000 independent bounded terms, the false-failure probability stays
    far below ``ALPHA`` = 1e-6).
    """
    name = "check_grr_estimate_unbiased"
    seed = check_seed(name + repr((k, epsilon, n, runs)), seed)
    rng = np.random.default_rng(seed)
    fractions = np.linspace(2.0, 0.0, k)
    fractions /= fractions.sum()
    true_counts = np.floor(fractions * n).astype(int)
    true_counts[0] += n - true_counts.sum()
    values = np.repeat(np.arange(k, dtype=np.int64), true_counts)
    estimates = np.empty((runs, k))
    batch = [_reference_perturb(values, k, epsilon, rng) for _ in range(runs)]  # the judge's draws, as in a loop
    outs, fail = _call_batch(grr_estimate, [(reports, k, epsilon) for reports in batch])  # 1 round trip, not 600
    for r, out in enumerate(outs):
        estimates[r] = _estimate(grr_estimate, batch[r], k, epsilon, out)
    fail()
    mean = estimates.mean(axis=0)
    sd = np.array([math.sqrt(reference_grr_variance(n, k, epsilon, c / n) / runs) for c in true_counts])
    z = (mean - true_counts) / sd
    text = (f"{runs} runs of n = {n} users, k = {k}, ε = {epsilon:g}: mean estimates {np.round(mean, 1)} vs true counts "
            f"{true_counts.tolist()}, max |z| = {np.max(np.abs(z)):.2f} (limit 6)")
    zh = f"{runs} 次运行的平均估计与真实计数 {true_counts.tolist()} 相符（最大 |z| = {np.max(np.abs(z)):.2f}，上限 6）"
    if np.max(np.abs(z)) > 6:
        raise _fail(
            f"grr_estimate 有偏：{runs} 次模拟（每次 {n} 个用户，k = {k}，ε = {epsilon:g}）的平均估计 {np.round(mean, 1)}，"
            f"真实人数 {true_counts.tolist()}，最大 |z| = {np.max(np.abs(z)):.1f} > 6（seed = {seed}；正确实现被误判的概率 ≤ {ALPHA:g}）。"
            f"无偏的意思是 E[估计] = 真实人数：从 E[C(v)] 出发解出 n_v，不要截断或四舍五入。",
            f"grr_estimate is biased: over {runs} simulations ({n} users, k = {k}, ε = {epsilon:g}) the mean estimates "
            f"are {np.round(mean, 1)} for true counts {true_counts.tolist()}, max |z| = {np.max(np.abs(z)):.1f} > 6 "
            f"(seed = {seed}; a correct implementation fails with probability <= {ALPHA:g}). Unbiased means "
            f"E[estimate] = true count: start from E[C(v)] and solve for n_v; do not clip or round.",
            diagnosis="local_frequency.estimate_biased",
        )
    _say(name, seed, text + " -> OK", zh=zh)


# --- grr_variance ------------------------------------------------------------------------


def _variance_value(grr_variance: Callable, n: int, k: int, epsilon: float, f: float) -> float:
    got = _call(grr_variance, n, k, epsilon, f)
    try:
        value = float(got)
    except (TypeError, ValueError):
        raise _fail(
            f"grr_variance({n}, {k}, {epsilon:g}, {f:g}) 应返回一个数，实际返回 {type(got).__name__}。",
            f"grr_variance({n}, {k}, {epsilon:g}, {f:g}) should return a number; it returned {type(got).__name__}.",
            diagnosis="local_frequency.not_a_number",
        ) from None
    return value


def _variance_diagnosis(got: float, n: int, k: int, epsilon: float, f: float) -> tuple[str, str, str]:
    p, q = reference_grr_probabilities(k, epsilon)
    truth = reference_grr_variance(n, k, epsilon, f)
    if math.isclose(got, n * q * (1 - q) / (p - q) ** 2, rel_tol=1e-6) and f > 0:
        return ("只有 n q(1-q)/(p-q)² 这一项：持有该值的 n·f 个用户以概率 p（而不是 q）报告它，方差与 f 有关",
                "only the term n q(1-q)/(p-q)^2: the n·f users holding the value report it with probability p, not q, "
                "so the variance depends on f", "local_frequency.variance_missing_f_term")
    if math.isclose(got, truth / n ** 2, rel_tol=1e-6):
        return ("这是比例的方差（除以了 n²），要的是人数的方差", "that is the variance of the fraction (divided by n^2); the count's variance is asked",
                "local_frequency.variance_of_fraction")
    pb = 1.0 / (1.0 + math.exp(-epsilon))
    if math.isclose(got, n * pb * (1 - pb) / (2 * pb - 1) ** 2, rel_tol=1e-6):
        return ("用了二值随机响应（k = 2）的方差公式", "used the variance of binary randomized response (k = 2)",
                "local_frequency.variance_binary_formula")
    return ("C(v) 是 n·f 个以 p、n(1-f) 个以 q 成功的独立伯努利变量之和；估计 = (C(v) - n q)/(p - q)",
            "C(v) is a sum of n·f independent Bernoulli(p) and n(1-f) Bernoulli(q) variables; estimate = (C(v) - n q)/(p - q)",
            "local_frequency.variance_formula_wrong")


def check_grr_variance_simulation(grr_variance: Callable, seed: int | None = None, *, runs: int = 4_000) -> None:
    """The student's variance against the sample variance of ``runs`` simulated estimates.

    Two settings (k = 4, ε = 1, n = 500, f = 0.5; k = 8, ε = 2, n = 400, f = 0.1).
    The estimates come from the reference GRR and the unbiased estimator
    (so only the formula is judged). Accepted when the sample variance is
    within 20% of the formula: the sample variance of 4,000 nearly normal
    values has a relative standard error of 2.2%, so 20% is 8.9 standard
    errors (false failure ≪ ``ALPHA``); the realistic mistakes are off by
    30% or more (forgotten f term, binary formula, fraction instead of count).
    """
    name = "check_grr_variance_simulation"
    seed = check_seed(name + repr(runs), seed)
    rng = np.random.default_rng(seed)
    texts = []
    for n, k, epsilon, f, v in ((500, 4, 1.0, 0.5, 0), (400, 8, 2.0, 0.1, 3)):
        holders = int(round(f * n))
        values = np.full(n, (v + 1) % k, dtype=np.int64)
        values[:holders] = v
        reports = _reference_perturb(np.broadcast_to(values, (runs, n)).copy(), k, epsilon, rng)
        p, q = reference_grr_probabilities(k, epsilon)
        estimates = ((reports == v).sum(axis=1) - n * q) / (p - q)
        simulated = float(estimates.var(ddof=1))
        got = _variance_value(grr_variance, n, k, epsilon, f)
        texts.append(f"n = {n}, k = {k}, ε = {epsilon:g}, f = {f:g}: yours {got:.1f}, simulated {simulated:.1f}")
        if not (math.isfinite(got) and got > 0 and abs(simulated / got - 1) <= 0.2):
            zh, en, mistake = _variance_diagnosis(got, n, k, epsilon, f)
            raise _fail(
                f"grr_variance({n}, {k}, {epsilon:g}, {f:g}) = {got:.4g}，但 {runs} 次模拟的估计值的样本方差是 {simulated:.4g}"
                f"（相差超过 20%；样本方差的相对标准误约 2.2%，seed = {seed}）。可能的错误：{zh}。",
                f"grr_variance({n}, {k}, {epsilon:g}, {f:g}) = {got:.4g}, but the sample variance of {runs} simulated "
                f"estimates is {simulated:.4g} (more than 20% apart; the sample variance's relative standard error is "
                f"about 2.2%, seed = {seed}). Likely mistake: {en}.",
                diagnosis=mistake,
            )
    _check_large_epsilon_variance(grr_variance)
    _say(name, seed, "; ".join(texts) + f"; 0 at ε = {LARGE_EPSILON:g} -> OK",
         zh=f"你的方差公式与模拟的方差相符；ε = {LARGE_EPSILON:g} 时方差为 0")


def _check_large_epsilon_variance(grr_variance: Callable) -> None:
    """At ε = 800 the estimate is the count itself: variance 0 (the exact one is below 1e-340)."""
    for n, k, f in ((1000, 4, 0.3), (50, 2, 1.0)):
        got = _at_large_epsilon(lambda: _variance_value(grr_variance, n, k, LARGE_EPSILON, f))
        if not 0.0 <= got <= 1e-300:
            raise _large_epsilon_failure(
                f"grr_variance({n}, {k}, {LARGE_EPSILON:g}, {f:g}) = {got:g}，期望 0（p = 1，q = 0：估计就是计数本身）。",
                f"grr_variance({n}, {k}, {LARGE_EPSILON:g}, {f:g}) = {got:g}; expected 0 (p = 1, q = 0: the "
                f"estimate is the count itself). ")


def check_grr_variance_values(grr_variance: Callable) -> None:
    """Exact values (relative 1e-9) against n q(1−q)/(p−q)² + n f (1−p−q)/(p−q), f = 0 and f = 1 included."""
    for n, k, epsilon, f in ((1000, 4, 1.0, 0.25), (10, 2, math.log(4), 0.8), (5000, 16, 3.0, 0.0),
                             (250, 3, 0.5, 1.0), (2, 7, 6.0, 0.5)):
        got = _variance_value(grr_variance, n, k, epsilon, f)
        expected = reference_grr_variance(n, k, epsilon, f)
        if not math.isclose(got, expected, rel_tol=1e-9):
            zh, en, mistake = _variance_diagnosis(got, n, k, epsilon, f)
            raise _fail(
                f"grr_variance({n}, {k}, {epsilon:.4g}, {f:g}) = {got:.6g}，期望 {expected:.6g}。可能的错误：{zh}。",
                f"grr_variance({n}, {k}, {epsilon:.4g}, {f:g}) = {got:.6g}; expected {expected:.6g}. Likely mistake: {en}.",
                diagnosis=mistake,
            )
    _passed("check_grr_variance_values", "k = 2、3、4、7、16 与 f = 0、0.25、0.5、0.8、1 的精确值正确",
            "exact values for k = 2, 3, 4, 7, 16 and f = 0, 0.25, 0.5, 0.8, 1")


# --- the asymmetric two-dice scheme -------------------------------------------------------


def _asymmetric_value(asymmetric_correct: Callable, n, n1, a, b) -> float:
    got = _call(asymmetric_correct, n, n1, a, b)
    try:
        return float(got)
    except (TypeError, ValueError):
        raise _fail(
            f"asymmetric_correct({n}, {n1}, {a:.4g}, {b:.4g}) 应返回一个数，实际返回 {type(got).__name__}。",
            f"asymmetric_correct({n}, {n1}, {a:.4g}, {b:.4g}) should return a number; it returned {type(got).__name__}.",
            diagnosis="local_frequency.not_a_number",
        ) from None


def _asymmetric_diagnosis(got: float, n, n1, a, b) -> tuple[str, str, str]:
    truth = (n1 - n * b) / (a - b)
    if not 0 <= truth <= n and math.isclose(got, max(0.0, min(n, truth)), rel_tol=1e-9, abs_tol=1e-12):
        return ("把估计截断到了 [0, n]：截断后有偏；本作业要求无偏估计", "the estimate was clipped to [0, n]: clipping "
                "biases it; the unbiased one is asked", "local_frequency.clipped_negative")
    if math.isclose(got, ((a - 1) * n + n1) / (2 * a - 1), rel_tol=1e-9):
        return ("用了对称随机响应的校正公式（把 a 当作 p）：这里 P(1|0) = b 不等于 1 - a",
                "used the symmetric correction with p = a: here P(1|0) = b is not 1 - a",
                "local_frequency.asymmetric_as_symmetric")
    if math.isclose(got, n1 / a, rel_tol=1e-9):
        return ("只除以了 a，没有减去真实为 0 的人以概率 b 报告的 1", "divided by a without subtracting the 1s reported (with probability b) by people whose truth is 0",
                "local_frequency.asymmetric_no_b_subtraction")
    if math.isclose(got, (n1 - n * b) / (a - b) / n, rel_tol=1e-9):
        return "返回了比例而不是人数", "returned the fraction instead of the count", "local_frequency.returned_fractions"
    if math.isclose(got, max(0.0, min(n, (n1 - n * b) / (a - b))), rel_tol=1e-9):
        return ("把估计截断到了 [0, n]：截断后有偏；本作业要求无偏估计", "the estimate was clipped to [0, n]: clipping biases it; the unbiased one is asked",
                "local_frequency.clipped_negative")
    return "E[n1] = N a + (n - N) b，解出 N", "E[n1] = N a + (n - N) b: solve for N", "local_frequency.asymmetric_formula_wrong"


def check_asymmetric_correct_values(asymmetric_correct: Callable, hidden: bool = False) -> None:
    """Exact values of the unbiased correction N = (n1 − n b)/(a − b).

    Visible: the two-dice scheme of §6.4 (a = 13/36, b = 1/36) with 360
    people: 43 reported 1s give 99, 10 give 0 and 0 give −30 (unbiased, so
    negative is possible). Hidden: a = 0.7, b = 0.2; a < b; and the symmetric
    case a = p, b = 1 − p, where it must agree with the textbook's
    ((p − 1) n + n1)/(2p − 1).
    """
    a_dice, b_dice = 13 / 36, 1 / 36
    cases = ((360, 43, a_dice, b_dice), (360, 10, a_dice, b_dice), (360, 0, a_dice, b_dice), (36, 13, a_dice, b_dice))
    if hidden:
        cases = ((1000, 450, 0.7, 0.2), (500, 100, 0.1, 0.6), (20, 14, 0.8, 0.2), (20, 6, 0.8, 0.2), (1, 1, 1.0, 0.0))
    for n, n1, a, b in cases:
        got = _asymmetric_value(asymmetric_correct, n, n1, a, b)
        expected = (n1 - n * b) / (a - b)
        if not math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-9):
            zh, en, mistake = _asymmetric_diagnosis(got, n, n1, a, b)
            raise _fail(
                f"asymmetric_correct(n = {n}, n1 = {n1}, a = {a:.4g}, b = {b:.4g}) = {got:.6g}，期望 {expected:.6g}。可能的错误：{zh}。",
                f"asymmetric_correct(n = {n}, n1 = {n1}, a = {a:.4g}, b = {b:.4g}) = {got:.6g}; expected {expected:.6g}. "
                f"Likely mistake: {en}.",
                diagnosis=mistake,
            )
    shown = "a = 0.7/b = 0.2, a < b, the symmetric case p = 0.8, a = 1/b = 0" if hidden else "the two-dice scheme (a = 13/36, b = 1/36): 43 -> 99, 10 -> 0, 0 -> -30"
    _passed("check_asymmetric_correct_values", "各用例的精确值都正确", f"exact values for {shown}")


def check_asymmetric_correct_invalid(asymmetric_correct: Callable) -> None:
    """ValueError for a = b (no information), a or b outside [0, 1] or NaN, n1 < 0 or n1 > n."""
    for args, zh, en in (
        ((100, 30, 0.4, 0.4), "a = b 时报告与真实答案无关，无法校正", "with a = b the reports carry no information"),
        ((100, 30, 1.2, 0.1), "a 必须在 [0, 1] 内", "a must be in [0, 1]"),
        ((100, 30, 0.5, -0.1), "b 必须在 [0, 1] 内", "b must be in [0, 1]"),
        ((100, 30, float("nan"), 0.1), "a 必须是有限数", "a must be a finite number"),
        ((100, 101, 0.5, 0.1), "n1 不能大于 n", "n1 cannot exceed n"),
        ((100, -1, 0.5, 0.1), "n1 不能为负", "n1 cannot be negative"),
    ):
        _expect_value_error(asymmetric_correct, args, zh, en)
    _passed("check_asymmetric_correct_invalid", "a = b、a = 1.2、b = -0.1、a = nan、n1 = 101 > n、n1 = -1 都抛出 ValueError",
            "ValueError for a = b, a = 1.2, b = -0.1, a = nan, n1 = 101 > n, n1 = -1")
