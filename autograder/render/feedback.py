"""Feedback pages that hide the hidden tests and are safe to open.

Hidden tests (nbgrader issue #917).

nbgrader writes the hidden tests into the autograded notebook and from there
into the feedback HTML. :class:`autograder.nbgrader.hidden_tests.StripHiddenTests`
(in the nbgrader adapters: this module, which every grading worker imports, does not import
nbgrader, 0.6 s of CPU per worker) is added to
``GenerateFeedback.preprocessors``: it replaces every hidden block of a test
cell by one comment line and cuts the traceback of such cells down to the
exception's name and message (a traceback quotes the failing hidden line).
:func:`leaked_lines` then checks the written HTML, text only, for any line
of the hidden tests.

Safe HTML. :func:`feedback_html` renders an executed notebook for the
student and for the instructor, who may open it in the Formgrader (a page
holding the Jupyter token: script in feedback would be stored XSS against
the instructor). Every output is reduced to an allowlist of MIME types
(text, HTML, Markdown, LaTeX, PNG/JPEG/SVG shown as ``<img>``), HTML and
Markdown (cells and outputs) are cleaned by bleach (an allowlist of tags and
attributes; ``javascript:`` links disarmed), output and cell metadata are
dropped (nbconvert
writes an image's ``width`` into an unquoted attribute), base64 images are
checked against their alphabet and capped in size *before* anything decodes
them, and the finished page is parsed once more: a ``<script>`` that the
template itself did not write, an ``on*`` attribute or a ``javascript:`` URL
raises :class:`FeedbackWithheld`. An instructor cell that would still show a
hidden-test line is redacted (:func:`redact_hidden`), never the whole page.
Math is rendered to MathML when the page is made (:mod:`autograder.render.mathml`: no
script, no network), long lines wrap, and the score (total and per test) heads the page. A failed
check's message shows in the notebook's language, the other folded (:mod:`autograder.render.languages`).
"""

from __future__ import annotations

import copy
import functools
import html
import re
from html.parser import HTMLParser
from pathlib import Path

from nbconvert.filters.markdown_mistune import InvalidNotebook

from autograder.cells import source_text
from autograder.render.html import clean_html, strip_remote_markdown, strip_remote_svg
from autograder.render.languages import bilingual, folded_outputs, notebook_language, page_language
from autograder.render.mathml import MathToMathML

BEGIN = "### BEGIN HIDDEN TESTS"
END = "### END HIDDEN TESTS"
PLACEHOLDER = "# (hidden tests are not shown / 隐藏测试不显示)"
#: What the student sees for a failure inside a hidden test (the message goes to report.json only).
HIDDEN_FAILED = "隐藏测试未通过 / a hidden test of {grade_id} failed"


def strip_hidden(source: str) -> tuple[str, bool]:
    """``source`` with each hidden block replaced by :data:`PLACEHOLDER`."""
    out, hidden, found = [], False, False
    for line in source.splitlines():
        stripped = line.strip()
        if stripped.startswith(BEGIN):
            hidden, found = True, True
            indent = line[: len(line) - len(line.lstrip())]
            out.append(indent + PLACEHOLDER)
            continue
        if stripped.startswith(END):
            hidden = False
            continue
        if not hidden:
            out.append(line)
    return "\n".join(out), found


def hidden_lines(source: str) -> list[str]:
    """Lines inside hidden blocks (stripped, non-trivial)."""
    lines, hidden = [], False
    for line in source.splitlines():
        stripped = line.strip()
        if stripped.startswith(BEGIN):
            hidden = True
        elif stripped.startswith(END):
            hidden = False
        elif hidden and len(stripped) >= 8 and not stripped.startswith("#"):
            lines.append(stripped)
    return lines


def hidden_spans(source: str) -> list[tuple[int, int]]:
    """1-based ``(first, last)`` line numbers of each hidden block (markers included)."""
    spans, start = [], None
    for number, line in enumerate(source.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith(BEGIN) and start is None:
            start = number
        elif stripped.startswith(END) and start is not None:
            spans.append((start, number))
            start = None
    if start is not None:
        spans.append((start, max(start, len(source.splitlines()))))
    return spans


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
#: The cell's own frame in an IPython traceback ("Cell In[3], line 7"; older: "<ipython-input-3-...>").
_CELL_LINE = re.compile(r"(?:Cell In\[\d*\]|<ipython-input-[^>]*>),? (?:line )?(\d+)")


def failing_line(traceback) -> int | None:
    """The line of the cell at which an IPython traceback says the cell failed (None: unknown)."""
    text = _ANSI.sub("", "\n".join(str(line) for line in traceback or []))
    found = _CELL_LINE.search(text)
    return int(found.group(1)) if found else None


def error_text(output) -> str:
    """A failed cell's error as feedback shows it, without a traceback: the exception's
    name and message, or for a check's verdict (``CheckFailure``, message in Chinese then
    English) the header the student saw in the notebook instead of the class name."""
    name, value = output.get("ename", "Error"), output.get("evalue", "")
    if name == "CheckFailure":
        return f"✗ 未通过 / check failed\n{str(value).strip()}"
    return f"{name}: {value}"


def html_text(path: Path) -> str:
    """The visible text of an HTML file (tags removed, entities decoded)."""
    raw = Path(path).read_text(encoding="utf-8", errors="replace")
    raw = re.sub(r"<style.*?</style>|<script.*?</script>", " ", raw, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", raw))


def leaked_lines(path: Path, secret_lines) -> list[str]:
    """Which of ``secret_lines`` appear in the feedback HTML at ``path``."""
    text = html_text(path)
    squashed = re.sub(r"\s+", "", text)
    return [line for line in secret_lines if re.sub(r"\s+", "", line) in squashed]


# --- safe HTML --------------------------------------------------------------------------

#: Longest part of a bilingual message kept in the Formgrader's copy (the scorer's cap of a message).
TEXT_PART = 32_000
#: Largest image (base64 characters) shown; larger ones become a note.
MAX_IMAGE_CHARS = 2 * 1024 * 1024
#: Largest text, HTML, Markdown or LaTeX output kept (characters); longer ones are cut.
MAX_TEXT_CHARS = 200_000
#: Most characters of all outputs of one notebook; later outputs become a note. The scorer
#: already keeps at most 1 MB of student output (scorer.OUTPUT_BUDGET); tests add a little.
MAX_TOTAL_CHARS = 3_000_000
#: Output MIME types shown in feedback (everything else, e.g. JavaScript or widgets, is dropped).
SHOWN_MIME = ("text/html", "text/markdown", "text/latex", "image/png", "image/jpeg",
              "image/svg+xml", "text/plain")
_IMAGES = ("image/png", "image/jpeg", "image/svg+xml")
_BASE64 = re.compile(r"[A-Za-z0-9+/=\s]*")

class FeedbackWithheld(ValueError):
    """The rendered page still shows a hidden test or active content: do not publish it."""


def _cut(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n... ({len(text) - limit} more characters not shown / 其余未显示)"


def note_output(text: str) -> dict:
    """A plain-text output saying what is not shown."""
    import nbformat

    return nbformat.v4.new_output("display_data", data={"text/plain": text})


def safe_output(output, budget: list[int], *, inline_svg_ok: bool = True) -> dict | None:
    """One output reduced to what feedback may show; sizes checked before any decoding.

    ``budget`` is a one-element list of the characters still allowed for the
    notebook (decreased here). ``inline_svg_ok=False`` drops SVG (a renderer
    that inlines it would run its scripts; the feedback template shows it as
    an inert ``<img>``).
    """
    import nbformat

    kind = output.get("output_type")
    if kind == "stream":
        text = _cut(source_text(output.get("text", "")))
        out = nbformat.v4.new_output("stream", name="stderr" if output.get("name") == "stderr"
                                     else "stdout", text=text)
    elif kind == "error":
        out = nbformat.v4.new_output(
            "error", ename=_cut(source_text(output.get("ename", "Error")), 200),
            evalue=_cut(source_text(output.get("evalue", "")), 5000),
            traceback=[_cut(source_text(line), 5000) for line in list(output.get("traceback") or [])[:200]])
    elif kind in ("display_data", "execute_result"):
        data = output.get("data") if isinstance(output.get("data"), dict) else {}
        kept, dropped = {}, []
        for mime, value in data.items():
            if mime not in SHOWN_MIME or (mime == "image/svg+xml" and not inline_svg_ok):
                dropped.append(str(mime)[:60])
                continue
            if mime in _IMAGES:
                if not isinstance(value, (str, list)):
                    continue
                size = len(value) if isinstance(value, str) else sum(len(str(v)) for v in value)
                if size > MAX_IMAGE_CHARS:
                    kept.setdefault("text/plain", f"(image of {size / 2**20:.1f} MiB not shown: "
                                                  f"larger than {MAX_IMAGE_CHARS >> 20} MiB / 图片过大，未显示)")
                    continue
                value = source_text(value)
                if mime != "image/svg+xml" and not _BASE64.fullmatch(value):
                    dropped.append(mime)
                    continue
                if mime == "image/svg+xml":
                    value = strip_remote_svg(value)
                kept[mime] = value
            elif mime == "text/html":
                kept[mime] = clean_html(_cut(source_text(value)))
            elif mime == "text/markdown" and not inline_svg_ok:
                kept[mime] = safe_markdown(_cut(source_text(value)))
            else:
                kept[mime] = _cut(source_text(value))
        if not kept:
            kept["text/plain"] = ("(output not shown in feedback: "
                                  + (", ".join(dropped) or "empty") + ")")
        if "image/svg+xml" in kept and ("image/png" in kept or "image/jpeg" in kept):
            del kept["image/svg+xml"]
        if kind == "execute_result":
            out = nbformat.v4.new_output("execute_result", data=kept,
                                         execution_count=None)
        else:
            out = nbformat.v4.new_output("display_data", data=kept)
    else:
        return None
    size = len(str(out))
    if size > budget[0]:
        budget[0] = 0
        return None
    budget[0] -= size
    return out


#: Image types a pasted image (a Markdown cell's attachment) keeps in the Formgrader's copy.
_PASTED = ("image/png", "image/jpeg")


def pasted_images(attachments, budget: list[int]) -> dict:
    """The PNG and JPEG images pasted into a Markdown cell (its ``attachments``), checked as outputs are.

    A student's photo of a derivation is part of the work the instructor grades by hand. Kept: a
    name of plain characters, PNG or JPEG as base64 (its alphabet checked, at most
    :data:`MAX_IMAGE_CHARS`, counted against ``budget``); anything else (SVG, HTML, oversized) is dropped.
    Each reference embeds the whole image again: :func:`gradebook_notebook` pays for every one
    (:func:`embedded_images`).
    """
    kept = {}
    for name, bundle in (attachments or {}).items() if isinstance(attachments, dict) else ():
        if not (isinstance(name, str) and re.fullmatch(r"[\w.\- ]{1,100}", name) and isinstance(bundle, dict)):
            continue
        for mime in _PASTED:
            value = bundle.get(mime)
            value = source_text(value) if isinstance(value, (str, list)) else None
            if value and len(value) <= min(MAX_IMAGE_CHARS, budget[0]) and _BASE64.fullmatch(value):
                budget[0] -= len(value)
                kept[name] = {mime: value}
                break
    return kept


def mentions_attachment(source: str) -> bool:
    """Whether nbconvert may read an image reference to an attachment in ``source``: the word, or
    the word spelled with character references (``&#97;ttachment:``), which nbconvert decodes."""
    return "attachment" in source or ("&" in source and "attachment" in html.unescape(source))


def embedded_images(source: str, names) -> dict[str, int] | None:
    """How many times nbconvert embeds each of the attachments ``names`` when it renders
    ``source`` (``None``: it refuses, a reference to an attachment not among ``names``).

    Rendered with stand-ins of a few characters, never the images: a reference to an image
    embeds the whole image, and a student's ``![x][r]`` written a hundred times around one 2 MB
    image would make a 200 MB page.
    """
    from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

    tokens = {name: f"dpPasted{index}x" for index, name in enumerate(names)}
    stand_ins = {name: {"image/png": token} for name, token in tokens.items()}
    try:
        page = MarkdownWithMath(renderer=IPythonRenderer(escape=False, attachments=stand_ins)).render(source)
    except InvalidNotebook:
        return None
    return {name: page.count(f"base64,{token}") for name, token in tokens.items()}


def renderable_markdown(source: str, attachments: dict) -> str:
    """``source`` as nbconvert can render it with ``attachments``: nbconvert refuses a whole page
    (``InvalidNotebook``, "missing attachment") for one image reference it cannot resolve, as for
    a pasted image whose attachment was dropped. Such a reference becomes a link that leads
    nowhere; a source nbconvert still refuses is shown as text."""
    if not mentions_attachment(source) or embedded_images(source, attachments) is not None:
        return source
    kept = set(attachments)
    disarmed = re.sub(r"attachment:([^\s)\]\"'<>]*)",
                      lambda m: m.group(0) if m.group(1) in kept else "attachment%3A" + m.group(1), source)
    if embedded_images(disarmed, attachments) is not None:
        return disarmed
    return raw_as_text(source)


def safe_notebook(nb, hidden: list[str] | None = None):
    """A copy of ``nb`` fit for rendering: hidden tests removed, outputs reduced, metadata dropped."""
    import nbformat

    nb = copy.deepcopy(nb)
    budget = [MAX_TOTAL_CHARS]
    cells = []
    declared = notebook_language(nb)
    for index, cell in enumerate(nb.cells):
        kind = cell.get("cell_type")
        source = source_text(cell.get("source", ""))
        if kind == "code":
            source, found = strip_hidden(source)
            new = nbformat.v4.new_code_cell(_cut(source))
            omitted = False
            for output in cell.get("outputs", []) or []:
                if found and output.get("output_type") == "error":
                    output = dict(output, traceback=[error_text(output)])
                parts = bilingual(cell, output, declared)
                fold = None
                if parts is not None:  # the notebook's language first, the other folded
                    output, fold = folded_outputs(output, parts)
                for piece in (output, fold):
                    if piece is None:
                        continue
                    shown = safe_output(piece, budget) if budget[0] > 0 else None
                    if shown is None:
                        omitted = omitted or budget[0] <= 0
                        break
                    new.outputs.append(shown)
            if omitted:
                new.outputs.append(note_output("(more output not shown: feedback size limit / 输出过多，未显示)"))
            count = cell.get("execution_count")
            new.execution_count = count if isinstance(count, int) and not isinstance(count, bool) else None
        elif kind == "markdown":
            # An image pasted into a Markdown cell is `![..](attachment:NAME)`; its attachment is not
            # kept (clean_html allows no data: URL in a page a student opens), and nbconvert refuses
            # a page with a missing one. Shown as a link that leads nowhere instead. (The Formgrader's
            # copy keeps PNG and JPEG: gradebook_notebook.)
            new = nbformat.v4.new_markdown_cell(_cut(source).replace("attachment:", "attachment%3A"))
            new.metadata["dp_student"] = True
        else:  # raw cells as escaped text: nbconvert would paste a raw cell's source into the page
            new = nbformat.v4.new_markdown_cell(raw_as_text(_cut(source)))
        new.id = f"cell-{index}"
        cells.append(new)
    out = nbformat.v4.new_notebook(cells=cells)
    out.metadata = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                    "language_info": {"name": "python"}}
    return out


#: The course's nbconvert templates: ``dp_feedback`` is the lab page without any script.
TEMPLATES = Path(__file__).resolve().parents[2] / "nbgrader_templates"


@functools.lru_cache(maxsize=4)
def _exporter(mathjax_url: str | None = None):
    """One exporter per MathJax URL for the worker's life: a new one compiles the Jinja templates
    again (0.23 s a page instead of 0.15 s, measured on a laplace notebook). It keeps nothing of a
    notebook between pages: templates and configuration only, as ``jupyter nbconvert`` reuses one
    exporter for many notebooks."""
    from nbconvert import HTMLExporter

    extra = {"mathjax_url": mathjax_url} if mathjax_url else {}
    if (TEMPLATES / "dp_feedback").is_dir():
        extra.update(template_name="dp_feedback", extra_template_basedirs=[str(TEMPLATES)],
                     extra_template_paths=[str(TEMPLATES / "feedback")])
    # sanitize_html with our clean_html: nbconvert's own allowlist lacks <p>, <h2>, <img>... and
    # would show every markdown cell's tags as text. Rendered Markdown is cleaned as HTML (after
    # markdown2html), so math and code spans keep their `<` as is.
    extra.setdefault("template_name", "lab")
    return HTMLExporter(sanitize_html=True, exclude_anchor_links=True, filters={"clean_html": clean_html}, **extra)


@functools.lru_cache(maxsize=4)
def _template_scripts(mathjax_url: str | None = None) -> frozenset[str]:
    """The ``<script>`` elements the template writes into an empty page (trusted)."""
    import nbformat

    body, _ = _exporter(mathjax_url).from_notebook_node(nbformat.v4.new_notebook())
    return frozenset(_Scan(body).scripts)


class _Scan(HTMLParser):
    """Scripts, event handlers and unsafe URLs of a page (what a browser would run)."""

    URL_ATTRS = ("href", "src", "action", "formaction", "xlink:href", "data", "srcdoc", "background")

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.scripts: list[str] = []
        self.active: list[str] = []
        self._in_script, self._buffer = None, []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            name, value = (name or "").lower(), value or ""
            squashed = re.sub(r"[\s\x00-\x1f]", "", value).lower()
            if name.startswith("on"):
                self.active.append(f"<{tag} {name}=...>")
            elif name in self.URL_ATTRS and (squashed.startswith(("javascript:", "vbscript:"))
                                             or squashed.startswith("data:text/html")
                                             or (squashed.startswith("data:")
                                                 and tag in ("iframe", "object", "embed"))):
                self.active.append(f"<{tag} {name}={squashed[:30]}>")
        if tag in ("iframe", "object", "embed", "base", "form", "frame", "applet"):
            self.active.append(f"<{tag}>")
        if tag == "meta" and any((n or "").lower() == "http-equiv" for n, _ in attrs):
            self.active.append("<meta http-equiv>")
        if tag == "script":
            self._in_script = "".join(f" {n}={v}" for n, v in attrs)
            self._buffer = []

    def handle_data(self, data):
        if self._in_script is not None:
            self._buffer.append(data)

    def handle_endtag(self, tag):
        if tag == "script" and self._in_script is not None:
            self.scripts.append(self._in_script + "|" + "".join(self._buffer).strip())
            self._in_script = None


def active_content(page: str, mathjax_url: str | None = None) -> list[str]:
    """What in ``page`` could run code, beyond the template's own scripts."""
    scan = _Scan(page)
    trusted = _template_scripts(mathjax_url)
    return scan.active + [f"<script{s.split('|')[0]}>" for s in scan.scripts if s not in trusted]


def text_leaks(page: str, secret_lines) -> list[str]:
    """Which ``secret_lines`` appear in ``page`` (visible text or markup, whitespace ignored)."""
    raw = re.sub(r"<style.*?</style>", " ", page, flags=re.S)
    text = html.unescape(re.sub(r"<[^>]+>", "", raw))
    squashed = re.sub(r"\s+", "", text) + "\0" + re.sub(r"\s+", "", html.unescape(raw))
    return [line for line in secret_lines if re.sub(r"\s+", "", line) in squashed]


def feedback_html(nb, hidden_lines: list[str], *, mathjax_url: str | None = None,
                  scores: list[tuple[str, float | None, float]] | None = None,
                  late_penalty: float = 0.0) -> str:
    """The executed notebook ``nb`` as a self-contained, sanitized HTML page.

    ``hidden_lines`` are the lines of the hidden tests (:func:`hidden_lines`
    of the source notebook's test cells): an instructor cell still showing
    one is redacted (:func:`redact_hidden`), the page is not withheld (a
    withheld page would tell a student their guess was right). Raises
    :class:`FeedbackWithheld` on active content (script not written by the
    template, event handler, ``javascript:`` URL): the caller then
    publishes no feedback for this notebook. Student raw cells are shown
    as escaped text.
    ``mathjax_url`` points the page at a local MathJax (offline math);
    default: the template's CDN copy. ``scores`` and ``late_penalty``: the
    gradebook's, when nbgrader made the page (:func:`score_summary`).
    """
    safe = safe_notebook(redact_hidden(nb, hidden_lines)[0])
    summary = score_summary(nb, scores, late_penalty)
    if summary:
        safe.cells.insert(0, summary)
    safe, _ = MathToMathML().preprocess(safe, {})
    lang = notebook_language(nb) or page_language()
    safe.metadata["title"] = page_title(nb, lang)
    try:
        page, _ = _exporter(mathjax_url).from_notebook_node(safe)
    except InvalidNotebook:
        # a reference nbconvert still cannot resolve (an attachment spelled with entities, ...):
        # the student's Markdown is shown as text rather than the page withheld
        for cell in safe.cells:
            if cell.metadata.get("dp_student"):
                cell.source = raw_as_text(cell.source)
        page, _ = _exporter(mathjax_url).from_notebook_node(safe)
    active = active_content(page, mathjax_url)
    if active:
        raise FeedbackWithheld("active content in feedback: " + ", ".join(active[:3]))
    # nbconvert's lang is an ISO 639-1 code ("en" by default): a Chinese page declared English is drawn with
    # the Japanese forms of Chinese punctuation (a centred "：") in Chromium (session 15's walkthrough)
    return page.replace('<html lang="en">', f'<html lang="{"zh-CN" if lang == "zh" else "en"}">', 1)


def page_title(nb, lang: str) -> str:
    """The feedback page's title: the assignment's heading in the page's language (it was "Notebook")."""
    heading = ""
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown":
            first = next((line for line in str(cell.get("source", "")).splitlines() if line.startswith("# ")), "")
            if first:
                heading = first[2:].strip()
                break
    parts = [part.strip() for part in heading.split(" / ")] if heading else []
    name = (parts[0] if lang == "zh" else parts[-1]) if parts else ""
    name = name.removeprefix("作业：").removeprefix("Assignment: ")
    if lang == "zh":
        return f"评分反馈：{name}" if name else "评分反馈"
    return f"Feedback: {name}" if name else "Feedback"


def score_summary(nb, scores: list[tuple[str, float | None, float]] | None = None,
                  late_penalty: float = 0.0):
    """A Markdown cell for the top of the page: the total and each test cell's score.

    Scores come from ``scores`` (``(grade_id, score, points)`` rows: the gradebook's, after
    any manual grading, when nbgrader's ``generate_feedback`` made the page; a score of
    ``None`` is not graded yet), else from the trusted grader's ``metadata.autograder`` of
    each test cell (:func:`autograder.worker.executed_notebook`). ``None`` when there are none.
    A late penalty is shown and taken off the total, as nbgrader's gradebook does.
    """
    import nbformat

    rows = []
    for grade_id, score, points in scores or []:
        try:
            rows.append((str(grade_id), None if score is None else float(score), float(points)))
        except (TypeError, ValueError):
            continue
    for cell in nb.cells if scores is None else []:
        meta = cell.get("metadata", {})
        mark = meta.get("autograder") if isinstance(meta.get("autograder"), dict) else None
        grade_id = (meta.get("nbgrader") or {}).get("grade_id")
        if mark is None or grade_id is None:
            continue
        try:
            rows.append((str(grade_id), float(mark["score"]), float(mark["points"])))
        except (KeyError, TypeError, ValueError):
            continue
    if not rows:
        return None
    total = sum(r[1] or 0.0 for r in rows) - late_penalty
    points = sum(r[2] for r in rows)
    lines = "".join(f"<tr><td><code>{html.escape(g)}</code></td>"
                    + ("<td>待批改 / not graded yet</td><td></td></tr>" if s is None else
                       f"<td>{s:g} / {p:g}</td><td>{'✓' if s >= p else '✗'}</td></tr>") for g, s, p in rows)
    late = (f"<p>迟交扣分 / late penalty: −{late_penalty:g}</p>" if late_penalty else "")
    return nbformat.v4.new_markdown_cell(
        f'<div class="dp-score"><h2>得分 / Score: {total:g} / {points:g}</h2>{late}'
        f"<table><thead><tr><th>测试 / test</th><th>得分 / score</th><th></th></tr></thead>"
        f"<tbody>{lines}</tbody></table></div>")


_SCRIPT_URL = re.compile(r"\]\(\s*<?\s*(?:javascript|vbscript|data)\s*:[^)\n]*\)?", re.I)
_SCRIPT_REF = re.compile(r"^(\s*\[[^\]\n]+\]:\s*<?\s*)(?:javascript|vbscript|data)\s*:.*$", re.I | re.M)


_NEEDS_CLEANING = re.compile(r"<[A-Za-z/!?]|(?:javascript|vbscript|data)\s*:", re.I)


def raw_as_text(source: str) -> str:
    """A raw cell as a Markdown cell showing its text (escaped, never HTML)."""
    return "<pre>" + html.escape(str(source)) + "</pre>" if str(source).strip() else ""


def _instructor(cell) -> bool:
    meta = cell.get("metadata", {}).get("nbgrader") or {}
    return bool(meta.get("grade") or meta.get("locked")) and not meta.get("solution")


def redact_hidden(nb, secret_lines) -> tuple[object, list[str]]:
    """``(copy of nb, grade ids)``: instructor cells whose source still shows a hidden line, redacted.

    A safety net behind the real protections (hidden blocks are never in the
    release, hidden-block outputs are never kept, a hidden failure is shown
    as a generic message). Only the instructor's cell *sources* are scanned:
    scanning what a student cell printed (or what a visible test echoed of a
    student's return value) would tell the student whether a guessed line is
    in a hidden test, and a student can only print what they already know.
    Such a cell keeps a placeholder source and no outputs; the page is
    published and nothing in the status tells the student (the worker adds a
    note for the instructor in ``report.json``).
    """
    nb = copy.deepcopy(nb)
    squashed = [re.sub(r"\s+", "", line) for line in secret_lines]
    squashed = [line for line in squashed if line]
    redacted = []
    for cell in nb.cells:
        if cell.get("cell_type") != "code" or not _instructor(cell):
            continue
        text = re.sub(r"\s+", "", strip_hidden(source_text(cell.get("source", "")))[0])
        if any(line in text for line in squashed):
            cell["source"] = PLACEHOLDER
            cell["outputs"] = [note_output("(this test's details are not shown / 此测试的详情不显示)")]
            redacted.append(str((cell.get("metadata", {}).get("nbgrader") or {}).get("grade_id")))
    return nb, redacted


def safe_markdown(source: str) -> str:
    """Markdown with its raw HTML allowlist-cleaned and script URLs in links disarmed.

    For notebooks an instructor opens in nbgrader's Formgrader, whose template
    renders markdown cells with ``markdown2html`` and no sanitizer. Sources
    without anything tag- or script-URL-like are returned unchanged (so
    ``$x < y$`` and `` `a <= b` `` keep their spelling).
    """
    source = strip_remote_markdown(str(source))
    # A browser decodes entities in a link target (`javascript&#58;...`): judge the decoded text.
    if not _NEEDS_CLEANING.search(source) and not _NEEDS_CLEANING.search(html.unescape(source)):
        return source
    cleaned = _SCRIPT_REF.sub(r"\1#", _SCRIPT_URL.sub("](#)", clean_html(source)))
    cleaned = _LINK_TARGET.sub(_disarm_target, cleaned)
    return _REF_TARGET.sub(_disarm_target, cleaned)


_LINK_TARGET = re.compile(r"(\]\(\s*<?)([^)\n]*)()")
_REF_TARGET = re.compile(r"^(\s*\[[^\]\n]+\]:\s*<?)(\S[^\n]*)()$", re.M)


def _disarm_target(match) -> str:
    """A link target whose entity-decoded, whitespace-free text is a script URL becomes ``#``."""
    decoded = re.sub(r"[\s\x00-\x1f]+", "", html.unescape(match.group(2))).lower()
    if decoded.startswith(("javascript:", "vbscript:", "data:")):
        return match.group(1) + "#" + match.group(3)
    return match.group(0)


def gradebook_notebook(nb):
    """A copy of the executed notebook fit for ``OUT/autograded`` (Formgrader import).

    Cells, nbgrader metadata and ids are kept; the student's markdown and raw
    cells (all but the locked instructor cells, which sanitize restored from
    the release) pass through :func:`safe_markdown`, pasted PNG and JPEG images stay
    (:func:`pasted_images`, :func:`renderable_markdown`); outputs are reduced like the feedback's
    (:func:`safe_output`: allowlisted types, cleaned HTML, capped sizes, no
    output metadata); notebook metadata is reduced to the kernelspec and the
    language. Hidden tests are *not* removed here (see :func:`strip_hidden`).
    """
    nb = copy.deepcopy(nb)
    # pasted images have a budget of their own: out of the outputs', they would let a student's
    # photos push the test cells' failures out of the instructor's view
    budget, images = [MAX_TOTAL_CHARS], [MAX_TOTAL_CHARS]
    declared = notebook_language(nb)
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader") or {}
        instructor = bool(meta.get("locked")) and not meta.get("solution")
        if cell.get("cell_type") == "markdown" and not instructor:
            pasted = pasted_images(cell.pop("attachments", None), [images[0]])
            source = safe_markdown(source_text(cell.get("source", "")))
            # each reference embeds the whole image in the Formgrader's page: every one is paid for
            uses = embedded_images(source, pasted) if mentions_attachment(source) else {}
            if uses is None:        # a reference to nothing: disarmed (or the cell shown as text)
                source = renderable_markdown(source, pasted)
                uses = embedded_images(source, pasted) or {}
            attachments = {}
            for name, bundle in pasted.items():
                cost = uses.get(name, 0) * len(next(iter(bundle.values())))
                if 0 < cost <= images[0]:
                    images[0] -= cost
                    attachments[name] = bundle
            if len(attachments) < sum(1 for count in uses.values() if count):
                source = renderable_markdown(source, attachments)
            cell["source"] = source
            if attachments and mentions_attachment(source):
                cell["attachments"] = attachments
        elif cell.get("cell_type") == "raw":  # pasted verbatim into the Formgrader page: escape
            cell["source"] = html.escape(source_text(cell.get("source", "")))
            cell.pop("attachments", None)
        elif cell.get("cell_type") == "code":
            # the Formgrader's manual grading page shows these outputs as they are: a bilingual failure
            # is folded here as on the feedback page (its first language shown, the other closed)
            outputs = []
            for output in cell.get("outputs", []) or []:
                parts = bilingual(cell, output, declared)
                pieces = (output,) if parts is None else folded_outputs(output, parts)
                outputs += [o for o in (safe_output(piece, budget, inline_svg_ok=False) for piece in pieces)
                            if o is not None]
            cell["outputs"] = outputs
        keep = {k: v for k, v in cell.get("metadata", {}).items() if k == "nbgrader"}
        message = (cell.get("metadata", {}).get("autograder") or {}).get("message") \
            if isinstance(cell.get("metadata", {}).get("autograder"), dict) else None
        if cell.get("cell_type") == "code" and _instructor(cell) and isinstance(message, dict) and all(
                type(message.get(k)) is str for k in ("zh", "en", "lang")):
            # nbgrader's Generate feedback renders this copy (CourseFeedbackExporter): the parts let it
            # fold the other language too (bilingual checks them against the output's message)
            keep["autograder"] = {"message": {k: message[k][:TEXT_PART] for k in ("zh", "en", "lang")}}
        cell["metadata"] = keep
    nb.metadata = {k: v for k, v in nb.metadata.items() if k in ("kernelspec", "language_info")}
    return nb
