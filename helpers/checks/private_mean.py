"""Checks behind the graded assignment ``source/private_mean`` (§6.2.1 sensitivity, §6.1.3 composition).

The student writes ``clip(values, lower, upper)``, the ℓ1 sensitivities
``sum_sensitivity(lower, upper, relation)`` and ``count_sensitivity(relation)``
for ``relation`` in {"add_remove", "replace"}, and an ε-DP mean under
add/remove neighbours, ``private_mean(values, lower, upper, epsilon, rng)``,
that spends ε₁ on a Laplace-noised clipped sum and ε₂ on a Laplace-noised
count (ε₁ + ε₂ = ε, split chosen by the student) and returns
``clip(noisy_sum / max(noisy_count, 1), lower, upper)``.

Like :mod:`helpers.checks`, every ``check_*`` returns ``None`` or raises
:class:`AssertionError` with a bilingual message, and calls the student's
functions only with plain data (floats, lists, float arrays) and
``numpy.random.Generator`` objects, so that it works unchanged when the
functions are proxies into a sandbox (trusted grading).

What is judged, and how
-----------------------
* **Sensitivities**, exactly (deterministic), against values computed from
  Definition 6-2 by enumerating neighbouring datasets
  (:func:`sensitivities_from_definition`), for both neighbour relations on
  ranges that contain 0, lie on one side of it, or touch it. (This module
  ships to students with the visible tests, so it states no formula.)
* **rng discipline** (deterministic): the same generator state gives the
  same output, another state another output, and the call advances the
  generator. Noise from ``np.random.*``, the ``random`` module, ``secrets``,
  a generator with a fixed seed or any other source than ``rng`` fails.
  Any method of ``rng`` may be used (``rng.laplace`` included): this
  assignment is about sensitivity and composition, not sampling.
* **Accuracy**: on a dataset drawn by :func:`accuracy_dataset` from the
  check's seed, a binomial test that the median absolute error is at most
  ``ACCURACY_FACTOR`` = 1.5 times that of the best split
  ε₁ = ρε, ε₂ = (1 - ρ)ε (ρ to 0.01, found by simulating the specified
  mechanism, :func:`best_split`). A mechanism whose median error is within the
  factor passes with probability at least 1 - 1e-6.
* **Privacy**: :func:`helpers.audit.epsilon_lower_bound` at confidence
  1 - 1e-6 on worst-case neighbouring datasets; the check fails when the
  lower bound on ε exceeds the claimed ε (a proven violation; a correct
  mechanism fails with probability at most 1e-6 per audit). The pairs:

  - ``composition``: range [-1, 1], d = 20 records at or below -1 (clipped
    mean = the lower bound), d' = d plus one record at 1000 (clipped to 1).
    Sum and count both push the mean of d' up, so the output carries the
    privacy loss of both releases (up to ε₁ + ε₂ in its tail when ε₂ <= ε₁,
    2ε₁ otherwise): spending ε on each release (2ε in total), releasing the
    exact count, or not clipping is caught; this audit is visible.
  - ``upper_bound_mean``: the mirror image of ``composition``, d = 20 records at or above 1
    (clipped mean = the upper bound) and d' = d plus a record at -1000. One
    noise draw reused for sum and count (equal split) gives a noise-free
    output when the mean equals the bound that defines the sensitivity: the
    composition pair (mean = lower) catches the sign convention
    ``S - aL, n + bL``, this one ``S + aL, n + bL``.
  - ``noise_scales`` (not a pair; :func:`noise_scale_bound`): three
    datasets drawn by :func:`accuracy_dataset`, 23,000 outputs each. For
    the specified mechanism the probability of a tail event {Y > y} is an
    exact function of the two Laplace scales (:func:`exceedance`), so the
    tails' frequencies (exact binomial tests) reject every split with
    ε₁ + ε₂ <= ε when the noise is too small for all of them. This is what
    catches an overspend the mean's privacy loss hides: a sum scale 1.5×
    too small (ε₁ = 0.75ε, ε₂ = 0.5ε) has a largest loss of the output
    below 0.97ε in every pair the DP audits tried, but is proven to spend
    at least 1.1ε here.
  - ``interior``: d drawn by :func:`accuracy_dataset`, the accuracy checks'
    distribution (range, ε, 50-200 values with outliers), d' = d plus a
    record beyond the bound farther from d's clipped mean: whatever a
    solution does on data like the accuracy checks' is audited.
  - ``one-sided range``: [-20, -19], d = [] vs d' = [-1000]. A sum
    sensitivity of ``upper - lower`` (= 1 instead of 20) or a missing clip
    is caught.
  - ``mostly negative range``: [-20, 1], d = [] vs d' = [-1000]. A sum
    sensitivity of ``upper`` (forgetting negative values) is caught.

  Every number of a pair other than ``interior`` (records and bounds) is
  multiplied by a scale in [1/2, 2] drawn from the check's seed (:func:`audit_config`), which leaves
  the privacy loss unchanged. Measured detection rates:
  ``tests/power/RESULTS.md``.

Cost: the outputs of one dataset are batches of calls
(:func:`helpers.checks.call_repeatedly`, one process crossing per 1,000 in trusted
grading). The privacy cell makes about 139,000 calls (178,000 before): 28,000 for the visible
``composition``, 69,000 for ``noise_scales``, 10,000 for ``upper_bound_mean``,
16,000 for ``interior``, 8,000 for each range pair; each accuracy check 1,000
(measured time: ``tests/power/RESULTS.md``).
"""

from __future__ import annotations

import functools
import math
from typing import Any, Callable

import numpy as np

from helpers.checks.core import (
    ALPHA,
    CheckFailure,
    _fail,
    _passed,
    _say,
    _short,
    check_seed,
)
from helpers.checks.core import _call as _core_call
from helpers.checks.core import _expect_value_error as _core_expect_value_error

__all__ = [
    "ACCURACY_FACTOR",
    "AUDITS",
    "RELATIONS",
    "check_clip_values",
    "check_clip_invalid",
    "check_sum_sensitivity_basics",
    "check_sum_sensitivity_values",
    "check_count_sensitivity_basics",
    "check_count_sensitivity_values",
    "check_private_mean_basics",
    "check_private_mean_invalid",
    "check_private_mean_rng",
    "check_private_mean_accuracy",
    "check_private_mean_privacy",
    "best_split",
    "sensitivities_from_definition",
]

RELATIONS = ("add_remove", "replace")
#: A correct mechanism may have a median absolute error up to this factor
#: times that of the best split (ε₁ = ρε, ε₂ = (1 - ρ)ε) and still passes.
ACCURACY_FACTOR = 1.5
#: Confidence of every privacy audit (false failure <= 1 - AUDIT_CONFIDENCE).
AUDIT_CONFIDENCE = 1.0 - ALPHA

#: The audits: range, neighbouring datasets (d' = d plus one record),
#: claimed ε, selection and final sample sizes per dataset, events searched.
#: ``d`` holds distinct values beyond one bound (clipped onto it, so its clipped mean equals that bound),
#: as data with outliers do: a solution cannot single the audit out by few distinct values.
AUDITS: dict[str, dict[str, Any]] = {
    "composition": dict(lower=-1.0, upper=1.0, d=[-1.0 - 0.037 * i for i in range(20)], extra=1000.0,
                        epsilon=3.0, n_select=2000, n_final=12000, events="auto"),
    "upper_bound_mean": dict(lower=-1.0, upper=1.0, d=[1.0 + 0.041 * i for i in range(20)], extra=-1000.0,
                             epsilon=3.0, n_select=1000, n_final=4000, events="auto"),
    # d drawn from accuracy_dataset (range, ε, values), d' = d + an outlier beyond the bound farther
    # from d's clipped mean
    "interior": dict(d=None, n_select=2000, n_final=6000, events="interval"),
    "one_sided_range": dict(lower=-20.0, upper=-19.0, d=[], extra=-1000.0, epsilon=1.0,
                            n_select=1000, n_final=3000, events="interval"),
    "mostly_negative_range": dict(lower=-20.0, upper=1.0, d=[], extra=-1000.0, epsilon=1.0,
                                  n_select=1000, n_final=3000, events="interval"),
}


def _named(failure: CheckFailure, diagnosis: str) -> CheckFailure:
    """``failure`` with ``diagnosis`` when the shared helper that raised it named no mistake."""
    if failure.diagnosis is None:
        failure.diagnosis = diagnosis
    return failure


#: Most calls of the student's private_mean in one batch (any check: accuracy, audit, probe).
BATCH = 1000


def _call(func: Callable, *args, **kwargs):
    """:func:`helpers.checks.core._call`, its failures named ``private_mean.not_implemented`` / ``.crashed``."""
    try:
        return _core_call(func, *args, **kwargs)
    except CheckFailure as failure:
        raise _named(failure, "private_mean.not_implemented" if "NotImplementedError" in failure.en
                     else "private_mean.crashed") from None


def _expect_value_error(func: Callable, args: tuple, why_zh: str, why_en: str) -> None:
    """:func:`helpers.checks.core._expect_value_error`, its failures named ``private_mean.validation_missing``."""
    try:
        _core_expect_value_error(func, args, why_zh, why_en)
    except CheckFailure as failure:
        raise _named(failure, "private_mean.validation_missing") from None


def _is_real(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))


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
def sensitivities_from_definition(lower: float, upper: float) -> dict[str, tuple[float, float]]:
    """ℓ1 global sensitivities of (clipped sum, number of records), computed from Definition 6-2.

    ``{relation: (sum sensitivity, count sensitivity)}``: the largest
    |f(D) - f(D')| over neighbouring datasets D, D' built from a grid of
    record values (both bounds, 0, and points inside and outside the range),
    in exact rational arithmetic. Datasets of at most one record suffice:
    both queries are sums of per-record terms, so the difference between
    neighbours depends only on the record added, removed or replaced. The
    expected answers of the checks come from here, not from a closed formula.
    """
    from fractions import Fraction

    lo, hi = Fraction(lower), Fraction(upper)
    grid = sorted({lo, hi, Fraction(0)} | {Fraction(x) for x in np.linspace(lower - 3.0, upper + 3.0, 13)})

    def clipped(x: Fraction) -> Fraction:
        return min(max(x, lo), hi)

    datasets = [()] + [(a,) for a in grid]
    best = {"add_remove": [Fraction(0), 0], "replace": [Fraction(0), 0]}
    for data in datasets:
        total, count = sum((clipped(x) for x in data), Fraction(0)), len(data)
        for x in grid:
            # add x (removing it is the same pair read backwards)
            best["add_remove"][0] = max(best["add_remove"][0], abs(total + clipped(x) - total))
            best["add_remove"][1] = max(best["add_remove"][1], abs((count + 1) - count))
            for i in range(count):  # replace record i by x: same number of records
                best["replace"][0] = max(best["replace"][0], abs(total - clipped(data[i]) + clipped(x) - total))
                best["replace"][1] = max(best["replace"][1], abs(count - count))
    return {k: (float(v[0]), float(v[1])) for k, v in best.items()}


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
        ((float("nan"), 1.0, "replace"), "界必须是有限数", "bounds must be finite numbers"),
    ):
        _expect_value_error(sum_sensitivity, args, zh, en)
    _passed("check_sum_sensitivity_basics",
            "两种相邻关系下都返回 >= 0 的数；未知关系、lower >= upper、nan 抛出 ValueError（数值本身由隐藏测试检查）",
            "numbers >= 0 for both relations; ValueError for an unknown relation, lower >= upper, nan "
            "(the values themselves are checked by the hidden tests)")


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


def check_sum_sensitivity_values(sum_sensitivity: Callable) -> None:
    """Exact ℓ1 sensitivity of the clipped sum for both relations on ``SUM_CASES`` (1e-12). Deterministic."""
    wrong = []
    for lower, upper in SUM_CASES:
        for relation in RELATIONS:
            shown = f"sum_sensitivity({lower:g}, {upper:g}, {relation!r})"
            got = _number(_call(sum_sensitivity, lower, upper, relation, name="sum_sensitivity"), shown)
            expected = sensitivities_from_definition(lower, upper)[relation][0]
            if not math.isclose(got, expected, rel_tol=1e-12, abs_tol=1e-12):
                wrong.append((shown, got, expected, relation))
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


def _mean_output(out: Any, lower: float, upper: float, shown: str) -> float:
    if isinstance(out, np.ndarray) and out.shape == ():
        out = out[()]
    if not _is_real(out):
        raise _fail(f"{shown} 应返回一个浮点数，实际返回 {type(out).__name__} {_short(out)}。",
                    f"{shown} should return a float; it returned {type(out).__name__} {_short(out)}.",
                    diagnosis="private_mean.mean_not_a_float")
    value = float(out)
    if not math.isfinite(value):
        raise _fail(f"{shown} 返回了 {value}。噪声计数可能 <= 0：按要求先把它提高到至少 1 再相除。",
                    f"{shown} returned {value}. The noisy count can be <= 0: raise it to at least 1 before dividing, "
                    f"as the task says.", diagnosis="private_mean.noisy_count_not_raised_to_one")
    if not lower <= value <= upper:
        raise _fail(f"{shown} = {value:g} 不在 [{lower:g}, {upper:g}] 内：按要求把结果截断到这个区间（后处理，不消耗隐私预算）。",
                    f"{shown} = {value:g} is outside [{lower:g}, {upper:g}]: clip the result to this range as the "
                    f"task says (post-processing costs no privacy).",
                    diagnosis="private_mean.result_not_clipped")
    return value


def _private_mean_once(private_mean: Callable, values: Any, lower: float, upper: float, epsilon: float,
                       rng: np.random.Generator) -> float:
    arg = values.copy() if isinstance(values, np.ndarray) else list(values)
    out = _call(private_mean, arg, lower, upper, epsilon, rng, name="private_mean")
    return _mean_output(out, lower, upper, f"private_mean({_short(values)}, {lower:g}, {upper:g}, {epsilon:g}, rng)")


def _private_mean_repeated(private_mean: Callable, values: Any, lower: float, upper: float, epsilon: float,
                           rng: np.random.Generator, n: int) -> list[float]:
    """``[_private_mean_once(...) for _ in range(n)]`` in batches of :data:`BATCH` calls (one round
    trip each in trusted grading). Every check batches alike, so that the size of a batch, which
    the student's process can see, never tells an audit from an accuracy test."""
    arg = values.copy() if isinstance(values, np.ndarray) else list(values)
    outs = []
    for start in range(0, n, BATCH):
        outs += _call(private_mean, arg, lower, upper, epsilon, rng, name="private_mean", repeat=min(BATCH, n - start))
    shown = f"private_mean({_short(values)}, {lower:g}, {upper:g}, {epsilon:g}, rng)"
    return [_mean_output(out, lower, upper, shown) for out in outs]


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
    if outputs[0] == outputs[2] == outputs[3]:
        raise _fail(
            "private_mean：三个不同状态的 rng 给出了完全相同的结果。噪声是否来自一个固定种子的生成器，或者根本没有加噪声？",
            "private_mean: generators in three different states gave exactly the same result. Does the noise come "
            "from a generator with a fixed seed, or is there no noise at all?",
            diagnosis="private_mean.noise_fixed_or_missing",
        )
    _say(name, seed, "same state -> same result, other states -> other results, rng advanced",
         zh="相同状态给出相同结果，不同状态给出不同结果，rng 向前推进")


# --- private_mean: accuracy -----------------------------------------------------------


def _reference_outputs(values: np.ndarray, lower: float, upper: float, epsilon: float, rho: np.ndarray,
                       noise_sum: np.ndarray, noise_count: np.ndarray) -> np.ndarray:
    """The specified mechanism for each split ρ (rows) from unit Laplace noises (columns)."""
    clipped = np.clip(values, lower, upper)
    b_sum = sensitivities_from_definition(lower, upper)["add_remove"][0] / (rho * epsilon)
    b_count = 1.0 / ((1.0 - rho) * epsilon)
    noisy_sum = clipped.sum() + b_sum[:, None] * noise_sum[None, :]
    noisy_count = clipped.size + b_count[:, None] * noise_count[None, :]
    return np.clip(noisy_sum / np.maximum(noisy_count, 1.0), lower, upper)


@functools.lru_cache(maxsize=8)
def best_split(values: tuple, lower: float, upper: float, epsilon: float, n: int = 100_000) -> tuple[float, float]:
    """(ρ, median |error|) of the best split ε₁ = ρε (sum), ε₂ = (1-ρ)ε (count), ρ on a grid of step 0.01.

    Simulated with common random numbers (fixed seed, ``n`` draws per ρ):
    a grid of step 0.05 on [0.05, 0.95], then step 0.01 around its best
    point (the median error is a smooth, single-dipped function of ρ). The
    median of ``n`` = 100,000 draws is within about ±0.5% of the true median,
    far inside the factor ``ACCURACY_FACTOR``. Cost: about 0.3 s.
    """
    data = np.asarray(values, dtype=float)
    rng = np.random.default_rng(20240621)
    noise_sum, noise_count = rng.laplace(size=n), rng.laplace(size=n)
    truth = float(np.mean(np.clip(data, lower, upper)))

    def medians(rho: np.ndarray) -> np.ndarray:
        out = _reference_outputs(data, lower, upper, epsilon, rho, noise_sum, noise_count)
        return np.median(np.abs(out - truth), axis=1)

    coarse = np.round(np.arange(1, 20) * 0.05, 2)
    centre = float(coarse[int(np.argmin(medians(coarse)))])
    fine = np.round(np.arange(max(0.01, centre - 0.04), min(0.99, centre + 0.04) + 1e-9, 0.01), 2)
    m = medians(fine)
    i = int(np.argmin(m))
    return float(fine[i]), float(m[i])


def accuracy_dataset(seed: int) -> tuple[np.ndarray, float, float, float]:
    """``(values, lower, upper, epsilon)`` drawn from the family shared by the accuracy checks and the
    ``interior`` audit.

    The range is c·[0, 1], c·[-1, 1] or c·[-1, 1/4] with c in [5, 20]; ε is
    0.5, 1 or 2; n in 50..200 values, normal around a mean placed 30-70% of
    the way through the range (away from 0 on c·[-1, 1], so that the count's
    noise matters and a lopsided split of ε is measurably less accurate),
    standard deviation 15% of the width, and about 5% outliers beyond either
    bound (distinct values, clipped onto it). Values rounded to 10⁻³.

    An audit whose datasets come from here cannot be told from an accuracy
    check by any property of one call: a solution that is private only on
    calls that look like an audit's is caught wherever it is not.
    """
    g = np.random.default_rng([seed, 31])
    c = float(np.round(10.0 * 2.0 ** g.uniform(-1.0, 1.0), 3))
    lower, upper = ((0.0, c), (-c, c), (-c, 0.25 * c))[int(g.integers(3))]
    epsilon = float(g.choice([0.5, 1.0, 2.0]))
    n = int(g.integers(50, 201))
    width = upper - lower
    if lower < 0 < upper and upper == -lower:
        mean = float(g.choice([-1.0, 1.0])) * c * g.uniform(0.3, 0.7)
    else:
        mean = lower + width * g.uniform(0.3, 0.7)
    values = mean + 0.15 * width * g.standard_normal(n)
    outliers = g.random(n) < 0.05
    beyond = np.where(g.random(n) < 0.5, lower - width * g.exponential(0.5, n), upper + width * g.exponential(0.5, n))
    values = np.where(outliers, beyond, values)
    return np.round(values, 3), lower, upper, epsilon


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


# --- private_mean: privacy audit --------------------------------------------------------

_AUDIT_HINTS = {
    "composition": (
        "这对相邻数据集上，和与计数的改变都把均值往同一个方向推，输出同时泄露两次发布的隐私。检查：两次发布的 ε 之和是否等于 ε（串行组合，定理 6-2）？"
        "计数是否也加了噪声？数据是否截断了？",
        "on this pair the sum and the count both push the mean the same way, so the output leaks through both "
        "releases. Check: do the two releases' ε add up to ε (sequential composition, Theorem 6-2)? Is the count "
        "noisy too? Are the values clipped?",
    ),
    "upper_bound_mean": (
        "这对相邻数据集中，d 的（截断后的）均值恰好等于上界。检查：和与计数是否各自抽取了独立的噪声（同一个噪声用两次时，输出可能完全没有噪声）？"
        "两次发布的 ε 之和是否等于 ε？计数是否也加了噪声？",
        "on this pair the (clipped) mean of d equals the upper bound. Check: do the sum and the count get "
        "independent noise draws (one draw used twice can leave the output with no noise at all)? Do the two "
        "releases' ε add up to ε? Is the count noisy too?",
    ),
    "noise_scales": (
        "这些数据与准确性测试的数据来自同一个分布。输出的尾部比任何满足 ε₁ + ε₂ = ε 的分配都要窄：两次发布的噪声太小。检查：两次发布的 ε 之和是否等于 ε"
        "（串行组合，定理 6-2）？和的噪声尺度是否为 Δ/ε₁、计数的噪声尺度是否为 1/ε₂？计数是否也加了噪声？和与计数是否各自抽取了独立的噪声？",
        "these data come from the same distribution as the accuracy tests'. The outputs' tails are narrower than "
        "any split with ε₁ + ε₂ = ε allows: the two releases' noise is too small. Check: do the two releases' ε "
        "add up to ε (sequential composition, Theorem 6-2)? Is the sum's noise scale Δ/ε₁ and the count's 1/ε₂? "
        "Is the count noisy too? Do the sum and the count get independent noise draws?",
    ),
    "interior": (
        "这对相邻数据集与准确性测试的数据来自同一个分布：d' 比 d 多一个超出区间的值。检查：是否在所有数据上都加了噪声（不能只在某些数据上）？"
        "两次发布的 ε 之和是否等于 ε？计数是否也加了噪声？数据是否截断了？",
        "this pair comes from the same distribution as the accuracy tests' data: d' has one more value, beyond "
        "the range. Check: is noise added on every dataset (not only on some)? Do the two releases' ε add up to "
        "ε? Is the count noisy too? Are the values clipped?",
    ),
    "one_sided_range": (
        "这个区间不包含 0。检查：增删一条记录时截断后的和最多改变多少（定义 6-2）？数据是否截断了？",
        "the range does not contain 0. Check: by how much can adding or removing one record change the "
        "clipped sum (Definition 6-2)? Are the values clipped?",
    ),
    "mostly_negative_range": (
        "这个区间的下界是负数，而且绝对值比上界大得多。检查：增删一条记录时截断后的和最多改变多少（定义 6-2）？数据是否截断了？",
        "the range has a negative lower bound much larger in size than the upper bound. Check: by how much can adding or removing one record change "
        "the clipped sum (Definition 6-2)? Are the values clipped?",
    ),
}


def audit_config(audit: str, seed: int) -> dict[str, Any]:
    """``AUDITS[audit]`` with every value and bound multiplied by a scale c in [1/2, 2] drawn from ``seed``.

    Scaling the data, the range and hence the sensitivity by c leaves the
    privacy loss of a correct mechanism (and of the usual mistakes)
    unchanged, but a solution cannot recognise the audit by fixed numbers
    read in this module: the autograder's per-run seed (``DP_COURSE_SEED``)
    changes c.
    """
    spec = dict(AUDITS[audit])
    if audit == "interior":
        values, lower, upper, epsilon = accuracy_dataset(int(np.random.default_rng([seed, 13]).integers(2**31)))
        width, centre = upper - lower, float(np.mean(np.clip(values, lower, upper)))
        extra = lower - 0.37 * width if centre > (lower + upper) / 2 else upper + 0.37 * width
        spec.update(scale=1.0, lower=lower, upper=upper, epsilon=epsilon, d=values.tolist(), extra=float(extra))
        return spec
    scale = float(np.round(2.0 ** np.random.default_rng([seed, 12]).uniform(-1.0, 1.0), 3))
    spec.update(scale=scale, lower=spec["lower"] * scale, upper=spec["upper"] * scale,
                d=[x * scale for x in spec["d"]], extra=spec["extra"] * scale)
    return spec


#: Outputs per batch of calls in an audit; batches of d and d' alternate.
AUDIT_CHUNK = 1000


def audit_private_mean(private_mean: Callable, audit: str, seed: int):
    """Run the audit named ``audit`` (a key of ``AUDITS``, drawn by :func:`audit_config`); return the AuditResult.

    All n_select + n_final outputs of d and of d' are drawn first, in
    alternating batches of at most ``AUDIT_CHUNK`` calls, and each dataset's
    outputs are shuffled (by the check's generator) before the auditor splits
    them into its selection and final samples. For a stateless mechanism this
    changes nothing (the outputs are i.i.d.); a solution that behaves
    differently in its first calls of a dataset, or once it has seen many,
    leaves the same share of such outputs in both samples.
    """
    from helpers.audit import epsilon_lower_bound

    if audit == "noise_scales":  # not a pair: a NoiseScaleResult (ε₁ + ε₂ in units of ε, claim 1)
        return noise_scale_bound(functools.partial(_repeated_array, private_mean), seed)
    spec = audit_config(audit, seed)
    lower, upper, epsilon = spec["lower"], spec["upper"], spec["epsilon"]
    d = list(spec["d"])
    d_prime = d + [spec["extra"]]
    total = spec["n_select"] + spec["n_final"]
    rng = np.random.Generator(np.random.PCG64(seed))
    pools: dict[int, list[float]] = {0: [], 1: []}
    while len(pools[1]) < total:
        size = min(AUDIT_CHUNK, total - len(pools[1]))
        for key, data in ((0, d), (1, d_prime)):
            pools[key] += _private_mean_repeated(private_mean, data, lower, upper, epsilon, rng, size)
    shuffled = {key: list(rng.permutation(np.array(pool))) for key, pool in pools.items()}

    def sampler(data, _rng, size):
        pool = shuffled[0 if data is d else 1]
        out, pool[:size] = np.array(pool[:size]), []
        return out

    return epsilon_lower_bound(None, d, d_prime, rng, sampler=sampler,
                               n_select=spec["n_select"], n_final=spec["n_final"], confidence=AUDIT_CONFIDENCE,
                               events=spec["events"], claimed_epsilon=epsilon)


def check_private_mean_privacy(private_mean: Callable, seed: int | None = None, *,
                               audit: str = "mostly_negative_range") -> None:
    """Empirical privacy audit (:mod:`helpers.audit`) on the worst-case pair ``AUDITS[audit]``.

    Fails when the Clopper–Pearson lower bound on ε (confidence 1 - 1e-6)
    exceeds the claimed ε. An ε-DP mechanism fails with probability at
    most 1e-6. Calls of ``private_mean``: 2 (n_select + n_final), from
    8,000 to 68,000 (``AUDITS``), plus about 10,000 to name the mistake
    when the audit fails.
    """
    name = "check_private_mean_privacy"
    if audit not in AUDITS and audit != "noise_scales":
        raise ValueError(f"{name}: audit must be one of {sorted(AUDITS) + ['noise_scales']}; got {audit!r}")
    seed = check_seed(name + audit, seed)
    if audit == "noise_scales":
        _check_noise_scales(private_mean, seed)
        return
    spec = audit_config(audit, seed)
    result = audit_private_mean(private_mean, audit, seed)
    k = len(spec["d"])
    where = ""
    if k:
        clipped = np.clip(spec["d"], spec["lower"], spec["upper"])
        where = f" from {min(spec['d']):.6g} to {max(spec['d']):.6g} (clipped mean {np.mean(clipped):.6g})"
    pair = (f"[{spec['lower']:.6g}, {spec['upper']:.6g}], ε = {spec['epsilon']:g}: d = {k} record(s){where}"
            f", d' = d + [{spec['extra']:.6g}]")
    text = (f"audit {pair}: ε >= {result.epsilon:.3f} (event {result.event}, {result.k1}/{result.n} vs "
            f"{result.k2}/{result.n}, confidence {AUDIT_CONFIDENCE:.6f})")
    if result.violates():
        hint_zh, hint_en = _AUDIT_HINTS[audit]
        diagnosis = _privacy_mistake(private_mean, audit, seed)
        raise _fail(
            f"隐私审计失败：private_mean 声称满足 ε = {spec['epsilon']:g} 的差分隐私，但在相邻数据集 {pair} 上，"
            f"事件 {result.event} 的概率为 {result.k1}/{result.n} 对 {result.k2}/{result.n}，"
            f"以 1 - 10⁻⁶ 的置信度证明 ε ≥ {result.epsilon:.3f} > {spec['epsilon']:g}（seed = {seed}；"
            f"真正满足 ε-差分隐私的实现被误判的概率 ≤ {ALPHA:g}）。{hint_zh}",
            f"privacy audit failed: private_mean claims ε = {spec['epsilon']:g}-DP, but on the neighbouring datasets "
            f"{pair} the event {result.event} has frequencies {result.k1}/{result.n} vs {result.k2}/{result.n}, which "
            f"proves ε >= {result.epsilon:.3f} > {spec['epsilon']:g} with confidence 1 - 1e-6 (seed = {seed}; an "
            f"ε-DP implementation fails with probability <= {ALPHA:g}). {hint_en}",
            diagnosis=diagnosis,
        )
    _say(name, seed, text + f" <= claimed {spec['epsilon']:g} -> OK",
         zh=f"审计测得 ε ≥ {result.epsilon:.3f}，不超过声称的 ε = {spec['epsilon']:g}")


#: Likely mistake behind a failed range audit when no probe of :func:`_privacy_mistake` names another:
#: Δ = upper - lower is the sum's sensitivity under replacement; Δ = |upper| forgets the negative bound.
_RANGE_MISTAKES = {"one_sided_range": "private_mean.sensitivity_wrong_relation",
                   "mostly_negative_range": "private_mean.sum_sensitivity_one_bound"}


def _privacy_mistake(private_mean: Callable, audit: str, seed: int) -> str:
    """The diagnosis id of a *proven* violation, from three small probes (about 10,000 calls).

    The audit has already decided the grade; the probes only name the likely
    mistake, so that a class report can group submissions by it:

    0. no noise (on some data), or noise from a fixed seed: 50 outputs on one
       record, or on 21 distinct values, that are equal or spread by < 10⁻⁹ Δ;
    1. values not clipped: ε = 10⁶ (noise below 10⁻⁵ of the range), 19
       records at 0 and one at 1000·Δ in [-Δ, Δ]: the clipped mean is Δ/20,
       an unclipped sum gives Δ (the result clipped);
    2. one noise draw reused for sum and count: with every record beyond a
       bound, independent noises leave the output strictly inside the range
       about half of the time; one reused draw (equal split) leaves it on the
       bound, up to rounding (> 90% of 1,000 outputs within 10⁻⁹ of it);
    3. exact count published: one record at Δ/2 in [-Δ, Δ], ε = 2: with the
       exact count (denominator 1) the output is the clipped Laplace noisy sum,
       below Δ/2 with probability exactly 1/2; a noisy denominator above 1
       pulls outputs towards 0, so P(output < Δ/2) ≈ 0.6-0.75 for the usual
       splits. Called exact when the share is below 0.54 (4,000 outputs: 5
       standard errors above 1/2).
    Otherwise a failed composition-type audit means a budget overspent
    (``private_mean.budget_split_wrong``); a failed range audit, the sum's
    sensitivity (``_RANGE_MISTAKES``).
    """
    rng = np.random.Generator(np.random.PCG64([seed, 99]))
    delta = 3.0
    try:
        for records in ([delta / 2], list(np.linspace(-delta / 2, delta / 2, 21))):
            if len(set(_private_mean_repeated(private_mean, records, -delta, delta, 2.0, rng, 50))) == 1 \
                    or np.ptp(_private_mean_repeated(private_mean, records, -delta, delta, 2.0, rng, 50)) < 1e-9 * delta:
                return "private_mean.noise_fixed_or_missing"
        probe = _private_mean_repeated(private_mean, [0.0] * 19 + [1000.0 * delta], -delta, delta, 1e6, rng, 20)
        if np.median(probe) > 0.5 * delta:
            return "private_mean.values_not_clipped"
        for records, bound in (([delta + 0.1 * i for i in range(20)], delta),
                               ([-delta - 0.1 * i for i in range(20)], -delta)):
            outs = np.array(_private_mean_repeated(private_mean, records, -delta, delta, 3.0, rng, 1000))
            if np.mean(np.isclose(outs, bound, rtol=1e-9, atol=0.0)) > 0.9:  # reused noise: on the bound up to rounding
                return "private_mean.noise_reused"
        if audit in _RANGE_MISTAKES:
            return _RANGE_MISTAKES[audit]
        outs = np.array(_private_mean_repeated(private_mean, [delta / 2], -delta, delta, 2.0, rng, 4000))
        if np.mean(outs < delta / 2) < 0.54:
            return "private_mean.exact_count_published"
    except AssertionError:  # a probe's output was malformed: keep the audit's verdict, name no probe
        return _RANGE_MISTAKES.get(audit, "private_mean.budget_split_wrong")
    return "private_mean.budget_split_wrong"


# --- private_mean: the two releases' noise scales ------------------------------------------------


def _integral_of_exp(c: np.ndarray, k: np.ndarray, p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """∫_p^q exp(c + k·l) dl for p <= q (q may be +inf, then k < 0), the exponent <= 0 on [p, q]."""
    from scipy.special import exprel

    length = q - p
    finite = np.isfinite(q)
    with np.errstate(all="ignore"):
        safe_length = np.where(finite, length, 0.0)
        from_p = np.exp(c + k * p) * np.where(finite, safe_length * exprel(k * safe_length),
                                              -1.0 / np.where(k < 0, k, -1.0))
        from_q = np.exp(c + k * np.where(finite, q, p)) * safe_length * exprel(-k * safe_length)
    return np.where(length > 0, np.where((k > 0) & finite, from_q, from_p), 0.0)


def exceedance(y: float, total: float, count: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """P(Y > y) for Y = (total + a·L₁) / max(count + b·L₂, 1), L₁, L₂ independent standard Laplace.

    The specified mechanism before its final clip (§6.1.3): ``total`` and
    ``count`` are the clipped sum and the number of records, a = Δ/ε₁ and
    b = 1/ε₂ the two releases' Laplace scales (arrays, broadcast). With
    D = max(count + b·L₂, 1) > 0, Y > y ⟺ a·L₁ > y·D - total, so

        P(Y > y) = E[Q(y·max(count + b·L₂, 1) - total)],  Q(t) = P(a·L₁ > t),

    an integral of piecewise exponentials in L₂, computed exactly (the
    pieces split where L₂ = 0, where y·D - total = 0 and where D reaches 1).
    For y strictly inside (lower, upper) the final clip does not change the
    event. Exact to rounding (checked against 2·10⁶ simulated outputs in
    ``tests/test_private_mean.py``).
    """
    a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    t0 = y * count - total
    beta = y * b
    lstar = (1.0 - count) / b  # L₂ below this: D = 1

    def q_tail(t: np.ndarray) -> np.ndarray:
        return np.where(t >= 0, 0.5 * np.exp(-np.abs(t) / a), 1.0 - 0.5 * np.exp(-np.abs(t) / a))

    # P(L₂ < lstar), the mass where max(count + b·L₂, 1) = 1 (lstar > 0 only for an empty dataset)
    floor_mass = np.where(lstar <= 0, 0.5 * np.exp(np.minimum(lstar, 0.0)), 1.0 - 0.5 * np.exp(-np.maximum(lstar, 0.0)))
    out = floor_mass * q_tail(np.full_like(a, y - total))
    with np.errstate(divide="ignore", invalid="ignore"):
        l0 = np.where(beta != 0, -t0 / beta, np.inf)
    x1 = np.maximum(np.minimum(0.0, l0), lstar)
    x2 = np.maximum(np.maximum(0.0, l0), lstar)
    for p, q in ((lstar, x1), (x1, x2), (x2, np.full_like(a, np.inf))):
        mid = np.where(np.isfinite(q), 0.5 * (p + np.where(np.isfinite(q), q, 0.0)), p + 1.0)
        s1 = np.where(mid >= 0, 1.0, -1.0)  # density ½e^{-|l|} = ½e^{-s1·l}
        above = t0 + beta * mid >= 0
        pos = 0.25 * _integral_of_exp(-t0 / a, -beta / a - s1, p, q)
        neg = 0.5 * _integral_of_exp(np.zeros_like(a), -s1, p, q) - 0.25 * _integral_of_exp(t0 / a, beta / a - s1, p, q)
        out = out + np.where(above, pos, neg)
    return np.clip(out, 0.0, 1.0)


def _null_splits(scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Fractions (ε₁/ε, ε₂/ε) covering {ε₁ + ε₂ <= scale·ε}: the boundary, and a grid of the inside.

    Boundary: 'corners' (u_{i+1}, scale - u_i) of a grid u of step scale/500, each a hair above the
    budget and, on its piece of the boundary, the least noisy in both releases; inside: a log grid
    from 10⁻⁴ (where a tail probability need not grow with the noise: huge noise piles outputs on
    the bounds). That a corner stands for its whole piece of the boundary rests on each tested tail
    probability being monotone in each noise scale there: checked numerically (5,435 event pairs over
    the audit's datasets, an independent review), not proven.
    """
    u = np.linspace(0.0, scale, 501)
    corner1, corner2 = u[1:], scale - u[:-1]
    g = np.geomspace(1e-4, scale, 48)
    g1, g2 = np.meshgrid(g, g)
    inside = g1 + g2 <= scale
    return np.concatenate([corner1, g1[inside]]), np.concatenate([corner2, g2[inside]])


#: Noise-scale audit: datasets (drawn like the accuracy checks'), outputs per dataset for choosing the
#: events and for the test, candidate tail levels, events tested per dataset.
NOISE_AUDIT = dict(datasets=3, n_select=3000, n_final=20000,
                   levels=(0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3), events=2)


class NoiseScaleResult:
    """Outcome of :func:`noise_scale_bound`: ``epsilon`` is a lower bound on ε₁ + ε₂ (valid with
    probability >= ``confidence`` for the specified form of the mechanism), ``claimed_epsilon`` the ε of
    the call; ``details`` the per-dataset events and counts (for messages)."""

    def __init__(self, epsilon: float, claimed_epsilon: float, confidence: float, details: list[dict]):
        self.epsilon, self.claimed_epsilon, self.confidence, self.details = epsilon, claimed_epsilon, confidence, details

    def violates(self) -> bool:
        return self.epsilon > self.claimed_epsilon


def _dataset_noise_test(outputs_select: np.ndarray, draw_final: Callable[[int], np.ndarray], values: np.ndarray,
                        lower: float, upper: float, epsilon: float, alpha: float) -> dict:
    """One dataset of :func:`noise_scale_bound`: events chosen on ``outputs_select``, tested on fresh outputs.

    Returns ``{"bound": largest s such that every split with ε₁ + ε₂ <= s·ε is rejected, "events": ...}``.
    """
    from scipy.special import bdtr
    from scipy.stats import norm

    spec = NOISE_AUDIT
    clipped = np.clip(values, lower, upper)
    total, count = float(clipped.sum()), int(clipped.size)
    delta = max(abs(lower), abs(upper))
    # candidate events: lower tails {Y < y} and upper tails {Y > y} at quantiles of the selection sample
    candidates = []
    for level in spec["levels"]:
        for upper_tail in (False, True):
            y = float(np.quantile(outputs_select, 1.0 - level if upper_tail else level))
            if lower < y < upper:
                candidates.append((y, upper_tail))
    candidates = sorted(set(candidates))
    if not candidates:
        return {"bound": 0.0, "events": []}

    def probabilities(u1: np.ndarray, u2: np.ndarray) -> np.ndarray:
        a, b = delta / (u1 * epsilon), 1.0 / (u2 * epsilon)
        rows = []
        for y, upper_tail in candidates:
            p = exceedance(y, total, count, a, b)
            rows.append(p if upper_tail else 1.0 - p)
        return np.array(rows)  # candidates × splits

    n = spec["n_final"]
    k_events = spec["events"]
    z = norm.isf(alpha / k_events)
    u1, u2 = _null_splits()
    p_null = probabilities(u1, u2)
    observed = np.array([np.mean(outputs_select > y) if up else np.mean(outputs_select < y) for y, up in candidates])
    with np.errstate(divide="ignore", invalid="ignore"):
        score = (p_null - observed[:, None]) / np.sqrt(p_null * (1.0 - p_null) / n)
    # the set of events whose best z-score is largest at the least favourable split
    import itertools
    best, chosen = -np.inf, None
    for combo in itertools.combinations(range(len(candidates)), min(k_events, len(candidates))):
        margin = float(np.min(np.max(score[list(combo)], axis=0)))
        if margin > best:
            best, chosen = margin, combo
    events = [candidates[i] for i in chosen]
    final = np.asarray(draw_final(n), dtype=float)
    counts = [int(np.sum(final > y)) if up else int(np.sum(final < y)) for y, up in events]
    keep = [i for i in chosen]

    def rejected(scale: float) -> bool:
        s1, s2 = _null_splits(scale)
        p = probabilities(s1, s2)[keep]
        pvalues = np.array([bdtr(k, n, row) for k, row in zip(counts, p)])
        return bool(np.all(np.min(pvalues, axis=0) < alpha / k_events))

    bound = 0.0
    for scale in np.round(np.arange(0.5, 3.0001, 0.05), 2):
        if not rejected(float(scale)):
            break
        bound = float(scale)
    return {"bound": bound, "events": [(y, "Y > y" if up else "Y < y", k) for (y, up), k in zip(events, counts)],
            "n": n, "values": count, "lower": lower, "upper": upper, "epsilon": epsilon, "clipped_mean": total / count}


def noise_scale_bound(draw: Callable, seed: int, datasets: int | None = None) -> NoiseScaleResult:
    """Lower bound on ε₁ + ε₂ / ε from the outputs' tails (confidence 1 - 1e-6), for the specified mechanism.

    ``draw(values, lower, upper, epsilon, rng, n)`` returns n outputs of the
    student's ``private_mean``. For each of ``NOISE_AUDIT["datasets"]``
    datasets drawn by :func:`accuracy_dataset` (the accuracy checks'
    family: no call tells this audit from an accuracy check), a selection
    sample picks two tail events {Y < y} / {Y > y}; on fresh outputs the
    counts are exact binomials whose probabilities :func:`exceedance`
    gives for every split (ε₁, ε₂). Every split with ε₁ + ε₂ <= s·ε is
    rejected when, at each split, one event's exact binomial p-value is
    below α/(2·datasets) (a union bound: for the student's true split, each
    event misleads with probability at most that much). The bound is the
    largest such s (grid of 0.05) over the datasets. A mechanism of the
    specified form (independent Laplace noises, any split with
    ε₁ + ε₂ <= ε, noisy sum / max(noisy count, 1), clipped) fails with
    probability at most α = 1e-6.
    """
    k = NOISE_AUDIT["datasets"] if datasets is None else datasets
    alpha = ALPHA / k
    details = []
    g = np.random.default_rng([seed, 41])
    rng = np.random.Generator(np.random.PCG64(seed))
    for i in range(k):
        values, lower, upper, epsilon = accuracy_dataset(int(g.integers(2**31)))
        select = np.asarray(draw(values, lower, upper, epsilon, rng, NOISE_AUDIT["n_select"]), dtype=float)
        details.append(_dataset_noise_test(select, lambda n: draw(values, lower, upper, epsilon, rng, n),
                                           values, lower, upper, epsilon, alpha))
    best = max(d["bound"] for d in details)
    return NoiseScaleResult(best, 1.0, 1.0 - ALPHA, details)


def _check_noise_scales(private_mean: Callable, seed: int) -> None:
    """The ``noise_scales`` audit of :func:`check_private_mean_privacy` (:func:`noise_scale_bound`)."""
    from helpers.audit import RECENT

    result = audit_private_mean(private_mean, "noise_scales", seed)
    shown, shown_zh = [], []
    for d in result.details:
        if not d["events"]:
            continue
        events = ", ".join(f"{kind.replace('y', f'{y:.4g}')}: {k}/{d['n']}" for y, kind, k in d["events"])
        shown.append(f"{d['values']} values in [{d['lower']:.6g}, {d['upper']:.6g}] (clipped mean "
                     f"{d['clipped_mean']:.4g}), ε = {d['epsilon']:g}: {events} -> ε₁ + ε₂ >= {d['bound']:.2f}ε")
        shown_zh.append(f"区间 [{d['lower']:.6g}, {d['upper']:.6g}] 内的 {d['values']} 个值（截断后的均值 "
                        f"{d['clipped_mean']:.4g}），ε = {d['epsilon']:g}：{events}，ε₁ + ε₂ ≥ {d['bound']:.2f}ε")
    RECENT.append(_RecentBound(result.epsilon, 1.0))
    text = (f"noise scales: {'; '.join(shown) or 'no event inside the range'}; proven ε₁ + ε₂ >= "
            f"{result.epsilon:.2f}ε (confidence {1 - ALPHA:.6f})")
    if result.violates():
        hint_zh, hint_en = _AUDIT_HINTS["noise_scales"]
        diagnosis = _privacy_mistake(private_mean, "noise_scales", seed)
        raise _fail(
            f"隐私审计失败：在与准确性测试同分布的数据上，private_mean 输出的尾部概率（{'；'.join(shown_zh)}）"
            f"对任何满足 ε₁ + ε₂ <= ε 的分配都太小（精确二项检验），以 1 - 10⁻⁶ 的置信度证明两次发布的 ε₁ + ε₂ ≥ "
            f"{result.epsilon:.2f}ε > ε（seed = {seed}；按要求实现、满足 ε-差分隐私的函数被误判的概率 ≤ {ALPHA:g}）。{hint_zh}",
            f"privacy audit failed: on data drawn like the accuracy tests', the tail frequencies of private_mean's "
            f"outputs ({'; '.join(shown)}) are too small for any split with ε₁ + ε₂ <= ε (exact binomial tests), "
            f"which proves ε₁ + ε₂ >= {result.epsilon:.2f}ε > ε for the two releases with confidence 1 - 1e-6 "
            f"(seed = {seed}; an ε-DP implementation of the specified form fails with probability <= {ALPHA:g}). "
            f"{hint_en}",
            diagnosis=diagnosis,
        )
    _say("check_private_mean_privacy", seed, text + " -> OK",
         zh=f"噪声尺度的审计：证明 ε₁ + ε₂ ≥ {result.epsilon:.2f}ε，没有超过 ε")


class _RecentBound:
    """What :data:`helpers.audit.RECENT` holds for the class report: a lower bound against a claim (in units of ε)."""

    def __init__(self, epsilon: float, claimed_epsilon: float):
        self.epsilon, self.claimed_epsilon = epsilon, claimed_epsilon


def _repeated_array(private_mean: Callable, values, lower, upper, epsilon, rng, n) -> np.ndarray:
    """:func:`_private_mean_repeated` as an array (the ``draw`` of :func:`noise_scale_bound`)."""
    return np.array(_private_mean_repeated(private_mean, values, lower, upper, epsilon, rng, n))
