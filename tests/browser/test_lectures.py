"""Every Chinese lecture notebook in a real browser, the way a student meets it.

One JupyterLab, started by ``make lab`` itself (same command, same environment: no
backend override; only a free port, a token, throw-away settings/workspace folders and a
fresh exchange are added; ``tests/support/labserver.py``, shared with ``test_lab_grading.py``), one headless Debian Chromium driven by Playwright (never a downloaded
browser), the notebooks found by globbing ``course/*.ipynb``. (The English notebooks hold the
same code, built from the same sources: they run headless in ``tests/course/test_lecture_notebooks.py``
and ``tests/course/test_lab_notebooks.py``; here only their Markdown is rendered.) JupyterLab's own
menus are Chinese (the zh_CN language pack). For each Chinese notebook, in sequence, in one
JupyterLab page (the next one opened with File ▸ Open from Path…, the previous one closed):

* open it, Run All, wait until every code cell has run; no error output
  (tracebacks, widget errors) anywhere;
* the setup cell printed the live backend ("widget": ipympl), as a student sees it;
* rendered Markdown has no strikethrough (``<del>``/``<s>``) and no table that fell
  apart into a paragraph of pipes (JupyterLab's own renderer, ``marked``);
* no output image or figure canvas is clipped by a box it sits in (its rendered
  rectangle lies inside every ancestor that hides or scrolls overflow, and an image is
  shown whole, not cropped);
* for every slider of every slider figure: move it ``MOVES_PER_SLIDER`` steps with the
  keyboard (half of them one way, then back to the start) and time each from the key press to
  the first changed frame of the figure (the figure must change). The page's own kernel
  messages (its WebSocket, observed by an init script) split each move into: the page
  sending the new value (``send``), the message waiting for the kernel (``queue``), the
  kernel's work from taking it up to going idle, on the kernel's clock (``kernel``: the
  course's update, matplotlib's blit, ipympl's PNG diff and its sending), and the browser
  from the image's arrival to new pixels (``paint``). Each slider's 95th percentiles are
  printed as a table (with each slider's median), written to ``artifacts/browser/timings.json``
  (``sliders``). The goal (issue 36): one student alone, every slider's 95th percentile from the
  key press to the new pixels within 100 ms. With 4 moves a slider's 95th percentile is about its
  slowest move, which one stall of a shared machine decides, so the test holds each slider's
  median to 100 ms, the kernel's part of it to 50 ms and its 95th percentile to 300 ms, each
  times the load factor measured during the run (see the end of the test); the figures drawn in the
  browser from frames sent once (``DRAWN_IN_BROWSER``) must get no frame from the kernel and be
  faster than the kernel-drawn ones of the same run;
* a fast drag (``BURST_KEYS`` key presses with no pause on the first slider of each
  notebook): the page never sends a widget's next value while the kernel is still handling
  the previous one (checked over every move of every slider: ipywidgets keeps one update in
  flight and merges the rest), and the figure settles within about two redraws of the
  last key;
* screenshots of the notebook's first screen after Run All (of every screen, scrolling, with
  ``DP_BROWSER_SCREENS=all``) and of every slider figure after the moves go to
  ``artifacts/browser/<lang>/``.

Also, in the same single test (so that ``pytest -n 2`` starts one server and one browser):
the page ``make lab`` opens is the rendered table of contents (``course/README.md``: its
tables intact, every notebook listed, the six graded assignments listed in its Chinese part,
which holds no English-only text); JupyterLab's menu bar is Chinese; every other Markdown file of the repository renders
without strikethrough or broken tables, and so do the English notebooks' Markdown cells (each opened
and closed in turn, no dialog); the browser console shows no error (e.g. "widget
model not found"); afterwards, the same server answers nbgrader's course list (the
exchange exists), serves the local MathJax, and its log has no "running over TCP without
encryption" warning.  Autosave is off in the throw-away settings so that the run leaves
the repository's notebooks untouched; kernels are shut down after each notebook.

Cost: the most expensive test of the suite. Measured 15 min on 2 cores under a load
average of 15-25 (11 notebooks run, 11 English ones rendered, 27 sliders × 12 moves; now 8
moves); each notebook's Run All dominates. With the message split and the fast drags: 7 min
(423 s, 27 sliders × 8 moves, one fast drag per notebook) under a load average of 12-19. (Before: 11 min for 20 notebooks run, one move per
figure, under a load average of 10-14.) On an idle machine (load factor 1.16, 2026-11-25): 264 s,
every slider's 95th percentile key press to new pixels 62-126 ms (kernel 14-71 ms), median 65 ms,
max 152 ms over the 216 moves. In the fresh-clone suite (2026-11-28) 246-292 s, of which the
notebooks' Run All 113-138 s, 8 moves per slider and 65 full-page screenshots most of the rest:
now 4 moves per slider (108 moves; a slider's 95th percentile then lies between its two slowest), one
screenshot per notebook and every notebook in one page: 151 s alone on an idle machine (notebooks
110 s, of which Run All 3-11 s each; pages 41 s). The 20 Markdown files and 11 English notebooks
in one page load (a workspace of 31 tabs) took 42-47 s against 116-152 s one at a time, side by
side at a load of 8-11 (2026-11-29), but in a fresh-clone suite the last 16 tabs never rendered
within 180 s: back to one at a time.

Skipped, with the reason, only if /usr/bin/chromium is absent (``tests/browser/ensure_chromium.sh``
installs it and ``fonts-noto-cjk``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import statistics
import time
import urllib.request
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = ROOT / "artifacts" / "browser"
# The Chinese notebooks run in the browser; the English ones (same code, built from the same
# sources) run headless in tests/course/test_lecture_notebooks.py and tests/course/test_lab_notebooks.py, and
# here only their Markdown is rendered.
NOTEBOOKS = sorted((ROOT / "course").glob("*.ipynb"))
EN_NOTEBOOKS = sorted((ROOT / "course" / "en").glob("*.ipynb"))
ASSIGNMENTS = ("laplace", "exponential", "randomized_response", "private_mean", "privacy_budget", "local_frequency")
# Each slider is moved this many times (five steps one way, then back): the 95th
# percentile of its redraw times must stay within the goal.
# DP_BROWSER_MOVES=12 measures more moves (for the per-slider table of hub/README.md), same setup;
# DP_BROWSER_LOAD_FACTOR=1 holds the goal unscaled (a run known to have the machine to itself).
MOVES_PER_SLIDER = int(os.environ.get("DP_BROWSER_MOVES", "4"))
# Developers may narrow the run (e.g. DP_BROWSER_ONLY=6.1): a selection, never a different setup.
ONLY = os.environ.get("DP_BROWSER_ONLY")
# Screenshots of a notebook after Run All: its first screen, or every screen with DP_BROWSER_SCREENS=all
# (for reading the whole page by eye; 65 screens cost about 40 s of the run and check nothing themselves).
ALL_SCREENS = os.environ.get("DP_BROWSER_SCREENS") == "all"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-renderer-backgrounding", "--disable-background-timer-throttling"]
# Issue 36's goal for one student alone: every slider's 95th percentile from the key press to the
# new pixels within 100 ms. Held here: each slider's median within REDRAW_GOAL_MS, the median of
# the kernel's part within KERNEL_GOAL_MS (measured 9-35 ms), its 95th percentile within
# 3 x REDRAW_GOAL_MS, all times REGRESSION_MARGIN and the machine's factor (load or speed; the
# goal itself, margin 1, with DP_BROWSER_LOAD_FACTOR=1).
REDRAW_GOAL_MS = 100.0
KERNEL_GOAL_MS = 50.0
# The machine's speed, measured beside each figure's moves: the median of three renders of a fixed
# matplotlib figure to PNG in this process (Agg, as the kernel's frames), against its time on the
# machine the goals were measured on (85 ms, 2026-11-29, load under 1, 2 cores). A CI run was 4-8x
# slower in every part (kernel 119-176 ms, key to pixels 254-956 ms at a load factor of only 2.25):
# the bounds grow with the larger of this factor and the load factor, never below 1.
REFERENCE_RENDER_MS = 85.0
# Figures whose one slider offers a fixed list of values are drawn in the browser from frames the
# kernel sent once (helpers/lectures/browser_frames.py): a move gets no frame from the kernel, and
# their median key press to new pixels is well below that of the figures the kernel redraws, in
# the same run (2026-11-29, load factor 4.5: 19-36 ms against 52-90 ms; the old, kernel-drawn cost
# of the same figures was 62-86 ms in the run beside it): at most BROWSER_SHARE of it.
DRAWN_IN_BROWSER = {"6.1-basics": {1}, "6.2-laplace": {3, 4}, "6.3-exponential": {1}, "6.5a-rappor-shuffle": {2},
                    "6.5b-synthetic-data": {1}, "lab-ldp-mean": {1}, "lab-sensitivity-histograms": {1}}
BROWSER_SHARE = 0.75
REGRESSION_MARGIN = 2.0
KERNEL_MARGIN = 1.5
CELL_TIMEOUT_S = 150

# One worker runs both tests that start `make lab` in this checkout (one exchange, one gradebook).
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("lab")]


def _api(url: str, token: str, path: str, method: str = "GET"):
    request = urllib.request.Request(f"{url}{path}", method=method, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        body = response.read()
    return json.loads(body) if body else None


@pytest.fixture(scope="module")
def lab(make_lab):
    """The one ``make lab`` of the "lab" group (``tests/support/labserver.py``): fresh exchange, no autosave."""
    return make_lab["url"], make_lab["token"], make_lab["log"]


@pytest.fixture(scope="module")
def browser(lab):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


# --------------------------------------------------------------------------- page scripts

# Markdown as JupyterLab rendered it: strikethrough, and tables that fell apart.
# Within the element of id ``root`` when given (one document of many open in a page), else the page.
MARKDOWN_JS = """(root) => {
  const out = {strike: [], brokenTables: [], tables: 0};
  const scope = root ? document.getElementById(root) : document;
  for (const md of scope.querySelectorAll('.jp-RenderedMarkdown')) {
    for (const el of md.querySelectorAll('del, s, strike')) out.strike.push(el.parentElement.innerText.slice(0, 120));
    for (const p of md.querySelectorAll('p')) {
      const t = p.innerText.trim();
      if (t.startsWith('|') && (t.match(/\\|/g) || []).length >= 3) out.brokenTables.push(t.slice(0, 120));
    }
    out.tables += md.querySelectorAll('table').length;
  }
  return out;
}"""

# Every output image and figure canvas: is any part of it hidden by a box around it?
CLIPPING_JS = """() => {
  const problems = [];
  const items = document.querySelectorAll('.jp-OutputArea img, .jp-OutputArea canvas');
  for (const el of items) {
    const r = el.getBoundingClientRect();
    if (r.width < 2 || r.height < 2) continue;           // e.g. ipympl's empty overlay canvas
    const cell = el.closest('.jp-Cell');
    const where = (cell ? [...cell.parentElement.children].indexOf(cell) : -1);
    if (el.tagName === 'IMG' && el.naturalWidth) {
      const shown = r.height / r.width, natural = el.naturalHeight / el.naturalWidth;
      if (Math.abs(shown - natural) > 0.02 * natural)
        problems.push(`cell ${where}: image ${el.naturalWidth}x${el.naturalHeight} shown distorted/cropped as ${Math.round(r.width)}x${Math.round(r.height)}`);
    }
    for (let a = el.parentElement; a && !a.classList.contains('jp-Notebook'); a = a.parentElement) {
      const s = getComputedStyle(a);
      const hides = (v) => v === 'hidden' || v === 'auto' || v === 'scroll' || v === 'clip';
      const b = a.getBoundingClientRect();
      if (hides(s.overflowY) && (r.bottom > b.bottom + 1 || r.top < b.top - 1) && a.scrollHeight > a.clientHeight + 1)
        problems.push(`cell ${where}: ${el.tagName.toLowerCase()} ${Math.round(r.width)}x${Math.round(r.height)} cut at the bottom/top by a ${Math.round(b.width)}x${Math.round(b.height)} box (${a.className})`);
      if (hides(s.overflowX) && a.scrollWidth > a.clientWidth + 1 && (r.right > b.right + 1 || r.left < b.left - 1))
        problems.push(`cell ${where}: ${el.tagName.toLowerCase()} ${Math.round(r.width)}x${Math.round(r.height)} wider than its ${Math.round(b.width)} px box (${a.className})`);
      if (a.classList.contains('jp-Cell')) break;
    }
  }
  return problems;
}"""

ERRORS_JS = """() => {
  const out = [];
  for (const o of document.querySelectorAll('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')) {
    const t = o.innerText;
    if (/Traceback|Error|Exception/.test(t)) out.push(t.slice(0, 600));
  }
  return out;
}"""

# The landing page's Chinese part (everything before the "English" heading): every block of
# text (paragraph, list item, table row, heading) must hold Chinese characters.
LANDING_JS = """() => {
  const md = document.querySelector('.jp-RenderedMarkdown');
  const out = {englishOnly: [], chinese: '', foundEnglish: false};
  for (const el of md.children) {
    if (/^H1$/.test(el.tagName) && el.innerText.trim().startsWith('English')) { out.foundEnglish = true; break; }
    out.chinese += el.innerText + '\\n';
    const blocks = el.matches('p, h1, h2, h3, h4') ? [el] : [...el.querySelectorAll('li, tr')];
    for (const b of blocks) {
      const t = b.innerText.trim();
      if (t && !/[\\u4e00-\\u9fff]/.test(t)) out.englishOnly.push(t.slice(0, 120));
    }
  }
  return out;
}"""

PROMPTS_JS = """() => [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt')].map(p => p.innerText.trim())"""

# Arm a timer: resolves with the ms from the next keydown to the first animation frame in
# which the figure in slider box `index` shows different pixels (canvas) or a new image (PNG).
ARM_JS = """([index, timeoutMs]) => {
  const box = window.__sliderBoxes()[index];
  const signature = () => {
    const canvas = box.querySelector('.jupyter-matplotlib-canvas-div canvas, canvas');
    if (canvas && canvas.width) {
      const ctx = canvas.getContext('2d');
      const d = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
      let h = 0;
      for (let i = 0; i < d.length; i += 4 * 7) h = (h * 31 + d[i] + 3 * d[i + 1] + 7 * d[i + 2]) | 0;
      return 'c' + h;
    }
    // a PNG output or a frame of a figure drawn in the browser (a Stack of images shows one):
    // changed once the new image has loaded
    const img = box.querySelector('img');
    if (img && !(img.complete && img.naturalWidth)) return null;
    return img ? 'i' + img.src.length + img.src.slice(-200) : 'none';
  };
  const before = signature();
  window.__redraw = new Promise((resolve) => {
    let t0 = null;
    const onKey = () => { if (t0 === null) t0 = performance.now(); };
    document.addEventListener('keydown', onKey, true);
    const started = performance.now();
    const tick = () => {
      const now_ = t0 !== null ? signature() : before;
      if (now_ !== null && now_ !== before) {
        document.removeEventListener('keydown', onKey, true);
        const now = performance.now();
        resolve({ms: now - t0, key: performance.timeOrigin + t0, painted: performance.timeOrigin + now});
      } else if (performance.now() - started > timeoutMs) {
        document.removeEventListener('keydown', onKey, true);
        resolve({ms: null});
      } else requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  return before;
}"""

# Slider boxes: a widget VBox that holds a slider and a figure (ipympl canvas, PNG output, or the
# frames of a figure drawn in the browser: an ipywidgets Image).
SLIDER_BOXES_JS = """() => {
  window.__sliderBoxes = () => [...document.querySelectorAll('.jp-OutputArea .widget-vbox')].filter(b =>
      b.querySelector('.widget-slider, .widget-hslider') &&
      b.querySelector('.jupyter-matplotlib, .jupyter-matplotlib-canvas-div, .widget-output img, .widget-image') &&
      !b.parentElement.closest('.widget-vbox'));
  return window.__sliderBoxes().length;
}"""


# Kernel messages as the page sends and receives them (the page's own WebSocket, observed, not
# changed): the test splits each slider move into the page's send, the kernel's work on the
# slider's message (its iopub "busy" to "idle", kernel clock), and the browser's paint after
# the figure's image arrived. Only comm and status messages are kept (their headers).
WS_RECORDER_JS = """(() => {
  const Native = window.WebSocket;
  const log = window.__wsLog = [];
  const text = new TextDecoder();
  const parse = (data, protocol) => {
    if (typeof data === 'string') { const m = JSON.parse(data); return [m.channel, m.header, m.parent_header, m.content]; }
    const buf = data instanceof ArrayBuffer ? data : (ArrayBuffer.isView(data) ? data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) : null);
    if (!buf || protocol !== 'v1.kernel.websocket.jupyter.org') return null;
    const view = new DataView(buf);
    const n = Number(view.getBigUint64(0, true));
    const off = [...Array(n).keys()].map(i => Number(view.getBigUint64(8 * (i + 1), true)));
    const part = (i) => text.decode(new Uint8Array(buf, off[i], off[i + 1] - off[i]));
    const header = JSON.parse(part(1));
    if (header.msg_type !== 'comm_msg' && header.msg_type !== 'status') return [part(0), header, {}, {}];
    return [part(0), header, JSON.parse(part(2)), JSON.parse(part(4))];
  };
  const record = (direction, data, protocol) => {
    const t = performance.timeOrigin + performance.now();
    try {
      const parsed = parse(data, protocol);
      if (!parsed) return;
      const [channel, header, parent, content] = parsed;
      if (header.msg_type !== 'comm_msg' && header.msg_type !== 'status') return;
      const d = content.data || {};
      log.push({dir: direction, t, channel, type: header.msg_type, id: header.msg_id, date: header.date,
                parent: parent.msg_id || null, comm: content.comm_id || null, method: d.method || null,
                state: d.state || null, image: JSON.stringify(d.content || d.data || '').includes('binary'),
                exec: content.execution_state || null});
    } catch (e) { log.push({dir: direction, t, error: String(e)}); }
  };
  class Recorded extends Native {
    constructor(...args) {
      super(...args);
      if (String(args[0]).includes('/api/kernels/')) this.addEventListener('message', (e) => record('in', e.data, this.protocol));
    }
    send(data) {
      if (String(this.url).includes('/api/kernels/')) record('out', data, this.protocol);
      return super.send(data);
    }
  }
  window.WebSocket = Recorded;
})();"""


_CALIBRATION: dict = {}


def _speed_factor() -> float:
    """How much slower than the reference machine a fixed render is here and now (at least 1)."""
    import io

    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if "fig" not in _CALIBRATION:
        matplotlib.use("Agg")
        fig = Figure(figsize=(6.4, 4), dpi=100)
        FigureCanvasAgg(fig)
        _CALIBRATION["fig"] = fig
    fig = _CALIBRATION["fig"]
    x = np.linspace(-6, 6, 400)
    spent = []
    for _ in range(4):
        fig.clear()
        ax = fig.add_subplot()
        for b in (0.5, 1, 2):
            y = np.exp(-abs(x) / b) / (2 * b)
            ax.plot(x, y)
            ax.fill_between(x, 0, y, alpha=0.2)
        ax.set_title("Laplace")
        ax.grid(True)
        started = time.perf_counter()
        fig.canvas.draw()
        fig.canvas.print_png(io.BytesIO())
        spent.append((time.perf_counter() - started) * 1000)
    return max(1.0, statistics.median(spent[1:]) / REFERENCE_RENDER_MS)


def _p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20, method="inclusive")[-1] if len(values) > 1 else values[0]


def _kernel_ms(date: str) -> float:
    """A kernel message header's date (ISO 8601, kernel clock) in ms since the epoch."""
    return datetime.fromisoformat(date.replace("Z", "+00:00")).timestamp() * 1000.0


def _split_move(records: list[dict], key_t: float, painted_t: float) -> dict | None:
    """One slider move, from the page's kernel messages: the first widget update the page sent
    after the key press, and what the kernel answered to it (same machine: one wall clock).

    ``send_ms``  key press → the page sends the slider's new value;
    ``queue_ms`` sent → the kernel takes the message up (its iopub "busy");
    ``kernel_ms`` "busy" → "idle" on the kernel's clock: the course's update, matplotlib's
    blit, ipympl's PNG diff and sending it: what the course controls;
    ``paint_ms`` the figure's image arrived → its pixels changed on the canvas.
    """
    sent = next((r for r in records if r.get("dir") == "out" and r.get("method") == "update" and r["t"] >= key_t - 1),
                None)
    if sent is None:
        return None
    answer = [r for r in records if r.get("dir") == "in" and r.get("parent") == sent["id"]]
    busy = next((r for r in answer if r["exec"] == "busy"), None)
    idle = next((r for r in answer if r["exec"] == "idle"), None)
    image = next((r for r in answer if r["image"]), None)
    if busy is None or idle is None:
        return None
    return {"send_ms": round(sent["t"] - key_t, 1), "queue_ms": round(_kernel_ms(busy["date"]) - sent["t"], 1),
            "kernel_ms": round(_kernel_ms(idle["date"]) - _kernel_ms(busy["date"]), 1),
            "paint_ms": round(painted_t - image["t"], 1) if image else None}


def _overlapping_updates(records: list[dict]) -> list[str]:
    """Widget updates the page sent while an earlier one of the same widget was still being
    handled by the kernel (sent before that one's "idle" arrived): a queue of redraws."""
    idle_at = {r["parent"]: r["t"] for r in records if r.get("dir") == "in" and r.get("exec") == "idle"}
    pending: dict[str, dict] = {}
    overlaps = []
    for r in sorted((r for r in records if r.get("dir") == "out" and r.get("method") == "update"), key=lambda r: r["t"]):
        before = pending.get(r["comm"])
        if before is not None and idle_at.get(before["id"], float("inf")) > r["t"]:
            overlaps.append(f"comm {r['comm'][:8]}: update {r['state']} sent {r['t'] - before['t']:.0f} ms after "
                            f"{before['state']}, before the kernel had finished that one")
        pending[r["comm"]] = r
    return overlaps


def _drain(page) -> list[dict]:
    return page.evaluate("() => window.__wsLog.splice(0)")


def _wait_idle(page, records: list[dict], timeout_s: float = 15.0) -> None:
    """Collect messages until every update the page sent has its "idle" (or ``timeout_s``)."""
    deadline = time.monotonic() + timeout_s
    while True:
        idle = {r["parent"] for r in records if r.get("dir") == "in" and r.get("exec") == "idle"}
        if all(r["id"] in idle for r in records if r.get("dir") == "out" and r.get("method") == "update") \
                or time.monotonic() > deadline:
            return
        page.wait_for_timeout(20)
        records += _drain(page)


def _wait_kernel_quiet(page, records: list[dict], quiet_ms: float = 300.0, timeout_s: float = 15.0) -> None:
    """Collect messages until the kernel's last status is "idle" and no status came for ``quiet_ms``:
    a figure scrolled into view asks the kernel for its first full draw (and other figures' views
    may do the same), which a slider move measured meanwhile would wait for (measured: 130-1,580 ms
    of queue on the first moves of lab-approximate-dp). That wait is the figure's first display,
    not the slider's redraw."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        records += _drain(page)
        states = [r for r in records if r.get("dir") == "in" and r.get("exec") in ("busy", "idle")]
        now = page.evaluate("() => performance.timeOrigin + performance.now()")
        if (not states or states[-1]["exec"] == "idle") and (not states or now - states[-1]["t"] > quiet_ms):
            return
        page.wait_for_timeout(50)


def _shutdown_kernels(url: str, token: str) -> None:
    for session in _api(url, token, "/api/sessions"):
        try:
            _api(url, token, f"/api/sessions/{session['id']}", method="DELETE")
        except OSError:
            pass


def _screenshots(page, stem: Path) -> int:
    """Save the notebook's first screen, or (``DP_BROWSER_SCREENS=all``) scroll through it and save
    one screenshot per screen; returns how many."""
    scroller = ".jp-NotebookPanel .jp-WindowedPanel-outer"
    height = page.evaluate(f"() => {{ const s = document.querySelector('{scroller}'); return [s.scrollHeight, s.clientHeight]; }}")
    total, screen = height
    shots = 0
    position = 0
    while shots < 40:
        page.evaluate(f"(y) => {{ document.querySelector('{scroller}').scrollTop = y; }}", position)
        page.wait_for_timeout(100)
        page.screenshot(path=f"{stem}-{shots:02d}.png")
        shots += 1
        position += max(screen - 80, 200)
        if position >= total or not ALL_SCREENS:
            break
    return shots


def _notebook_page(browser, shared: dict, console: list[str]):
    """The one JupyterLab page the notebooks run in, one after another (a fresh one after a failure)."""
    if shared.get("page") is None:
        # tall: more of the notebook in its screenshot
        page = browser.new_page(viewport={"width": 1400, "height": 1800})
        page.add_init_script(WS_RECORDER_JS)
        page.on("console", lambda m: console.append(f"{shared['rel']}: {m.type}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: console.append(f"{shared['rel']}: pageerror: {e}"))
        shared["page"] = page
    return shared["page"]


def _run_notebook(browser, url: str, token: str, path: Path, console: list[str], shared: dict) -> dict:
    """Open, Run All, check and move the sliders of one notebook in the shared page ``shared["page"]``,
    then close it and shut its kernel down."""
    rel = path.relative_to(ROOT).as_posix()
    lang = "en" if path.parent.name == "en" else "zh"
    out_dir = ARTIFACTS / lang
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = out_dir / path.stem
    result = {"notebook": rel, "redraw_ms": [], "problems": []}
    fresh = shared.get("page") is None
    page = _notebook_page(browser, shared, console)
    shared["rel"] = rel
    started = time.perf_counter()
    try:
        _open_document(page, url, token, rel, fresh)
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
        page.wait_for_function("() => /Idle|空闲/.test(document.body.innerText)", timeout=60_000)
        page.get_by_role("menuitem", name="运行", exact=True).click()            # JupyterLab in Chinese (zh_CN pack)
        page.get_by_role("menuitem", name="运行所有单元格", exact=True).click()
        page.wait_for_function(
            "() => { const p = [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt')]"
            ".map(x => x.innerText.trim()); return p.length > 0 && p.every(t => /\\[\\d+\\]/.test(t)); }",
            timeout=CELL_TIMEOUT_S * 1000, polling=250)
        page.wait_for_timeout(800)                      # last widget views and figures arrive
        result["run_s"] = round(time.perf_counter() - started, 1)
        text = page.inner_text(".jp-Notebook")
        chosen = re.search(r"(?:绘图后端|plotting backend)[:：]\s*(\w+)", text)
        result["backend"] = chosen.group(1) if chosen else None
        for error in page.evaluate(ERRORS_JS):
            result["problems"].append(f"error output: {error}")
        markdown = page.evaluate(MARKDOWN_JS)
        result["problems"] += [f"strikethrough in Markdown: {t!r}" for t in markdown["strike"]]
        result["problems"] += [f"table rendered as a paragraph: {t!r}" for t in markdown["brokenTables"]]
        result["problems"] += page.evaluate(CLIPPING_JS)
        shot = time.perf_counter()
        result["screens"] = _screenshots(page, stem)
        result["screens_s"] = round(time.perf_counter() - shot, 1)

        n_boxes = page.evaluate(SLIDER_BOXES_JS)
        result["sliders"] = n_boxes
        result["per_slider"] = []
        messages: list[dict] = []
        phases = result["phases_s"] = {"quiet": 0.0, "speed": 0.0, "moves": 0.0, "burst": 0.0, "shots": 0.0}
        for index in range(n_boxes):
            box = page.evaluate_handle(f"() => window.__sliderBoxes()[{index}]").as_element()
            box.scroll_into_view_if_needed()
            lap = time.perf_counter()
            page.wait_for_timeout(300)
            _wait_kernel_quiet(page, messages)
            phases["quiet"] += time.perf_counter() - lap
            lap = time.perf_counter()
            speed = round(_speed_factor(), 2)
            phases["speed"] += time.perf_counter() - lap
            lap = time.perf_counter()
            handle = None
            # drawn in the browser from frames sent once (helpers/lectures/browser_frames.py) or by the kernel
            drawn = box.evaluate("b => b.querySelector('.widget-image') && !b.querySelector('.jupyter-matplotlib')"
                                 " ? 'browser' : 'kernel'")
            for handle in box.query_selector_all(".noUi-handle, .slider-handle"):
                name = handle.evaluate("h => (h.closest('.widget-slider, .widget-hslider')"
                                       "?.querySelector('.widget-label')?.innerText || '').trim()")
                times, stuck, splits = [], [], []
                direction = "ArrowRight"
                for move in range(MOVES_PER_SLIDER):
                    if move == MOVES_PER_SLIDER // 2:
                        direction = "ArrowLeft" if direction == "ArrowRight" else "ArrowRight"
                    # at an end a step does nothing: turn round
                    if handle.get_attribute("aria-valuenow") == handle.get_attribute(
                            "aria-valuemax" if direction == "ArrowRight" else "aria-valuemin"):
                        direction = "ArrowLeft" if direction == "ArrowRight" else "ArrowRight"
                    messages += _drain(page)
                    page.evaluate(ARM_JS, [index, 15_000])
                    handle.focus()
                    page.keyboard.press(direction)
                    timing = page.evaluate("() => window.__redraw")
                    if timing["ms"] is None:
                        stuck.append(handle.get_attribute("aria-valuenow"))
                    else:
                        times.append(round(timing["ms"], 1))
                    page.wait_for_timeout(60)          # a student's next key press, not a queue of them
                    move = _drain(page)
                    _wait_idle(page, move)
                    split = _split_move(move, timing["key"], timing["painted"]) if timing["ms"] is not None else None
                    if split:
                        splits.append(split)
                    messages += move
                kernel = [m["kernel_ms"] for m in splits]
                entry = {"figure": index + 1, "slider": name, "drawn": drawn, "redraw_ms": times, "speed_factor": speed,
                         "kernel_frames": sum(m["paint_ms"] is not None for m in splits),
                         "p95_ms": _p95(times) if times else None, "moves": splits,
                         "kernel_p95_ms": _p95(kernel) if kernel else None,
                         **{f"{part}_p95_ms": _p95(v) if (v := [m[f"{part}_ms"] for m in splits if m[f"{part}_ms"] is not None]) else None
                            for part in ("send", "queue", "paint")}}
                if len(splits) < len(times):
                    result["problems"].append(f"slider figure {index + 1}, slider {name!r}: the kernel's answer to "
                                              f"{len(times) - len(splits)} of {len(times)} moves was not found in the "
                                              "page's messages")
                result["per_slider"].append(entry)
                result["redraw_ms"] += times
                if stuck:
                    result["problems"].append(f"slider figure {index + 1}, slider {name!r}: the figure did not change "
                                              f"within 15 s at {len(stuck)} of {MOVES_PER_SLIDER} moves (values {stuck})")
            phases["moves"] += time.perf_counter() - lap
            lap = time.perf_counter()
            if index == 0 and handle is not None:
                result["burst"] = _burst(page, handle)
                messages += result["burst"].pop("records")
            phases["burst"] += time.perf_counter() - lap
            lap = time.perf_counter()
            # the last frame is painted (its move was timed to new pixels and the kernel is idle):
            # two animation frames, not a fixed 300 ms per figure
            page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
            box.screenshot(path=f"{stem}-slider{index + 1}.png")
            phases["shots"] += time.perf_counter() - lap
        result["phases_s"] = {k: round(v, 1) for k, v in phases.items()}
        # a fast drag never queues redraws: the page holds a widget's next value back until the
        # kernel has finished the previous one (ipywidgets' one-message-in-flight throttle)
        result["problems"] += [f"queued redraw: {o}" for o in _overlapping_updates(messages)]
        # a moved slider must not leave a clipped figure or an error behind either
        result["problems"] += [f"after moving sliders: {p}" for p in page.evaluate(CLIPPING_JS)]
        for error in page.evaluate(ERRORS_JS):
            if f"error output: {error}" not in result["problems"]:
                result["problems"].append(f"error output after moving sliders: {error}")
        result["problems"] += _close_document(page, rel)
    except Exception as error:  # keep the evidence, then report; the next notebook gets a new page
        page.screenshot(path=f"{stem}-failure.png")
        result["problems"].append(f"{type(error).__name__}: {str(error)[:500]}")
        page.close()
        shared["page"] = None
    finally:
        _shutdown_kernels(url, token)
    result["total_s"] = round(time.perf_counter() - started, 1)
    return result


BURST_KEYS = 8


def _burst(page, handle) -> dict:
    """A fast drag: ``BURST_KEYS`` key presses with no pause (a student holding an arrow key),
    towards the slider's farther end. Returns how many updates the page sent, how many
    redraws the kernel made, and the ms from the last key press that moved the slider until
    the kernel finished its last redraw (what a student waits)."""
    records = _drain(page)
    handle.focus()
    now, low, high = (float(handle.get_attribute(a)) for a in ("aria-valuenow", "aria-valuemin", "aria-valuemax"))
    key = "ArrowLeft" if now - low > high - now else "ArrowRight"
    start = last_key = time.time() * 1000.0
    for _ in range(BURST_KEYS):
        before, pressed = handle.get_attribute("aria-valuenow"), time.time() * 1000.0
        page.keyboard.press(key)
        if handle.get_attribute("aria-valuenow") != before:
            last_key = pressed
    records += _drain(page)
    _wait_idle(page, records)
    sent = [r for r in records if r.get("dir") == "out" and r.get("method") == "update" and r["t"] >= start - 1]
    idle = {r["parent"]: r for r in records if r.get("dir") == "in" and r.get("exec") == "idle"}
    done = [_kernel_ms(idle[r["id"]]["date"]) for r in sent if r["id"] in idle]
    return {"keys": BURST_KEYS, "updates_sent": len(sent), "redraws": len(done),
            "settled_ms": round(max(done) - last_key, 1) if done else None, "records": records}


def _table_of_contents(browser, url: str, token: str) -> list[str]:
    """What `make lab` opens first: course/README.md as rendered Markdown, its tables intact."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(f"{url}/?token={token}")     # make lab's default URL: the README
        page.wait_for_selector(".jp-RenderedMarkdown table", timeout=60_000)
        opened = page.url
        markdown = page.evaluate(MARKDOWN_JS)
        page.screenshot(path=str(ARTIFACTS / "README.png"), full_page=True)
        toc = page.inner_text(".jp-RenderedMarkdown")
        landing = page.evaluate(LANDING_JS)
        menus = page.evaluate("() => [...document.querySelectorAll('#jp-menu-panel .lm-MenuBar-itemLabel, "
                              ".lm-MenuBar-content .lm-MenuBar-itemLabel')].map(e => e.innerText.trim())")
    finally:
        page.close()
    problems = [] if "course/README.md" in opened else [f"make lab opened {opened}, not course/README.md"]
    problems += [f"course/README.md: strikethrough {t!r}" for t in markdown["strike"]]
    problems += [f"course/README.md: table rendered as a paragraph {t!r}" for t in markdown["brokenTables"]]
    if markdown["tables"] < 3:
        problems.append(f"course/README.md: {markdown['tables']} tables rendered, expected >= 3")
    # every lecture notebook is in the rendered table of contents
    problems += [f"{p.stem} missing from the table of contents" for p in NOTEBOOKS if p.stem not in toc]
    # the student's landing page: a Chinese part without English-only text, the six assignments
    problems += [f"course/README.md: English-only text in the Chinese part: {t!r}" for t in landing["englishOnly"]]
    if not landing["foundEnglish"]:
        problems.append("course/README.md: no '# English' heading after the Chinese part")
    problems += [f"course/README.md: assignment {a} not listed in the Chinese part" for a in ASSIGNMENTS
                 if a not in landing["chinese"]]
    # JupyterLab itself in Chinese (the zh_CN language pack selected by .lab-settings)
    for english, chinese in (("File", "文件"), ("Edit", "编辑"), ("View", "查看"), ("Run", "运行"), ("Kernel", "内核"),
                             ("Help", "帮助")):
        if english in menus or chinese not in menus:
            problems.append(f"JupyterLab menu bar not in Chinese: {menus}")
            break
    return problems


DOCUMENT_TAB = '#jp-main-dock-panel .lm-TabBar-tab[data-type="document-title"]'


def _open_document(page, url: str, token: str, rel: str, fresh: bool) -> None:
    """Make ``rel`` the page's one open document: load JupyterLab on it (``fresh``), or, as a
    person does without reloading JupyterLab (a reload per file cost about 3 s), File ▸ Open
    from Path… (the previous document closed first, :func:`_close_document`)."""
    if fresh:
        page.goto(f"{url}/lab/tree/{rel}?reset&token={token}")
    else:
        page.locator("#jp-menu-panel .lm-MenuBar-itemLabel", has_text="文件").first.click()
        page.locator(".lm-Menu-itemLabel", has_text="从路径打开").first.click()
        page.locator(".jp-Dialog input").fill(rel)
        page.keyboard.press("Enter")
    # the file's tab is the only document tab and the current one
    page.wait_for_function(
        """(name) => {
             const tabs = document.querySelectorAll('#jp-main-dock-panel .lm-TabBar-tab[data-type="document-title"]');
             return tabs.length === 1 && tabs[0].classList.contains('lm-mod-current') && tabs[0].title.includes(name);
           }""", arg=rel, timeout=60_000)


def _close_document(page, rel: str) -> list[str]:
    """Close the page's one document (``rel``), answering JupyterLab's question if it asks."""
    problems = _dismiss_dialog(page, rel)
    page.locator(DOCUMENT_TAB + " .lm-TabBar-tabCloseIcon").click()
    # closed at once, or first a question (a dialog may take a moment to appear)
    page.wait_for_function("(tab) => !document.querySelector(tab) || document.querySelector('.jp-Dialog')",
                           arg=DOCUMENT_TAB, timeout=30_000)
    problems += _dismiss_dialog(page, rel)
    page.wait_for_function("(tab) => !document.querySelector(tab)", arg=DOCUMENT_TAB, timeout=30_000)
    return problems


# Every document tab of the page: its path (the tab's tooltip: "名称: …\n路径: <path>\n…"), the id of its
# widget, and whether its Markdown has rendered: a Markdown Preview's rendered node filled, a notebook's
# Markdown cells all rendered and as many as the file has (``counts``: path -> Markdown cells).
RESTORED_JS = """(counts) => [...document.querySelectorAll('#jp-main-dock-panel .lm-TabBar-tab')].map(tab => {
  const path = (tab.title.split('\\n')[1] || '').replace(/^[^:：]*[:：]\\s*/, '');
  const widget = document.getElementById(tab.dataset.id);
  const rendered = widget ? [...widget.querySelectorAll('.jp-RenderedMarkdown')].filter(m => m.childElementCount > 0) : [];
  const cells = widget ? widget.querySelectorAll('.jp-MarkdownCell').length : 0;
  const done = counts[path] === undefined ? false
      : counts[path] === 0 ? rendered.length > 0
      : cells === counts[path] && widget.querySelectorAll('.jp-MarkdownCell .jp-RenderedMarkdown').length === cells
        && rendered.length >= cells;
  return {path, id: tab.dataset.id, done};
})"""


# The open document's Markdown has rendered: a Markdown file's preview filled (``cells`` 0), or every
# Markdown cell of a notebook rendered, as many as its file has.
RENDERED_JS = """(cells) => {
  const dock = document.getElementById('jp-main-dock-panel');
  const filled = [...dock.querySelectorAll('.jp-RenderedMarkdown')].filter(m => m.childElementCount > 0).length;
  if (!cells) return filled > 0;
  return dock.querySelectorAll('.jp-MarkdownCell').length === cells
      && dock.querySelectorAll('.jp-MarkdownCell .jp-RenderedMarkdown').length === cells && filled >= cells;
}"""


def _rendered_markdown(browser, url: str, token: str, paths: list[Path], ready: str) -> list[str]:
    """Open each file in one JupyterLab page, one at a time; strikethrough or broken tables in its Markdown,
    judged once all of it has rendered (a fixed 300-500 ms after the first rendered block before: 11.5 s
    of the 31 files, and no proof that the rest had rendered)."""
    problems = []
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    previous = ""
    try:
        for i, path in enumerate(paths):
            rel = path.relative_to(ROOT).as_posix()
            if i:
                problems += _close_document(page, previous)
            _open_document(page, url, token, rel, fresh=i == 0)
            page.wait_for_selector(ready, timeout=60_000)
            cells = (sum(c["cell_type"] == "markdown" for c in json.loads(path.read_text(encoding="utf-8"))["cells"])
                     if path.suffix == ".ipynb" else 0)
            try:
                page.wait_for_function(RENDERED_JS, arg=cells, timeout=60_000, polling=50)
            except Exception as error:  # judged as far as it rendered, and said
                problems.append(f"{rel}: its Markdown did not all render within 60 s ({type(error).__name__})")
            markdown = page.evaluate(MARKDOWN_JS)
            problems += [f"{rel}: strikethrough {t!r}" for t in markdown["strike"]]
            problems += [f"{rel}: table rendered as a paragraph {t!r}" for t in markdown["brokenTables"]]
            previous = rel
        problems += _dismiss_dialog(page, previous)
    finally:
        page.close()
    return problems


def _dismiss_dialog(page, rel: str) -> list[str]:
    """A dialog JupyterLab opened over ``rel``: none is expected, except "save your changes?" on
    closing a notebook whose kernel started (its language_info metadata was filled in), which is
    answered "discard" (autosave is off: the repository's files stay as they are)."""
    dialog = page.locator(".jp-Dialog")
    if not dialog.count():
        return []
    text = dialog.first.inner_text()
    discard = dialog.first.locator(".jp-Dialog-button.jp-mod-warn")
    if discard.count():
        discard.first.click()
        page.wait_for_timeout(50)
        return []
    page.screenshot(path=str(ARTIFACTS / f"dialog-{Path(rel).stem}.png"))
    page.keyboard.press("Escape")
    page.wait_for_timeout(200)
    return [f"{rel}: JupyterLab opened a dialog: {' '.join(text.split())[:300]!r}"]


def _markdown_files(browser, url: str, token: str) -> list[str]:
    """Every Markdown file of the repository (notebook sources excepted: their cells are
    checked in the notebooks) rendered by JupyterLab's Markdown Preview."""
    files = [p for p in sorted(ROOT.rglob("*.md"))
             if not any(part in {".venv", "_src", "corpus", "node_modules", "artifacts", ".git"} or part.startswith(".")
                        for part in p.relative_to(ROOT).parts)]
    problems = [] if any(p.name == "README.md" for p in files) else ["no README.md found"]
    return problems + _rendered_markdown(browser, url, token, files, ".jp-RenderedMarkdown")


def _english_markdown(browser, url: str, token: str) -> list[str]:
    """The English notebooks' Markdown as JupyterLab renders it (their code runs headless elsewhere)."""
    try:
        return _rendered_markdown(browser, url, token, EN_NOTEBOOKS, ".jp-Notebook .jp-MarkdownCell .jp-RenderedMarkdown")
    finally:
        _shutdown_kernels(url, token)


def _server_side(url: str, token: str, log: Path, since: int = 0) -> list[str]:
    """After the notebooks ran: the same server's nbgrader, MathJax and log (from byte ``since``: the
    server is shared by the @lab group, and nbgrader's Validate in another test starts its own
    kernels over TCP, which is nbgrader's choice, not the course's)."""
    problems = []
    # nbgrader's Assignments panel asks for the courses: works without any exchange setup
    courses = _api(url, token, "/courses")
    if courses.get("success") is not True:
        problems.append(f"nbgrader /courses failed: {str(courses)[:500]}")
    # MathJax for the Formgrader and feedback pages is served locally
    for path in ("/static/jupyter_server_mathjax/MathJax.js",
                 "/static/jupyter_server_mathjax/config/TeX-AMS-MML_HTMLorMML-full.js"):
        request = urllib.request.Request(f"{url}{path}", headers={"Authorization": f"token {token}"})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                if response.status != 200 or len(response.read()) < 1000:
                    problems.append(f"{path} not served")
        except OSError as error:
            problems.append(f"{path}: {error}")
    # kernels over IPC sockets: no "running over TCP without encryption" at every kernel start
    with open(log, "rb") as f:
        f.seek(since)
        written = f.read().decode("utf-8", errors="replace")
    if "TCP without encryption" in written:
        problems.append("kernels started by make lab warn about TCP without encryption")
    return problems


def test_the_course_in_the_browser(lab, browser):
    """One test (one server, one browser, also under xdist): TOC, Markdown, notebooks, server."""
    url, token, log = lab
    since = Path(log).stat().st_size
    assert len(NOTEBOOKS) >= 10 and len(EN_NOTEBOOKS) == len(NOTEBOOKS), (NOTEBOOKS, EN_NOTEBOOKS)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    pages, seconds = [], []
    # One document at a time: session 12 tried all 31 restored as tabs of one page (42 s instead of
    # 116 s on a loaded machine), and in a fresh-clone suite the last 16 never rendered within 180 s.
    for check in (_table_of_contents, _markdown_files, _english_markdown):
        started = time.monotonic()
        pages += check(browser, url, token)
        seconds.append(time.monotonic() - started)
    print("pages: table of contents {:.1f} s, Markdown files {:.1f} s, English notebooks' Markdown {:.1f} s"
          .format(*seconds))
    console: list[str] = []
    chosen = [p for p in NOTEBOOKS if not ONLY or p.stem.startswith(ONLY)]
    load_before = os.getloadavg()[0]
    shared: dict = {}
    try:
        results = [_run_notebook(browser, url, token, path, console, shared) for path in chosen]
    finally:
        if shared.get("page") is not None:
            shared["page"].close()
    redraws = [ms for r in results for ms in r["redraw_ms"]]
    sliders = [{"notebook": r["notebook"], **s} for r in results for s in r.get("per_slider", [])]
    (ARTIFACTS / "timings.json").write_text(json.dumps({"sliders": sliders, "results": results, "console_errors": console,
                                                        "loadavg": [load_before, os.getloadavg()[0]]},
                                                       ensure_ascii=False, indent=1), encoding="utf-8")
    for r in results:
        print(f"{r['notebook']}: run {r.get('run_s')} s, total {r['total_s']} s (sliders: {r.get('phases_s')}), "
              f"{r.get('sliders', 0)} slider figures, redraw ms {r['redraw_ms']}, {len(r['problems'])} problems")
    print(f"{'notebook':<36} {'fig':>3} {'slider':<8} {'moves':>5} {'median':>6} {'p95 key→pixels':>14} {'kernel':>7} "
          f"{'send':>6} {'queue':>6} {'paint':>6}   (median key→pixels, then 95th percentiles, ms)")
    for e in sliders:
        median = f"{statistics.median(e['redraw_ms']):>6.0f}" if e["redraw_ms"] else f"{'-':>6}"
        print(f"{e['notebook']:<36} {e['figure']:>3} {e['slider'][:8]:<8} {len(e['redraw_ms']):>5} {median} "
              + " ".join(f"{e[k]:>{w}.0f}" if e.get(k) is not None else f"{'-':>{w}}"
                         for k, w in (("p95_ms", 14), ("kernel_p95_ms", 7), ("send_p95_ms", 6),
                                      ("queue_p95_ms", 6), ("paint_p95_ms", 6))))
    for r in results:
        if r.get("burst"):
            print(f"{r['notebook']}: fast drag of {r['burst']['keys']} keys -> {r['burst']['updates_sent']} updates sent, "
                  f"{r['burst']['redraws']} redraws, settled {r['burst']['settled_ms']} ms after the last key")
    if redraws:
        print(f"redraw input -> new pixels: median {statistics.median(redraws):.0f} ms, "
              f"max {max(redraws):.0f} ms over {len(redraws)} moves of {len(sliders)} sliders")
    problems = pages + [f"{r['notebook']}: {p}" for r in results for p in r["problems"]]
    # e.g. the "widget model not found" error once seen on first runs of 6.1 and 6.2
    problems += [f"browser console: {line}" for line in console]
    problems += [f"{r['notebook']}: the setup cell chose the {r['backend']!r} backend, not the live ipympl one"
                 for r in results if r.get("backend") not in (None, "widget")]
    problems += _server_side(url, token, log, since)
    assert any(r.get("backend") == "widget" for r in results), "no notebook printed its plotting backend"
    assert not problems, "\n".join(problems)
    assert len(sliders) >= (15 if not ONLY else 1), "too few sliders were found in the page"
    # The goal holds on an otherwise idle machine; on a shared one (CI runners, the other
    # xdist worker) the bound grows with the load measured during the run.
    load = max(1.0, (load_before + os.getloadavg()[0]) / 2 / (os.cpu_count() or 1))
    if os.environ.get("DP_BROWSER_LOAD_FACTOR"):   # e.g. 1: the quiet machine's goal, whatever the load average says
        load = float(os.environ["DP_BROWSER_LOAD_FACTOR"])
    fixed = bool(os.environ.get("DP_BROWSER_LOAD_FACTOR"))
    # In the suite the bounds guard against a regression (twice the goal, times the machine's factor):
    # the goal itself is not met yet on this machine (2026-11-29, load 1-2: medians 80-126 ms key to
    # pixels, kernel 24-35 ms) and a bound at the goal fails on noise. DP_BROWSER_LOAD_FACTOR=1 holds
    # the goal itself (issue 36), for a run known to have the machine to itself.
    # The kernel's part (what the course controls, measured apart from the browser's paint) has a
    # smaller margin: a mutant sleeping 120 ms per frame (kernel medians 185-287 ms at load 2) fails
    # it, and passes the key-to-pixels bounds.
    margin = 1.0 if fixed else REGRESSION_MARGIN
    factors = {id(e): margin * (load if fixed else max(load, e.get("speed_factor") or 1.0)) for e in sliders}
    print(f"load factor {load:.2f}, speed factors {sorted(e.get('speed_factor') or 1.0 for e in sliders)}: bounds for "
          f"every slider: median {REDRAW_GOAL_MS:.0f} ms (the kernel's part {KERNEL_GOAL_MS:.0f} ms), 95th percentile "
          f"{3 * REDRAW_GOAL_MS:.0f} ms, each times {margin:g} (the kernel's {KERNEL_MARGIN if margin > 1 else 1:g}) and the "
          "larger of the two factors")
    # On a quiet machine (load factor 1): a median move within 100 ms from the key press to the new
    # pixels (the page, the server, the kernel and Chromium's paint), of which the kernel's part
    # (the course's update, the blit, the frame's encoding: what the course controls) within 50 ms,
    # and no move of the four past 300 ms (one stall allowed for); a redraw twice as slow as now
    # fails the first (2026-11-29, load 6-9 on 2 cores: medians 63-113 ms key to pixels, kernel
    # 9-21 ms; hub/README.md, Sizing). On a shared machine (CI runners, the other xdist worker, other jobs)
    # every part stalls on its own (a CI run measured 144 ms in the kernel and 360 ms of paint for
    # one move at load 3.4; another 119-176 ms in the kernel at a load factor of 2.25: a slower
    # CPU), so the bounds grow with the larger of the load factor and the speed factor measured
    # beside each figure (REFERENCE_RENDER_MS): there the test catches a redraw slow beyond the
    # machine, not one twice as slow. DP_BROWSER_MOVES=8 DP_BROWSER_LOAD_FACTOR=1 on a quiet
    # machine checks the goal itself (p95 within 100 ms: read it in the table).
    slow = [f"{e['notebook']} figure {e['figure']} slider {e['slider']!r}: {what} {value:.0f} ms "
            f"(bound {goal * factors[id(e)]:.0f} ms)"
            for e in sliders for value, what, goal in (
                (statistics.median(e["redraw_ms"]) if e["redraw_ms"] else None, "median key press to new pixels",
                 REDRAW_GOAL_MS),
                (statistics.median([m["kernel_ms"] for m in e["moves"]]) if e["moves"] else None,
                 "median in the kernel", KERNEL_GOAL_MS * (KERNEL_MARGIN / margin)),
                (e.get("p95_ms"), "p95 key press to new pixels", 3 * REDRAW_GOAL_MS))
            if value is not None and value > goal * factors[id(e)]]
    # A fast drag: at most one redraw in flight and one merged value waiting, so a student waits
    # at most about two redraws (and transport) after the last key, never a queue of them.
    slow += [f"{r['notebook']}: a fast drag settled {r['burst']['settled_ms']:.0f} ms after the last key"
             for r in results if r.get("burst") and r["burst"]["settled_ms"] is not None
             and r["burst"]["settled_ms"] > 3 * REDRAW_GOAL_MS * max(
                 [load] + [factors[id(e)] for e in sliders if e["notebook"] == r["notebook"]])]
    # Figures drawn in the browser: the expected ones are, and the kernel sends them no frame per move;
    # pooled over the run, their median move within BROWSER_SHARE of the kernel-drawn figures' median.
    for e in sliders:
        stem = Path(e["notebook"]).stem
        expected = e["figure"] in DRAWN_IN_BROWSER.get(stem, ())
        if (e.get("drawn") == "browser") != expected:
            slow.append(f"{e['notebook']} figure {e['figure']} slider {e['slider']!r}: drawn by the {e.get('drawn')}, "
                        f"expected {'in the browser' if expected else 'by the kernel'} (DRAWN_IN_BROWSER)")
        elif expected and e.get("kernel_frames"):
            slow.append(f"{e['notebook']} figure {e['figure']} slider {e['slider']!r}: the kernel sent a frame at "
                        f"{e['kernel_frames']} moves of a figure drawn in the browser")
    in_browser = [ms for e in sliders if e.get("drawn") == "browser" for ms in e["redraw_ms"]]
    by_kernel = [ms for e in sliders if e.get("drawn") == "kernel" for ms in e["redraw_ms"]]
    if len(in_browser) >= 4 and len(by_kernel) >= 4:
        print(f"median key press to new pixels: drawn in the browser {statistics.median(in_browser):.0f} ms "
              f"({len(in_browser)} moves), by the kernel {statistics.median(by_kernel):.0f} ms ({len(by_kernel)} moves)")
        if statistics.median(in_browser) > BROWSER_SHARE * statistics.median(by_kernel):
            slow.append(f"figures drawn in the browser: median {statistics.median(in_browser):.0f} ms, more than "
                        f"{BROWSER_SHARE:g} x the kernel-drawn figures' {statistics.median(by_kernel):.0f} ms")
    assert not slow, (f"redraw goal {REDRAW_GOAL_MS:.0f} ms (kernel {KERNEL_GOAL_MS:.0f} ms) x load {load:.2f} or speed "
                      "exceeded:\n" + "\n".join(slow))
