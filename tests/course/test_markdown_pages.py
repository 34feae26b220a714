"""The pages a student or lecturer opens in JupyterLab's Markdown preview hold no '~' outside code.

JupyterLab's renderer (marked, GitHub-flavoured) reads a pair of single tildes as
strikethrough: "[6.1~6.2]、[6.5]；4 课时讲 [6.1]、[6.2~6.3]" showed on the course's landing page
with half the sentence struck through (seen in Chromium, 2026-11-28). A range is written
"～" (full width) in Chinese and "–" in English. The real-browser test
(tests/browser/test_lectures.py) catches this too, but only in its 10-minute run; this costs
milliseconds.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = ["README.md", "course/README.md", "docs/teacher-guide.md", "autograder/STUDENT_README.md"]


@pytest.mark.parametrize("page", PAGES)
def test_no_tilde_outside_code(page):
    text = (ROOT / page).read_text(encoding="utf-8")
    text = re.sub(r"^(```|~~~).*?^\1", "", text, flags=re.S | re.M)    # fenced code blocks
    text = re.sub(r"`[^`\n]*`", "", text)                                # inline code
    lines = [line for line in text.splitlines() if "~" in line]
    assert not lines, f"{page}: '~' renders as strikethrough; write a range as ～ or –: {lines}"
