"""The averaging attack of §6.2.3: exact guesses and the success rate of Table 6-3."""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from helpers.checks.core import (
    ALPHA,
    _fail,
    _passed,
    _say,
    _short,
    check_seed,
)
from helpers.checks.stats import binomial_test
from helpers.queries import danger_probability
from helpers.checks.privacy_budget._shared import (EXACT_DANGER, _call, _steps)


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
