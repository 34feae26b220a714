"""A failure message in two languages on a feedback page: the notebook's language first, the other
folded in a closed ``<details>`` (issue 35, §5: each message had appeared twice, Chinese then English,
in a Chinese notebook).

A check's verdict (``helpers.checks.CheckFailure``) is a newline, zh, a newline, en; the trusted grader
records the parts and the language where the check ran (``autograder.scorer``), the executed notebook
keeps them in the test cell's ``metadata.autograder.message`` (``autograder.worker.executed_notebook``)
and :mod:`autograder.render.feedback` renders the page from them.
"""

from __future__ import annotations

import html
import re

from autograder.cells import source_text

#: Characters of an error's message a feedback output keeps (``feedback.safe_output``).
SHOWN = 5000

#: The summary of a folded message: the name of the folded language, in that language.
FOLDED = {"en": "English", "zh": "中文"}
#: The header of a failed check, the notebook's language first (as the notebook shows it).
HEADER = {"zh": "✗ 未通过 / check failed", "en": "✗ check failed / 未通过"}
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def page_language() -> str:
    """The language a message shows first when its check did not record one: the notebook's rule
    (:func:`helpers.i18n.get_lang`: ``DP_COURSE_LANG``, Chinese by default)."""
    from helpers.i18n import get_lang

    return get_lang()


def notebook_language(nb) -> str | None:
    """The language ``nb`` declares, ``metadata.dp_course.lang`` ("zh" or "en": course/build.py writes it
    in every notebook it builds), else ``None``. In grading the notebook's metadata is the release's
    (``autograder.sanitize`` rebuilds a submission on it), never the student's."""
    meta = (nb.get("metadata") or {}).get("dp_course")
    lang = meta.get("lang") if isinstance(meta, dict) else None
    return lang if lang in FOLDED else None


def bilingual(cell: dict, output: dict, declared: str | None = None) -> tuple[str, str, str] | None:
    """``(lang, zh, en)`` of a bilingual failure in ``output``, an error output of ``cell``; ``None``
    for any other output (shown as it is).

    A check's verdict (``CheckFailure``, whose message is a newline, zh, a newline, en) carries its two
    parts in the test cell's ``metadata.autograder.message`` (:func:`autograder.worker.executed_notebook`,
    from what the trusted side caught), used only when they spell the output's message exactly, so
    the page never shows anything the output did not. Without them (a notebook nbgrader executed) a
    message of one Chinese line and one line without Chinese is split there. The grader's own
    one-liners (a hidden test's generic failure, ``feedback.HIDDEN_FAILED``; the Formgrader's
    ``formgrader.FAILED``) are split at their " / ". ``lang`` is the notebook's own, ``declared``
    (:func:`notebook_language`), else the one recorded where the check ran, else :func:`page_language`.
    """
    if output.get("output_type") != "error":
        return None
    ename, evalue = output.get("ename"), source_text(output.get("evalue", ""))
    if ename in ("HiddenTestFailed", "TestFailed") and " / " in evalue:  # the grader's own one-liners
        zh, en = evalue.split(" / ", 1)
        if _HAN.search(zh) and not _HAN.search(en):
            return declared or page_language(), zh.strip(), en.strip()
        return None
    if ename != "CheckFailure":
        return None
    meta = (cell.get("metadata") or {}).get("autograder")
    message = meta.get("message") if isinstance(meta, dict) else None
    if isinstance(message, dict) and type(message.get("zh")) is str and type(message.get("en")) is str:
        zh, en = message["zh"], message["en"]
        full = f"\n{zh}\n{en}"
        if full == evalue or (len(full) > SHOWN and full[:SHOWN] == evalue[:SHOWN]):  # as safe_output cuts it
            lang = declared or (message.get("lang") if message.get("lang") in FOLDED else page_language())
            return lang, zh.strip(), en.strip()
    lines = [line for line in evalue.strip().splitlines() if line.strip()]
    if len(lines) == 2 and _HAN.search(lines[0]) and not _HAN.search(lines[1]):
        return declared or page_language(), lines[0].strip(), lines[1].strip()
    return None


def folded_outputs(output: dict, parts: tuple[str, str, str]) -> tuple[dict, dict]:
    """The error output showing the message in its first language only, and an HTML output after it
    holding the other language in a closed ``<details>`` (summary: that language's name). Nothing is
    wrapped at a fixed width: the browser breaks the lines (a Chinese word is never cut by a newline).
    The error's ``evalue`` becomes the shown text too, so a folded output is not folded again (the
    Formgrader's copy is folded, and nbgrader's Generate feedback renders that copy)."""
    import nbformat

    lang, zh, en = parts
    first, other, other_lang = (zh, en, "en") if lang == "zh" else (en, zh, "zh")
    header = HEADER[lang] + "\n" if output.get("ename") == "CheckFailure" else ""
    shown = dict(output, evalue=first, traceback=[header + first])
    fold = nbformat.v4.new_output("display_data", data={"text/html": (
        f'<details class="dp-other-lang"><summary>{FOLDED[other_lang]}</summary>'
        f'<pre lang="{"zh-CN" if other_lang == "zh" else "en"}">{html.escape(other)}</pre></details>')})
    return shown, fold
