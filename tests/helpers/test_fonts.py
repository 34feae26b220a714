"""Figure text stays readable on a 1366-px laptop and projected (session 15): a lecture figure's PNG is
scaled to the notebook's width, and 8-pt legends came out at about 9 px."""

from __future__ import annotations

import re
from pathlib import Path

from helpers.fonts import SMALL_TEXT_PT, TITLE_PT

ROOT = Path(__file__).resolve().parents[2]
#: A literal type size (``fontsize=8``, ``fontsize="small"``, ``prop={"size": 8}``) in figure code.
_SIZE = re.compile(r"""\bfontsize\s*=\s*(?P<num>\d+(?:\.\d+)?)\b|\bfontsize\s*=\s*["'](?P<name>xx-small|x-small|small)["']"""
                   r"""|["']size["']\s*:\s*(?P<prop>\d+(?:\.\d+)?)\b""")


def small_type(root: Path) -> list[str]:
    """``file:line: text`` for every figure text set below 10 pt (matplotlib's default size) under ``root``."""
    found = []
    for path in sorted([*root.glob("helpers/**/*.py"), *root.glob("course/_src/*.md")]):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            for m in _SIZE.finditer(line):
                size = m["num"] or m["prop"]
                if m["name"] or float(size) < 10:
                    found.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    return found


def test_no_figure_text_is_set_below_ten_points():
    assert small_type(ROOT) == [], "use helpers.fonts.SMALL_TEXT_PT for legends and notes"


def test_the_small_sizes_are_the_readable_ones():
    assert 10 <= SMALL_TEXT_PT <= 11 < TITLE_PT <= 12
