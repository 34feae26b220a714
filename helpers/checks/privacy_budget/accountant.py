"""The accountant: its basics, refusals at the exact boundary, noise against the budget spent."""

from __future__ import annotations

import copy
import math
from typing import Callable

import numpy as np

from helpers.checks.core import (
    ALPHA,
    Output,
    _fail,
    _say,
    _short,
    call_sequence,
    check_seed,
)
from helpers.checks.reference import CARROTS as _CARROTS
from helpers.checks.reference import CARROTS_OVER_55 as _CARROTS_OVER_55
from helpers.checks.privacy_budget._shared import (_BATCH, _Refused, _call_failure, _count, _count_result,
                                                   _expect_value_error, _ks_noise, _new_state,
                                                   _no_forbidden_sources, _state_result, _steps)


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
    _say(name, seed, zh=f"账本只含基本类型；ε = 1e9 时计数精确为 {_CARROTS_OVER_55}（> 55）；非法的总预算与 ε 抛出 ValueError；"
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
    # The last 1e-9 of 0.3 fits exactly (0.3 - 0.299999999 is 2.8e-17 below 1e-9 in floats): a tolerance
    # relative to the *remaining* budget (Tumult's rule) refuses it; one relative to the total accepts it.
    (0.3, ((0.299999999, True), (1e-9, True), (1e-6, False))),
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
    # Length: a ledger that forgets old charges (keeps its last 128, say) answers forever at ε < total/128;
    # 1,000 × 0.001 = 1 exactly (fsum gives 1.0), then one more is refused (red team, session 11; 2,000 × 0.0005
    # cost 2.5 s of sandbox CPU per submission, every ledger crossing back: 1,000 costs a quarter).
    (1.0, ((0.001, True),) * 1000 + ((0.001, False),)),
)
#: Sequences at least this long run as one batch of calls (:func:`_run_long_sequence`).
_LONG = 200


def _boundary_diagnosis(total: float, history: list[float], epsilon: float, refused: bool) -> tuple[str, str, str]:
    from fractions import Fraction

    left = total - math.fsum(history)
    if refused and 0 < left < 1e-6 * total and epsilon - left <= 1e-12 * total:
        return ("最后这点预算恰好够用，但容差是相对剩余预算计算的（例如 math.isclose(ε, 剩余)，Tumult 的规则）：预算快用完时"
                "容差也跟着趋于 0，浮点舍入就会拒绝合法的查询。容差要相对总预算（总预算的 1e-12 到 1e-9 倍）",
                "the last of the budget fits exactly, but the tolerance is relative to what is left (e.g. "
                "math.isclose(ε, remaining), Tumult's rule): as the budget runs out the tolerance goes to 0 and float "
                "rounding refuses a legal query. Make it relative to the total (1e-12 to 1e-9 times the total)",
                "privacy_budget.tolerance_relative_to_remaining")
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


def _check_verdict(total: float, history: list[float], epsilon: float, accept: bool, refused: bool,
                   message: str) -> None:
    """Fail unless a request of ``epsilon`` after the accepted ``history`` was answered or refused as ``accept`` says."""
    if len(history) > 12 and len(set(history)) == 1:  # a long run of one ε: its count, not each term
        shown = f"{len(history)} × {history[0]:.12g}"
    else:
        shown = " + ".join(f"{e:.12g}" for e in history) or "0"
    if refused and accept:
        zh, en, diagnosis = _boundary_diagnosis(total, history, epsilon, True)
        raise _fail(
            f"总预算 {total:.12g}，已接受的查询消耗了 {shown}，再请求 ε = {epsilon:.12g} 时被拒绝了（{message}）；按十进制算 {shown} + {epsilon:.12g} ≤ {total:.12g}，"
            f"必须接受。可能的错误：{zh}。",
            f"total budget {total:.12g}, accepted queries spent {shown}; a request of ε = {epsilon:.12g} was refused "
            f"({message}), but in decimal {shown} + {epsilon:.12g} <= {total:.12g}, so it must be answered. Likely mistake: {en}.",
            diagnosis=diagnosis,
        )
    if not refused and not accept:
        zh, en, diagnosis = _boundary_diagnosis(total, history, epsilon, False)
        raise _fail(
            f"总预算 {total:.12g}，已接受的查询消耗了 {shown}，再请求 ε = {epsilon:.12g} 时没有被拒绝；{shown} + {epsilon:.12g} > {total:.12g}，"
            f"必须抛出 ValueError（并说明原因）。{zh}。",
            f"total budget {total:.12g}, accepted queries spent {shown}; a request of ε = {epsilon:.12g} was answered, but "
            f"{shown} + {epsilon:.12g} > {total:.12g}: it must raise ValueError (with a message). {en}.",
            diagnosis=diagnosis,
        )
    if refused and len(message) < 5:
        raise _fail(
            f"拒绝查询时的 ValueError 要说明原因（例如还剩多少预算），实际信息是 {message!r}。",
            f"the ValueError of a refusal must say why (e.g. how much budget is left); its message is {message!r}.",
            diagnosis="privacy_budget.refusal_unexplained",
        )


def _run_long_sequence(make_accountant: Callable, answer_count: Callable, total: float, sequence, rng) -> None:
    """:func:`_run_sequence` for a sequence of answered requests and one refused last, as one
    :func:`call_sequence` (one round trip in grading, each ledger passed on inside the sandbox).

    Only the verdicts are the point here: the first ledger and the last result made are checked,
    the ledgers between never cross back (each up to 1,000 entries: crossing, decoding and checking
    them all cost O(n²), 12 CPU-s for a ledger of dicts). Every result of the other sequences and
    of the noise check's 6,000 calls is checked."""
    if sequence[-1][1] or not all(accept for _, accept in sequence[:-1]):
        raise ValueError("_run_long_sequence: the requests must all be answered but the last")
    steps: list[tuple[Callable, tuple, Callable]] = [(make_accountant, (total,), _state_result(total))]
    for epsilon, _ in sequence:
        ledger = Output(0) if len(steps) == 1 else Output(len(steps) - 1, 1)
        steps.append((answer_count, (ledger, _CARROTS, 55.0, epsilon, rng), _count_result(55.0, epsilon)))
    results, error = call_sequence([(func, args) for func, args, _ in steps], keep={0})
    for i in sorted({0, len(results) - 1} - {-1}):
        steps[i][2](results[i])
    if isinstance(error, AssertionError):
        raise error
    if error is not None and (len(results) == 0 or not isinstance(error, ValueError)):
        func, args, _ = steps[len(results)]
        raise _call_failure(func, args, error) from None
    answered = len(results) - 1 if error is not None else len(sequence)  # requests answered before the error
    history = [epsilon for epsilon, _ in sequence[:min(answered, len(sequence) - 1)]]
    epsilon, accept = sequence[min(answered, len(sequence) - 1)]
    _check_verdict(total, history, epsilon, accept, error is not None, str(error) if error is not None else "")


def _run_sequence(make_accountant: Callable, answer_count: Callable, total: float, sequence, rng) -> None:
    if len(sequence) >= _LONG:
        _run_long_sequence(make_accountant, answer_count, total, sequence, rng)
        return
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
                f"answer_count 拒绝了 ε = {epsilon:.12g} 的查询，却已经改动了传入的账本（之前 {_short(before)}，之后 {_short(state)}）："
                f"被拒绝的查询不能消耗预算。请先检查预算够不够，再记账（或返回一个新的账本，不修改传入的）。",
                f"answer_count refused a query of ε = {epsilon:.12g} but had already changed the ledger it was given "
                f"(before {_short(before)}, after {_short(state)}): a refused query must not spend budget. Check that "
                f"the budget suffices before charging it (or return a new ledger instead of modifying the one passed in).",
                diagnosis="privacy_budget.refused_query_charged",
            )
        _check_verdict(total, history, epsilon, accept, refused, message)
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
    shown = "0.1+0.2+0.3 = 0.6, 3 × 1.1 = 3.3, 100 × 0.01 = 1, 7 × 1/7, inf, 1000 × 0.001 = 1, ..." if hidden else \
        "0.1+0.2+0.7 = 1, 0.1+0.2 = 0.3, 10 × 0.1 = 1, 0.5+0.3+0.2 = 1, refusals spend nothing, 0.7+0.300001 > 1, " \
        "0.299999999+1e-9 = 0.3"
    print(f"✓ 通过 / passed [{name}] {len(sequences)} 个序列 / sequences（{shown}）：恰好在边界处接受与拒绝 / accepted and refused exactly at the boundary")


# --- noise against budget ------------------------------------------------------------------------



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
