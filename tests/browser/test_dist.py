"""The lecturer pack (issue 33): unpacked into an empty folder and used as a lecturer would. The student
pack's own test, launch included, is tests/course/test_dist.py."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from autograder.dist import build_dist
from tests.browser.test_slides import ARGS, CHROMIUM, DECKS, built  # noqa: F401  (fixture: make slides)

ROOT = Path(__file__).resolve().parents[2]

# `make slides` writes slides/html/: every module that builds it runs on one worker, one after another.
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("slides")]


@pytest.fixture(scope="module")
def packs(built, tmp_path_factory):  # noqa: F811
    out = tmp_path_factory.mktemp("dist")
    student, lecturer = build_dist(out, course=ROOT)
    unpacked = {}
    for kind, archive in (("student", student), ("lecturer", lecturer)):
        assert kind in archive.name and archive.suffix == ".zip"
        where = out / f"unpacked-{kind}"
        with zipfile.ZipFile(archive) as z:
            z.extractall(where)
        (top,) = list(where.iterdir())
        unpacked[kind] = top
    return unpacked


def test_the_lecturer_pack_opens_offline_and_its_grader_imports_from_itself(packs, tmp_path):
    from playwright.sync_api import sync_playwright

    top = packs["lecturer"]
    assert "请勿发给学生" in (top / "README.md").read_text(encoding="utf-8")
    assert sorted(p.stem for p in (top / "slides" / "pdf").glob("*.pdf")) == sorted(DECKS)
    assert sorted(p.stem for p in (top / "slides").glob("*.pptx")) == sorted(DECKS)
    guide = (top / "guide" / "teacher-guide.html").read_text(encoding="utf-8")
    assert "<table>" in guide and "教师指南" in guide
    papers = {p.name for p in (top / "guide" / "exam").glob("*.html")}
    assert {"2h-A.html", "2h-B.html", "4h-A-key.html", "4h-B-key.html"} <= papers, papers
    assert (top / "grader" / "source").is_dir() and (top / "grader" / "autograder" / "README.md").is_file()
    where = subprocess.run([sys.executable, "-c", "import autograder, helpers; print(autograder.__file__); "
                            "print(helpers.__file__)"], cwd=top / "grader", capture_output=True, text=True, check=True)
    assert all(Path(line).is_relative_to(top) for line in where.stdout.split()), where.stdout
    refused = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[a for a in ARGS if a != "--headless"])
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(("file:", "data:"))
                   else (refused.append(route.request.url), route.abort()))
        page.goto((top / "slides" / "index.html").as_uri())
        links = page.eval_on_selector_all("a[href$='.html']", "els => els.map(e => e.getAttribute('href'))")
        assert sorted(Path(h).stem for h in links) == sorted(DECKS)
        for deck in DECKS:
            page.goto((top / "slides" / f"{deck}.html").as_uri())
            page.wait_for_function("() => window.Reveal && Reveal.isReady()", timeout=30_000)
            state = page.evaluate("""() => ({slides: Reveal.getTotalSlides(),
                tex: document.querySelectorAll('.tex-error').length,
                katex: document.querySelectorAll('.katex').length,
                broken: [...document.images].filter(i => i.complete && i.naturalWidth === 0).length})""")
            assert state["slides"] > 5 and state["tex"] == 0 and state["katex"] > 0 and state["broken"] == 0, (deck, state)
        # The exam papers print on A4 (the page had no @page rule: Letter), each question with its options and
        # its answer space kept on one page (2h-A's Q11 printed at the foot of page 2 with all its answer
        # space on page 3), and no short option broken over two lines (session 15's walkthrough).
        for paper in ("2h-A", "4h-B"):
            page.goto((top / "guide" / "exam" / f"{paper}.html").as_uri())
            page.emulate_media(media="print")
            got = page.evaluate("""() => {
                const qs = [...document.querySelectorAll('section.q')];
                return {questions: qs.length,
                        kept: qs.filter(q => getComputedStyle(q).breakInside === 'avoid').length,
                        answered: qs.filter(q => q.querySelectorAll('.answer').length === 1).length,
                        numbers: qs.map(q => parseInt(q.textContent)),
                        tallest: Math.max(...qs.map(q => q.getBoundingClientRect().height)),
                        options: [...document.querySelectorAll('.opt')].filter(o => getComputedStyle(o).whiteSpace === 'nowrap'
                                  && o.getClientRects().length === 1).length,
                        allOptions: document.querySelectorAll('.opt').length};
            }""")
            assert got["questions"] == 15 and got["kept"] == 15 and got["answered"] >= 7, (paper, got)
            assert got["numbers"] == list(range(1, 16)), (paper, got["numbers"])
            assert got["options"] == got["allOptions"] > 0, (paper, got)
            pdf = page.pdf(prefer_css_page_size=True)
            box = re.search(rb"/MediaBox \[0 0 ([\d.]+) ([\d.]+)\]", pdf)
            assert box and abs(float(box[1]) - 595.3) < 1.5 and abs(float(box[2]) - 841.9) < 1.5, (paper, box)
            # a question kept whole must fit a page: A4 less the margins, at 96 px an inch
            assert got["tallest"] < (297 - 32) / 25.4 * 96, (paper, got["tallest"])
        browser.close()
    assert refused == [], f"the decks asked the network for {refused[:5]}"
