"""The table of diagnoses (helpers/checks/diagnoses/) matches the ids the checks can report.

The ids are string literals in helpers/checks/*.py (``diagnosis="laplace.scale_inverted"``,
or values of tables such as ``{"b": (b, "laplace.scale_wrong")}``): every string constant
shaped like ``<group>.<name>`` with a known group is taken as an id, found with ``ast``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from helpers.checks.diagnoses import DIAGNOSES, GRADER_DIAGNOSES, GROUPS, group_of

REPO = Path(__file__).resolve().parents[2]
CHECKS = REPO / "helpers" / "checks"
ID = re.compile(r"^(%s)\.[a-z][a-z0-9_]*$" % "|".join(GROUPS))
CJK = re.compile(r"[\u4e00-\u9fff]")


def ids_in_checks() -> dict[str, list[str]]:
    """Every diagnosis-shaped string literal under helpers/checks/ (the table itself excluded)."""
    found: dict[str, list[str]] = {}
    for path in sorted(CHECKS.rglob("*.py")):
        if path.relative_to(CHECKS).parts[0] == "diagnoses":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and ID.match(node.value):
                found.setdefault(node.value, []).append(f"{path.relative_to(CHECKS)}:{node.lineno}")
            elif isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant) \
                    and re.match(r"^(%s)\.$" % "|".join(GROUPS), str(node.values[0].value)):
                pytest.fail(f"{path.name}:{node.lineno}: a diagnosis id built by an f-string cannot be "
                            f"checked against the table; write it out")
    return found


def test_every_id_the_checks_use_is_in_the_table_and_vice_versa():
    used = ids_in_checks()
    assert len(used) > 100, "the scan found almost no ids: has the way ids are written changed?"
    missing = {i: where for i, where in used.items() if i not in DIAGNOSES}
    unused = sorted(set(DIAGNOSES) - set(used))
    assert not missing, f"ids used by the checks but not explained in helpers/checks/diagnoses/: {missing}"
    assert not unused, f"ids in helpers/checks/diagnoses/ that no check reports any more: {unused}"


def test_the_graders_own_ids_are_explained_too():
    """Ids the grader assigns (autograder/: a NameError, a killed sandbox, a cell that did not run)."""
    found = set()
    for path in sorted((REPO / "autograder").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and ID.match(node.value):
                found.add(node.value)
    extra = found - set(DIAGNOSES)
    assert extra == set(GRADER_DIAGNOSES), (sorted(extra), sorted(GRADER_DIAGNOSES))
    assert not set(GRADER_DIAGNOSES) & set(DIAGNOSES)


def test_scan_sees_ids_written_in_both_styles():
    """Both ways ids are written today are found: a keyword argument and a value in a table."""
    used = ids_in_checks()
    assert "common.draw_count_unstable" in used          # diagnosis="..." in forbidden.py
    assert "laplace.scale_inverted" in used              # {"ε/Δ": (..., "laplace.scale_inverted")}


@pytest.mark.parametrize("diagnosis", sorted({**DIAGNOSES, **GRADER_DIAGNOSES}))
def test_entry_is_complete_and_chinese_first(diagnosis):
    entry = {**DIAGNOSES, **GRADER_DIAGNOSES}[diagnosis]
    assert group_of(diagnosis) in GROUPS
    assert all(text.strip() for text in entry), f"{diagnosis}: an empty field"
    assert CJK.search(entry.meaning_zh) and CJK.search(entry.advice_zh), f"{diagnosis}: the Chinese text is not Chinese"
    for text in (entry.meaning_zh, entry.advice_zh):
        # full-width punctuation after Chinese characters, the textbook's terms
        assert not re.search(r"[\u4e00-\u9fff][,;:?!]", text), f"{diagnosis}: ASCII punctuation after Chinese: {text}"
        assert "花" not in text and "敏感度" not in text and "顺序组合" not in text, f"{diagnosis}: {text}"
    for text in (entry.meaning_en, entry.advice_en):
        assert not CJK.search(text), f"{diagnosis}: Chinese in the English text"
