"""A student alone and the instructor on one machine, after a fresh ``make lab`` (issues 16, 18).

One JupyterLab started by ``make lab`` itself (``tests/support/labserver.py``, shared with
tests/browser/test_lectures.py: a free port, a token, throw-away settings), with a fresh, empty exchange folder
(``NBGRADER_EXCHANGE``), so that the course-local release ``make lab`` makes is tested from
nothing; one headless Debian Chromium (Playwright). In sequence:

1. the student's Nbgrader ▸ Assignment List panel lists the six graded assignments, each
   with its Fetch button, with no Formgrader step;
2. a student (nbgrader's own fetch/submit, as in tests/course/test_instructor_loop.py) hands in
   a correct laplace; the instructor clicks Collect, then Autograde in the Formgrader: the
   score shown is 10 / 10, graded by the trusted grader (the autograded notebook carries
   its metadata); the manual grading view of that submission typesets its formulas with the
   server's own MathJax (no request fails, nothing from another host: its web fonts are
   there) and wraps long lines;
3. the instructor clicks Generate feedback; that page and the trusted grader's own
   feedback page for the same notebook (``python -m autograder grade``), opened from disk
   (``file://``, no server, no network), show the score and rendered math: MathML with a
   size on screen, no ``$...$`` or ``\\(`` left in the visible text.

What the run adds to the repository's course root (the student's submitted/, autograded/,
feedback/ folders, the gradebook row) is removed afterwards. Skipped only if
/usr/bin/chromium is absent.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.support.labserver import STUDENT

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
ASSIGNMENTS = ("laplace", "exponential", "randomized_response", "private_mean", "privacy_budget",
               "local_frequency")
COURSE = "dp-course"

# One worker runs both tests that start `make lab` in this checkout (one exchange, one gradebook).
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("lab")]

from tests.support import corpus as build


@pytest.fixture(scope="module")
def lab(make_lab):
    """The one ``make lab`` of the "lab" group (``tests/support/labserver.py``), started with a fresh exchange."""
    return make_lab


@pytest.fixture(scope="module")
def page(lab):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            context = chromium.new_context(viewport={"width": 1400, "height": 1000})
            yield context.new_page()
        finally:
            chromium.close()


def _submit_correct_laplace(lab) -> Path:
    """A student's fetch, work and submit with nbgrader's own commands (their own folder)."""
    home = lab["tmp"] / STUDENT
    home.mkdir()
    env = build.nbgrader_env(HOME=str(home), USER=STUDENT, LOGNAME=STUDENT)
    opts = (f"--Exchange.root={lab['exchange']}", f"--course={COURSE}")
    build.run_nbgrader(home, "fetch_assignment", "laplace", *opts, env=env)
    solutions = {f: build.snippet("laplace", f, v)
                 for f, v in {"laplace_noise": "inverse_cdf", "laplace_mechanism": "vectorized"}.items()}
    fetched = build.notebook_path(home, "laplace")
    build.make_submission("laplace", solutions, fetched, release_dir=home)
    build.run_nbgrader(home, "submit", "laplace", *opts, f"--student={STUDENT}", env=env)
    return fetched


# LaTeX a reader would see raw: $…$, \( or \[ left in the visible text.
LATEX_LEFT = re.compile(r"\$[^$\n]{1,80}\$|\\\(|\\\[")


def _modal_text(page, timeout_ms: float) -> str:
    modal = page.locator(".modal.in, .modal.show, .modal[style*='display: block']").first
    modal.wait_for(state="visible", timeout=timeout_ms)
    text = modal.inner_text()
    modal.locator("[data-dismiss=modal]").last.click()
    page.wait_for_function("() => !document.querySelector('.modal.in, .modal-backdrop')", timeout=20_000)
    return text


def _feedback_page_problems(page, path: Path, score: str) -> list[str]:
    """What a student opening ``path`` from disk would miss: the score, rendered math."""
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    text = page.inner_text("body")
    problems = []
    if score not in text:
        problems.append(f"{path.name}: no '{score}' in the page")
    left = LATEX_LEFT.findall(text)
    if left:
        problems.append(f"{path.name}: LaTeX left in the visible text: {left[:3]}")
    sizes = page.eval_on_selector_all("math", "ms => ms.map(m => m.getBoundingClientRect().width)")
    if not sizes or min(sizes) <= 0:
        problems.append(f"{path.name}: {len(sizes)} <math> elements, widths {sizes[:5]}")
    if page.evaluate("document.scripts.length") and "autograder" in str(path):
        problems.append(f"{path.name}: the trusted grader's page has scripts")
    wide = page.evaluate("document.documentElement.scrollWidth > window.innerWidth + 5")
    if wide:
        problems.append(f"{path.name}: the page scrolls sideways (long lines do not wrap)")
    return problems


def _manual_grading_problems(page, url: str) -> list[str]:
    """The Formgrader's manual grading view of the autograded laplace: MathJax from the server
    itself, with every file it asks for there (its web fonts included: no 404), formulas
    typeset, long lines wrapped."""
    submissions = page.request.get(f"{url}/formgrader/api/submitted_notebooks/laplace/laplace").json()
    failed: list[str] = []
    on_response = lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None  # noqa: E731
    on_failure = lambda r: failed.append(f"failed {r.url}") if r.url.startswith("http") else None  # noqa: E731
    page.on("response", on_response)
    page.on("requestfailed", on_failure)
    try:
        page.goto(f"{url}/formgrader/submissions/{submissions[0]['id']}/?index=0")
        page.wait_for_function("() => window.MathJax && MathJax.Hub && MathJax.Hub.queue && MathJax.Hub.queue.pending"
                               " === 0 && document.querySelectorAll('.MathJax, .MathJax_Display').length > 0",
                               timeout=60_000)
        page.wait_for_timeout(500)                   # fonts asked for while typesetting
    finally:
        page.remove_listener("response", on_response)
        page.remove_listener("requestfailed", on_failure)
    problems = [f"manual grading view: {f}" for f in failed]
    outside = [u for u in page.evaluate("() => performance.getEntriesByType('resource').map(e => e.name)")
               if not u.startswith(url)]
    problems += [f"manual grading view: loaded from elsewhere: {u}" for u in outside]
    text = page.inner_text("#notebook")
    left = LATEX_LEFT.findall(text)
    if left:
        problems.append(f"manual grading view: LaTeX left in the visible text: {left[:3]}")
    unwrapped = page.evaluate("() => [...document.querySelectorAll('#notebook pre')].filter(p => "
                              "getComputedStyle(p).whiteSpace !== 'pre-wrap').length")
    if unwrapped:
        problems.append(f"manual grading view: {unwrapped} <pre> blocks do not wrap long lines")
    return problems


def test_student_and_instructor_after_make_lab(lab, page):
    url, token = lab["url"], lab["token"]

    # 1. The student's Assignments panel: six assignments to fetch, nobody released them by hand.
    # ?reset: a fresh workspace (the lecture walk on the same server left its last notebook open)
    page.goto(f"{url}/lab?reset&token={token}")
    page.get_by_text("Nbgrader", exact=True).first.click(timeout=120_000)
    page.get_by_text("Assignment List", exact=True).first.click()
    panel = page.locator("#released_assignments_list, .nbgrader-assignment-list, [id*='assignment']").first
    page.wait_for_function(
        "names => names.every(n => document.body.innerText.includes(n))", arg=list(ASSIGNMENTS), timeout=120_000)
    released = page.locator("#released_assignments_list")
    listed = released.inner_text() if released.count() else panel.inner_text()
    missing = [a for a in ASSIGNMENTS if a not in listed]
    fetch_buttons = released.get_by_role("button", name=re.compile("Fetch", re.I)).count() if released.count() else 0
    assert not missing and fetch_buttons == len(ASSIGNMENTS), (missing, fetch_buttons, listed[:500])

    # 2. Submit, then Collect and Autograde from the Formgrader.
    _submit_correct_laplace(lab)
    page.goto(f"{url}/formgrader/manage_assignments")
    row = page.locator("tr", has_text="laplace").first
    row.locator(".collect a").click(timeout=60_000)
    assert "Successfully collected" in _modal_text(page, 120_000)
    page.goto(f"{url}/formgrader/manage_submissions/laplace")
    row = page.locator("tr", has_text=STUDENT).first
    started = time.monotonic()
    row.locator(".autograde a").click(timeout=60_000)
    message = _modal_text(page, 600_000)
    seconds = time.monotonic() - started
    assert "Successfully autograded" in message, message[-2000:]
    print(f"Formgrader Autograde (trusted grader) took {seconds:.1f} s")
    page.goto(f"{url}/formgrader/manage_submissions/laplace")
    row = page.locator("tr", has_text=STUDENT).first
    row.locator(".score").filter(has_text="/").wait_for(timeout=60_000)
    assert row.locator(".score").inner_text().strip() == "10 / 10", row.inner_text()
    autograded = ROOT / "autograded" / STUDENT / "laplace" / "laplace.ipynb"
    assert "### BEGIN HIDDEN TESTS" not in autograded.read_text(encoding="utf-8")
    assert _manual_grading_problems(page, url) == []
    page.goto(f"{url}/formgrader/manage_submissions/laplace")
    row = page.locator("tr", has_text=STUDENT).first

    # 3. Feedback from the Formgrader and from the trusted grader, opened from disk.
    row.locator(".generate-feedback a").click(timeout=60_000)
    assert "Successfully generated feedback" in _modal_text(page, 300_000)
    nbgrader_page = ROOT / "feedback" / STUDENT / "laplace" / "laplace.html"
    subs = lab["tmp"] / "subs" / STUDENT / "laplace"
    subs.mkdir(parents=True)
    shutil.copy(ROOT / "submitted" / STUDENT / "laplace" / "laplace.ipynb", subs / "laplace.ipynb")
    out = lab["tmp"] / "out"
    subprocess.run([sys.executable, "-m", "autograder", "grade", "--assignment", "laplace", "--submissions",
                    str(lab["tmp"] / "subs"), "--out", str(out), "--jobs", "1", "--quiet"], check=True,
                   env=build.nbgrader_env(), timeout=600)
    trusted_page = out / "feedback" / STUDENT / "laplace" / "laplace.html"
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["submissions"][0]["score"] == 10.0
    problems = (_feedback_page_problems(page, nbgrader_page, "Score: 10.0 / 10.0")
                + _feedback_page_problems(page, trusted_page, "得分 / Score: 10 / 10"))
    assert problems == []
