"""The class report in Chromium (issue 19): it loads offline without console errors, every plot
has rendered, and every Chinese character is drawn from a font that has it (no tofu).

The report is built by ``python -m autograder report`` (the CLI) from synthetic grading outputs
of two assignments (``tests/support/report_bench.py``: diagnoses, audits, flags, clusters, errors), so no
grading runs here; ``tests/checks/test_assignments.py`` checks its numbers against real grading. A
screenshot goes to ``artifacts/browser/class_report.png``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = ROOT / "artifacts" / "browser"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]

# One worker for the module: the report its tests read is a module fixture (built once per worker).
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("class-report")]


def _bench():
    from tests.support import report_bench

    return report_bench


@pytest.fixture(scope="module")
def page_path(tmp_path_factory):
    from autograder.reports import report

    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not found: run tests/browser/ensure_chromium.sh (apt-get install chromium)")
    tmp = tmp_path_factory.mktemp("classreport")
    rng = np.random.default_rng(1)
    outs = []
    for name in ("laplace", "exponential"):
        out = tmp / name
        report.write_outputs(out, _bench().synthetic_rows(name, 120, rng), {"runs": []})
        outs.append(str(out))
    dest = tmp / "class_report.html"
    subprocess.run([sys.executable, "-m", "autograder", "report", *outs, "--out", str(dest)], check=True,
                   cwd=ROOT, timeout=300)
    return dest


def _font_files() -> dict[str, list[str]]:
    from matplotlib import font_manager

    files: dict[str, list[str]] = {}
    for entry in font_manager.FontManager().ttflist + font_manager.fontManager.ttflist:
        files.setdefault(entry.name, []).append(entry.fname)
    return files


def test_report_renders_without_errors_or_tofu(page_path):
    from matplotlib.ft2font import FT2Font
    from playwright.sync_api import sync_playwright

    errors = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("request", lambda r: errors.append(f"network request {r.url}")
                    if not r.url.startswith(("file:", "data:")) else None)
            page.goto(page_path.as_uri())
            page.wait_for_load_state("load")
            plots = page.eval_on_selector_all(
                "img.plot", "els => els.map(e => [e.alt, e.complete && e.naturalWidth > 0 && e.naturalHeight > 0])")
            # one score histogram, one pass-rate chart, one audit strip and one time strip per assignment
            assert len(plots) == 8, plots
            assert all(ok for _, ok in plots), [alt for alt, ok in plots if not ok]
            # the student x assignment table sorts
            page.click("table#all-assignments th:nth-child(2)")
            page.click("table#all-assignments th:nth-child(2)")
            first = page.eval_on_selector("table#all-assignments tbody tr td:nth-child(2)", "e => e.dataset.v")
            column = page.eval_on_selector_all("table#all-assignments tbody tr td:nth-child(2)",
                                               "els => els.map(e => e.dataset.v)")
            assert float(first) == max(float(v) for v in column if v)
            # every Chinese character: in a font Chromium used for its element (folded lists opened)
            page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
            cdp = page.context.new_cdp_session(page)
            cdp.send("DOM.enable")
            cdp.send("CSS.enable")
            root = cdp.send("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
            nodes = cdp.send("DOM.querySelectorAll", {"nodeId": root, "selector": "h1,h2,h3,p,th,summary,span,li"})["nodeIds"]
            files = _font_files()
            checked, tofu = 0, []
            for node in nodes:
                children = cdp.send("DOM.describeNode", {"nodeId": node, "depth": 1})["node"].get("children", [])
                text = "".join(c.get("nodeValue", "") for c in children if c.get("nodeType") == 3)  # own text only
                han = {ch for ch in text if "\u4e00" <= ch <= "\u9fff"}
                if not han:
                    continue
                fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
                faces = [FT2Font(f) for font in fonts for f in files.get(font["familyName"], [])]
                missing = [ch for ch in han if not any(face.get_char_index(ord(ch)) for face in faces)]
                checked += 1
                if missing:
                    tofu.append((text[:60], [f["familyName"] for f in fonts], missing[:5]))
            assert checked > 10
            assert not tofu, tofu
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = false; }); window.scrollTo(0, 0)")
            page.screenshot(path=str(ARTIFACTS / "class_report.png"))
        finally:
            browser.close()
    assert not errors, errors


def test_student_table_reads_and_sorts_by_clicking_headers(page_path):
    """A lecturer's first question, "who got 5/10?": the per-student table of one assignment, read
    as shown (text of the cells), sorted by clicking the score header, then a cell's header."""
    from playwright.sync_api import sync_playwright

    table = 'table.students[data-assignment="laplace"]'
    read = f"""() => Array.from(document.querySelectorAll('{table} tbody tr')).map(r =>
        Array.from(r.cells).map(c => c.innerText.trim()))"""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(page_path.as_uri())
            page.wait_for_load_state("load")
            headers = page.eval_on_selector_all(f"{table} thead th", "els => els.map(e => e.innerText.trim())")
            assert headers[0].startswith("学生") and headers[1].startswith("得分")
            assert headers[-2].startswith("标记") and headers[-1].startswith("反馈")
            rows = page.evaluate(read)
            assert len(rows) == 120 and all(len(r) == len(headers) for r in rows)
            assert [r[0] for r in rows] == sorted(r[0] for r in rows)  # by student at first
            assert all(r[-1] == "反馈 feedback" for r in rows)
            page.click(f"{table} thead th:nth-child(2)")  # score, ascending
            scores = [float(r[1]) for r in page.evaluate(read)]
            assert scores == sorted(scores) and scores[0] < scores[-1]
            page.click(f"{table} thead th:nth-child(2)")  # again: descending
            rows = page.evaluate(read)
            assert [float(r[1]) for r in rows] == sorted(scores, reverse=True)
            # a cell column: ✓ for full marks, else the score and the mistake's name
            page.click(f"{table} thead th:nth-child(4)")
            column = [r[3] for r in page.evaluate(read)]
            failed = [c for c in column if c != "✓"]
            assert failed and column[:len(failed)] == failed  # failures (score 0) sort first
            assert all(c.split()[0] == "0" for c in failed), failed[:5]
            title = page.eval_on_selector(f"{table} tbody tr td:nth-child(4)", "e => e.title")
            assert title.startswith(("laplace.", "common.")), title
            # the feedback link goes to that student's feedback page
            href = page.eval_on_selector(f"{table} tbody tr td:last-child a", "e => e.getAttribute('href')")
            student = page.eval_on_selector(f"{table} tbody tr td:first-child", "e => e.innerText.trim()")
            assert href == f"laplace/feedback/{student}/laplace/laplace.html", href
        finally:
            browser.close()
