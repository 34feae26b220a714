"""Feedback without hidden tests (nbgrader issue #917).

nbgrader writes the hidden tests into the autograded notebook and from there
into the feedback HTML. :class:`StripHiddenTests` is added to
``GenerateFeedback.preprocessors``: it replaces every hidden block of a test
cell by one comment line and cuts the traceback of such cells down to the
exception's name and message (a traceback quotes the failing hidden line).
:func:`leaked_lines` then checks the written HTML, text only, for any line
of the hidden tests.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from nbgrader.preprocessors import NbGraderPreprocessor

BEGIN = "### BEGIN HIDDEN TESTS"
END = "### END HIDDEN TESTS"
PLACEHOLDER = "# (hidden tests are not shown / 隐藏测试不显示)"


def strip_hidden(source: str) -> tuple[str, bool]:
    """``source`` with each hidden block replaced by :data:`PLACEHOLDER`."""
    out, hidden, found = [], False, False
    for line in source.splitlines():
        stripped = line.strip()
        if stripped.startswith(BEGIN):
            hidden, found = True, True
            indent = line[: len(line) - len(line.lstrip())]
            out.append(indent + PLACEHOLDER)
            continue
        if stripped.startswith(END):
            hidden = False
            continue
        if not hidden:
            out.append(line)
    return "\n".join(out), found


def hidden_lines(source: str) -> list[str]:
    """Lines inside hidden blocks (stripped, non-trivial)."""
    lines, hidden = [], False
    for line in source.splitlines():
        stripped = line.strip()
        if stripped.startswith(BEGIN):
            hidden = True
        elif stripped.startswith(END):
            hidden = False
        elif hidden and len(stripped) >= 8 and not stripped.startswith("#"):
            lines.append(stripped)
    return lines


class StripHiddenTests(NbGraderPreprocessor):
    """Remove hidden-test source and tracebacks from the feedback notebook."""

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code":
            return cell, resources
        source, found = strip_hidden(cell.source)
        if found:
            cell.source = source
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    output["traceback"] = [f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"]
        return cell, resources


def html_text(path: Path) -> str:
    """The visible text of an HTML file (tags removed, entities decoded)."""
    raw = Path(path).read_text(encoding="utf-8", errors="replace")
    raw = re.sub(r"<style.*?</style>|<script.*?</script>", " ", raw, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", raw))


def leaked_lines(path: Path, secret_lines) -> list[str]:
    """Which of ``secret_lines`` appear in the feedback HTML at ``path``."""
    text = html_text(path)
    squashed = re.sub(r"\s+", "", text)
    return [line for line in secret_lines if re.sub(r"\s+", "", line) in squashed]
