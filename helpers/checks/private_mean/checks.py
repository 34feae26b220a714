"""The private_mean checks of clip, the sensitivities and private_mean (basics, accuracy)."""

from __future__ import annotations

import functools
import math
from typing import Any, Callable

import numpy as np

from helpers.checks.core import _fail, _passed, _say, _short, ALPHA, check_seed
from helpers.checks.private_mean._shared import (_call, _expect_value_error, _is_real, _private_mean_once,
                                                 _private_mean_repeated, ACCURACY_FACTOR, RELATIONS)
from helpers.checks.private_mean.simulator import accuracy_dataset, best_split, sensitivities_from_definition


# --- clip ----------------------------------------------------------------------


def check_clip_values(clip: Callable) -> None:
    """clip of a list and of an array: values, float dtype, length, input not modified. Deterministic."""
    cases = (
        ([-5.0, 0.5, 3.0, 10.0, 2.0, 0.0], 0.0, 2.0),
        (np.array([-30.0, -19.5, -1.0, -20.0]), -20.0, -19.0),
        (np.array([1, 7, -3], dtype=np.int64), -2.0, 5.0),
        ([], 0.0, 1.0),
    )
    for values, lower, upper in cases:
        before = np.array(values, dtype=float, copy=True)
        arg = values.copy() if isinstance(values, np.ndarray) else list(values)
        out = _call(clip, arg, lower, upper, name="clip", share=True)
        expected = np.clip(before, lower, upper)
        shown = f"clip({_short(values)}, {lower:g}, {upper:g})"
        if not isinstance(out, np.ndarray) or out.shape != expected.shape:
            raise _fail(
                f"{shown} 应返回长度为 {expected.size} 的 numpy 数组，实际返回 {type(out).__name__} {_short(out)}。",
                f"{shown} should return a numpy array of length {expected.size}; it returned "
                f"{type(out).__name__} {_short(out)}.",
                diagnosis="private_mean.clip_return_type_wrong",
            )
        if not np.issubdtype(out.dtype, np.floating):
            raise _fail(f"{shown} 返回的 dtype 是 {out.dtype}，期望浮点数。",
                        f"{shown} returned dtype {out.dtype}; expected floating-point numbers.",
                        diagnosis="private_mean.clip_return_type_wrong")
        if not np.array_equal(out, expected):
            raise _fail(
                f"{shown} = {np.round(out, 6).tolist()}，期望 {expected.tolist()}：小于 lower 的值变成 lower，大于 upper 的值变成 upper，其余不变。",
                f"{shown} = {np.round(out, 6).tolist()}; expected {expected.tolist()}: values below lower become "
                f"lower, values above upper become upper, the others stay.",
                diagnosis="private_mean.clip_values_wrong",
            )
        if isinstance(arg, np.ndarray) and not np.array_equal(arg.astype(float), before):
            raise _fail(f"{shown} 修改了传入的数组；请返回一个新数组。",
                        f"{shown} modified the array it was given; return a new array instead.",
                        diagnosis="private_mean.clip_modifies_input")
    _passed("check_clip_values", "列表、数组、整数、空输入都正确", "lists, arrays, integers, empty input")


def check_clip_invalid(clip: Callable) -> None:
    """ValueError for lower >= upper, NaN bounds and NaN values. Deterministic."""
    for args, zh, en in (
        (([1.0, 2.0], 3.0, 3.0), "lower 必须小于 upper", "lower must be < upper"),
        (([1.0, 2.0], 5.0, 1.0), "lower 必须小于 upper", "lower must be < upper"),
        (([1.0, 2.0], float("nan"), 1.0), "界必须是有限数", "bounds must be finite numbers"),
        (([1.0, 2.0], 0.0, float("inf")), "界必须是有限数", "bounds must be finite numbers"),
        (([1.0, float("nan")], 0.0, 1.0), "数据中不能有 NaN", "values must not contain NaN"),
    ):
        _expect_value_error(clip, args, zh, en)
    _passed("check_clip_invalid", "lower >= upper、边界为 nan / inf、数据含 nan 都抛出 ValueError",
            "ValueError for lower >= upper, nan / inf bounds, nan values")


# --- sensitivities -----------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def _number(out: Any, shown: str) -> float:
    if isinstance(out, np.ndarray) and out.shape == ():
        out = out[()]
    if not _is_real(out) or not math.isfinite(float(out)):
        raise _fail(f"{shown} 应返回一个有限的数，实际返回 {type(out).__name__} {_short(out)}。",
                    f"{shown} should return a finite number; it returned {type(out).__name__} {_short(out)}.",
                    diagnosis="private_mean.sensitivity_not_a_number")
    return float(out)


def check_sum_sensitivity_basics(sum_sensitivity: Callable) -> None:
    """A finite number >= 0 for both relations; ValueError for bad input. Does not check the values."""
    for lower, upper in ((0.0, 1.0), (-3.0, 5.0)):
        for relation in RELATIONS:
            shown = f"sum_sensitivity({lower:g}, {upper:g}, {relation!r})"
            value = _number(_call(sum_sensitivity, lower, upper, relation, name="sum_sensitivity"), shown)
            if value < 0:
                raise _fail(f"{shown} = {value:g}：灵敏度是距离的最大值，不能为负。",
                            f"{shown} = {value:g}: a sensitivity is a largest distance and cannot be negative.",
                            diagnosis="private_mean.sensitivity_negative")
    for args, zh, en in (
        ((0.0, 1.0, "swap"), "relation 只能是 'add_remove' 或 'replace'", "relation must be 'add_remove' or 'replace'"),
        ((2.0, 1.0, "add_remove"), "lower 必须小于 upper", "lower must be < upper"),
        ((1.0, 1.0, "replace"), "lower 必须小于 upper，相等也不行", "lower must be < upper, not equal"),
        ((float("nan"), 1.0, "replace"), "界必须是有限数", "bounds must be finite numbers"),
        ((0.0, float("inf"), "add_remove"), "界必须是有限数（无穷的界使灵敏度无穷大）",
         "bounds must be finite numbers (an infinite bound makes the sensitivity infinite)"),
        ((float("-inf"), 1.0, "replace"), "界必须是有限数", "bounds must be finite numbers"),
    ):
        _expect_value_error(sum_sensitivity, args, zh, en)
    _passed("check_sum_sensitivity_basics",
            "两种相邻关系下都返回 >= 0 的数；未知关系、lower >= upper（包括相等）、nan、±inf 的界抛出 ValueError"
            "（数值本身由隐藏测试检查）",
            "numbers >= 0 for both relations; ValueError for an unknown relation, lower >= upper (equal included), "
            "nan, ±inf bounds (the values themselves are checked by the hidden tests)")


#: (lower, upper) pairs of the exact test: ranges containing 0, on one side of it, touching it.
SUM_CASES = ((0.0, 1.0), (-1.0, 1.0), (-20.0, -19.0), (10.0, 50.0), (-7.0, 3.0), (-2.5, 0.0), (0.25, 4.0))


def _sum_sensitivity_mistake(wrong: list) -> str:
    """The diagnosis id of wrong sum sensitivities ``[(shown, got, expected, relation)]``."""
    other = {"add_remove": "replace", "replace": "add_remove"}
    swapped = all(math.isclose(got, sensitivities_from_definition(*_bounds(shown))[other[rel]][0], abs_tol=1e-12)
                  for shown, got, _, rel in wrong)
    if swapped:
        return "private_mean.sensitivity_wrong_relation"
    one_bound = all(rel == "add_remove" and any(math.isclose(got, v, abs_tol=1e-12) for v in _bounds(shown))
                    for shown, got, _, rel in wrong)
    return "private_mean.sum_sensitivity_one_bound" if one_bound else "private_mean.sum_sensitivity_wrong"


def _bounds(shown: str) -> tuple[float, float]:
    inner = shown[shown.index("(") + 1:].split(",")
    return float(inner[0]), float(inner[1])


def sum_sensitivity_mismatches(sum_sensitivity: Callable, ranges) -> list[tuple[str, float, float, str]]:
    """``(shown call, got, expected, relation)`` for each range and relation where ``sum_sensitivity``
    differs from Definition 6-2's enumeration by more than 1e-12 (the hidden check and the worked
    example share it)."""
    wrong = []
    for lower, upper in ranges:
        for relation in RELATIONS:
            shown = f"sum_sensitivity({lower:g}, {upper:g}, {relation!r})"
            got = _number(_call(sum_sensitivity, lower, upper, relation, name="sum_sensitivity"), shown)
            expected = sensitivities_from_definition(lower, upper)[relation][0]
            if not math.isclose(got, expected, rel_tol=1e-12, abs_tol=1e-12):
                wrong.append((shown, got, expected, relation))
    return wrong


def check_sum_sensitivity_values(sum_sensitivity: Callable) -> None:
    """Exact ℓ1 sensitivity of the clipped sum for both relations on ``SUM_CASES`` (1e-12). Deterministic."""
    wrong = sum_sensitivity_mismatches(sum_sensitivity, SUM_CASES)
    if wrong:
        shown, got, expected, relation = wrong[0]
        listed = "; ".join(f"{s} = {g:g} (expected {e:g})" for s, g, e, _ in wrong[:4])
        diagnosis = _sum_sensitivity_mistake(wrong)
        if relation == "add_remove":
            why_zh = ("增删一条记录时，截断后的和改变的正是这条记录截断后的值；它的绝对值最大是多少？"
                      "想一想整个区间都在 0 的一侧（例如 [-20, -19]）的情形。")
            why_en = ("adding or removing one record changes the clipped sum by that record's clipped value: how "
                      "large can its absolute value be? Think of a range entirely on one side of 0 (e.g. [-20, -19]).")
        else:
            why_zh = "替换一条记录时，和的改变是新旧两个截断值之差；它最大是多少？"
            why_en = "replacing one record changes the sum by the difference of two clipped values: how large can it be?"
        raise _fail(f"灵敏度不对（定义 6-2）：{listed}。{why_zh}",
                    f"wrong sensitivity (Definition 6-2): {listed}. Hint: {why_en}", diagnosis=diagnosis)
    _passed("check_sum_sensitivity_values", f"{len(SUM_CASES)} 个取值范围、两种相邻关系下的精确值正确",
            f"exact values on {len(SUM_CASES)} ranges, both relations")


def check_count_sensitivity_basics(count_sensitivity: Callable) -> None:
    """A finite number >= 0 for both relations; ValueError for an unknown relation. Does not check the values."""
    for relation in RELATIONS:
        shown = f"count_sensitivity({relation!r})"
        value = _number(_call(count_sensitivity, relation, name="count_sensitivity"), shown)
        if value < 0:
            raise _fail(f"{shown} = {value:g}：灵敏度不能为负。", f"{shown} = {value:g}: a sensitivity cannot be negative.",
                        diagnosis="private_mean.sensitivity_negative")
    for relation in ("add", "Replace", ""):
        _expect_value_error(count_sensitivity, (relation,), "relation 只能是 'add_remove' 或 'replace'",
                            "relation must be 'add_remove' or 'replace'")
    _passed("check_count_sensitivity_basics", "返回 >= 0 的数；未知关系抛出 ValueError（数值本身由隐藏测试检查）",
            "numbers >= 0; ValueError for an unknown relation (the values themselves are checked by the hidden tests)")


def check_count_sensitivity_values(count_sensitivity: Callable) -> None:
    """Exact ℓ1 sensitivity of the number of records for both relations. Deterministic."""
    for relation in RELATIONS:
        shown = f"count_sensitivity({relation!r})"
        got = _number(_call(count_sensitivity, relation, name="count_sensitivity"), shown)
        expected = sensitivities_from_definition(0.0, 1.0)[relation][1]
        if got != expected:
            other = sensitivities_from_definition(0.0, 1.0)["add_remove" if relation == "replace" else "replace"][1]
            if got == other:
                diagnosis = "private_mean.sensitivity_wrong_relation"
            elif relation == "replace":
                diagnosis = "private_mean.count_sensitivity_replace_counts_change"
            else:
                diagnosis = "private_mean.count_sensitivity_wrong"
            if relation == "replace":
                zh = "替换一条记录后，数据集的记录条数变了吗？"
                en = "after replacing one record, has the number of records changed?"
            else:
                zh = "增删一条记录，记录条数最多改变多少？"
                en = "adding or removing one record changes the number of records by how much at most?"
            raise _fail(f"{shown} = {got:g}，不对（定义 6-2）。提示：{zh}",
                        f"{shown} = {got:g} is wrong (Definition 6-2). Hint: {en}", diagnosis=diagnosis)
    _passed("check_count_sensitivity_values", "两种相邻关系下的值都精确", "both relations exact")


# --- private_mean: basics ---------------------------------------------------------


def check_private_mean_basics(private_mean: Callable) -> None:
    """A float in [lower, upper] for a list, an array and an empty dataset; ValueError for bad bounds and ε."""
    rng = np.random.default_rng(11)
    _private_mean_once(private_mean, [3.0, 7.5, 12.0, -1.0], 0.0, 10.0, 1.0, rng)
    _private_mean_once(private_mean, np.linspace(0.0, 10.0, 21), 0.0, 10.0, 0.5, rng)
    _private_mean_once(private_mean, [], 0.0, 10.0, 1.0, rng)
    for args, zh, en in (
        (([1.0, 2.0], 5.0, 5.0, 1.0, rng), "lower 必须小于 upper", "lower must be < upper"),
        (([1.0, 2.0], 6.0, 5.0, 1.0, rng), "lower 必须小于 upper", "lower must be < upper"),
        (([1.0, 2.0], 0.0, 5.0, 0.0, rng), "ε 必须 > 0", "epsilon must be > 0"),
        (([1.0, 2.0], 0.0, 5.0, -1.0, rng), "ε 必须 > 0", "epsilon must be > 0"),
    ):
        _expect_value_error(private_mean, args, zh, en)
    _passed("check_private_mean_basics",
            "列表、数组和空数据集都返回 [lower, upper] 内的 float；lower >= upper 与 ε <= 0 抛出 ValueError",
            "a float in [lower, upper] for a list, an array and an empty dataset; "
            "ValueError for lower >= upper and ε <= 0")


def check_private_mean_invalid(private_mean: Callable) -> None:
    """ValueError for NaN values, NaN / infinite bounds and NaN / infinite ε. Deterministic."""
    rng = np.random.default_rng(12)
    nan, inf = float("nan"), float("inf")
    for args, zh, en in (
        (([1.0, nan, 2.0], 0.0, 5.0, 1.0, rng), "数据中不能有 NaN", "values must not contain NaN"),
        (([1.0, 2.0], nan, 5.0, 1.0, rng), "界必须是有限数", "bounds must be finite numbers"),
        (([1.0, 2.0], 0.0, inf, 1.0, rng), "界必须是有限数", "bounds must be finite numbers"),
        (([1.0, 2.0], 0.0, 5.0, nan, rng), "ε 必须是有限正数", "epsilon must be a finite number > 0"),
        (([1.0, 2.0], 0.0, 5.0, inf, rng), "ε 必须是有限正数", "epsilon must be a finite number > 0"),
    ):
        _expect_value_error(private_mean, args, zh, en)
    _passed("check_private_mean_invalid", "数据含 nan、边界为 nan / inf、ε 为 nan / inf 都抛出 ValueError",
            "ValueError for nan values, nan / inf bounds, nan / inf ε")


#: Generator states tried by :func:`check_private_mean_rng` (the same one twice, then others until two differ).
_RNG_STATES = 32


def check_private_mean_rng(private_mean: Callable, seed: int | None = None) -> None:
    """Same generator state ⇒ same output; other state ⇒ other output; the call advances the generator.

    Deterministic: a correct mechanism gives equal outputs from equal
    states, and two different states give the same continuous output with
    probability 0.
    """
    name = "check_private_mean_rng"
    seed = check_seed(name, seed)
    values = list(np.linspace(0.0, 1.0, 50))
    outputs, advanced = [], []
    for s in (seed, seed, seed + 1, seed + 2):
        rng = np.random.Generator(np.random.PCG64(s))
        before = rng.bit_generator.state["state"]["state"]
        outputs.append(_private_mean_once(private_mean, values, 0.0, 1.0, 1.0, rng))
        advanced.append(rng.bit_generator.state["state"]["state"] != before)
    if not advanced[0]:
        raise _fail(
            "private_mean 没有使用传入的 rng（调用前后 rng 的状态没有变化）。噪声必须来自 rng，不能来自 np.random.*、random 模块或自己新建的生成器。",
            "private_mean did not use the rng it was given (the generator's state did not change). The noise must "
            "come from rng, not from np.random.*, the random module or a generator you create yourself.",
            diagnosis="private_mean.rng_not_used",
        )
    if outputs[0] != outputs[1]:
        raise _fail(
            f"private_mean：两个状态相同的 rng 给出了不同的结果（{outputs[0]!r} 与 {outputs[1]!r}）。有一部分随机性不是来自 rng"
            f"（np.random.*、random 模块、secrets、未固定种子的生成器……）；这样的噪声无法审计，也不符合规则。",
            f"private_mean: two generators in the same state gave different results ({outputs[0]!r} and "
            f"{outputs[1]!r}). Some randomness does not come from rng (np.random.*, the random module, secrets, an "
            f"unseeded generator...); such noise cannot be audited and breaks the rules.",
            diagnosis="private_mean.randomness_outside_rng",
        )
    # An over-noised but private split clips most outputs onto a bound (ε₁ = 0.005ε: about 88% of
    # them), so a few states can agree by chance: more states are asked until two results differ.
    # A correct mechanism whose outputs fall on one bound with probability <= 1/2 (the worst case: all
    # mass on the two bounds) gives one result in all 32 states with probability <= 2 × 2⁻³² ≈ 5e-10.
    extra = seed + 3
    while outputs[0] == outputs[2] == outputs[3] and len(outputs) < _RNG_STATES:
        rng = np.random.Generator(np.random.PCG64(extra))
        result = _private_mean_once(private_mean, values, 0.0, 1.0, 1.0, rng)
        if result != outputs[0]:
            break
        outputs.append(result)
        extra += 1
    if outputs[0] == outputs[2] == outputs[3] and len(outputs) >= _RNG_STATES:
        raise _fail(
            f"private_mean：{_RNG_STATES - 1} 个不同状态的 rng 给出了完全相同的结果。噪声是否来自一个固定种子的生成器，或者根本没有加噪声？",
            f"private_mean: generators in {_RNG_STATES - 1} different states gave exactly the same result. Does the noise come "
            "from a generator with a fixed seed, or is there no noise at all?",
            diagnosis="private_mean.noise_fixed_or_missing",
        )
    _say(name, seed, "same state -> same result, other states -> other results, rng advanced",
         zh="相同状态给出相同结果，不同状态给出不同结果，rng 向前推进")


def check_private_mean_accuracy(private_mean: Callable, seed: int | None = None, *, kind: str = "visible",
                                trials: int = 1000) -> None:
    """Median absolute error at most ``ACCURACY_FACTOR`` × that of the best split (exact binomial test).

    ``trials`` outputs on one dataset of :func:`accuracy_dataset` (drawn from
    the seed; ``kind`` "visible" or "hidden" only changes the seed), the
    truth being the mean of the clipped values. With
    r = 1.5 × (median |error| of the best split), K = #{|error| <= r} is
    Binomial(trials, p) with p >= 1/2 for every mechanism whose median
    error is at most r; the check fails when P(Bin(trials, 1/2) <= K) < 1e-6.
    False failure for such a mechanism: <= 1e-6.
    """
    from scipy.special import bdtr

    name = "check_private_mean_accuracy"
    seed = check_seed(name + kind, seed)
    values, lower, upper, epsilon = accuracy_dataset(seed)
    rho, q_best = best_split(tuple(values.tolist()), lower, upper, epsilon)
    truth = float(np.mean(np.clip(values, lower, upper)))
    radius = ACCURACY_FACTOR * q_best
    rng = np.random.Generator(np.random.PCG64(seed))
    errors = np.array(_private_mean_repeated(private_mean, values, lower, upper, epsilon, rng, trials)) - truth
    inside = int(np.sum(np.abs(errors) <= radius))
    pvalue = float(bdtr(inside, trials, 0.5))
    median = float(np.median(np.abs(errors)))
    text = (f"{trials} outputs on {values.size} values (range [{lower:g}, {upper:g}], clipped mean {truth:.4g}), "
            f"ε = {epsilon:g}: median |error| "
            f"{median:.4f}; best split ρ = {rho:.2f} has {q_best:.4f}; {inside}/{trials} within "
            f"{ACCURACY_FACTOR:g} × {q_best:.4f} = {radius:.4f}, binomial p = {pvalue:.3g}")
    if pvalue < ALPHA:
        bias = float(np.median(errors))
        if abs(bias) > 0.5 * median:
            diagnosis = "private_mean.mean_biased"
            hint_zh = f"误差的中位数是 {bias:+.4f}，结果有系统偏差：分子分母是否对应同一批截断后的数据？"
            hint_en = f"the median error is {bias:+.4f}: the result is biased. Do the numerator and denominator describe the same clipped data?"
        else:
            diagnosis = "private_mean.too_much_noise"
            hint_zh = "噪声太大：检查两个灵敏度，以及 ε 在和与计数之间的分配（任何一边分得太少都会让误差变大）。"
            hint_en = ("too much noise: check both sensitivities and how ε is split between the sum and the count "
                       "(giving either side too little makes the error large).")
        raise _fail(
            f"private_mean 不够准确（{values.size} 个值，区间 [{lower:g}, {upper:g}]，截断后的均值 {truth:.4g}，ε = {epsilon:g}）："
            f"{trials} 次输出的 |误差| 中位数为 {median:.4f}，最佳分配（ρ = {rho:.2f}）只有 {q_best:.4f}；"
            f"只有 {inside}/{trials} 次误差不超过 {radius:.4f}（{ACCURACY_FACTOR:g} 倍），二项检验 p = {pvalue:.2g} < {ALPHA:g}"
            f"（seed = {seed}；中位误差不超过 {ACCURACY_FACTOR:g} 倍的实现被误判的概率 ≤ {ALPHA:g}）。{hint_zh}",
            f"private_mean is not accurate enough ({values.size} values, range [{lower:g}, {upper:g}], clipped mean "
            f"{truth:.4g}, ε = {epsilon:g}): median |error| of {trials} outputs is {median:.4f}, the best split "
            f"(ρ = {rho:.2f}) achieves {q_best:.4f}; only {inside}/{trials} errors are within {radius:.4f} "
            f"({ACCURACY_FACTOR:g}×), binomial p = {pvalue:.2g} < {ALPHA:g} (seed = {seed}; an implementation whose "
            f"median error is within {ACCURACY_FACTOR:g}× fails with probability <= {ALPHA:g}). {hint_en}",
            diagnosis=diagnosis,
        )
    _say(name, seed, text + " -> OK",
         zh=f"{inside}/{trials} 个输出的误差在最优预算分配误差的 {ACCURACY_FACTOR:g} 倍以内（二项检验 p = {pvalue:.3g}）")
