"""A failed check on the trusted grader's feedback page, in Chromium (issue 35, §5): the message in the
notebook's language (Chinese), the English folded and hidden until its summary is clicked, and no
line of the Chinese message broken between two Chinese characters (the page is narrow on purpose).

The page is ``feedback.feedback_html`` of an executed notebook with one failed check
(tests/autograder/test_feedback_languages.py builds it through the trusted side's records), opened
from disk: no grading, no server. The second test grades a wrong randomized_response with the trusted
grader (about 10 s) and opens its feedback page and the Formgrader's manual grading view of its
autograded copy. Skipped only if /usr/bin/chromium is absent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.autograder.test_feedback_languages import _check_failure, _executed

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
ZH = ("rr_perturb：真实为 1 的比特保留率 0.3314，真实为 0 的比特保留率 0.3330，期望都是 p = 0.6682（ε = 0.7；"
      "二项检验的阈值为 5e-07；正确实现被误判的概率不超过百万分之一）。可能的错误：p 与 1-p 弄反了，"
      "真实答案以 1/(e^ε+1) 的概率保留。你的 rr_keep_probability(0.7) 是正确的，所以错误在 rr_perturb 本身。")
EN = ("rr_perturb: keep rate 0.3314 among true 1s and 0.3330 among true 0s; expected p = 0.6682 for both. "
      "Likely mistake: p and 1-p swapped.")

pytestmark = [pytest.mark.browser]

#: Per visual line break inside the first <pre> of the error box: the characters on both sides.
LINE_BREAKS = """() => {
  const pre = document.querySelector('div[data-mime-type="application/vnd.jupyter.stderr"] pre');
  const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
  const chars = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (let i = 0; i < node.data.length; i++) {
      const range = document.createRange();
      range.setStart(node, i); range.setEnd(node, i + 1);
      const rect = range.getClientRects()[0];
      if (rect) chars.push([node.data[i], Math.round(rect.top)]);
    }
  }
  const breaks = [];
  for (let i = 1; i < chars.length; i++) {
    if (chars[i][1] > chars[i - 1][1] && chars[i - 1][0] !== '\\n') breaks.push(chars[i - 1][0] + chars[i][0]);
  }
  return breaks;
}"""


def test_the_failure_shows_chinese_and_folds_english(tmp_path):
    from playwright.sync_api import sync_playwright

    from autograder.render import feedback

    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not found: run tests/browser/ensure_chromium.sh (apt-get install chromium)")
    path = tmp_path / "feedback.html"
    path.write_text(feedback.feedback_html(_executed(_check_failure(zh=ZH, en=EN)), []), encoding="utf-8")
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 480, "height": 900})
            page.on("request", lambda r: errors.append(f"network request {r.url}")
                    if not r.url.startswith(("file:", "data:")) else None)
            page.goto(path.as_uri())
            page.wait_for_load_state("load")
            text = page.inner_text("body")
            assert ZH[:40] in text and EN[:40] not in text   # the English is folded away
            # declared Chinese, not English: Chromium drew "：" in its Japanese, centred form (session 15)
            assert page.evaluate("document.documentElement.lang") == "zh-CN"
            assert page.title().startswith("评分反馈"), page.title()
            breaks = page.evaluate(LINE_BREAKS)
            assert len(breaks) >= 3, breaks                  # narrow: the message does wrap
            han = [pair for pair in breaks if all("\u4e00" <= ch <= "\u9fff" for ch in pair)]
            assert not han, f"lines broken between two Chinese characters: {han}"
            page.click("details.dp-other-lang > summary")
            assert EN in page.inner_text("body")
        finally:
            browser.close()
    assert not errors, errors


#: What the student reads when rr_perturb is right but rr_keep_probability swaps p and 1-p (issue 35, §5).
BLAMED_ZH = "错误多半在 rr_keep_probability，不在 rr_perturb"
BLAMED_EN = "The mistake is most likely in rr_keep_probability, not rr_perturb"


def _folding_problems(page, path: Path) -> list[str]:
    """At ``path``: the Chinese verdict visible, its English not until its (closed) fold is opened."""
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    problems = []
    text = page.inner_text("body")
    if BLAMED_ZH not in text or BLAMED_EN in text:
        problems.append(f"{path.name}: Chinese shown {BLAMED_ZH in text}, English shown before opening {BLAMED_EN in text}")
    folds = page.locator("details.dp-other-lang")
    opened = page.eval_on_selector_all("details.dp-other-lang", "ds => ds.filter(d => d.open).length")
    if folds.count() < 2 or opened:
        problems.append(f"{path.name}: {folds.count()} folds, {opened} open")
        return problems
    for i in range(folds.count()):
        folds.nth(i).locator("summary").click()
    text = page.inner_text("body")
    if BLAMED_EN not in text or text.index(BLAMED_ZH) > text.index(BLAMED_EN):
        problems.append(f"{path.name}: the English verdict not shown after the Chinese once opened")
    return problems


def test_a_graded_wrong_submission_reads_chinese_first_with_english_folded(tmp_path):
    """A wrong randomized_response graded by the trusted grader (sandboxed): its feedback page and the
    Formgrader's manual grading view (nbgrader's formgrade page of OUT/autograded) show the verdict
    in Chinese, naming rr_keep_probability, the English folded until clicked."""
    from playwright.sync_api import sync_playwright

    from tests.autograder.test_feedback_languages import _formgrader_page
    from tests.support import corpus as build

    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not found: run tests/browser/ensure_chromium.sh (apt-get install chromium)")
    manifest = build.load_manifest()["randomized_response"]["correct"]
    solutions = {f: build.snippet("randomized_response", f, variants[0]) for f, variants in manifest.items()}
    solutions["rr_keep_probability"] = build.snippet("randomized_response", "rr_keep_probability", "swapped")
    out = tmp_path / "course"
    graded = build.grade("randomized_response", {"alice": solutions}, out)["alice"]
    assert graded["cells"]["test_perturb_distribution"] == 0 and graded["score"] < graded["max_score"]
    feedback_page = out / "feedback" / "alice" / "randomized_response" / "randomized_response.html"
    import nbformat

    copy = nbformat.read(out / "autograded" / "alice" / "randomized_response" / "randomized_response.ipynb",
                         as_version=4)
    formgrade_page = tmp_path / "formgrade.html"
    formgrade_page.write_text(_formgrader_page(copy), encoding="utf-8")
    problems: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 900, "height": 900})
            page.route("http*://**", lambda route: route.abort())   # opened from disk: nothing from elsewhere
            for path in (feedback_page, formgrade_page):
                problems += _folding_problems(page, path)
        finally:
            browser.close()
    assert not problems, problems
