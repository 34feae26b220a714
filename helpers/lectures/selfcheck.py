"""Self-checks at the end of the lecture notebooks: not graded, checked on the spot.

A self-check cell looks like::

    answer = None          # write your number here
    check_answer("6.3-guarantee", answer)

With ``answer = None`` it prints that the question is not answered yet (so the notebook still
runs top to bottom headless). A right answer prints "正确！"; a wrong one raises
:class:`SelfCheckFailed`, which IPython shows as one message (your answer, what is expected,
a hint) instead of a traceback through this module. Answers that are functions
are called on a few inputs and compared with the course's reference (:mod:`helpers`).
The expected values are computed here from the course's helpers, not typed in the notebook.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from helpers._validation import fail
from helpers.approx_dp import posterior_bound
from helpers.budget import gaussian_rdp_epsilon
from helpers.i18n import tr
from helpers.selection import utility_threshold

__all__ = ["QUESTIONS", "SelfCheckFailed", "expected_answer", "check_answer", "expect"]


def _guarantee() -> float:
    return utility_threshold(300.0, 40, 0.5, 4.0, math.log(20))


def _gumbel_scale() -> float:
    return 2 * 1.0 / 0.5


def _noisy_total_sd() -> float:
    return math.sqrt(4 * 2.0) / 0.5  # 4 cells, each Lap(1/ε) with variance 2/ε², ε = 0.5


def _selection_epsilon() -> float:
    return (1 - 0.2) * 1.0 / 3 / 2


def _posterior() -> float:
    return posterior_bound(0.01, 2.0)


def _exposed() -> float:
    return 10**6 * 1e-5


def _rdp_reference(sigma: float, k: int, delta: float) -> float:
    return gaussian_rdp_epsilon(sigma, 1.0, k, delta)


# key: (expected value or reference function, absolute tolerance, hint zh, hint en, test inputs for functions)
QUESTIONS: dict[str, tuple[Callable[..., float], float, str, str, tuple]] = {
    "6.3-guarantee": (_guarantee, 0.05,
                      "提示：阈值 = OPT − 2Δq(ln|O| + t)/ε，这里 |O| = 40、Δq = 4、t = ln 20，用自然对数。",
                      "Hint: threshold = OPT − 2Δq(ln|O| + t)/ε with |O| = 40, Δq = 4, t = ln 20 (natural log).", ()),
    "6.3-gumbel-scale": (_gumbel_scale, 1e-9,
                         "提示：Gumbel 噪声的尺度要让 argmax(q + bG) 的概率 ∝ exp(q/b) = exp(εq/(2Δq))。",
                         "Hint: the Gumbel scale b must make argmax(q + bG) pick r with probability ∝ exp(q/b) = exp(εq/(2Δq)).", ()),
    "6.5b-total-sd": (_noisy_total_sd, 0.01,
                      "提示：噪声总数是 4 个独立的 Lap(1/ε) 之和；一个 Lap(b) 的方差是 2b²，独立变量的方差相加。",
                      "Hint: the noise in the total is a sum of 4 independent Lap(1/ε); Lap(b) has variance 2b² and variances of independent terms add.", ()),
    "6.5b-selection-epsilon": (_selection_epsilon, 1e-4,
                               "提示：先拿出 0.2ε 做初始化，剩下的 0.8ε 平分给 T 轮，每轮再一半选择、一半测量。",
                               "Hint: 0.2ε goes to the initialization; the remaining 0.8ε is split over T rounds, each half select, half measure.", ()),
    "lab-posterior": (_posterior, 5e-4,
                      "提示：后验几率 ≤ 先验几率 × e^ε；先把 1% 换成几率 1/99，乘以 e²，再换回概率。",
                      "Hint: posterior odds ≤ prior odds × e^ε; turn 1% into odds 1/99, multiply by e², turn back into a probability.", ()),
    "lab-exposed": (_exposed, 1e-6,
                    "提示：每条记录独立地以概率 δ 被公开，期望个数 = n·δ。",
                    "Hint: each record is published independently with probability δ; the expected number is n·δ.", ()),
    "lab-rdp-function": (_rdp_reference, 1e-6,
                         "提示：ε(α) = kα/(2σ²) + ln(1/δ)/(α − 1)，在 α* = 1 + √(ln(1/δ)/ρ) 处最小，ρ = k/(2σ²)。",
                         "Hint: ε(α) = kα/(2σ²) + ln(1/δ)/(α − 1) is smallest at α* = 1 + √(ln(1/δ)/ρ), ρ = k/(2σ²).",
                         ((1.0, 1, 1e-5), (5.0, 100, 1e-6), (20.0, 1000, 1e-8), (0.7, 3, 0.01))),
}


def expected_answer(key: str) -> float:
    """The reference value of a numeric self-check (tests use it)."""
    if key not in QUESTIONS:
        raise fail("expected_answer", "key", f"one of {sorted(QUESTIONS)}", key)
    return float(QUESTIONS[key][0]())


class SelfCheckFailed(AssertionError):
    """A wrong self-check answer, shown as one message: what you answered, what is expected, a hint.

    IPython renders an exception's ``_render_traceback_()`` instead of its traceback, so the
    student reads the message and not the checking code (Jupyter, nbclient and nbgrader all
    go through IPython). Outside IPython it is an ordinary ``AssertionError``.
    """

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[0;31m✗\x1b[0m {line}" if i == 0 else f"  {line}" for i, line in enumerate(str(self).splitlines())]


def _failed(measured: str, expected: str, hint: str) -> SelfCheckFailed:
    # a hint written in a notebook may already open with "练习 3 不对。"
    title = () if ("不对" in hint or "not right" in hint.lower()) else (tr(zh="不对。", en="Not right."),)
    return SelfCheckFailed("\n".join((*title, hint,
                                       tr(zh=f"你的答案：{measured}", en=f"your answer: {measured}"),
                                       tr(zh=f"期望：{expected}", en=f"expected: {expected}"))))


def expect(correct: bool, answer: Any, hint: str) -> None:
    """A self-check written in the notebook: raise :class:`SelfCheckFailed` unless ``correct``.

    ``expect(answer == 2, answer, tr(zh="提示:…", en="Hint: …"))`` — the hint says what to
    reconsider; the expected value itself is not shown (finding it is the exercise).
    """
    if not correct:
        raise _failed(repr(answer), tr(zh="另一个值（参考答案不直接显示）", en="another value (the reference is not shown)"), hint)


def check_answer(key: str, answer: Any) -> None:
    """Check a self-check answer on the spot; ``None`` means "not answered yet".

    Prints "正确！" for a right answer and returns nothing (a cell ending in the call shows no
    stray ``True``). A wrong answer raises :class:`SelfCheckFailed` (an ``AssertionError``): one
    message with the answer, what is expected (the tolerance, not the reference value: finding
    it is the exercise) and a hint.
    """
    if key not in QUESTIONS:
        raise fail("check_answer", "key", f"one of {sorted(QUESTIONS)}", key)
    reference, tol, hint_zh, hint_en, inputs = QUESTIONS[key]
    hint = tr(zh=hint_zh, en=hint_en)
    if answer is None:
        print(tr(zh="还没作答：把 None 换成你的答案，再运行这个单元格。", en="Not answered yet: replace None by your answer and run this cell again."))
        return None
    if inputs:  # the answer is a function
        if not callable(answer):
            raise _failed(repr(answer), tr(zh="一个函数（def ...）", en="a function (def ...)"), hint)
        for args in inputs:
            want = reference(*args)
            try:
                got = float(answer(*args))
            except Exception as exc:  # shown as the hint, not a bare traceback of the student's code
                raise _failed(tr(zh=f"调用 {args} 时出错：{exc!r}", en=f"calling it with {args} failed: {exc!r}"),
                              tr(zh="一个数", en="a number"), hint) from None
            if not (math.isfinite(got) and abs(got - want) <= tol * max(1.0, abs(want))):
                raise _failed(tr(zh=f"输入 {args} 时返回 {got:.6g}", en=f"for inputs {args} it returns {got:.6g}"),
                              tr(zh=f"与参考函数的相对误差不超过 {tol:g}", en=f"within a relative {tol:g} of the reference"), hint)
    else:
        try:
            got = float(answer)
        except (TypeError, ValueError):
            raise _failed(repr(answer), tr(zh="一个数", en="a number"), hint) from None
        want = reference()
        if not (math.isfinite(got) and abs(got - want) <= tol):
            raise _failed(f"{got:g}", tr(zh=f"与参考答案相差不超过 {tol:g}（参考答案不直接显示）",
                                         en=f"within {tol:g} of the reference (not shown)"), hint)
    print(tr(zh="正确！", en="Correct!"))
    return None
