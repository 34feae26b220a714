"""A worked example of private_mean's sensitivities that the student sees before submitting.

The exact values of ``sum_sensitivity`` and ``count_sensitivity`` are graded by hidden tests
(:func:`helpers.checks.private_mean.checks.check_sum_sensitivity_values`, ``SUM_CASES``); a student
who got them wrong used to learn it only from the grade.  These visible checks work two ranges
that are **not** among the hidden cases out from Definition 6-2, by enumerating neighbouring
datasets (:func:`helpers.checks.private_mean.simulator.sensitivities_from_definition`), and show the
enumeration when the student's value differs.  The two ranges tell apart the usual mistakes:
``[-6, 2]`` (the bound farther from 0 is the lower one: ``upper`` alone, or ``upper - lower``,
is wrong) and ``[2, 6]`` (a range that does not contain 0: ``upper - lower`` is wrong).

Deterministic; a correct function always passes (the expected values are exact rationals).
"""

from __future__ import annotations

from typing import Callable

from helpers.checks.core import _fail, _passed
from helpers.checks.private_mean._shared import RELATIONS, _call
from helpers.checks.private_mean.checks import _number, _sum_sensitivity_mistake, sum_sensitivity_mismatches
from helpers.checks.private_mean.simulator import sensitivities_from_definition

__all__ = ["EXAMPLE_RANGES", "check_sum_sensitivity_example", "check_count_sensitivity_example"]

#: Ranges of the visible worked example; disjoint from the hidden ``SUM_CASES`` (tests/checks/test_worked_example.py).
EXAMPLE_RANGES = ((-6.0, 2.0), (2.0, 6.0))

_RELATION_ZH = {"add_remove": "增删一条记录", "replace": "替换一条记录"}


def _worked(lower: float, upper: float, relation: str) -> tuple[str, str]:
    """The enumeration behind the expected value, in words (Chinese, English)."""
    value = sensitivities_from_definition(lower, upper)[relation][0]
    if relation == "add_remove":
        return (f"在 [{lower:g}, {upper:g}] 上增删一条值为 x 的记录，截断后的和改变 |clip(x)|；"
                f"让 x 取遍区间内外的值，最大改变是 {value:g}",
                f"adding or removing a record x on [{lower:g}, {upper:g}] changes the clipped sum by |clip(x)|; "
                f"over all x, inside and outside the range, the largest change is {value:g}")
    return (f"在 [{lower:g}, {upper:g}] 上把一条记录 x 换成 x′，截断后的和改变 |clip(x′) − clip(x)|；"
            f"取遍所有 x、x′，最大改变是 {value:g}",
            f"replacing a record x by x′ on [{lower:g}, {upper:g}] changes the clipped sum by |clip(x′) − clip(x)|; "
            f"over all x, x′ the largest change is {value:g}")


def check_sum_sensitivity_example(sum_sensitivity: Callable) -> None:
    """``sum_sensitivity`` on :data:`EXAMPLE_RANGES`, both relations, against Definition 6-2 (1e-12)."""
    wrong = sum_sensitivity_mismatches(sum_sensitivity, EXAMPLE_RANGES)
    if wrong:
        shown, got, expected, relation = wrong[0]
        lower, upper = (float(v) for v in shown[shown.index("(") + 1:].split(",")[:2])
        zh, en = _worked(lower, upper, relation)
        raise _fail(f"例题（不是隐藏测试的区间）：{shown} = {got:g}，按定义 6-2 应为 {expected:g}。"
                    f"{_RELATION_ZH[relation]}：{zh}。",
                    f"Worked example (not a hidden-test range): {shown} = {got:g}; Definition 6-2 gives "
                    f"{expected:g}: {en}.", diagnosis=_sum_sensitivity_mistake(wrong))
    _passed("check_sum_sensitivity_example",
            "例题 [-6, 2] 与 [2, 6] 上两种相邻关系的值都与定义 6-2 的枚举一致（隐藏测试用其他区间）",
            "worked example: both relations on [-6, 2] and [2, 6] agree with Definition 6-2 enumerated "
            "(the hidden tests use other ranges)")


def check_count_sensitivity_example(count_sensitivity: Callable) -> None:
    """``count_sensitivity`` for both relations against Definition 6-2 enumerated (exact)."""
    for relation in RELATIONS:
        shown = f"count_sensitivity({relation!r})"
        got = _number(_call(count_sensitivity, relation, name="count_sensitivity"), shown)
        expected = sensitivities_from_definition(*EXAMPLE_RANGES[0])[relation][1]
        if got != expected:
            other = sensitivities_from_definition(*EXAMPLE_RANGES[0])[
                "add_remove" if relation == "replace" else "replace"][1]
            diagnosis = ("private_mean.sensitivity_wrong_relation" if got == other
                         else "private_mean.count_sensitivity_replace_counts_change" if relation == "replace"
                         else "private_mean.count_sensitivity_wrong")
            if relation == "replace":
                zh = "把一条记录换成另一条，记录条数不变，所以任意两个相邻数据集的条数之差都是 0"
                en = "replacing a record keeps the number of records, so neighbours' counts always differ by 0"
            else:
                zh = "增删一条记录，条数恰好改变 1"
                en = "adding or removing a record changes the number of records by exactly 1"
            raise _fail(f"例题：{shown} = {got:g}，按定义 6-2 应为 {expected:g}：{zh}。",
                        f"Worked example: {shown} = {got:g}; Definition 6-2 gives {expected:g}: {en}.",
                        diagnosis=diagnosis)
    _passed("check_count_sensitivity_example", "两种相邻关系下的值都与定义 6-2 的枚举一致",
            "both relations agree with Definition 6-2 enumerated")
