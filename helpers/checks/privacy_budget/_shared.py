"""What the privacy_budget checks share: plain data, calls and the ledger steps, failure names."""

from __future__ import annotations

import copy
import functools
import math
from typing import Any, Callable

import numpy as np

from helpers.checks.core import (
    CheckFailure,
    Output,
    _fail,
    _short,
    call_sequence,
)
from helpers.checks.core import _expect_value_error as _core_expect_value_error
from helpers.checks.forbidden import find_forbidden_calls
from helpers.checks.laplace import _laplace_cdf
from helpers.checks.reference import CARROTS as _CARROTS
from helpers.checks.stats import ks_test


_RNG_NAMES = ("rng.", "generator.", "gen.", "random_state.")
_PLAIN_SCALARS = (type(None), bool, int, float, str)

#: Queries per ledger in the statistical checks (a ledger may grow with every answer).
_BATCH = 10
#: helpers.queries.danger_probability(ε, k) for the graded settings (importing scipy.integrate/stats in
#: every graded kernel costs seconds; tests/test_privacy_budget.py checks these against the function).
EXACT_DANGER = {(0.1, 100): 0.2772826413460777, (1.0, 100): 0.9995278659060047,
                (0.1, 1000): 0.7365519091937581, (0.5, 10): 0.4369443084345236}


# --- plain data and calls ---------------------------------------------------------------


def _expect_value_error(func: Callable, args: tuple, why_zh: str, why_en: str) -> None:
    """:func:`helpers.checks.core._expect_value_error`, its failures named ``privacy_budget.validation_missing``."""
    try:
        _core_expect_value_error(func, args, why_zh, why_en)
    except CheckFailure as failure:
        if failure.diagnosis is None:
            failure.diagnosis = "privacy_budget.validation_missing"
        raise


def _is_plain(value: Any, depth: int = 0) -> bool:
    if depth > 20:
        return False
    if isinstance(value, _PLAIN_SCALARS):
        return True
    if isinstance(value, (list, tuple)):
        if all(type(v) is float or type(v) is int for v in value):  # a ledger's list of ε: no recursion
            return True
        return all(_is_plain(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_plain(v, depth + 1) for k, v in value.items())
    return False


def _plain_state(state: Any, where: str) -> Any:
    if not isinstance(state, dict) or not _is_plain(state):
        raise _fail(
            f"{where} 返回的账本（state）必须是只含基本类型的 dict：数字（int/float）、字符串、列表、dict（键为字符串）。"
            f"实际得到 {type(state).__name__} {_short(state)}。Fraction、Decimal、numpy 数组等对象不行：可以存成 float 或字符串（如 str(Decimal)），用到时再转换。",
            f"{where} must return the ledger (state) as a dict of plain data only: numbers (int/float), strings, lists, "
            f"dicts with string keys. Got {type(state).__name__} {_short(state)}. Fraction, Decimal, numpy arrays and "
            f"other objects are not plain data: store floats or strings (e.g. str(Decimal)) and convert when you use them.",
            diagnosis="privacy_budget.ledger_not_plain_data",
        )
    return state


class _Refused(Exception):
    """The student's function raised ValueError where a refusal is possible."""


def _call(func: Callable, *args, refusable: bool = False, share: bool = False):
    """Call student code with deep copies of dict/list arguments (``share``: the objects themselves,
    so that what the call does to them shows, in a notebook as in grading).

    With ``refusable``, a ``ValueError`` becomes :class:`_Refused` (a refused query).
    """
    if not share:
        args = tuple(copy.deepcopy(a) if isinstance(a, (dict, list, np.ndarray)) else a for a in args)
    try:
        return func(*args)
    except AssertionError:
        raise
    except Exception as error:  # noqa: BLE001  (any crash is reported, not hidden)
        raise _call_failure(func, args, error, refusable) from None


def _call_failure(func: Callable, args: tuple, error: Exception, refusable: bool = False) -> Exception:
    """What :func:`_call` raises for ``error`` raised by ``func(*args)``."""
    name = getattr(func, "__name__", "function")
    if isinstance(error, ValueError):
        if refusable:
            return _Refused(str(error))
        shown = ", ".join(_shown(a) for a in args)
        return _fail(
            f"调用 {name}({shown}) 时出错：ValueError: {error}",
            f"{name}({shown}) raised ValueError: {error}",
            diagnosis="privacy_budget.unexpected_value_error",
        )
    if isinstance(error, NotImplementedError):
        return _fail(f"{name} 还没有实现（NotImplementedError）。", f"{name} is not implemented yet (NotImplementedError).",
                     diagnosis="privacy_budget.not_implemented")
    shown = ", ".join(_shown(a) for a in args)
    return _fail(
        f"调用 {name}({shown}) 时出错：{type(error).__name__}: {error}",
        f"{name}({shown}) raised {type(error).__name__}: {error}",
        diagnosis="privacy_budget.crashed",
    )


def _steps(steps: list[tuple[Callable, tuple, Callable[[Any], Any]]]) -> list:
    """``[check(_call(func, *args)) for func, args, check in steps]``, made with :func:`call_sequence`
    (one round trip in grading instead of one per call): ``Output`` arguments pass a result on (a
    ledger), and the first problem is raised as the loop would have met it."""
    results, error = call_sequence([(func, args) for func, args, _ in steps])
    checked = [check(result) for (_, _, check), result in zip(steps, results)]
    if error is not None:
        if isinstance(error, AssertionError):
            raise error
        func, args, _ = steps[len(results)]
        raise _call_failure(func, args, error) from None
    return checked


def _shown(a: Any) -> str:
    if isinstance(a, Output):  # a ledger passed on in a sequence of calls
        return "state"
    if isinstance(a, np.random.Generator):
        return "rng"
    if isinstance(a, dict):
        return "state"
    return _short(a)


def _no_forbidden_sources(func: Callable) -> None:
    # "helper: rng.exponential" names a call inside a helper function: judge the last part
    found = [f for f in find_forbidden_calls(func) if not f.rsplit(": ", 1)[-1].startswith(_RNG_NAMES)]
    if found:
        name = getattr(func, "__name__", "function")
        listed = ", ".join(found)
        raise _fail(
            f"{name} 使用了不允许的随机数来源或模块：{listed}。噪声只能来自传入的 rng（它的方法都可以用，包括 rng.laplace），也不能导入 helpers。",
            f"{name} uses a forbidden randomness source or module: {listed}. Noise must come from the rng you are given "
            f"(any of its methods, rng.laplace included), and helpers may not be imported.",
            diagnosis="privacy_budget.randomness_outside_rng",
        )


def _new_state(make_accountant: Callable, total: float) -> dict:
    return _state_result(total)(_call(make_accountant, total))


@functools.lru_cache(maxsize=256, typed=True)  # made once per argument, not per call of a batch
def _state_result(total: float) -> Callable[[Any], dict]:
    return lambda state: _plain_state(state, f"make_accountant({total!r})")


def _count(answer_count: Callable, state: dict, epsilon: float, rng: np.random.Generator,
           values: np.ndarray = _CARROTS, threshold: float = 55.0, refusable: bool = False,
           share: bool = False) -> tuple[float, dict]:
    out = _call(answer_count, state, values, threshold, epsilon, rng, refusable=refusable, share=share)
    return _count_result(threshold, epsilon)(out)


@functools.lru_cache(maxsize=256, typed=True)  # made once per argument, not per call of a batch
def _count_result(threshold: float, epsilon: float) -> Callable[[Any], tuple[float, dict]]:
    """The check of what ``answer_count(state, values, threshold, epsilon, rng)`` returned."""
    where = f"answer_count(state, values, {threshold:g}, {epsilon!r}, rng)"

    def check(out: Any) -> tuple[float, dict]:
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise _fail(f"{where} 应返回（带噪声的计数，新的账本）两个值，实际返回 {_short(out)}。",
                        f"{where} should return (noisy_count, new_state); it returned {_short(out)}.",
                        diagnosis="privacy_budget.count_return_value_wrong")
        noisy, new_state = out
        try:
            noisy = float(noisy)
        except (TypeError, ValueError):
            raise _fail(f"{where} 返回的计数应是一个数，实际是 {type(noisy).__name__}。",
                        f"{where} returned a count that is not a number: {type(noisy).__name__}.",
                        diagnosis="privacy_budget.count_return_value_wrong") from None
        return noisy, _plain_state(new_state, where)
    return check


def _histogram(answer_histogram: Callable, state: dict, labels: np.ndarray, k: int, epsilon: float,
               rng: np.random.Generator, refusable: bool = False) -> tuple[np.ndarray, dict]:
    out = _call(answer_histogram, state, labels, k, epsilon, rng, refusable=refusable)
    return _histogram_result(k, epsilon)(out)


@functools.lru_cache(maxsize=256, typed=True)  # made once per argument, not per call of a batch
def _histogram_result(k: int, epsilon: float) -> Callable[[Any], tuple[np.ndarray, dict]]:
    """The check of what ``answer_histogram(state, labels, k, epsilon, rng)`` returned."""
    where = f"answer_histogram(state, labels, {k}, {epsilon!r}, rng)"

    def check(out: Any) -> tuple[np.ndarray, dict]:
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise _fail(f"{where} 应返回（带噪声的各类计数，新的账本），实际返回 {_short(out)}。",
                        f"{where} should return (noisy_counts, new_state); it returned {_short(out)}.",
                        diagnosis="privacy_budget.histogram_return_value_wrong")
        noisy, new_state = out
        try:
            arr = np.asarray(noisy, dtype=float)
        except (TypeError, ValueError):
            arr = None
        if arr is None or arr.shape != (k,):
            raise _fail(f"{where} 返回的计数应是长度为 k = {k} 的数组（每类一个），实际是 {_short(noisy)}。",
                        f"{where} should return an array of k = {k} noisy counts (one per label); got {_short(noisy)}.",
                        diagnosis="privacy_budget.histogram_return_value_wrong")
        return arr, _plain_state(new_state, where)
    return check

def _ks_noise(noise: np.ndarray, epsilon: float, what: str, name: str, seed: int, level: float,
              histogram: bool = False) -> str:
    b = 1.0 / epsilon
    result = ks_test(noise, lambda t: _laplace_cdf(t, b))
    text = f"{what}: KS of {noise.size} noises against Lap(1/ε = {b:g}): D = {result.statistic:.4f}, p = {result.pvalue:.3g}"
    if result.pvalue < level:
        scale = float(np.mean(np.abs(noise - np.median(noise))))
        guesses = {"1/ε": b, "ε": epsilon, "2/ε": 2 * b, "1/(2ε)": b / 2}
        best = min(guesses, key=lambda g: abs(math.log(max(scale, 1e-300) / guesses[g])))
        if abs(math.log(max(scale, 1e-300) / guesses[best])) < 0.1 and best != "1/ε":
            zh, en = f"测得的尺度 ≈ {scale:.3g}，像是 {best}", f"the measured scale ≈ {scale:.3g} looks like {best}"
            diagnosis = {"ε": "privacy_budget.noise_scale_inverted", "2/ε": "privacy_budget.noise_scale_doubled",
                         "1/(2ε)": "privacy_budget.noise_scale_halved"}[best]
        elif scale < 0.2 * b:
            zh, en = (f"测得的尺度 ≈ {scale:.3g}，远小于 1/ε：噪声是不是按总预算或剩余预算而不是本次的 ε 生成的？",
                      f"the measured scale ≈ {scale:.3g} is far below 1/ε: is the noise drawn for the total or remaining budget instead of this query's ε?")
            diagnosis = "privacy_budget.noise_for_wrong_budget"
        elif scale > 2.5 * b:
            zh, en = (f"测得的尺度 ≈ {scale:.3g}，远大于 1/ε：噪声比消耗的预算所需要的多（ε 被再次分割了？）",
                      f"the measured scale ≈ {scale:.3g} is far above 1/ε: more noise than the budget spent requires (ε split again?)")
            diagnosis = "privacy_budget.noise_larger_than_charged"
        else:
            zh, en = (f"测得的尺度 ≈ {scale:.3g}，期望 1/ε = {b:g}；或者分布不是拉普拉斯分布（高斯噪声？）",
                      f"the measured scale ≈ {scale:.3g}, expected 1/ε = {b:g}; or the distribution is not Laplace (Gaussian noise?)")
            diagnosis = "privacy_budget.noise_not_laplace"
        if histogram and not b / 1.2 <= scale <= 1.2 * b:  # the scale itself is off: say which way
            if scale > b:  # more noise than ε needs: private, but not the least noise the task asks for
                zh += "。这样仍满足差分隐私，但噪声比需要的多：直方图消耗 ε 时每类只需 Lap(1/ε)（并行组合，定理 6-3），本题要求这个最少的噪声"
                en += (". This is still differentially private, but noisier than needed: a histogram charged ε needs "
                       "only Lap(1/ε) per bin (parallel composition, Theorem 6-3), the least noise, which the task asks for")
                diagnosis = "privacy_budget.histogram_noise_larger_than_needed"
            else:
                zh += "。噪声比消耗的预算所需要的少，不满足 ε-差分隐私"
                en += ". The noise is smaller than the budget charged requires: not ε-differentially private"
                diagnosis = "privacy_budget.histogram_noise_too_small"
        raise _fail(
            f"{what}：噪声（答案 − 真实计数）不服从 Lap(1/ε = {b:g})：KS D = {result.statistic:.4f}，p = {result.pvalue:.2g} < {level:g}"
            f"（n = {noise.size}，seed = {seed}）。消耗的预算 ε 必须与加的噪声 Lap(Δ/ε)（Δ = 1）一致。{zh}。",
            f"{what}: the noise (answer − true count) is not Lap(1/ε = {b:g}): KS D = {result.statistic:.4f}, "
            f"p = {result.pvalue:.2g} < {level:g} (n = {noise.size}, seed = {seed}). The budget ε spent must match the "
            f"noise Lap(Δ/ε) added (Δ = 1). {en}.",
            diagnosis=diagnosis,
        )
    return text
