"""The feedback page shows a failed check's message in the notebook's language, the other folded (issue 35, §5).

A check's verdict is bilingual (``CheckFailure(zh, en)``); the page had shown both, Chinese then
English, unfolded, in every failed test. Rendered through the real path: the trusted side's error
(``scorer._run_trusted``), the executed notebook (``worker.executed_notebook``), the page
(``feedback.feedback_html``), read back as parsed HTML.
"""

from __future__ import annotations

import nbformat
import pytest
from bs4 import BeautifulSoup   # nbconvert's own dependency; html.parser: no lxml needed

from autograder import scorer, worker
from autograder.render import feedback
from helpers.checks import CheckFailure

ZH = "rr_perturb：真实为 1 的比特保留率 0.3314，期望 p = 0.6682。可能的错误：p 与 1-p 弄反了，被误判的概率很小。"
EN = "rr_perturb: keep rate 0.3314 among true 1s; expected p = 0.6682. Likely mistake: p and 1-p swapped."
TEST_SOURCE = "check_rr_perturb_distribution(rr_perturb)"


def _executed(error: dict, hidden_failed: bool = False, declared: str | None = None):
    """A one-test notebook as the trusted worker writes it after ``error``; ``declared``: the language
    the (release) notebook declares in ``metadata.dp_course.lang``, as course/build.py writes it."""
    cell = nbformat.v4.new_code_cell(TEST_SOURCE)
    cell.metadata["nbgrader"] = {"grade": True, "grade_id": "test_perturb_distribution", "locked": True,
                                 "points": 2, "solution": False, "schema_version": 3}
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# 作业"), cell])
    if declared is not None:
        nb.metadata["dp_course"] = {"lang": declared}
    scored = {"tests": [{"grade_id": "test_perturb_distribution", "outputs": [], "error": error, "score": 0.0,
                         "points": 2.0, "hidden_failed": hidden_failed}], "student_cells": {}}
    return worker.executed_notebook(nb, scored)


def _check_failure(zh: str = ZH, en: str = EN, lang: str | None = None) -> dict:
    """The trusted side's record of a check that raised ``CheckFailure(zh, en)``."""
    if lang is not None:
        from helpers import i18n

        before = i18n.get_lang()
        i18n.set_lang(lang)
    try:
        _, error = scorer._run_trusted("raise CheckFailure(zh, en, 'randomized_response.p_swapped')",
                                       {"CheckFailure": CheckFailure, "zh": zh, "en": en}, "<test cell>")
    finally:
        if lang is not None:
            i18n.set_lang(before)
    return error


def _failure_area(page: str):
    """The output area of the test cell: its outputs, in order, as parsed elements."""
    soup = BeautifulSoup(page, "html.parser")
    area = [o for o in soup.select(".jp-OutputArea-output") if "check failed" in o.get_text()
            or o.find("details") is not None]
    assert area, "no failure output on the page"
    return soup, area


def test_the_chinese_message_is_shown_and_the_english_one_folded():
    page = feedback.feedback_html(_executed(_check_failure()), [])
    soup, area = _failure_area(page)
    shown = area[0]
    assert ZH in shown.get_text() and EN not in shown.get_text()      # Chinese visible, in the error box
    details = soup.find_all("details", class_="dp-other-lang")
    assert len(details) == 1
    fold = details[0]
    assert not fold.has_attr("open")                                   # closed by default
    assert fold.find("summary").get_text(strip=True) == "English"
    assert fold.find("pre").get_text() == EN                           # English only inside it
    # Chinese first: the error box comes before the fold in the page
    everything = soup.get_text()
    assert everything.index(ZH) < everything.index(EN)
    # no line break inside the message: the browser wraps it
    assert "\n" not in shown.find("pre").get_text().strip().split("\n", 1)[1]


def test_the_page_declares_its_language_and_names_the_assignment():
    nb = _executed(_check_failure())
    nb.cells.insert(0, nbformat.v4.new_markdown_cell("# 作业：拉普拉斯机制 / Assignment: the Laplace mechanism\n\n共 10 分。"))
    soup = BeautifulSoup(feedback.feedback_html(nb, []), "html.parser")
    assert soup.html["lang"] == "zh-CN" and soup.title.get_text() == "评分反馈：拉普拉斯机制"
    nb.metadata["dp_course"] = {"lang": "en"}
    soup = BeautifulSoup(feedback.feedback_html(nb, []), "html.parser")
    assert soup.html["lang"] == "en" and soup.title.get_text() == "Feedback: the Laplace mechanism"


def test_an_english_notebook_shows_english_first_and_folds_chinese():
    page = feedback.feedback_html(_executed(_check_failure(lang="en")), [])
    soup, area = _failure_area(page)
    assert EN in area[0].get_text() and ZH not in area[0].get_text()
    fold = soup.find("details", class_="dp-other-lang")
    assert fold.find("summary").get_text(strip=True) == "中文" and fold.find("pre").get_text() == ZH
    assert fold.find("pre")["lang"] == "zh-CN"


@pytest.mark.parametrize("declared, recorded", [("en", "zh"), ("zh", "en")])
def test_the_language_the_notebook_declares_decides_the_order(declared, recorded):
    """The notebook's own language (metadata.dp_course.lang, the release's) comes first, whatever the
    grader's environment (DP_COURSE_LANG) made the check record: on the feedback page, for a hidden
    failure's generic line, and in the Formgrader's copy."""
    first, other, summary = (EN, ZH, "中文") if declared == "en" else (ZH, EN, "English")
    nb = _executed(_check_failure(lang=recorded), declared=declared)
    assert nb.cells[1].metadata["autograder"]["message"]["lang"] == declared
    for page in (feedback.feedback_html(nb, []), _formgrader_page(feedback.gradebook_notebook(nb))):
        soup = BeautifulSoup(page, "html.parser")
        folds = soup.find_all("details", class_="dp-other-lang")
        assert len(folds) == 1 and folds[0].find("summary").get_text(strip=True) == summary
        assert folds[0].find("pre").get_text() == other
        assert soup.get_text().index(first) < soup.get_text().index(other)
    hidden = _executed(_check_failure(lang=recorded), hidden_failed=True, declared=declared)
    soup = BeautifulSoup(feedback.feedback_html(hidden, []), "html.parser")
    assert soup.find("details", class_="dp-other-lang").find("summary").get_text(strip=True) == summary


def test_parts_that_do_not_spell_the_message_are_not_shown():
    """Only the output's own text reaches the page: metadata that disagrees with it is ignored (the
    message is then split from its own two lines)."""
    nb = _executed(_check_failure())
    nb.cells[1].metadata["autograder"]["message"]["en"] = "something the output never said"
    page = feedback.feedback_html(nb, [])
    assert "something the output never said" not in page
    soup, area = _failure_area(page)
    assert ZH in area[0].get_text() and soup.find("details", class_="dp-other-lang").find("pre").get_text() == EN
    # a message of more lines, parts disagreeing: shown whole, as it was, nothing folded
    error = _check_failure(zh=ZH + "\n第二行", en=EN)
    nb = _executed(error)
    nb.cells[1].metadata["autograder"]["message"]["zh"] = "别的"
    soup, area = _failure_area(feedback.feedback_html(nb, []))
    assert "第二行" in area[0].get_text() and EN in area[0].get_text() and soup.find("details", class_="dp-other-lang") is None


def test_a_notebook_executed_by_nbgrader_is_folded_from_its_message():
    """No recorded parts (nbgrader's own execution): a Chinese line and an English line are split."""
    nb = _executed(_check_failure())
    del nb.cells[1].metadata["autograder"]["message"]
    soup, area = _failure_area(feedback.feedback_html(nb, []))
    assert ZH in area[0].get_text() and EN not in area[0].get_text()
    assert soup.find("details", class_="dp-other-lang").find("pre").get_text() == EN


def test_a_hidden_failure_is_folded_and_keeps_its_message_out():
    """A hidden test's failure shows the generic text only (its message stays in report.json),
    Chinese first; the parts of a hidden failure are never recorded in the notebook."""
    error = _check_failure(zh="隐藏参数 (-20, -19) 的结果不对", en="wrong for the hidden (-20, -19)")
    nb = _executed(error, hidden_failed=True)
    assert "message" not in nb.cells[1].metadata.get("autograder", {})
    page = feedback.feedback_html(nb, [])
    assert "-19" not in BeautifulSoup(page, "html.parser").get_text()
    soup = BeautifulSoup(page, "html.parser")
    fold = soup.find("details", class_="dp-other-lang")
    assert fold.find("summary").get_text(strip=True) == "English"
    assert "a hidden test of test_perturb_distribution failed" in fold.get_text()
    assert soup.get_text().index("隐藏测试未通过") < soup.get_text().index("a hidden test of")


def test_the_formgrader_copy_keeps_the_parts_and_renders_the_same_fold():
    """The Formgrader's copy (OUT/autograded) keeps the parts, so nbgrader's Generate feedback
    (feedback_html on that copy) folds the message too; the copy stays a valid notebook."""
    copy = feedback.gradebook_notebook(_executed(_check_failure()))
    nbformat.validate(copy)
    assert copy.cells[1].metadata["autograder"]["message"]["zh"] == ZH
    soup = BeautifulSoup(feedback.feedback_html(copy, []), "html.parser")
    folds = soup.find_all("details", class_="dp-other-lang")
    assert len(folds) == 1 and folds[0].find("pre").get_text() == EN     # folded once, not again


def _formgrader_page(nb) -> str:
    """The Formgrader's manual grading page of ``nb`` (OUT/autograded), rendered with nbgrader's own
    formgrade template as its handler does (tests/autograder/test_records.py does the same)."""
    from nbconvert import HTMLExporter
    from nbgrader.server_extensions.formgrader import handlers
    from traitlets.config import Config

    config = Config()
    config.HTMLExporter.template_name = "formgrade"
    config.HTMLExporter.extra_template_basedirs = [handlers.template_path]
    resources = {"assignment_id": "randomized_response", "notebook_id": "randomized_response",
                 "submission_id": "s", "index": 0, "total": 1, "base_url": "", "student": "alice",
                 "last_name": "A", "first_name": "Alice",
                 "notebook_path": "autograded/alice/randomized_response/randomized_response.ipynb"}
    return HTMLExporter(config=config).from_notebook_node(nb, resources=resources)[0]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_formgraders_manual_grading_view_folds_the_other_language(lang):
    """The instructor's view of the autograded notebook (nbgrader's formgrade page of OUT/autograded) shows
    the failure as the student's page does: the notebook's language in the error box, the other
    language once, in a closed <details>, after it (it had shown Chinese then English, unfolded)."""
    first, other, summary = (ZH, EN, "English") if lang == "zh" else (EN, ZH, "中文")
    copy = feedback.gradebook_notebook(_executed(_check_failure(lang=lang)))
    nbformat.validate(copy)
    soup = BeautifulSoup(_formgrader_page(copy), "html.parser")
    errors = [o for o in soup.select(".output_error, [data-mime-type='application/vnd.jupyter.stderr']")
              if "check failed" in o.get_text()]
    assert errors and first in errors[0].get_text() and other not in errors[0].get_text()
    folds = soup.find_all("details", class_="dp-other-lang")
    assert len(folds) == 1 and not folds[0].has_attr("open")
    assert folds[0].find("summary").get_text(strip=True) == summary and folds[0].find("pre").get_text() == other
    text = soup.get_text()
    assert text.count(other) == 1 and text.index(first) < text.index(other)


@pytest.mark.parametrize("en", ['<script>alert(1)</script>', '<img src=x onerror=alert(1)>'])
def test_the_folded_text_is_text(en):
    """Whatever a message quotes (a student's exception text) is escaped in the fold: the page passes
    the sanitizer's final scan (no FeedbackWithheld) and shows it as text."""
    page = feedback.feedback_html(_executed(_check_failure(en=en)), [])
    fold = BeautifulSoup(page, "html.parser").find("details", class_="dp-other-lang")
    assert fold.find("pre").get_text() == en and fold.find("script") is None and fold.find("img") is None
    # the Formgrader's copy folds it through the same cleaning (safe_output's clean_html)
    page = _formgrader_page(feedback.gradebook_notebook(_executed(_check_failure(en=en))))
    soup = BeautifulSoup(page, "html.parser")
    fold = soup.find("details", class_="dp-other-lang")
    assert fold.find("pre").get_text() == en and fold.find("script") is None and fold.find("img") is None
    assert "alert(1)" not in "".join(str(s) for s in soup.find_all(["script", "img"]))


def test_the_formgraders_own_failure_line_is_folded_and_an_english_reason_is_not():
    """formgrader.FAILED ("未通过 / failed (trusted grader)") folds its English; a reason in English only
    (a row's status, "error: timeout") is shown as it is."""
    from autograder.nbgrader.formgrader import FAILED

    for text, folded in ((FAILED, True), ("error: timeout", False)):
        nb = _executed(None)
        nb.cells[1].outputs = [nbformat.v4.new_output("error", ename="TestFailed", evalue=text, traceback=[text])]
        soup = BeautifulSoup(feedback.feedback_html(nb, []), "html.parser")
        fold = soup.find("details", class_="dp-other-lang")
        assert (fold is not None) == folded, text
        if folded:
            assert fold.find("pre").get_text() == "failed (trusted grader)" and "未通过" in soup.get_text()
