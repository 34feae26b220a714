"""The class-meeting slides in Chromium at 1280 x 720 (issue 23): ``make slides`` builds the six decks
(2 课时: 2, 4 课时: 4), and every slide of every deck is shown as a lecturer would show it
(``Reveal.slide``) and checked:

* nothing is cut off: every element of the slide lies inside the slide box (reveal.js's scaled
  1280 x 720 ``.slides`` area) and inside the window, every figure has loaded;
* no request leaves the machine: every request that is not ``file:`` or ``data:`` is refused
  (``route``) and fails the test;
* no raw TeX: the slide's visible text holds no ``$`` and no ``\\command``, every formula was
  typeset by KaTeX (no ``.tex-error``);
* Chinese glyphs render: every Chinese character is in a font Chromium used for its element
  (CDP ``CSS.getPlatformFontsForNode``, checked against the font files: no tofu).

* nothing raw (issue 34): no Markdown left as text (``![``, ``](``, ``**``, a line starting with
  ``#``), nothing but the section crumb above the title, no empty slide body;
* figures for the back row: every figure fills the slide under its title and its smallest text
  is at least 24 px on the 720 px slide;
* the speaker view keeps the notes' math: a superscript ($e^{\\pm\\varepsilon}$) is drawn raised;
* a table (表 6-1, 表 6-2 …) is a table with its text as large as the body's (>= 30 px of the 34 px).

Screenshots of each deck's first content slide go to ``artifacts/browser/slides-*.png``.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = ROOT / "artifacts" / "browser"
HTML = ROOT / "slides" / "html"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
DECKS = ["2h-1", "2h-2", "4h-1", "4h-2", "4h-3", "4h-4"]

# `make slides` writes slides/html/: every module that builds it runs on one worker, one after another.
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("slides")]

_spec = importlib.util.spec_from_file_location("slides_build", ROOT / "slides" / "build.py")
slides_build = importlib.util.module_from_spec(_spec)
sys.modules["slides_build"] = slides_build
_spec.loader.exec_module(slides_build)
# a slide figure's smallest text (points) and its resolution, as slides/build.py renders it
MIN_POINTS, SLIDE_DPI = slides_build.MIN_POINTS, slides_build.SLIDE_DPI

# Everything the current slide shows: boxes outside the slide, images not loaded, raw TeX.
SLIDE_JS = r"""() => {
  const slide = Reveal.getCurrentSlide();
  const box = document.querySelector('.reveal .slides').getBoundingClientRect();
  const out = {title: (slide.querySelector('h1,h2') || {}).innerText || '', outside: [], images: [], tex: [],
               texErrors: slide.querySelectorAll('.tex-error').length, untypeset: 0,
               box: [box.left, box.top, box.right, box.bottom]};
  const inside = r => r.left >= box.left - 1 && r.top >= box.top - 1 && r.right <= box.right + 1
                      && r.bottom <= box.bottom + 1 && r.right <= innerWidth + 1 && r.bottom <= innerHeight + 1;
  for (const el of slide.querySelectorAll('*')) {
    if (el.closest('aside.notes')) continue;
    const math = el.closest('.katex');
    if (math && math !== el) continue;  // KaTeX's inner boxes (a radical's long SVG path, clipped by KaTeX itself)
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (!inside(r)) out.outside.push(`${el.tagName}.${el.className}: ${(el.innerText || '').slice(0, 40)} `
                                     + `[${Math.round(r.left)},${Math.round(r.top)},${Math.round(r.right)},${Math.round(r.bottom)}]`);
  }
  const scale = Reveal.getScale();
  out.figures = [];
  for (const img of slide.querySelectorAll('img')) {
    if (!(img.complete && img.naturalWidth > 0)) { out.images.push(img.getAttribute('src')); continue; }
    // the picture as drawn (object-fit: contain), in the slide's own 1280 x 720 pixels
    const r = img.getBoundingClientRect();
    const k = Math.min(r.width / img.naturalWidth, r.height / img.naturalHeight);
    out.figures.push({src: img.getAttribute('src'), natural: img.naturalWidth,
                      width: img.naturalWidth * k / scale, height: img.naturalHeight * k / scale});
  }
  // raw Markdown: in the slide's text outside notes, math and code
  out.markdown = [];
  const walker = document.createTreeWalker(slide, NodeFilter.SHOW_TEXT);
  let all = '';
  for (let node = walker.nextNode(); node; node = walker.nextNode())
    if (!node.parentElement.closest('aside.notes, .katex, code')) all += node.nodeValue + ' ';
  for (const m of all.matchAll(/!\[|\]\(|\*\*/g)) out.markdown.push(all.slice(Math.max(0, m.index - 15), m.index + 25));
  for (const el of slide.querySelectorAll('h1, h2, h3, p, li, figcaption, td, th')) {
    if (el.closest('aside.notes')) continue;
    const first = el.firstChild;
    if (first && first.nodeType === 3 && /^\s*#{1,6}\s/.test(first.nodeValue)) out.markdown.push(first.nodeValue.slice(0, 40));
  }
  // nothing but the section crumb above the title (a numbered title once became an <ol> there)
  const heading = slide.querySelector(':scope > h1, :scope > h2');
  out.aboveTitle = [];
  for (let el = heading && heading.previousElementSibling; el; el = el.previousElementSibling)
    if (!el.matches('p.crumb')) out.aboveTitle.push(`${el.tagName}: ${el.innerText.slice(0, 40)}`);
  // an empty body: a content slide with no text and no picture
  const body = slide.querySelector(':scope > .body');
  out.empty = !slide.classList.contains('title') && !(body && (body.innerText.trim() || body.querySelector('img')));
  for (const el of slide.querySelectorAll('.tex')) if (!el.querySelector('.katex')) out.untypeset += 1;
  // a table's text (表 6-1 …) as large as the body's: its smallest cell font, in the slide's own px
  out.tables = slide.querySelectorAll('.body table').length;
  out.tableFont = Math.min(...[...slide.querySelectorAll('td, th')].map(c => parseFloat(getComputedStyle(c).fontSize)));
  const text = slide.cloneNode(true);
  text.querySelectorAll('aside.notes, .katex').forEach(e => e.remove());
  const visible = text.textContent;
  const raw = visible.match(/\$|\\[A-Za-z]+|\^\{|_\{/g);
  if (raw) out.tex.push(raw.join(' '));
  return out;
}"""


@pytest.fixture(scope="module")
def built():
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not found: run tests/browser/ensure_chromium.sh (apt-get install chromium)")
    started = time.monotonic()
    result = subprocess.run(["make", "slides"], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    print(f"make slides: {time.monotonic() - started:.1f} s")
    return HTML


def _font_files() -> dict[str, list[str]]:
    from matplotlib import font_manager

    files: dict[str, list[str]] = {}
    for entry in font_manager.FontManager().ttflist + font_manager.fontManager.ttflist:
        files.setdefault(entry.name, []).append(entry.fname)
    return files


# The slide's elements with Chinese text of their own (not in the speaker notes), marked for CDP.
MARK_JS = r"""() => {
  document.querySelectorAll('[data-han]').forEach(e => e.removeAttribute('data-han'));
  const texts = [];
  for (const el of Reveal.getCurrentSlide().querySelectorAll('*')) {
    if (el.closest('aside.notes')) continue;
    const own = [...el.childNodes].filter(n => n.nodeType === 3).map(n => n.nodeValue).join('');
    if (/[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]/.test(own)) { el.dataset.han = texts.length; texts.push(own); }
  }
  return texts;
}"""


def _tofu(page, cdp, files, faces_cache, done: set) -> tuple[int, list]:
    """(elements checked, [(text, fonts, missing characters)]) for the current slide.

    A text already checked (the same slide in the 2- and 4-hour decks, a section's crumb line) is
    not checked again: the decks share one stylesheet, so it is drawn from the same fonts."""
    from matplotlib.ft2font import FT2Font

    texts = page.evaluate(MARK_JS)
    root = cdp.send("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
    nodes = cdp.send("DOM.querySelectorAll", {"nodeId": root, "selector": "[data-han]"})["nodeIds"]
    assert len(nodes) == len(texts)
    tofu = []
    checked = 0
    for node, text in zip(nodes, texts):
        if text in done:
            continue
        done.add(text)
        checked += 1
        han = {ch for ch in text if "\u4e00" <= ch <= "\u9fff" or "\u3000" <= ch <= "\u303f" or "\uff00" <= ch <= "\uffef"}
        fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
        faces = []
        for font in fonts:
            for path in files.get(font["familyName"], []):
                if path not in faces_cache:
                    faces_cache[path] = FT2Font(path)
                faces.append(faces_cache[path])
        missing = [ch for ch in han if not any(face.get_char_index(ord(ch)) for face in faces)]
        if missing:
            tofu.append((text[:40], [f["familyName"] for f in fonts], missing[:5]))
    return checked, tofu


def test_every_slide_of_every_deck_renders_offline(built):
    from playwright.sync_api import sync_playwright

    assert sorted(p.stem for p in built.glob("*.html")) == sorted(DECKS + ["index"])
    files = _font_files()
    faces: dict = {}
    done: set = set()
    leaks, errors, problems = [], [], []
    slides_seen = han_checked = figures_seen = tables_seen = 0
    started = time.monotonic()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 720})

            def guard(route):
                url = route.request.url
                if url.startswith(("file:", "data:")):
                    route.continue_()
                else:
                    leaks.append(url)
                    route.abort()

            context.route("**/*", guard)
            index = context.new_page()
            index.goto((built / "index.html").as_uri())
            links = index.eval_on_selector_all("a", "els => els.map(a => a.getAttribute('href'))")
            assert sorted(links) == sorted([f"{d}.html" for d in DECKS] + [f"{d}.pptx" for d in DECKS])
            assert all((built / link).is_file() for link in links)
            index.close()
            for deck in DECKS:
                page = context.new_page()
                page.on("console", lambda m, d=deck: errors.append(f"{d}: {m.text}") if m.type == "error" else None)
                page.on("pageerror", lambda e, d=deck: errors.append(f"{d}: {e}"))
                page.goto((built / f"{deck}.html").as_uri())
                page.wait_for_function("window.Reveal && Reveal.isReady()", timeout=30_000)
                page.evaluate("document.fonts.ready.then(() => true)")
                lang = page.evaluate("document.documentElement.lang")
                assert lang == "zh-CN"
                cdp = context.new_cdp_session(page)
                cdp.send("DOM.enable")
                cdp.send("CSS.enable")
                total = page.evaluate("Reveal.getTotalSlides()")
                assert total >= 4, (deck, total)
                for number in range(total):
                    page.evaluate(f"Reveal.slide({number})")  # synchronous: the slide is laid out on return
                    seen = page.evaluate(SLIDE_JS)
                    where = f"{deck} slide {number + 1} ({seen['title'][:30]})"
                    if seen["outside"]:
                        problems.append(f"{where}: cut off: {seen['outside'][:3]}")
                    if seen["images"]:
                        problems.append(f"{where}: figure not loaded: {seen['images']}")
                    if seen["markdown"]:
                        problems.append(f"{where}: raw Markdown: {seen['markdown'][:3]}")
                    if seen["aboveTitle"]:
                        problems.append(f"{where}: shown above the title: {seen['aboveTitle']}")
                    if seen["empty"]:
                        problems.append(f"{where}: empty slide body")
                    for figure in seen["figures"]:
                        # the smallest text of a slide figure (slides/build.py: MIN_POINTS at SLIDE_DPI), as drawn
                        smallest = MIN_POINTS / 72 * SLIDE_DPI * figure["width"] / figure["natural"]
                        if smallest < 24 or max(figure["width"] / 1180, figure["height"] / 500) < 0.98:
                            problems.append(f"{where}: figure {figure['src']} drawn {figure['width']:.0f} x "
                                            f"{figure['height']:.0f} px, its smallest text {smallest:.1f} px "
                                            "(wanted: filling the slide under its title, text >= 24 px)")
                        figures_seen += 1
                    if seen["tables"] and seen["tableFont"] < 30:
                        problems.append(f"{where}: table text {seen['tableFont']} px (the body's is 34 px)")
                    tables_seen += seen["tables"]
                    if seen["tex"] or seen["texErrors"] or seen["untypeset"]:
                        problems.append(f"{where}: raw TeX {seen['tex']}, KaTeX errors {seen['texErrors']}, "
                                        f"untypeset {seen['untypeset']}")
                    checked, tofu = _tofu(page, cdp, files, faces, done)
                    han_checked += checked
                    if tofu:
                        problems.append(f"{where}: Chinese characters without a glyph: {tofu[:2]}")
                    if number == 2:
                        ARTIFACTS.mkdir(parents=True, exist_ok=True)
                        page.screenshot(path=str(ARTIFACTS / f"slides-{deck}.png"))
                    slides_seen += 1
                if deck == DECKS[-1]:  # the detectors see what they look for (on the last slide, then dropped)
                    before = len(errors)  # the missing picture's and the refused request's console messages
                    page.evaluate("""Reveal.getCurrentSlide().insertAdjacentHTML('beforeend',
                        '<p id="probe">成绩 $\\frac{1}{2}$ ![图](figure 1)</p><p># 标题</p><img src="figures/none.png">'
                        + '<div id="tall" style="height: 2000px">高</div>'
                        + '<div class="body"><table><tr><td style="font-size: 12px">小</td></tr></table></div>')""")
                    page.wait_for_timeout(200)
                    probe = page.evaluate(SLIDE_JS)
                    assert probe["tex"] and any("tall" in o or "DIV" in o for o in probe["outside"]), probe
                    assert len(probe["markdown"]) == 3 and probe["images"] == ["figures/none.png"], probe
                    assert probe["tables"] >= 1 and probe["tableFont"] == 12, probe
                    page.evaluate("fetch('https://example.com/x').catch(() => null)")
                    page.wait_for_timeout(300)
                    assert leaks == ["https://example.com/x"], leaks
                    leaks.clear()
                    del errors[before:]  # the refused request's console message
                page.close()
        finally:
            browser.close()
    print(f"walked {slides_seen} slides of {len(DECKS)} decks in {time.monotonic() - started:.1f} s")
    assert not leaks, f"requests that would leave the machine: {leaks[:5]}"
    assert not problems, "\n".join(problems)
    assert not errors, errors[:5]
    assert slides_seen >= 6 * 4 and han_checked > 100 and figures_seen >= 20
    assert tables_seen >= 5  # 表 6-1 and 表 6-2 in the 2- and the 4-hour decks, the neighbours' table in 4 hours



def test_speaker_view_draws_the_notes_math(built):
    """The speaker view (reveal.js notes plugin, S) copies a slide's notes into a window without
    KaTeX's stylesheet; the notes' math is MathML there, so $e^{\\pm\\varepsilon}$ keeps its superscript
    raised (it used to read "e±ε")."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 720})
            page = context.new_page()
            page.goto((built / "2h-1.html").as_uri())
            page.wait_for_function("window.Reveal && Reveal.isReady()", timeout=30_000)
            number = page.evaluate("""[...document.querySelectorAll('.reveal .slides > section')].findIndex(
                s => [...s.querySelectorAll('aside.notes .tex')].some(t => t.textContent.includes('±')))""")
            # the first slide whose notes hold e^{±ε} (its text, however KaTeX drew it, has the ±)
            assert number >= 0
            page.evaluate(f"Reveal.slide({number})")
            with context.expect_page() as opened:
                page.evaluate("Reveal.getPlugin('notes').open()")
            speaker = opened.value
            speaker.wait_for_function("(document.querySelector('.speaker-controls-notes .value') || {}).innerHTML"
                                      " && document.querySelector('.speaker-controls-notes .value').innerHTML.length > 10",
                                      timeout=20_000)
            unstyled = speaker.evaluate("document.querySelectorAll('.speaker-controls-notes .katex-html').length")
            raised = speaker.evaluate("""() => [...document.querySelectorAll('.speaker-controls-notes msup')].map(m => {
                const [base, sup] = [...m.children].map(c => c.getBoundingClientRect());
                return base.bottom - sup.bottom; })""")
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            speaker.screenshot(path=str(ARTIFACTS / "slides-speaker-view.png"))
        finally:
            browser.close()
    assert not unstyled, f"{unstyled} formulas in the speaker view are KaTeX HTML, which needs KaTeX's stylesheet"
    assert raised and min(raised) > 3, f"superscripts in the speaker view raised by {raised} px"
