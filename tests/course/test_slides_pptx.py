"""The decks as editable PowerPoint files (slides/pptx_deck.py, issue 34): ``make slides`` writes one
.pptx beside each HTML deck, from the same pages; each is opened with python-pptx and checked
slide by slide against the pages the HTML deck was built from: the same titles, the body lines,
each figure as a picture holding exactly the deck's PNG, speaker notes on every slide, and no TeX
or Markdown left as text."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("slides_build", ROOT / "slides" / "build.py")
slides = importlib.util.module_from_spec(spec)
sys.modules["slides_build"] = slides
spec.loader.exec_module(slides)
deck = slides.pptx_deck
HTML = ROOT / "slides" / "html"

# TeX or Markdown that a PowerPoint text must not hold
RAW = re.compile(r"\$|\\[A-Za-z]+|\*\*|!\[|\]\(|\^\{|_\{")


@pytest.mark.parametrize("tex, text", [
    (r"e^{\pm\varepsilon}", "e^(±ε)"),
    (r"\frac{1}{2b}\exp\!\left(-\frac{|x|}{b}\right)", "1/(2b)exp (-|x|/b)"),
    (r"M(D) = f(D) + \mathrm{Lap}(\Delta f/\varepsilon)", "M(D) = f(D) + Lap(Δf/ε)"),
    (r"\hat N = \frac{(p-1)n + n_1}{2p-1}", "N̂ = ((p-1)n + n₁)/(2p-1)"),
    (r"\Delta_1 = 1,\ 2^{20}", "Δ₁ = 1, 2²⁰"),
    (r"\Pr[M(D)\in S] \le e^{\varepsilon}\Pr[M(D')\in S]", "Pr[M(D)∈ S] ≤ e^ε Pr[M(D')∈ S]"),
])
def test_tex_becomes_text_a_slide_can_hold(tex, text):
    assert deck.tex_to_text(tex) == text


def test_markdown_runs():
    assert deck.markdown_text("- **粗** 与 `code` 和 $\\varepsilon$") == [
        ("- ", ""), ("粗", "bold"), (" 与 ", ""), ("code", "code"), (" 和 ε", "")]


# `make slides` writes slides/html/: every module that builds it runs on one worker, one after another.
pytestmark = [pytest.mark.xdist_group("slides")]


@pytest.fixture(scope="module")
def built():
    result = subprocess.run(["make", "slides"], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    return HTML


@pytest.mark.slow
def test_every_deck_is_an_editable_pptx_with_titles_text_figures_and_notes(built):
    from pptx import Presentation
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    plan, sources = slides.load_sources()
    figures: dict = {}
    for png in sorted((built / "figures").glob("*.png")):
        stem, sid, number = png.stem.split("--")
        figures.setdefault(stem, {}).setdefault(sid, []).append(png.name)
    problems, decks, pictures, tables_seen = [], 0, 0, 0
    for path in plan.paths:
        for meeting in plan.meetings[path["id"]]:
            name = f"{path['id']}-{meeting.number}"
            pages = slides.deck_pages(plan, path, meeting, sources, figures)
            html = (built / f"{name}.html").read_text(encoding="utf-8")
            assert html.count("<section") == len(pages), name  # the HTML deck has the same pages
            prs = Presentation(str(built / f"{name}.pptx"))
            assert (prs.slide_width, prs.slide_height) == (deck.WIDTH, deck.HEIGHT)
            shown = list(prs.slides)
            assert len(shown) == len(pages), (name, len(shown), len(pages))
            for number, (slide, page) in enumerate(zip(shown, pages), start=1):
                where = f"{name}.pptx slide {number}"
                title = slide.shapes.title.text_frame.text
                if title != deck.plain(page.title):
                    problems.append(f"{where}: title {title!r}, the deck's is {deck.plain(page.title)!r}")
                texts = [s.text_frame.text for s in slide.shapes if s.has_text_frame]
                texts += [cell.text for s in slide.shapes if s.has_table for row in s.table.rows for cell in row.cells]
                body = "\n".join(texts)
                for line in page.lines:
                    if line.lstrip().startswith("|"):  # a table row: each cell in a table cell
                        wanted = [deck.plain(c) for c in deck._cells(line) if not re.fullmatch(r":?-{3,}:?", c)]
                    else:
                        wanted = [deck.plain(re.sub(r"^\s*([-*+]|\d+[.)])\s+", "", line.strip()))]
                    for text in wanted:
                        if text and text not in body:
                            problems.append(f"{where}: body lacks {text!r}")
                rows = [[deck.plain(c) for c in deck._cells(line)] for line in page.lines
                        if line.lstrip().startswith("|")]
                rows = [row for row in rows if not all(re.fullmatch(r":?-{3,}:?", c) for c in row)]
                tables = [s for s in slide.shapes if s.has_table]
                if rows:  # a Markdown table (表 6-1 …) is a PowerPoint table, cell for cell, body-sized, on the slide
                    cells = [[cell.text for cell in row.cells] for row in tables[0].table.rows] if len(tables) == 1 else []
                    sizes = [run.font.size.pt for row in tables[0].table.rows for cell in row.cells
                             for par in cell.text_frame.paragraphs for run in par.runs] if cells else []
                    if cells != rows:
                        problems.append(f"{where}: {len(tables)} tables, cells {cells[:2]}, the deck's {rows[:2]}")
                    elif min(sizes) < 24 or tables[0].top + tables[0].height > deck.HEIGHT \
                            or tables[0].left + tables[0].width > deck.WIDTH:
                        problems.append(f"{where}: table text {min(sizes)} pt or the table off the slide")
                    tables_seen += 1
                elif tables:
                    problems.append(f"{where}: a table on a slide without one")
                notes = slide.notes_slide.notes_text_frame.text if slide.has_notes_slide else ""
                wanted_notes = [deck.plain(line.strip()) for line in page.notes if line.strip()]
                if not notes.strip() or notes.split("\n") != wanted_notes:
                    problems.append(f"{where}: notes {notes[:60]!r}, the deck's {wanted_notes[:1]}")
                images = [s for s in slide.shapes if s.shape_type == MSO_SHAPE_TYPE.PICTURE]
                if page.figure:
                    if len(images) != 1 or images[0].image.blob != (built / "figures" / page.figure).read_bytes():
                        problems.append(f"{where}: not the figure {page.figure}")
                    elif images[0].width < 0.8 * deck.WIDTH:
                        problems.append(f"{where}: figure {images[0].width / deck.WIDTH:.0%} of the slide wide")
                    pictures += 1
                elif images:
                    problems.append(f"{where}: a picture on a text slide")
                for text in texts + [notes]:
                    if RAW.search(text):
                        problems.append(f"{where}: TeX or Markdown left as text: {RAW.search(text)[0]!r} in {text[:80]!r}")
            decks += 1
    assert not problems, "\n".join(problems[:20])
    assert decks == 6 and pictures >= 20 and tables_seen >= 5
