"""LaTeX math in Markdown rendered to MathML when a feedback page is made.

Feedback is opened from disk, from the hub or from the Formgrader, often
with no network: a page that typesets its formulas with MathJax from a CDN
shows raw ``$...$`` there. :func:`markdown_with_mathml` replaces every
formula of a Markdown text (``$...$``, ``$$...$$``, ``\\(...\\)``,
``\\[...\\]``; code spans and fenced code left alone) by MathML Core, which
Chromium and Firefox render natively (latex2mathml, pure Python). A formula
latex2mathml cannot read stays as its LaTeX source in ``<code>``, never as
an error. The MathML elements and attributes a sanitizer must keep are
:data:`TAGS` and :data:`ATTRIBUTES` (no ``href``: nothing in them links or runs).
"""

from __future__ import annotations

import html
import re

from nbconvert.preprocessors import Preprocessor
from traitlets import Bool

from autograder.cells import source_text
from autograder.render.html import clean_html

# Fenced code blocks and code spans are copied as they are.
_CODE = re.compile(r"(^[ \t]*(```|~~~)[^\n]*\n.*?^[ \t]*\2[^\n]*$|(`+)(?!`).+?(?<!`)\3(?!`))", re.M | re.S)
_MATH = re.compile(
    r"\$\$(?P<d1>.+?)\$\$"
    r"|\\\[(?P<d2>.+?)\\\]"
    r"|\\\((?P<i1>.+?)\\\)"
    r"|(?<![\\$\w])\$(?![\s$])(?P<i2>[^$\n]*?[^\s\\$])\$(?![\d$])",
    re.S)


def latex_to_mathml(latex: str, *, display: bool) -> str:
    """One formula as a ``<math>`` element (its LaTeX in ``<code>`` if it cannot be converted)."""
    from latex2mathml.converter import convert

    try:
        return convert(latex.strip(), display="block" if display else "inline")
    except Exception:  # noqa: BLE001 - an unreadable formula is shown as its source
        return f"<code>{html.escape(latex.strip())}</code>"


#: The most formulas, and LaTeX characters in all, converted for one page, and the longest formula
#: converted: latex2mathml is pure Python (0.02 ms per character, 20,000 ``$x$`` in 0.4 s), and a
#: 1 MB cell of ``$x$`` made 24 MB of MathML. Beyond, a formula stays as its LaTeX source. An honest
#: page stays far below (150 paragraphs with two formulas each: 300 formulas, 12,000 characters).
MAX_FORMULAS = 5000
MAX_LATEX_CHARS = 200_000
MAX_FORMULA_CHARS = 2000


class Budget:
    """What is left of one page's formula budget (:data:`MAX_FORMULAS`, :data:`MAX_LATEX_CHARS`)."""

    def __init__(self):
        self.formulas, self.chars = MAX_FORMULAS, MAX_LATEX_CHARS


def _math(match: re.Match, budget: Budget) -> str:
    display = match.group("d1") is not None or match.group("d2") is not None
    latex = next(g for g in (match.group("d1"), match.group("d2"), match.group("i1"), match.group("i2"))
                 if g is not None)
    if len(latex) > MAX_FORMULA_CHARS:
        return f"<code>{html.escape(latex.strip())}</code>"
    if budget.formulas <= 0 or budget.chars < len(latex):
        return match.group(0)
    budget.formulas -= 1
    budget.chars -= len(latex)
    rendered = latex_to_mathml(latex, display=display)
    # A block formula on a paragraph of its own stays a block; Markdown must not wrap or escape it.
    return rendered.replace("\n", "")


def markdown_with_mathml(source: str, budget: Budget | None = None) -> str:
    """``source`` with every formula outside code replaced by MathML, within ``budget`` (one page's;
    default: a budget of its own)."""
    if "$" not in source and "\\(" not in source and "\\[" not in source:
        return source
    budget = Budget() if budget is None else budget

    def convert(match):
        return _math(match, budget)

    out, last = [], 0
    for code in _CODE.finditer(source):
        out.append(_MATH.sub(convert, source[last:code.start()]))
        out.append(code.group(0))
        last = code.end()
    out.append(_MATH.sub(convert, source[last:]))
    return "".join(out)



class MathToMathML(Preprocessor):
    """Markdown cells and Markdown/LaTeX outputs with their formulas as MathML.

    For ``GenerateFeedback.preprocessors`` (nbgrader_config.py). A LaTeX
    output becomes an HTML one, allowlist-cleaned like every HTML the
    feedback shows (:func:`autograder.render.html.clean_html`).
    """

    enabled = Bool(True, help="nbconvert runs only enabled preprocessors").tag(config=True)

    def preprocess(self, nb, resources):
        self._budget = Budget()  # one page's formulas (MAX_FORMULAS, MAX_LATEX_CHARS)
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, index):
        budget = getattr(self, "_budget", None) or Budget()
        if cell.cell_type == "markdown":
            cell.source = markdown_with_mathml(source_text(cell.source), budget)
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            data = output.get("data") or {}
            if "text/latex" in data and "text/html" not in data:
                data["text/html"] = clean_html(markdown_with_mathml(source_text(data["text/latex"]), budget))
            if "text/markdown" in data:
                data["text/markdown"] = markdown_with_mathml(source_text(data["text/markdown"]), budget)
        return cell, resources

