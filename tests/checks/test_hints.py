"""Every task of the six assignments has 2-3 tiered hints, folded until asked for (<details>), in both
languages, in the release notebooks the students get (nbgrader keeps the HTML)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENTS = sorted(p.name for p in (ROOT / "release").iterdir() if p.is_dir())
_HINT = re.compile(r"<details><summary>提示 (\d) / Hint \1</summary>\n\n(.*?)\n\n</details>", re.S)


def task_cells(assignment: str):
    nb = json.loads((ROOT / "release" / assignment / f"{assignment}.ipynb").read_text(encoding="utf-8"))
    graded = {c["metadata"]["nbgrader"]["grade_id"] for c in nb["cells"]
              if c["metadata"].get("nbgrader", {}).get("solution")}
    cells = [c for c in nb["cells"] if c["cell_type"] == "markdown"
             and c["metadata"].get("nbgrader", {}).get("grade_id", "").startswith("task_")
             and c["metadata"]["nbgrader"]["grade_id"] != "task_rule"]
    return cells, graded


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_task_has_two_or_three_folded_bilingual_hints_without_code(assignment):
    cells, graded = task_cells(assignment)
    assert len(cells) >= 2 and graded
    for cell in cells:
        text = "".join(cell["source"])
        hints = _HINT.findall(text)
        assert 2 <= len(hints) <= 3, (assignment, cell["metadata"]["nbgrader"]["grade_id"], len(hints))
        assert [int(n) for n, _ in hints] == list(range(1, len(hints) + 1))  # 提示 1, 2, 3 in order
        assert text.count("<details>") == text.count("</details>") == len(hints)
        for _, body in hints:
            zh, en = body.split("\n\n", 1)
            assert re.search(r"[\u4e00-\u9fff]", zh) and re.search(r"[A-Za-z]{4}", en)
            assert not re.search(r"[\u4e00-\u9fff]", en)
            assert "```" not in body and not re.search(r"^\s*(def|return|import|for|while|if) ", body, re.M)  # no code
