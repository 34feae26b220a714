"""One PDF per deck (issue 34, 33): what a lecturer uploads to the LMS or prints, whole or refused."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tests.browser.test_slides import DECKS, built  # noqa: F401  (the module's fixture: make slides)

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "slides"))
import pdf  # noqa: E402  (slides/pdf.py)

# `make slides` writes slides/html/: every module that builds it runs on one worker, one after another.
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("slides")]


def test_every_deck_prints_to_a_pdf_and_a_broken_figure_is_refused(built, tmp_path):  # noqa: F811
    written = pdf.print_decks(built, tmp_path / "pdf")
    assert [p.stem for p in written] == sorted(DECKS)
    for path in written:
        data = path.read_bytes()
        assert data.startswith(b"%PDF-") and len(data) > 50_000, f"{path.name}: {len(data)} bytes"
    # the check can fail: a deck whose figure is missing is not printed
    broken = tmp_path / "html"
    shutil.copytree(built, broken)
    figure = next((broken / "figures").iterdir())
    figure.unlink()
    with pytest.raises(RuntimeError, match="figures not loaded"):
        pdf.print_decks(broken, tmp_path / "broken-pdf")
