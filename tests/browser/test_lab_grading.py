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

4. (second test) the student's own walk in the Assignments panel: a wrong edit, Validate,
   Submit; the fix, run but not saved, Submit: the submission holds the fix (issue 28).

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
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
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
    _open_assignment_list(page, url, token)
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
    # one renderer (issue 28): the Formgrader's page is the trusted grader's, score and tests on top
    problems = (_feedback_page_problems(page, nbgrader_page, "得分 / Score: 10 / 10")
                + _feedback_page_problems(page, trusted_page, "得分 / Score: 10 / 10"))
    assert problems == []


def _cell_source(nb_path: Path, function: str) -> str:
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    return next("".join(c["source"]) for c in nb["cells"]
                if c["cell_type"] == "code" and f"def {function}(" in "".join(c["source"]))


def _latest_submission(exchange: Path, student: str, assignment: str) -> Path | None:
    """The newest of ``student``'s submissions of ``assignment`` in the exchange's inbound folder."""
    inbound = exchange / COURSE / "inbound"
    found = sorted(inbound.glob(f"{student}+{assignment}+*"), key=lambda p: p.name.split("+")[2]) \
        if inbound.is_dir() else []
    return found[-1] / f"{assignment}.ipynb" if found else None


def _wait_for_submission(exchange: Path, student: str, assignment: str, after: Path | None) -> Path | None:
    """The submission newer than ``after`` once it is in the exchange (120 s at most). The panel's
    submitted list is no sign: it also shows this user's earlier submissions (nbgrader's cache)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        latest = _latest_submission(exchange, student, assignment)
        if latest is not None and latest != after and latest.is_file():
            return latest
        time.sleep(0.5)
    return None


def _open_assignment_list(page, url: str, token: str) -> None:
    """A fresh JupyterLab page, then Nbgrader ▸ Assignment List. The menu is used only once the
    Launcher shows: with ?reset JupyterLab restores its (empty) layout after the page has loaded,
    and a panel opened before that is closed again (seen after the lecture walk, which leaves
    the server busier: the Assignment List vanished under the test's clicks)."""
    page.goto(f"{url}/lab?reset&token={token}")
    page.wait_for_selector(".jp-Launcher", timeout=120_000)
    page.get_by_text("Nbgrader", exact=True).first.click(timeout=120_000)
    page.get_by_text("Assignment List", exact=True).first.click()


def _edit_cell(page, function: str, code: str) -> None:
    cell = page.locator(".jp-NotebookPanel .jp-CodeCell").filter(has_text=f"def {function}(").first
    cell.scroll_into_view_if_needed()
    cell.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(code)


def test_submit_sends_what_is_on_screen(lab, page):
    """Issue 28: the student's walk in the Assignments panel. Fetch laplace, a wrong edit, Validate,
    Submit; fix the cell and re-run it (the tab shows unsaved changes, the file on disk still has
    the wrong code), click Submit: the submission holds the fix (course/labextensions/: Submit
    saves the assignment's open notebooks first, and says so in Chinese and English). The
    instructor grades it and releases feedback; Fetch Feedback, then "(view feedback)" opens the
    course's feedback page (score on top), not only its folder."""
    import getpass

    url, token = lab["url"], lab["token"]
    student = getpass.getuser()                  # make lab's student: this computer's user
    fetched_dir = ROOT / COURSE / "laplace"      # where the panel fetches to (server's cwd = course root)
    aside = ROOT / COURSE / f".laplace-before-test-{time.time_ns()}"
    if fetched_dir.exists():
        fetched_dir.rename(aside)
    graded_aside = {}                            # this user's own graded laplace, if any, kept aside
    for step in ("submitted", "autograded", "feedback"):
        graded_aside[step] = ROOT / step / student / f".laplace-before-test-{time.time_ns()}"
        if (ROOT / step / student / "laplace").exists():
            (ROOT / step / student / "laplace").rename(graded_aside[step])
    from jupyter_core.paths import jupyter_data_dir

    cache = Path(jupyter_data_dir()) / "nbgrader_cache" / COURSE   # nbgrader's record of submissions
    cached_before = set(cache.glob(f"{student}+laplace+*")) if cache.is_dir() else set()
    wrong = build.snippet("laplace", "laplace_noise", "inverse_scale")
    right = build.snippet("laplace", "laplace_noise", "inverse_cdf")
    try:
        _open_assignment_list(page, url, token)
        released = page.locator("#released_assignments_list .list_item", has_text="laplace").first
        released.get_by_role("button", name="Fetch").click(timeout=120_000)
        fetched = page.locator("#fetched_assignments_list")
        folder = fetched.locator("a.assignment-notebooks-link", has_text="laplace").first
        notebook = fetched.locator(".nested_list_item a", has_text="laplace").first
        folder.click(timeout=60_000)
        try:        # the link toggles the folder: one the test before left open closes on this click
            notebook.wait_for(state="visible", timeout=10_000)
        except PlaywrightTimeoutError:
            folder.click(timeout=60_000)            # as a person does: click it again
        notebook.click(timeout=30_000)
        page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=60_000)

        # a wrong edit, Validate (unsaved: the panel's Validate saves first), Submit
        _edit_cell(page, "laplace_noise", wrong)
        page.keyboard.press("Escape")
        page.get_by_role("tab", name="Assignments").click()          # the panel, the notebook behind it
        fetched.locator("button", has_text="Validate").first.click()
        page.get_by_text("正在验证").first.wait_for(timeout=30_000)    # the course's notice, Chinese first
        dialog = page.locator(".jp-Dialog")
        dialog.wait_for(timeout=300_000)                              # nbgrader's validation report
        verdict = dialog.inner_text()
        dialog.locator(".jp-Dialog-button").last.click()
        assert "failed" in verdict.lower() or "error" in verdict.lower(), verdict[:2000]
        notebook = fetched_dir / "laplace.ipynb"
        assert _cell_source(notebook, "laplace_noise").strip() == wrong.strip()
        before = _latest_submission(lab["exchange"], student, "laplace")
        fetched.locator("button", has_text="Submit").first.click()
        first = _wait_for_submission(lab["exchange"], student, "laplace", before)
        assert first is not None and _cell_source(first, "laplace_noise").strip() == wrong.strip()

        # the fix, run, not saved: the tab is dirty and the file on disk still wrong
        page.get_by_role("tab", name="laplace.ipynb").click()
        _edit_cell(page, "laplace_noise", right)
        page.keyboard.press("Shift+Enter")
        page.wait_for_selector(".jp-mod-dirty", timeout=30_000)
        assert _cell_source(notebook, "laplace_noise").strip() == wrong.strip()
        time.sleep(1.1)                     # nbgrader's submission folders are named to the second
        page.get_by_role("tab", name="Assignments").click()
        fetched.locator("button", has_text="Submit").first.click()
        page.get_by_text("正在提交").first.wait_for(timeout=30_000)   # "saved …, now submitting"
        latest = _wait_for_submission(lab["exchange"], student, "laplace", first)
        assert latest is not None, "no second submission"
        assert _cell_source(latest, "laplace_noise").strip() == right.strip()
        assert _cell_source(notebook, "laplace_noise").strip() == right.strip()
        assert not page.locator(".jp-mod-dirty").count()

        # the instructor grades it and releases feedback (nbgrader's commands, the course's config);
        # the student fetches it in the panel and "(view feedback)" opens the page, not only its folder
        env = build.nbgrader_env(NBGRADER_EXCHANGE=str(lab["exchange"]))
        for step in (("collect", "laplace"), ("autograde", "laplace", f"--student={student}", "--force"),
                     ("generate_feedback", "laplace", f"--student={student}", "--force"),
                     ("release_feedback", "laplace", f"--student={student}")):
            build.run_nbgrader(ROOT, *step, env=env)
        _open_assignment_list(page, url, token)
        submitted = page.locator("#submitted_assignments_list")
        submitted.locator("button", has_text="Fetch Feedback").first.click(timeout=120_000)
        submitted.get_by_text("view feedback").first.click(timeout=120_000)
        viewer = page.frame_locator(".jp-HTMLViewer iframe").first
        viewer.get_by_text("得分 / Score").first.wait_for(timeout=60_000)
        score = viewer.locator(".dp-score").first.inner_text()
        assert "laplace_noise" in score and "✓" in score, score
    finally:
        shutil.rmtree(fetched_dir, ignore_errors=True)
        if aside.exists():
            aside.rename(fetched_dir)
        for step, folder in graded_aside.items():
            shutil.rmtree(ROOT / step / student / "laplace", ignore_errors=True)
            if folder.exists():
                folder.rename(ROOT / step / student / "laplace")
        for empty in [*(ROOT / step / student for step in graded_aside), *(ROOT / step for step in graded_aside),
                      ROOT / COURSE]:
            try:
                empty.rmdir()                    # only what the walk left empty
            except OSError:
                pass
        # the gradebook's row for this computer's user, as make lab leaves it (no submission)
        env = build.nbgrader_env()
        build.run_nbgrader(ROOT, "db", "student", "remove", student, "--force", env=env, check=False)
        build.run_nbgrader(ROOT, "db", "student", "add", student, f"--last-name={student}",
                           "--first-name=(this computer)", env=env, check=False)
        inbound = lab["exchange"] / COURSE / "inbound"
        for folder in inbound.glob(f"{student}+laplace+*") if inbound.is_dir() else []:
            shutil.rmtree(folder, ignore_errors=True)
        for folder in set(cache.glob(f"{student}+laplace+*")) - cached_before if cache.is_dir() else []:
            shutil.rmtree(folder, ignore_errors=True)
