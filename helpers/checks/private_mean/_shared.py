"""What the private_mean checks share: the audited relations, call helpers, failure names."""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from helpers.checks.core import (_call as _core_call, _expect_value_error as _core_expect_value_error, _fail,
                                 _short, ALPHA, CheckFailure)


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
    # d: the first n (2..49, from the seed) values of an accuracy_dataset draw, the size of the notebook's and
    # the textbook's examples; d' as in interior. A noiseless output on such data gives an infinite bound.
    "small_interior": dict(d=None, n_select=1000, n_final=3000, events="interval"),
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
    if all(type(out) is float for out in outs):  # the usual case, checked at once: same outcome as below
        checked = np.array(outs, dtype=float)
        if np.all(np.isfinite(checked)) and np.all(checked >= lower) and np.all(checked <= upper):
            return outs
    shown = f"private_mean({_short(values)}, {lower:g}, {upper:g}, {epsilon:g}, rng)"
    return [_mean_output(out, lower, upper, shown) for out in outs]
