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

Screenshots of each deck's first content slide go to ``artifacts/browser/slides-*.png``.
"""

from __future__ import annotations

import re
import subprocess
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

pytestmark = [pytest.mark.browser]

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
  for (const img of slide.querySelectorAll('img'))
    if (!(img.complete && img.naturalWidth > 0)) out.images.push(img.getAttribute('src'));
  for (const el of slide.querySelectorAll('.tex')) if (!el.querySelector('.katex')) out.untypeset += 1;
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
    slides_seen = han_checked = 0
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
            assert sorted(links) == sorted(f"{d}.html" for d in DECKS)
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
                    page.evaluate("""Reveal.getCurrentSlide().insertAdjacentHTML('beforeend',
                        '<p id="probe">成绩 $\\frac{1}{2}$</p><div id="tall" style="height: 2000px">高</div>')""")
                    probe = page.evaluate(SLIDE_JS)
                    assert probe["tex"] and any("tall" in o or "DIV" in o for o in probe["outside"]), probe
                    before = len(errors)
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
    assert not errors, errors[:5]
    assert not problems, "\n".join(problems)
    assert slides_seen >= 6 * 4 and han_checked > 100

