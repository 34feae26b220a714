"""One PDF per deck, for the LMS and for a lecturer without Python: ``python slides/pdf.py``.

    python slides/pdf.py [--html slides/html] [--out slides/pdf]

Each deck of ``slides/html/`` (``make slides``) is opened in headless Chromium in reveal.js's print
view (``?print-pdf``), one 1280 x 720 page per slide, with the formulas typeset by KaTeX as on the
screen, and printed to ``slides/pdf/<deck>.pdf``. Speaker notes are not printed (the decks and the
guide carry them). Needs Debian's ``chromium`` (``make browser``) and Playwright (requirements.txt).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
# The flags a closed network needs (no background requests that would be refused, many at a time).
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]


def decks(html: Path) -> list[Path]:
    """The decks of a built ``slides/html/``: every page but the index."""
    return sorted(p for p in html.glob("*.html") if p.name != "index.html")


def print_decks(html: Path, out: Path, chromium: str = CHROMIUM) -> list[Path]:
    """Print every deck of ``html`` to ``out/<deck>.pdf``; returns the files written.

    Refuses (``RuntimeError``) when a deck's print view shows no page or a formula KaTeX could not
    typeset, or when a figure did not load, is drawn less than 100 px tall or runs off its page (the
    print view once pushed the figures 250 px below the page): a PDF handed to 150 students must be whole.
    """
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    written = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            # Only the deck's own files: a request off the machine would mean a deck that is not offline.
            page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(("file:", "data:"))
                       else route.abort())
            for deck in decks(html):
                page.goto(deck.as_uri() + "?print-pdf", wait_until="load")
                page.wait_for_function("() => document.querySelectorAll('.pdf-page').length > 0", timeout=60_000)
                problems = page.evaluate("""() => ({
                    slides: document.querySelectorAll('.slides section').length,
                    pages: document.querySelectorAll('.pdf-page').length,
                    tex: document.querySelectorAll('.tex-error').length,
                    images: [...document.images].filter(i => !(i.complete && i.naturalWidth > 0)
                        || i.getBoundingClientRect().height < 100
                        || i.getBoundingClientRect().bottom > i.closest('.pdf-page').getBoundingClientRect().bottom + 2)
                    .map(i => i.src)})""")
                if problems["tex"] or problems["images"] or problems["pages"] < problems["slides"]:
                    raise RuntimeError(f"{deck.name}: {problems['pages']} pages for {problems['slides']} slides, "
                                       f"{problems['tex']} formula(s) not typeset, "
                                       f"figures not loaded or not on their page: {problems['images'][:5]}")
                target = out / f"{deck.stem}.pdf"
                page.pdf(path=str(target), width="1280px", height="720px", print_background=True)
                written.append(target)
                print(f"{target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}: "
                      f"{problems['pages']} pages")
        finally:
            browser.close()
    return written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--html", type=Path, default=ROOT / "slides" / "html")
    parser.add_argument("--out", type=Path, default=ROOT / "slides" / "pdf")
    parser.add_argument("--chromium", default=CHROMIUM)
    args = parser.parse_args(argv)
    if not decks(args.html):
        parser.error(f"no decks in {args.html}: run `make slides` first")
    if not Path(args.chromium).exists():
        parser.error(f"{args.chromium} not found: `make browser` installs Debian's chromium")
    print_decks(args.html, args.out, args.chromium)
    return 0


if __name__ == "__main__":
    sys.exit(main())
