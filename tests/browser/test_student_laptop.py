"""The student's laptop loop in Chromium (issue 33): ``python -m course lab`` on her own folder.

One JupyterLab started by the launcher itself (student mode: a fresh folder named by
``DP_COURSE_WORKSPACE``, no exchange), autosave off so that only the course's button saves:

* an assignment notebook has the **提交** button; an unsaved edit, then 提交: the student id is
  asked (the browser's prompt), the file ``提交/<学号>_<assignment>.ipynb`` holds the edit (what was
  on screen), and the notice names the file; nbgrader's Formgrader and Assignments panels are absent;
* a notebook with an ipympl figure and a slider, run, saved, its kernel shut down, reopened: the
  figure shows as its picture and the slider as "运行此单元格以显示交互图", never "Error displaying
  widget: model not found".

Cost: about 40 s (the server, one kernel, two page loads); the launcher's pip step is a no-op
when the environment is current.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from tests.support.servers import free_port, stop

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
# One worker for the module: its JupyterLab and Chromium are module fixtures, which pytest-xdist
# (--dist loadgroup, every test its own unit) started once per worker that got one of its tests.
pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("student-laptop")]


def _api(url: str, token: str, path: str, method: str = "GET"):
    request = urllib.request.Request(f"{url}{path}", method=method, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        body = response.read()
    return json.loads(body) if body else None


@pytest.fixture(scope="module")
def student_lab(tmp_path_factory):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not found: run tests/browser/ensure_chromium.sh (apt-get install chromium)")
    tmp = tmp_path_factory.mktemp("student_lab")
    work = tmp / "work"
    settings = tmp / "settings" / "@jupyterlab"
    for plugin, text in (("notebook-extension/tracker", '{"windowingMode": "none"}'),
                         ("docmanager-extension/plugin", '{"autosave": false}'),
                         ("apputils-extension/notification", '{"fetchNews": "false", "checkForUpdates": false}')):
        path = settings / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    port, token = free_port(), secrets.token_hex(16)
    runtime = Path(tempfile.mkdtemp(prefix="dp-rt-", dir="/tmp"))
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(runtime), DP_COURSE_WORKSPACE=str(work))
    python = ROOT / ".venv" / "bin" / "python"
    log = open(tmp / "lab.log", "w")
    server = subprocess.Popen([str(python if python.exists() else sys.executable), "-m", "course", "lab",
                               "--no-browser", f"--port={port}", "--ServerApp.port_retries=0",
                               f"--IdentityProvider.token={token}", f"--LabApp.user_settings_dir={tmp / 'settings'}",
                               f"--LabApp.workspaces_dir={tmp / 'workspaces'}"],
                              cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(1200):
            try:
                _api(url, token, "/api/status")
                break
            except OSError:
                if server.poll() is not None:
                    pytest.fail("the launcher exited:\n" + (tmp / "lab.log").read_text()[-3000:])
                time.sleep(0.5)
        else:
            pytest.fail("no JupyterLab in 600 s:\n" + (tmp / "lab.log").read_text()[-3000:])
        yield {"url": url, "token": token, "work": work, "log": tmp / "lab.log"}
    finally:
        stop(server, timeout=20)
        log.close()
        shutil.rmtree(runtime, ignore_errors=True)


def _open(page, url: str, token: str, path: str) -> None:
    """A notebook on a fresh page, once JupyterLab has restored its layout and the kernel is idle
    (with ?reset the layout is restored after the page loads, and a click before that is lost)."""
    page.goto(f"{url}/lab/tree/{path}?reset&token={token}")
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=120_000)
    page.wait_for_selector(".jp-NotebookPanel .jp-Notebook-ExecutionIndicator[data-status='idle']",
                           timeout=120_000)
    page.wait_for_timeout(1000)


def _run_cell(page, index: int) -> None:
    """Select cell ``index`` and run it (Shift+Enter); again if the keystroke was lost."""
    cell = page.locator(".jp-NotebookPanel .jp-Cell").nth(index)
    prompt = cell.locator(".jp-InputPrompt")
    for _ in range(3):
        prompt.click()
        page.keyboard.press("Shift+Enter")
        try:
            page.wait_for_function("(el) => /\\[(\\*|\\d+)\\]/.test(el.textContent)", arg=prompt.element_handle(),
                                   timeout=15_000)
            return
        except Exception:
            continue
    raise AssertionError(f"cell {index} did not start")


@pytest.fixture(scope="module")
def page(student_lab):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield chromium.new_page(viewport={"width": 1400, "height": 1000})
        finally:
            chromium.close()


def test_submit_button_saves_asks_the_id_once_and_writes_the_upload_file(student_lab, page):
    url, token, work = student_lab["url"], student_lab["token"], student_lab["work"]
    path = "作业/1-laplace/laplace.ipynb"
    asked = []
    page.on("dialog", lambda dialog: (asked.append(dialog.message), dialog.accept("2023012345")))
    _open(page, url, token, path)
    # nbgrader's instructor and exchange panels are off; its Validate stays
    assert not page.get_by_text("Formgrader", exact=True).count()
    assert not page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").count()
    # an edit on screen, not saved (autosave is off)
    cells = page.locator(".jp-NotebookPanel .jp-Cell")
    count = cells.count()
    page.locator(".jp-NotebookPanel .jp-MarkdownCell .jp-InputPrompt").first.click()
    page.keyboard.press("Escape")
    page.keyboard.press("b")                                  # a new code cell below, edit mode
    page.wait_for_function(f"() => document.querySelectorAll('.jp-NotebookPanel .jp-Cell').length"
                           f" > {count}", timeout=30_000)
    page.keyboard.press("Enter")
    page.keyboard.insert_text("# 我的答案 7d1c")
    page.keyboard.press("Escape")
    page.wait_for_selector(".jp-mod-dirty", timeout=30_000)
    assert "7d1c" not in (work / path).read_text(encoding="utf-8")
    page.locator("button.dp-course-submit", has_text="提交").first.click()
    upload = work / "提交" / "2023012345_laplace.ipynb"
    page.get_by_text("提交/2023012345_laplace.ipynb（").first.wait_for(timeout=30_000)
    assert asked and "学号" in asked[0]
    assert "7d1c" in upload.read_text(encoding="utf-8") and "7d1c" in (work / path).read_text(encoding="utf-8")
    # the second time, no question: the upload file is written again (waited for, not a fixed 3 s), and
    # the dialog handler, which answers any question, was not called again
    before = upload.stat().st_mtime_ns
    page.locator("button.dp-course-submit").first.click()
    deadline = time.monotonic() + 30
    while upload.stat().st_mtime_ns == before and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    assert upload.stat().st_mtime_ns != before, "the second 提交 wrote no upload file within 30 s"
    assert len(asked) == 1


FIGURE = ["%matplotlib widget\n", "import matplotlib.pyplot as plt\n", "fig, ax = plt.subplots()\n",
          "ax.plot([1, 3, 2])"]
SLIDER = ["import ipywidgets\n", "ipywidgets.IntSlider(3)"]


def test_a_saved_widget_figure_reopens_as_a_picture_or_a_chinese_note(student_lab, page):
    url, token, work = student_lab["url"], student_lab["token"], student_lab["work"]
    cells = [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {}, "outputs": [],
              "source": source} for i, source in enumerate((FIGURE, SLIDER))]
    (work / "figure.ipynb").write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "cells": cells, "metadata": {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}}), encoding="utf-8")
    _open(page, url, token, "figure.ipynb")
    _run_cell(page, 0)
    _run_cell(page, 1)
    page.wait_for_selector(".jp-OutputArea-output canvas", timeout=120_000)       # the live ipympl canvas
    page.wait_for_selector(".widget-slider", timeout=60_000)
    page.keyboard.press("Control+s")
    page.wait_for_function("() => !document.querySelector('.jp-mod-dirty')", timeout=30_000)
    saved = (work / "figure.ipynb").read_text(encoding="utf-8")
    assert "widget-view" not in saved and "image/png" in saved and "运行此单元格以显示交互图" in saved
    # the kernel stops (as when JupyterLab is closed); the notebook is opened again
    for session in _api(url, token, "/api/sessions"):
        _api(url, token, f"/api/sessions/{session['id']}", "DELETE")
    page.goto(f"{url}/lab/tree/figure.ipynb?reset&token={token}")
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=120_000)
    outputs = page.locator(".jp-NotebookPanel .jp-OutputArea")
    outputs.nth(0).locator("img").wait_for(timeout=60_000)
    page.get_by_text("运行此单元格以显示交互图").first.wait_for(timeout=60_000)
    page.wait_for_timeout(2000)          # the widget manager, when there was one, has answered by now
    text = page.locator(".jp-NotebookPanel").inner_text()
    assert "Error displaying widget" not in text and "model not found" not in text
    assert outputs.nth(0).locator("img").count() == 1
    assert "运行此单元格以显示交互图" in outputs.nth(1).inner_text()


def test_nbgrader_panel_times_show_in_the_students_time_zone_to_the_second(student_lab, page):
    """The course extension rewrites nbgrader's UTC-with-microseconds times (the class server's and
    make lab's Assignments panel) to the browser's own zone: Asia/Shanghai here, whatever the host's."""
    url, token = student_lab["url"], student_lab["token"]
    context = page.context.browser.new_context(timezone_id="Asia/Shanghai")
    shanghai = context.new_page()
    try:
        _open(shanghai, url, token, "作业/2-exponential/exponential.ipynb")
        shown = shanghai.evaluate("""() => new Promise(done => {
            const list = document.createElement('div');
            list.id = 'submitted_assignments_list';
            const item = document.createElement('span');
            list.append(item);
            document.body.append(list);
            item.append('2026-11-29 03:21:08.279812 UTC');     // as nbgrader's panel adds it
            setTimeout(() => { done(item.textContent); list.remove(); }, 500);
        })""")
    finally:
        context.close()
    assert shown == "2026-11-29 11:21:08 (UTC+08:00)"
