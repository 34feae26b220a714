"""The histogram: parallel composition (Theorem 6-3), one ε whatever k."""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from helpers.checks.core import (
    ALPHA,
    Output,
    _fail,
    _say,
    check_seed,
)
from helpers.checks.privacy_budget._shared import (_BATCH, _Refused, _count, _histogram, _histogram_result,
                                                   _ks_noise, _new_state, _state_result, _steps)


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
