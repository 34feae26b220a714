"""Diagnosis ids (issue 19): every check failure on the corpus names its likely mistake with a
stable id, and different mistakes fall into different groups.

Runs the corpus directly, as ``tests/checks/test_checks.py`` does (no grader): the checks are the
same functions the trusted grader calls, and ``CheckFailure.diagnosis`` is what it records.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import helpers.checks as checks

HERE = Path(__file__).resolve().parent
from tests.support import corpus as build
from tests.support import notebooks

#: The assignments whose checks this suite covers (private_mean and privacy_budget have their own).
ASSIGNMENTS = ("laplace", "exponential", "randomized_response", "local_frequency")
#: One worker for the module and the corpus tests that run the same solutions directly
#: (test_checks, test_local_frequency): each wrong solution runs once (notebooks.run_graded_cells).
pytestmark = pytest.mark.xdist_group("corpus-direct")
ID = re.compile(r"[a-z][a-z0-9_]{0,39}\.[a-z0-9_]{1,60}")


def diagnoses(assignment: str, solutions: dict[str, str]) -> dict[str, str | None]:
    """``{grade_id: diagnosis id}`` of the cells that fail (``"CRASH"`` for a non-check error)."""
    return {grade_id: error.diagnosis if isinstance(error, checks.CheckFailure) else f"CRASH {type(error).__name__}"
            for grade_id, error in notebooks.run_graded_cells(assignment, solutions).items()}


@pytest.fixture(scope="module")
def table() -> dict[str, dict[str, dict]]:
    return {a: {e["id"]: dict(e, got=diagnoses(a, e["solutions"])) for e in build.corpus_entries(a)
                if e["kind"] == "wrong"} for a in ASSIGNMENTS}


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_failure_names_a_mistake(table, assignment):
    """Each failing cell of each wrong solution carries an id ``<assignment>.<mistake>`` or ``common.<mistake>``."""
    problems = []
    for entry_id, entry in table[assignment].items():
        for grade_id, got in entry["got"].items():
            if got is None or not ID.fullmatch(got) or got.split(".")[0] not in (assignment, "common"):
                problems.append(f"{entry_id} ({entry['why']}): {grade_id} -> {got!r}")
    assert not problems, "\n".join(problems)


def _ids(table, assignment):
    """Per wrong solution, the diagnosis of the first cell the manifest says it must fail."""
    return {entry_id: entry["got"].get(entry["expect_zero"][0]) for entry_id, entry in table[assignment].items()}


def test_mistakes_fall_into_different_groups(table):
    """Different mistakes in one function get different ids (the class report groups a cell's
    failures by id), except the framework's rng and validation ids, where the symptom is the
    mistake (``common.*``). Prints the table (``-s``)."""
    problems, groups, total = [], 0, 0
    for assignment in ASSIGNMENTS:
        by_function = {}
        for entry_id, entry in table[assignment].items():
            got = entry["got"].get(entry["expect_zero"][0])
            print(f"{assignment}/{entry_id} -> {got}")
            by_function.setdefault(entry["function"], {}).setdefault(got, []).append(entry_id)
        for function, by_id in by_function.items():
            groups += len(by_id)
            total += sum(len(v) for v in by_id.values())
            problems += [f"{assignment}.{function}: {got} <- {entries}" for got, entries in by_id.items()
                         if len(entries) > 1 and not str(got).startswith("common.")]
    assert not problems, "\n".join(problems)
    print(f"{groups} groups for {total} wrong solutions")
    assert groups >= 0.75 * total
