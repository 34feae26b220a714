"""Checks behind the graded assignment ``source/privacy_budget`` (§6.1.3, experiment 6-1 scheme 1, Table 6-3).

The student writes a *functional* privacy-budget accountant: the ledger is
plain data (a dict) that every call receives and returns updated, so it
crosses a process boundary like any other argument.

* ``make_accountant(total_epsilon) -> state``
* ``answer_count(state, values, threshold, epsilon, rng) -> (noisy_count, new_state)``:
  #{values > threshold} + Lap(1/ε), charged ε (sequential composition,
  Theorem 6-2); a query that does not fit raises ``ValueError`` (the caller
  keeps the old state, so a refusal spends nothing);
* ``answer_histogram(state, labels, k, epsilon, rng) -> (noisy_counts, new_state)``:
  an ε-DP histogram with the least noise and the least charge the composition
  theorems allow (the task says so): one count per label 0..k−1 with
  independent Lap(1/ε) noise, charged ε once (parallel composition, Theorem
  6-3: the bins are disjoint). Charging k·ε, or charging ε with Lap(k/ε) per
  bin, is private but wasteful and fails with its own diagnosis
  (``histogram_overcharged``, ``histogram_noise_larger_than_needed``); charging
  less than the noise requires is not private (``histogram_undercharged``,
  ``histogram_noise_too_small``);
* ``averaging_attack(answers) -> int``: the repeated-query attack of §6.2.3
  against a server without an accountant (average, round).

What is judged

* **refusals at the exact boundary** (deterministic): budgets that add up
  exactly in decimal — 0.1 + 0.2 + 0.7 = 1, ten times 0.1 = 1, 0.1 + 0.2 = 0.3,
  0.1 + 0.2 + 0.3 = 0.6, 3 × 1.1 = 3.3, 100 × 0.01 = 1 — must be accepted, although naive float
  sums, ``math.fsum`` without a tolerance and exact binary fractions
  (``Fraction(0.1)``) refuse some of them; a request exceeding the budget by
  10⁻⁶ or more must be refused (the rule stated in the notebook: accept when
  the decimal sum is at most the total; any tolerance between 10⁻¹² and 10⁻⁹
  relative to the total, or exact decimal arithmetic, satisfies it);
* **the budget actually spent matches the noise actually added**: the number
  of queries an accountant accepts equals total/ε, and the noise of the
  accepted answers (answer − true count, the true count being known to the
  check) passes a Kolmogorov–Smirnov test against Lap(1/ε) at α = 1e-6 — at
  two ε in one ledger, so noise drawn for the wrong ε (total, remaining,
  ε instead of 1/ε, k/ε per bin) is caught;
* **parallel composition**: a histogram costs ε whatever k; its per-bin noise
  is Lap(1/ε) and independent across bins;
* **the attack**: exact guesses on fixed answers, and the success rate over
  simulated attacks against the exact probability of Table 6-3
  (:func:`helpers.queries.danger_probability`), two-sided binomial tests.

Every student function is called with plain data (floats, int64/float64
arrays, dicts/lists the student produced, deep-copied before every call as
they would be across a process boundary) and ``numpy.random.Generator``
objects only; results are treated as plain data (BRIEF: trusted-grading
contract). Messages are bilingual (Chinese, then English).
"""

from __future__ import annotations

import copy
import math
from typing import Any, Callable

import numpy as np

from helpers.checks.core import (
    ALPHA,
    CheckFailure,
    Output,
    _fail,
    _passed,
    _say,
    _short,
    call_sequence,
    check_seed,
)
from helpers.checks.core import _expect_value_error as _core_expect_value_error
from helpers.checks.forbidden import find_forbidden_calls
from helpers.checks.laplace import _laplace_cdf
from helpers.checks.reference import CARROTS as _CARROTS
from helpers.checks.reference import CARROTS_OVER_55 as _CARROTS_OVER_55
from helpers.checks.stats import binomial_test, ks_test
from helpers.queries import danger_probability

__all__ = [
    "check_accountant_basics",
    "check_budget_boundary",
    "check_noise_matches_budget",
    "check_histogram_parallel",
    "check_attack_values",
    "check_attack_success_rate",
]

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
        return all(_is_plain(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_plain(v, depth + 1) for k, v in value.items())
    return False


def _plain_state(state: Any, where: str) -> Any:
    if not isinstance(state, dict) or not _is_plain(state):
        raise _fail(
            f"{where} 返回的账本（state）必须是只含普通数据的 dict：数字（int/float）、字符串、列表、dict（键为字符串）。"
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


def _state_result(total: float) -> Callable[[Any], dict]:
    return lambda state: _plain_state(state, f"make_accountant({total!r})")


def _count(answer_count: Callable, state: dict, epsilon: float, rng: np.random.Generator,
           values: np.ndarray = _CARROTS, threshold: float = 55.0, refusable: bool = False,
           share: bool = False) -> tuple[float, dict]:
    out = _call(answer_count, state, values, threshold, epsilon, rng, refusable=refusable, share=share)
    return _count_result(threshold, epsilon)(out)


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


# --- basics ----------------------------------------------------------------------------------


def check_accountant_basics(make_accountant: Callable, answer_count: Callable, seed: int | None = None) -> None:
    """Plain-data ledger, the exact count (strict ``>``), ValueErrors, and rng discipline. Deterministic."""
    name = "check_accountant_basics"
    seed = check_seed(name, seed)
    _no_forbidden_sources(answer_count)
    state = _new_state(make_accountant, 1.0)
    for total in (0.0, -1.0, float("nan"), float("inf")):
        _expect_value_error(make_accountant, (total,), "总预算必须是有限正数", "the total budget must be a finite number > 0")
    # Exact count: with ε = 1e9 the noise is below 1e-8 except with probability e^(-5e8).
    big = _new_state(make_accountant, 1e10)
    noisy, _ = _count(answer_count, big, 1e9, np.random.default_rng(seed))
    if round(noisy) != _CARROTS_OVER_55:
        ge = int(np.sum(_CARROTS >= 55))
        hint_zh, hint_en, diagnosis = (
            ("“超过 55”是 > 55，恰好等于 55 的不算", "'more than 55' is > 55: values equal to 55 do not count",
             "privacy_budget.threshold_not_strict") if round(noisy) == ge else
            ("检查计数：values 中大于 threshold 的个数", "check the count: the number of values greater than threshold",
             "privacy_budget.count_wrong"))
        raise _fail(
            f"answer_count(state, values, 55, ε = 1e9, rng) = {noisy:.4f}：ε 这么大时噪声小于 1e-8，结果应是真实计数 {_CARROTS_OVER_55}。{hint_zh}。",
            f"answer_count(state, values, 55, ε = 1e9, rng) = {noisy:.4f}: at such an ε the noise is below 1e-8, so the "
            f"answer should be the true count {_CARROTS_OVER_55}. Hint: {hint_en}.",
            diagnosis=diagnosis,
        )
    rng = np.random.default_rng(seed)
    for epsilon, zh, en in ((0.0, "ε = 0 的查询没有意义（噪声无穷大）", "a query with ε = 0 makes no sense (infinite noise)"),
                            (-0.5, "负的 ε 会把预算“还回去”：攻击者可以无限查询", "a negative ε would give budget back: an attacker could query forever"),
                            (float("nan"), "ε 必须是有限正数", "epsilon must be a finite number > 0")):
        _expect_value_error(answer_count, (state, _CARROTS, 55.0, epsilon, rng), zh, en)
    # rng discipline: same seed ⇒ same answers, other seed ⇒ other answers, the generator is used.
    answers = []
    for s in (seed, seed, seed + 1):
        gen = np.random.default_rng(s)
        before = gen.bit_generator.state["state"]["state"]
        ledger = _new_state(make_accountant, 100.0)
        row = []
        for _ in range(5):
            value, ledger = _count(answer_count, ledger, 1.0, gen)
            row.append(value)
        if gen.bit_generator.state["state"]["state"] == before:
            raise _fail("answer_count 没有使用传入的 rng（调用后它的状态没有变化）。噪声必须来自 rng（例如 rng.laplace）。",
                        "answer_count did not use the rng it was given (its state did not change). The noise must come "
                        "from rng (e.g. rng.laplace).", diagnosis="privacy_budget.rng_not_used")
        answers.append(row)
    if answers[0] != answers[1]:
        raise _fail("answer_count：相同种子的 rng 给出了不同的答案。噪声必须全部来自传入的 rng（不要用 np.random.*）。",
                    "answer_count: two rngs with the same seed gave different answers. All noise must come from the rng "
                    "you are given (no np.random.*).", diagnosis="privacy_budget.randomness_outside_rng")
    if answers[0] == answers[2]:
        raise _fail("answer_count：不同种子的 rng 给出了完全相同的答案。是否固定了种子，或没有加噪声？",
                    "answer_count: rngs with different seeds gave identical answers. Is a seed fixed, or no noise added?",
                    diagnosis="privacy_budget.noise_fixed_or_missing")
    _say(name, seed, zh=f"账本是普通数据；ε = 1e9 时计数精确为 {_CARROTS_OVER_55}（> 55）；非法的总预算与 ε 抛出 ValueError；"
                        "相同种子给出相同答案",
         text=f"plain-data ledger; exact count {_CARROTS_OVER_55} (> 55) at ε = 1e9; ValueError for total 0, -1, "
         f"nan, inf and ε = 0, -0.5, nan; same seed -> same answers -> OK")


# --- the boundary ------------------------------------------------------------------------------

#: (total, sequence of ε, whether each must be accepted). True = must be answered, False = must be refused.
_VISIBLE_SEQUENCES = (
    (1.0, ((0.1, True), (0.2, True), (0.7, True), (1e-6, False))),
    (0.3, ((0.1, True), (0.2, True), (1e-6, False))),
    (1.0, tuple((0.1, True) for _ in range(10)) + ((0.1, False),)),
    (1.0, ((0.5, True), (0.3, True), (0.2, True), (0.001, False))),           # seed 001's split
    (1.0, ((0.6, True), (0.5, False), (0.4, True), (1e-6, False))),           # a refused query spends nothing
    (1.0, ((0.7, True), (0.300001, False), (0.3, True))),
    (1.0, ((0.5, True), (0.5, True), (0.01, False))),
)
_HIDDEN_SEQUENCES = (
    (0.6, ((0.1, True), (0.2, True), (0.3, True), (1e-6, False))),
    (3.3, ((1.1, True), (1.1, True), (1.1, True), (1e-5, False))),
    (1.0, tuple((0.01, True) for _ in range(100)) + ((1e-6, False),)),
    (1.0, ((1 / 7, True),) * 7 + ((1e-6, False),)),
    (2.0, ((2.5, False), (2.0, True), (1e-6, False))),
    (1.0, ((0.25, True), (0.25, True), (0.25, True), (0.2500001, False), (0.25, True))),
    (0.01, ((0.003, True), (0.007, True), (1e-8, False))),
    (1.0, ((float("inf"), False), (1.0, True))),
    # Scale: a tolerance must be relative. A small total (10⁻³: 5 × 10⁻¹⁰ over is 5 × 10⁻⁷ of it,
    # to refuse) and a large one (3 × 10000000.3: fsum is 3.7 × 10⁻⁹ above the decimal total, to accept)
    # catch an absolute tolerance of 10⁻⁹ both ways (issue 25).
    (0.001, ((0.0006, True), (0.0004, True), (5e-10, False))),
    (30000000.9, ((10000000.3, True), (10000000.3, True), (10000000.3, True), (3.0, False))),
)


def _boundary_diagnosis(total: float, history: list[float], epsilon: float, refused: bool) -> tuple[str, str, str]:
    from fractions import Fraction

    if refused:
        if sum(history) + epsilon > total:
            naive = "朴素的浮点求和 spent + ε 超过了总预算（例如 0.1 + 0.2 = 0.30000000000000004）"
            naive_en = "the naive float sum spent + ε exceeds the total (e.g. 0.1 + 0.2 = 0.30000000000000004)"
            diagnosis = "privacy_budget.float_sum_refuses_exact_budget"
        elif math.fsum(history + [epsilon]) > total:
            naive = "math.fsum 求和后仍略大于总预算（例如 fsum([1.1, 1.1, 1.1]) = 3.3000000000000003）：需要容差"
            naive_en = "even math.fsum's sum is slightly above the total (e.g. fsum([1.1, 1.1, 1.1]) = 3.3000000000000003): a tolerance is needed"
            diagnosis = "privacy_budget.fsum_without_tolerance"
        elif sum((Fraction(e) for e in history), Fraction(epsilon)) > Fraction(total):
            naive = "Fraction(0.1) 是 0.1 的二进制近似值的精确值，略大于 1/10：用 Fraction(str(ε)) 或 Decimal(str(ε))，或用容差"
            naive_en = "Fraction(0.1) is the exact value of 0.1's binary approximation, slightly above 1/10: use Fraction(str(ε)) or Decimal(str(ε)), or a tolerance"
            diagnosis = "privacy_budget.binary_fraction_sum"
        else:
            naive = "恰好用完预算的查询也必须接受（≤，不是 <）；被拒绝的查询不能消耗预算"
            naive_en = "a query that uses up the budget exactly must be accepted (<=, not <); a refused query must not spend anything"
            diagnosis = "privacy_budget.refuses_within_budget"
        return naive, naive_en, diagnosis
    return ("超出预算的查询必须抛出 ValueError。容差最多是总预算的 1e-9 倍；每个被接受的查询都要记账（串行组合：ε 相加）",
            "a query beyond the budget must raise ValueError. A tolerance may be at most 1e-9 times the total; every "
            "accepted query must be recorded (sequential composition: the ε add up)",
            "privacy_budget.refusal_missing")


def _run_sequence(make_accountant: Callable, answer_count: Callable, total: float, sequence, rng) -> None:
    state = _new_state(make_accountant, total)
    history: list[float] = []
    for i, (epsilon, accept) in enumerate(sequence):
        before = copy.deepcopy(state)
        try:
            _, new_state = _count(answer_count, state, epsilon, rng, refusable=True, share=True)
            refused, message = False, ""
        except _Refused as refusal:
            refused, message = True, str(refusal)
        if refused and state != before:
            raise _fail(
                f"answer_count 拒绝了 ε = {epsilon:g} 的查询，却已经改动了传入的账本（之前 {_short(before)}，之后 {_short(state)}）："
                f"被拒绝的查询不能消耗预算。请先检查预算够不够，再记账（或返回一个新的账本，不修改传入的）。",
                f"answer_count refused a query of ε = {epsilon:g} but had already changed the ledger it was given "
                f"(before {_short(before)}, after {_short(state)}): a refused query must not spend budget. Check that "
                f"the budget suffices before charging it (or return a new ledger instead of modifying the one passed in).",
                diagnosis="privacy_budget.refused_query_charged",
            )
        shown = " + ".join(f"{e:g}" for e in history) or "0"
        if refused and accept:
            zh, en, diagnosis = _boundary_diagnosis(total, history, epsilon, True)
            raise _fail(
                f"总预算 {total:g}，已接受的查询消耗了 {shown}，再请求 ε = {epsilon:g} 时被拒绝了（{message}）；按十进制算 {shown} + {epsilon:g} ≤ {total:g}，"
                f"必须接受。可能的错误：{zh}。",
                f"total budget {total:g}, accepted queries spent {shown}; a request of ε = {epsilon:g} was refused "
                f"({message}), but in decimal {shown} + {epsilon:g} <= {total:g}, so it must be answered. Likely mistake: {en}.",
                diagnosis=diagnosis,
            )
        if not refused and not accept:
            zh, en, diagnosis = _boundary_diagnosis(total, history, epsilon, False)
            raise _fail(
                f"总预算 {total:g}，已接受的查询消耗了 {shown}，再请求 ε = {epsilon:g} 时没有被拒绝；{shown} + {epsilon:g} > {total:g}，"
                f"必须抛出 ValueError（并说明原因）。{zh}。",
                f"total budget {total:g}, accepted queries spent {shown}; a request of ε = {epsilon:g} was answered, but "
                f"{shown} + {epsilon:g} > {total:g}: it must raise ValueError (with a message). {en}.",
                diagnosis=diagnosis,
            )
        if refused and len(message) < 5:
            raise _fail(
                f"拒绝查询时的 ValueError 要说明原因（例如还剩多少预算），实际信息是 {message!r}。",
                f"the ValueError of a refusal must say why (e.g. how much budget is left); its message is {message!r}.",
                diagnosis="privacy_budget.refusal_unexplained",
            )
        if not refused:
            state = new_state
            history.append(epsilon)


def check_budget_boundary(make_accountant: Callable, answer_count: Callable, hidden: bool = False,
                          seed: int | None = None) -> None:
    """Sequences of requests whose decimal sums hit the total exactly, and requests just beyond it. Deterministic.

    A request must be answered when the decimal sum of the accepted requests
    plus it is at most the total, and refused (``ValueError``) when it exceeds
    the total by 1e-6·total or more (visible) / 1e-7 (hidden). After a refusal
    the caller keeps the previous ledger, so a refused query spends nothing.
    """
    name = "check_budget_boundary"
    seed = check_seed(name + repr(hidden), seed)
    rng = np.random.default_rng(seed)
    sequences = _HIDDEN_SEQUENCES if hidden else _VISIBLE_SEQUENCES
    for total, sequence in sequences:
        _run_sequence(make_accountant, answer_count, total, sequence, rng)
    shown = "0.1+0.2+0.3 = 0.6, 3 × 1.1 = 3.3, 100 × 0.01 = 1, 7 × 1/7, inf, ..." if hidden else \
        "0.1+0.2+0.7 = 1, 0.1+0.2 = 0.3, 10 × 0.1 = 1, 0.5+0.3+0.2 = 1, refusals spend nothing, 0.7+0.300001 > 1"
    print(f"✓ 通过 / passed [{name}] {len(sequences)} 个序列 / sequences（{shown}）：恰好在边界处接受与拒绝 / accepted and refused exactly at the boundary")


# --- noise against budget ------------------------------------------------------------------------


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


def check_noise_matches_budget(make_accountant: Callable, answer_count: Callable, seed: int | None = None, *,
                               epsilons: tuple = (0.5, 2.0), n: int = 3_000) -> None:
    """The ε charged equals the ε of the noise added.

    1. A ledger of total 1.5 answers exactly three queries at ε = 0.5 and
       refuses the fourth (deterministic).
    2. In one ledger (total 1e6), ``n`` answers at each ε of ``epsilons``
       (interleaved); the noise of each ε is KS-tested against Lap(1/ε) at
       level ``ALPHA / len(epsilons)``: false failure ≤ ``ALPHA`` = 1e-6.
    """
    name = "check_noise_matches_budget"
    seed = check_seed(name + repr((epsilons, n)), seed)
    rng = np.random.default_rng(seed)
    _run_sequence(make_accountant, answer_count, 1.5, ((0.5, True),) * 3 + ((0.5, False),), rng)
    noises = {e: np.empty(n) for e in epsilons}
    steps, where = [], []
    for i in range(n):
        if i % _BATCH == 0:  # fresh ledgers keep the state small (it crosses a process boundary at every call)
            steps.append((make_accountant, (1e6,), _state_result(1e6)))
            ledger = Output(len(steps) - 1)
        for epsilon in epsilons:
            steps.append((answer_count, (ledger, _CARROTS, 55.0, epsilon, rng), _count_result(55.0, epsilon)))
            ledger = Output(len(steps) - 1, 1)
            where.append((epsilon, i, len(steps) - 1))
    results = _steps(steps)
    for epsilon, i, index in where:
        noises[epsilon][i] = results[index][0] - _CARROTS_OVER_55
    texts = [_ks_noise(noises[e], e, f"answer_count at ε = {e:g}", name, seed, ALPHA / len(epsilons)) for e in epsilons]
    _say(name, seed, "total 1.5 at ε = 0.5: 3 answered, 4th refused; " + "; ".join(texts) + " -> OK",
         zh="总预算 1.5、每次 ε = 0.5：回答 3 次，第 4 次拒绝；噪声服从 Lap(1/ε)（KS 检验）")


# --- parallel composition ---------------------------------------------------------------------------


def check_histogram_parallel(make_accountant: Callable, answer_count: Callable, answer_histogram: Callable,
                             seed: int | None = None, *, k: int = 5, epsilon: float = 0.5, reps: int = 800) -> None:
    """A histogram over disjoint labels costs ε (not k·ε) and adds independent Lap(1/ε) to each bin.

    Deterministic part: exact counts at ε = 1e9; a ledger of total 1 answers
    four histograms at ε = 0.25 and refuses a fifth; histograms and counts
    share one sequential budget. Statistical part (``reps`` histograms): KS of
    the pooled per-bin noise against Lap(1/ε) at ``ALPHA / 2``, and the
    correlation of the noise of bins 0 and 1 within |r| ≤ 6/√reps (normal
    tail 2e-9; the noises are independent Laplace with finite fourth moment):
    false failure ≤ ``ALPHA`` = 1e-6 in total.
    """
    name = "check_histogram_parallel"
    seed = check_seed(name + repr((k, epsilon, reps)), seed)
    rng = np.random.default_rng(seed)
    labels = np.random.default_rng(seed ^ 0xB1A5).integers(0, k - 1, size=60).astype(np.int64)  # label k-1 stays empty
    true = np.bincount(labels, minlength=k)
    exact, _ = _histogram(answer_histogram, _new_state(make_accountant, 1e10), labels, k, 1e9, rng)
    if not np.array_equal(np.round(exact), true):
        raise _fail(
            f"answer_histogram 在 ε = 1e9 时（噪声小于 1e-8）返回 {np.round(exact, 3)}，真实计数是 {true.tolist()}（标签 0..k-1 各有多少个；没人的类别计 0）。",
            f"answer_histogram at ε = 1e9 (noise below 1e-8) returned {np.round(exact, 3)}; the true counts are "
            f"{true.tolist()} (how many labels equal 0..k-1; an empty label counts 0).",
            diagnosis="privacy_budget.histogram_counts_wrong",
        )
    for sequence, (zh, en), (zh_early, en_early, early), (zh_late, en_late, late) in (
        ((("h", 0.25, True),) * 4 + (("h", 0.25, False),),
         ("总预算 1：ε = 0.25 的直方图应能回答 4 次、第 5 次拒绝",
          "total 1: four histograms at ε = 0.25 must be answered and the fifth refused"),
         ("这样仍满足差分隐私，但多记了账：各类互不相交，Lap(1/ε) 的整个直方图按并行组合（定理 6-3）只需记 ε，不是 k·ε；"
          "本题要求记组合定理允许的最少预算",
          "this is still differentially private, but it charges too much: the labels are disjoint, so by parallel "
          "composition (Theorem 6-3) a whole histogram with Lap(1/ε) per bin needs a charge of ε, not k·ε; the task "
          "asks for the least budget the composition theorems allow",
          "privacy_budget.histogram_overcharged"),
         ("账本记的比消耗的少，不满足差分隐私：每个直方图必须记 ε（预算用完后必须拒绝）",
          "the ledger is charged less than the histograms spend, which is not differentially private: each "
          "histogram must be charged ε (and refused once the budget is spent)",
          "privacy_budget.histogram_undercharged")),
        ((("h", 0.5, True), ("c", 0.5, True), ("h", 0.1, False), ("c", 0.1, False)),
         ("总预算 1：直方图 0.5 + 计数 0.5 之后预算已用完",
          "total 1: after a histogram at 0.5 and a count at 0.5 the budget is spent"),
         ("直方图和计数查询的是同一个数据集，共用同一份预算（串行组合），每个按它的 ε 记账",
          "both query the same dataset and share one budget (sequential composition), each charged its ε",
          "privacy_budget.histogram_overcharged"),
         ("直方图和计数查询的是同一个数据集，必须共用同一份预算（串行组合）：没有记到同一个账本上就不满足差分隐私",
          "both query the same dataset and must share one budget (sequential composition): charging them apart is "
          "not differentially private",
          "privacy_budget.histogram_budget_not_shared")),
    ):
        state = _new_state(make_accountant, 1.0)
        for kind, eps, accept in sequence:
            try:
                if kind == "h":
                    _, new_state = _histogram(answer_histogram, state, labels, k, eps, rng, refusable=True)
                else:
                    _, new_state = _count(answer_count, state, eps, rng, refusable=True)
                refused = False
            except _Refused:
                refused = True
            if refused == accept:
                what = "被拒绝" if refused else "没有被拒绝"
                what_en = "was refused" if refused else "was answered"
                why_zh, why_en, diagnosis = (zh_early, en_early, early) if refused else (zh_late, en_late, late)
                raise _fail(f"{'直方图' if kind == 'h' else '计数'}查询（ε = {eps:g}）{what}。{zh}：{why_zh}。",
                            f"a {'histogram' if kind == 'h' else 'count'} query (ε = {eps:g}) {what_en}. {en}: {why_en}.",
                            diagnosis=diagnosis)
            if not refused:
                state = new_state
    noise = np.empty((reps, k))
    steps, rows = [], []
    for r in range(reps):
        if r % _BATCH == 0:
            steps.append((make_accountant, (1e6,), _state_result(1e6)))
            ledger = Output(len(steps) - 1)
        steps.append((answer_histogram, (ledger, labels, k, epsilon, rng), _histogram_result(k, epsilon)))
        ledger = Output(len(steps) - 1, 1)
        rows.append(len(steps) - 1)
    results = _steps(steps)
    for r, index in enumerate(rows):
        noise[r] = results[index][0] - true
    text = _ks_noise(noise.ravel(), epsilon, f"answer_histogram (k = {k}, ε = {epsilon:g}), per-bin", name, seed, ALPHA / 2,
                     histogram=True)
    r01 = float(np.corrcoef(noise[:, 0], noise[:, 1])[0, 1])
    if not abs(r01) <= 6 / math.sqrt(reps):
        raise _fail(
            f"answer_histogram：第 0 类和第 1 类的噪声相关系数为 {r01:.3f}（{reps} 次，界限 ±{6 / math.sqrt(reps):.3f}）："
            f"每一类必须加独立的噪声（不能所有类共用一个噪声）。",
            f"answer_histogram: the noises of bins 0 and 1 have correlation {r01:.3f} over {reps} histograms (limit "
            f"±{6 / math.sqrt(reps):.3f}): each bin needs its own independent noise (not one noise shared by all bins).",
            diagnosis="privacy_budget.histogram_noise_shared_across_bins",
        )
    _say(name, seed, zh="计数精确；ε = 0.25 的直方图回答 4 次，第 5 次拒绝；与计数共用预算；每格噪声服从 Lap(1/ε)，各格独立",
         text=f"exact counts; 4 × ε = 0.25 answered, 5th refused; shared budget with counts; {text}; "
         f"corr(bin 0, bin 1) = {r01:.3f} -> OK")


# --- the averaging attack ------------------------------------------------------------------------------


def _guess(averaging_attack: Callable, answers: np.ndarray) -> int:
    return _guess_result(_call(averaging_attack, answers))


def _guess_result(out: Any) -> int:
    if isinstance(out, (bool, np.bool_)) or not isinstance(out, (int, np.integer, float, np.floating)) \
            or not math.isfinite(float(out)) or float(out) != round(float(out)):
        raise _fail(f"averaging_attack 应返回一个整数（猜测的真实计数），实际返回 {type(out).__name__} {_short(out)}。",
                    f"averaging_attack should return an integer (the guessed true count); it returned "
                    f"{type(out).__name__} {_short(out)}.", diagnosis="privacy_budget.attack_not_integer")
    return int(round(float(out)))


def check_attack_values(averaging_attack: Callable) -> None:
    """Exact guesses: the nearest integer to the mean of the answers (negative means included)."""
    for answers, expected in (([3.6, 3.7], 4), ([2.7, 2.9], 3), ([10.2, 9.1, 11.4, 9.0], 10), ([-0.4, -0.7], -1),
                              ([90.3], 90), ([88.0, 93.0, 91.5, 87.0, 92.0], 90)):
        got = _guess(averaging_attack, np.array(answers, dtype=float))
        if got != expected:
            mean = float(np.mean(answers))
            zh, en = "取平均再四舍五入到最近的整数", "average, then round to the nearest integer"
            diagnosis = "privacy_budget.attack_not_average"
            if got == math.floor(mean) or got == int(mean):
                zh, en = "用了截断或向下取整：应四舍五入到最近的整数", "truncated or floored: round to the nearest integer instead"
                diagnosis = "privacy_budget.attack_truncates"
            elif got == round(float(np.median(answers))):
                zh, en = "用了中位数：表 6-3 的攻击是取平均", "used the median: the attack of Table 6-3 averages"
                diagnosis = "privacy_budget.attack_uses_median"
            raise _fail(f"averaging_attack({answers}) = {got}，期望 {expected}（平均值 {mean:.3f}）。可能的错误：{zh}。",
                        f"averaging_attack({answers}) = {got}; expected {expected} (the mean is {mean:.3f}). Likely mistake: {en}.",
                        diagnosis=diagnosis)
    _passed("check_attack_values", "6 组固定答案的猜测正确（四舍五入、均值为负）",
            "guesses for 6 fixed answer lists (rounding, negative mean)")


def check_attack_success_rate(averaging_attack: Callable, seed: int | None = None, *,
                              settings: tuple = ((0.1, 100, 2_000), (1.0, 100, 500)), true_count: int = 90) -> None:
    """Success rate of the attack against the exact probability of Table 6-3.

    For each (ε, k, trials): ``trials`` times, a server without an accountant
    answers the same count (``true_count``, experiment 6-1's 90 animals) k
    times with Lap(1/ε) noise (drawn here), and the attack guesses. The number
    of correct guesses is tested against Binomial(trials, P) with
    P = :func:`helpers.queries.danger_probability` (ε, k) (exact two-sided
    test at ``ALPHA / len(settings)``): false failure ≤ ``ALPHA`` = 1e-6.
    """
    name = "check_attack_success_rate"
    seed = check_seed(name + repr((settings, true_count)), seed)
    rng = np.random.default_rng(seed)
    texts = []
    for epsilon, k, trials in settings:
        exact = EXACT_DANGER.get((epsilon, k))
        if exact is None:
            exact = danger_probability(epsilon, k)
        answers = true_count + rng.laplace(0.0, 1.0 / epsilon, size=(trials, k))
        hits = sum(g == true_count for g in _steps([(averaging_attack, (answers[t],), _guess_result)
                                                       for t in range(trials)]))
        pvalue = binomial_test(hits, trials, exact)
        texts.append(f"ε = {epsilon:g}, k = {k}: {hits}/{trials} = {hits / trials:.3f} vs exact {exact:.4f} (p = {pvalue:.3g})")
        if pvalue < ALPHA / len(settings):
            zh = "比表 6-3 的攻击更强：是否用了中位数（对拉普拉斯噪声，中位数比平均值更准）？本题要求表 6-3 的平均攻击" if hits / trials > exact else \
                "比表 6-3 的攻击弱：是否截断/向下取整、只用了部分答案，或没有取平均？"
            en = ("stronger than the attack of Table 6-3: did you use the median (for Laplace noise it beats the mean)? "
                  "This task asks for Table 6-3's averaging attack") if hits / trials > exact else \
                "weaker than the attack of Table 6-3: truncating/flooring, using only some answers, or not averaging?"
            raise _fail(
                f"averaging_attack 在 ε = {epsilon:g}、每次 {k} 个答案时猜中了 {hits}/{trials} = {hits / trials:.3f}，"
                f"表 6-3 的精确概率是 {exact:.4f}（二项检验 p = {pvalue:.2g} < {ALPHA / len(settings):g}，seed = {seed}；"
                f"正确实现被误判的概率 ≤ {ALPHA:g}）。{zh}。",
                f"averaging_attack guessed right {hits}/{trials} = {hits / trials:.3f} times at ε = {epsilon:g} with k = {k} "
                f"answers; the exact probability of Table 6-3 is {exact:.4f} (binomial p = {pvalue:.2g} < "
                f"{ALPHA / len(settings):g}, seed = {seed}; a correct implementation fails with probability <= {ALPHA:g}). {en}.",
                diagnosis="privacy_budget.attack_stronger_than_averaging" if hits / trials > exact
                else "privacy_budget.attack_weaker_than_averaging",
            )
    _say(name, seed, "; ".join(texts) + " -> OK", zh="攻击的成功率与表 6-3 的精确概率相符（二项检验）")
