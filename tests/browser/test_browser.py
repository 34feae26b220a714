"""Real-browser test: JupyterLab + Debian's Chromium (headless) driven by Playwright.

A temporary JupyterLab server (localhost, random free port, random token, --no-browser,
isolated config/workspace dirs, root = a temp folder holding a copy of the lecture
notebook) opens ``course/en/6.1-basics.ipynb``, runs all cells with the live ipympl
backend, moves the ε slider of the Definition 6-1 figure with the keyboard, and checks
that (1) the slider's readout changed and (2) the figure's canvas pixels changed.
Screenshots go to ``artifacts/`` (git-ignored): ``browser-6.1-before.png`` and
``browser-6.1-after.png``.

Skipped, with the reason, only if /usr/bin/chromium is absent (``tests/browser/ensure_chromium.sh``
installs it).  Never downloads a browser (no ``playwright install``).
"""

from __future__ import annotations

import io
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = ROOT / "artifacts"
# The English build: Debian's Chromium has no CJK font by default, and the screenshot is
# meant to be read. (The Chinese build runs the same code; see tests/test_lecture_notebooks.py.)
NOTEBOOK = ROOT / "course" / "en" / "6.1-basics.ipynb"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture()
def lab(tmp_path):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not found: run tests/browser/ensure_chromium.sh (apt-get install chromium)")
    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(NOTEBOOK, root / NOTEBOOK.name)
    port, token = _free_port(), secrets.token_hex(16)
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}    # live kernel: ipympl
    env.update(DP_COURSE_BACKEND="widget", JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
               JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"))
    # Render every cell (no windowing), so the widget's canvas exists wherever it is on the page.
    tracker = tmp_path / "settings" / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
    tracker.parent.mkdir(parents=True)
    tracker.write_text('{"windowingMode": "none"}', encoding="utf-8")
    log = open(tmp_path / "lab.log", "w")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         f"--ServerApp.token={token}", f"--ServerApp.root_dir={root}",
         f"--LabApp.workspaces_dir={tmp_path / 'workspaces'}",
         f"--LabApp.user_settings_dir={tmp_path / 'settings'}",
         "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
        + (["--allow-root"] if os.geteuid() == 0 else []),
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=1)
                break
            except OSError:
                if server.poll() is not None:
                    pytest.fail("jupyter lab exited:\n" + (tmp_path / "lab.log").read_text()[-3000:])
                time.sleep(0.5)
        else:
            pytest.fail("jupyter lab did not start in 60 s:\n" + (tmp_path / "lab.log").read_text()[-3000:])
        yield url, token
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)    # the server we started, and its kernels
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
        log.close()


def _pixels(png: bytes) -> np.ndarray:
    from matplotlib.image import imread

    return imread(io.BytesIO(png), format="png")


def test_epsilon_slider_redraws_the_live_figure(lab):
    from playwright.sync_api import sync_playwright

    url, token = lab
    ARTIFACTS.mkdir(exist_ok=True)
    start = time.perf_counter()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{url}/lab/tree/{NOTEBOOK.name}?token={token}")
            page.wait_for_selector(".jp-Notebook", timeout=60_000)
            # the kernel must be up before "Run All Cells", or the run is silently dropped
            page.wait_for_function("() => document.body.innerText.includes('Idle')", timeout=60_000)
            news = page.get_by_role("button", name="No", exact=True)   # "official Jupyter news?" toast
            if news.count():
                news.first.click()
            page.get_by_role("menuitem", name="Run", exact=True).click()
            page.get_by_role("menuitem", name="Run All Cells", exact=True).click()

            box = page.locator(".widget-vbox").filter(has=page.locator(".widget-hslider")).first
            box.wait_for(state="attached", timeout=60_000)
            box.scroll_into_view_if_needed()
            canvas = box.locator(".jupyter-matplotlib-canvas-div").first
            canvas.wait_for(timeout=60_000)
            canvas.scroll_into_view_if_needed()
            page.wait_for_timeout(1500)                   # first frame arrives from the kernel
            readout = box.locator(".widget-readout").first
            before_value = readout.inner_text()
            before = canvas.screenshot()
            box.screenshot(path=str(ARTIFACTS / "browser-6.1-before.png"))

            handle = box.locator(".noUi-handle").first
            handle.focus()
            for _ in range(12):                            # 12 steps of 0.05 on log10(ε): 0.5 -> ~2
                page.keyboard.press("ArrowRight")
            page.wait_for_function(
                "([el, old]) => el.innerText !== old", arg=[readout.element_handle(), before_value], timeout=20_000)
            page.wait_for_timeout(2000)                    # let the kernel redraw and send the frame
            after_value = readout.inner_text()
            after = canvas.screenshot()
            box.screenshot(path=str(ARTIFACTS / "browser-6.1-after.png"))
            page.screenshot(path=str(ARTIFACTS / "browser-6.1-page.png"))
        except Exception:
            page.screenshot(path=str(ARTIFACTS / "browser-6.1-failure.png"), full_page=True)
            raise
        finally:
            browser.close()
    changed = np.abs(_pixels(before)[..., :3] - _pixels(after)[..., :3]).max(axis=2) > 0.1
    print(f"slider {before_value} -> {after_value}; {int(changed.sum())} canvas pixels changed; "
          f"{time.perf_counter() - start:.1f} s in the browser")
    assert before_value != after_value
    assert changed.sum() > 500, "the figure did not change when the ε slider moved"
    assert time.perf_counter() - start < 90
