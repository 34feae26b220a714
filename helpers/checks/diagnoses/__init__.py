"""Every diagnosis id a check can report, with what it means and what to tell the student.

A failed check raises ``CheckFailure(zh, en, diagnosis)`` (:mod:`helpers.checks.core`);
``diagnosis`` is one of the keys of :data:`DIAGNOSES`. The class report groups
submissions by these ids, and the instructor's guide (``docs/teacher-guide.md``,
written by ``docs/build_guide.py``) prints this table, so the explanation a
lecturer reads is the one kept beside the checks. ``tests/checks/test_diagnosis_table.py``
fails when a check names an id that is not here, or this table keeps an id no
check names any more. :data:`GRADER_DIAGNOSES` (``grader.py``) explains the ids the grader
gives a failure that no check named, so that the guide covers every id a class report shows.

Each entry: the meaning (Chinese), what to tell the student (Chinese), then the
same two in English.
"""

from __future__ import annotations

from helpers.checks.diagnoses.coding import CODE
from helpers.checks.diagnoses.deciding import DECISIONS
from helpers.checks.diagnoses.entry import Diagnosis
from helpers.checks.diagnoses.grader import GRADER_DIAGNOSES

__all__ = ["Diagnosis", "GROUPS", "DIAGNOSES", "GRADER_DIAGNOSES", "group_of"]

#: Title of each id's prefix (the assignment, or ``common`` for the checks shared by all).
GROUPS = {
    "common": ("所有作业共用的检查", "checks shared by every assignment"),
    "laplace": ("作业 laplace（拉普拉斯机制）", "assignment laplace"),
    "exponential": ("作业 exponential（指数机制）", "assignment exponential"),
    "randomized_response": ("作业 randomized_response（随机响应）", "assignment randomized_response"),
    "private_mean": ("作业 private_mean（带隐私审计的均值）", "assignment private_mean"),
    "privacy_budget": ("作业 privacy_budget（隐私预算记账）", "assignment privacy_budget"),
    "local_frequency": ("作业 local_frequency（本地化差分隐私下的频率估计）", "assignment local_frequency"),
}

#: Every id, in the order of :data:`GROUPS` (the table is kept in two modules: ``coding.py``, ``deciding.py``).
DIAGNOSES: dict[str, Diagnosis] = {**CODE, **DECISIONS}


def group_of(diagnosis: str) -> str:
    """The prefix of ``diagnosis`` (``"laplace"`` for ``"laplace.scale_inverted"``)."""
    return diagnosis.split(".", 1)[0]
