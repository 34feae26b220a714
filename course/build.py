#!/usr/bin/env python3
"""Build the bilingual lecture notebooks from their one source each.

    python course/build.py            # (re)write every notebook that changed
    python course/build.py --check    # exit 1 and list the notebooks that are out of date
                                      # (by content: outputs of a saved run do not count)
    python course/build.py 6.1 6.2    # only sources whose name starts with one of these
    python course/build.py --plan     # the teaching plan (course/_src/plan.toml) with minutes
                                      # (--plan-json: as JSON; --plan-sections: every section's counts)

Sources live in ``course/_src/<stem>.md``; each gives ``course/<stem>.ipynb``
(Chinese) and ``course/en/<stem>.ipynb`` (English).  The format is described
in ``course/_src/README.md``; in short, a source is a sequence of cells, each
opened by a marker line::

    # %% [markdown] zh        Chinese-only markdown
    # %% [markdown] en        English-only markdown
    # %% [markdown]           markdown shared by both languages
    # %%                      code shared by both languages (the usual case)
    # %% zh   /   # %% en     code for one language only (rare)

optionally followed by ``tags=a,b`` (cell tags).  In every cell ``{{LANG}}``
becomes ``zh`` or ``en`` and ``{{ROOT}}`` the relative path from the notebook
to ``course/`` ("" or "../").  Lines before the first marker are a comment.

A shared code cell is written once with both languages' strings, as
``tr(zh=…, en=…)`` (printed text) or ``label(zh=…, en=…)`` (text drawn in a
figure); the build replaces each such call by the expression of its notebook's
language, so a built notebook's code holds one language only (the Chinese
notebook ``print("噪声")``, the English one ``print("noise")``).  A whole-line
comment ``# zh: …`` or ``# en: …`` is kept in its language only, and so is each half of an
end-of-line comment ``# zh: … # en: …``.  Any other comment goes to both notebooks, so it must
belong to neither language (a formula such as ``# Pr[M(D) >= 3.5]``): the build refuses a
comment that a notebook would show in the other language (see :func:`comment_problems`).

The teaching plan ``course/_src/plan.toml`` labels every ``##`` section 核心/core, 4 课时/4-hour
or 选学/optional (see :mod:`teaching_plan`): the build writes the label into each section
heading of both notebooks and the plan tables into ``course/README.md`` (between the
``<!-- plan:zh -->`` / ``<!-- plan:en -->`` markers and their ``<!-- /plan:… -->`` ends), writes
each notebook's "在课程中的位置" paragraph in place of ``{{POSITION}}`` (see ``teaching_plan.position``), and
refuses a plan that does not fit the class hours, names a missing section, leaves a section
unlabelled or teaches a section without one it needs.

Output is deterministic: no outputs, no execution counts, cell ids derived
from the language and position, JSON written the way nbformat writes it
(indent 1, sorted keys, UTF-8), so a rebuild is byte-identical.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import re
import sys
import tokenize
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

COURSE = Path(__file__).resolve().parent
sys.path.insert(0, str(COURSE))  # course/ is not a package: teaching_plan.py sits beside this script
import teaching_plan  # noqa: E402

SRC = COURSE / "_src"
LANGS = ("zh", "en")
OUT_DIRS = {"zh": COURSE, "en": COURSE / "en"}
ROOTS = {"zh": "", "en": "../"}

_MARKER = re.compile(
    r"^# %%(?:[ \t]+\[(?P<kind>markdown)\])?(?:[ \t]+(?P<lang>zh|en))?(?:[ \t]+tags=(?P<tags>[\w,-]+))?[ \t]*$"
)

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
LANGUAGE_INFO = {"name": "python", "pygments_lexer": "ipython3"}


class SourceError(ValueError):
    """A source file that does not follow the format of course/_src/README.md."""


@dataclass
class Cell:
    kind: str  # "markdown" or "code"
    lang: str | None  # None = both languages
    text: str
    tags: list[str] = field(default_factory=list)
    line: int = 0  # the marker's line in the source
    first: int = 0  # the source line of the cell text's first line


def parse_source(text: str, name: str = "<source>") -> list[Cell]:
    """Split a source into cells (see the module docstring for the markers)."""
    cells: list[Cell] = []
    current: Cell | None = None
    body: list[str] = []

    def close() -> None:
        if current is not None:
            joined = "\n".join(body)
            current.text = joined.strip("\n")
            current.first = current.line + 1 + len(joined) - len(joined.lstrip("\n"))
            if current.text.strip():
                cells.append(current)

    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("# %%"):
            match = _MARKER.match(line)
            if match is None:
                raise SourceError(f"{name}:{number}: malformed cell marker {line!r}")
            close()
            current = Cell(
                kind="markdown" if match["kind"] else "code",
                lang=match["lang"],
                text="",
                tags=[t for t in (match["tags"] or "").split(",") if t],
                line=number,
            )
            body = []
        elif current is not None:
            body.append(line)
    close()
    if not cells:
        raise SourceError(f"{name}: no cells (a cell starts with a '# %%' line)")
    zh = sum(c.lang == "zh" for c in cells)
    en = sum(c.lang == "en" for c in cells)
    if zh != en:
        raise SourceError(
            f"{name}: {zh} Chinese-only cells but {en} English-only cells; "
            "every language-specific cell needs its counterpart"
        )
    return cells


# Calls that carry one string (or any expression) per language: the build keeps one.
VARIANT_CALLS = ("tr", "label")


def _variant_call(node: ast.AST) -> ast.Call | None:
    """``node`` if it is ``tr(zh=…, en=…)`` or ``label(zh=…, en=…)`` (keywords only), else None."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in VARIANT_CALLS
            and not node.args and sorted(k.arg or "" for k in node.keywords) == sorted(LANGS)):
        return node
    return None


# A whole-line comment for one language: "# zh: 你的答案" / "# en: your answer".
_LANG_COMMENT = re.compile(r"^([ \t]*)# (zh|en): (.*)(\n?)", re.M)
# An end-of-line comment in both languages: "x = 1  # zh: 一个周期 # en: one period".
_PAIR_COMMENT = re.compile(r"^# zh: (?P<zh>.*?)[ \t]+# en: (?P<en>.*?)[ \t]*$")
# Comments that speak to tools, not to readers: allowed in either language.
_TOOL_COMMENT = re.compile(r"^#[ \t]*(noqa\b|type:|pragma\b|fmt:|pylint:|isort:)")
_CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
# A Latin word: two letters or more, not a function-like name in notation (Lap(…), Pr[…]).
_LATIN_WORD = re.compile(r"(?<![A-Za-z_])[A-Za-z]{2,}(?![A-Za-z_(\[])")


def _comments(code: str) -> list[tuple[int, int, str]]:
    """Every comment of ``code`` as (line, column, text), by Python's tokenizer (not in strings)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        return []  # localize() reports code that is not valid Python
    return [(t.start[0], t.start[1], t.string) for t in tokens if t.type == tokenize.COMMENT]


def _kept_comment(text: str, lang: str, whole_line: bool) -> str | None:
    """What a notebook in ``lang`` shows of a source comment (None: nothing), as :func:`localize`
    treats it: a pair anywhere, a one-language comment only on a line of its own."""
    pair = _PAIR_COMMENT.match(text)
    if pair:
        return "# " + pair[lang]
    marked = re.match(r"# (zh|en): (.*)", text)
    if marked and whole_line:
        return "# " + marked[2] if marked[1] == lang else None
    return text


def _commented_code(text: str) -> bool:
    """A comment that is one ASCII Python statement other than a bare expression or annotation
    (a name, a tuple such as ``Alice, Bob``, ``note: text`` parse as those): a definition, an
    assignment, a call."""
    body = text.lstrip("#").strip()
    if not body.isascii():
        return False
    if body.endswith(":"):
        body += " pass"
    try:
        tree = ast.parse(body)
    except SyntaxError:
        return False
    if len(tree.body) != 1:
        return False
    statement = tree.body[0]
    if isinstance(statement, ast.AnnAssign):
        return statement.value is not None
    return not isinstance(statement, ast.Expr) or isinstance(statement.value, ast.Call)


def foreign_comment(text: str, lang: str) -> bool:
    """True if a comment shown in a ``lang`` notebook is written in the other language.

    Chinese notebook: the comment holds a Latin word (two letters or more, outside
    ```backticks``` and other than a name in function notation such as ``Lap(`` or ``Pr[``)
    and no Chinese character.  English notebook: it holds a Chinese character.  Comments
    for tools (``# noqa``, ``# type:``, ``# pragma``, ``# fmt:``, ``# pylint:``, ``# isort:``)
    and commented-out code (``# def f(x):``, ``# y = f(x)``; see :func:`_commented_code`) are
    allowed in both.
    """
    if _TOOL_COMMENT.match(text) or _commented_code(text):
        return False
    if lang == "en":
        return bool(_CJK.search(text))
    prose = re.sub(r"`[^`]*`", "", text)
    return bool(_LATIN_WORD.search(prose)) and not _CJK.search(prose)


def comment_problems(cell: Cell, lang: str, where: str) -> list[str]:
    """Every comment of a code ``cell`` that the ``lang`` notebook would show in the other language,
    as "where, source line N: comment" (fix: write it ``# zh: … # en: …`` or as two whole-line
    comments ``# zh: …`` / ``# en: …``)."""
    problems = []
    rows = cell.text.split("\n")
    for line, column, text in _comments(cell.text):
        kept = _kept_comment(text, lang, whole_line=not rows[line - 1][:column].strip())
        if kept is not None and foreign_comment(kept, lang):
            other = "English" if lang == "zh" else "Chinese"
            problems.append(f"{where}, source line {cell.first + line - 1}: {other} comment {kept!r} in the {lang} "
                            f"notebook: write it as '# zh: … # en: …' (or two whole-line comments '# zh: …' / '# en: …')")
    return problems


def docstring_problems(code: str, lang: str, where: str) -> list[str]:
    """Every docstring of the localized ``code`` that the ``lang`` notebook would show in the other
    language (fix: write the docstring as ``tr(zh=\"\"\"…\"\"\", en=\"\"\"…\"\"\")``; the build keeps one
    string literal, which is then the docstring)."""
    problems = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
            doc = ast.get_docstring(node, clean=True)
            if doc and foreign_comment(doc, lang):
                other = "English" if lang == "zh" else "Chinese"
                name = getattr(node, "name", "the cell")
                problems.append(f"{where}: {other} docstring of {name} {doc[:60]!r} in the {lang} notebook: "
                                "write it as tr(zh=\"\"\"…\"\"\", en=\"\"\"…\"\"\")")
    return problems


def _localize_pair_comments(code: str, lang: str) -> str:
    """``# zh: A # en: B`` at the end of a line becomes ``# A`` or ``# B``."""
    lines = code.split("\n")
    for line, column, text in reversed(_comments(code)):
        pair = _PAIR_COMMENT.match(text)
        if pair:
            row = lines[line - 1]
            lines[line - 1] = row[:column] + "# " + pair[lang] + row[column + len(text):]
    return "\n".join(lines)


def _inline_constants(code: str) -> str:
    """``f"({'教材'} {b})"`` → ``f"(教材 {b})"``: a plain string left in an f-string field by :func:`localize`."""
    while True:
        data = code.encode("utf-8")
        starts = [0]
        for line in data.splitlines(keepends=True):
            starts.append(starts[-1] + len(line))
        for node in ast.walk(ast.parse(code)):
            value = node.value if isinstance(node, ast.FormattedValue) else None
            if (value is None or node.conversion != -1 or node.format_spec is not None
                    or not isinstance(value, ast.Constant) or not isinstance(value.value, str)
                    or any(ch in value.value for ch in "\'\"\\{}\n") or value.lineno != value.end_lineno):
                continue
            a = starts[value.lineno - 1] + value.col_offset
            b = starts[value.end_lineno - 1] + value.end_col_offset
            if data[a - 1:a] == b"{" and data[b:b + 1] == b"}":
                code = (data[:a - 1] + value.value.encode("utf-8") + data[b + 1:]).decode("utf-8")
                break
        else:
            return code


def localize(code: str, lang: str, where: str = "<cell>") -> str:
    """The code of one language: every ``tr(zh=A, en=B)`` / ``label(zh=A, en=B)`` becomes A or B.

    A whole-line comment ``# zh: …`` / ``# en: …`` is kept (as ``# …``) in its language only,
    and so is each half of an end-of-line ``# zh: … # en: …``.

    The chosen argument's source is copied verbatim (f-strings, lists, expressions), in
    parentheses when it spans lines.  Raises :class:`SourceError` if the cell is not valid
    Python before or after, or if a ``tr``/``label`` call is left that the build cannot resolve
    (positional arguments, a missing language): a student must never read both languages.
    """
    code = _localize_pair_comments(code, lang)
    code = _LANG_COMMENT.sub(lambda m: f"{m[1]}# {m[3]}{m[4]}" if m[2] == lang else "", code)
    for _ in range(10_000):
        try:
            tree = ast.parse(code)
        except SyntaxError as error:
            raise SourceError(f"{where}: code cell is not valid Python ({error.msg}, line {error.lineno})") from None
        calls = [c for c in map(_variant_call, ast.walk(tree)) if c is not None]
        if not calls:
            break
        call = max(calls, key=lambda c: (c.lineno, c.col_offset))  # innermost/last first: offsets stay valid
        data = code.encode("utf-8")  # ast offsets are byte offsets into UTF-8
        starts = [0]
        for line in data.splitlines(keepends=True):
            starts.append(starts[-1] + len(line))
        offset = lambda line, col: starts[line - 1] + col  # noqa: E731
        arg = next(k.value for k in call.keywords if k.arg == lang)
        chosen = data[offset(arg.lineno, arg.col_offset):offset(arg.end_lineno, arg.end_col_offset)]
        if b"\n" in chosen:
            chosen = b"(" + chosen + b")"
        code = (data[:offset(call.lineno, call.col_offset)] + chosen
                + data[offset(call.end_lineno, call.end_col_offset):]).decode("utf-8")
    code = _inline_constants(code)
    left = [n for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
            and n.func.id in VARIANT_CALLS]
    if left:
        raise SourceError(f"{where}: line {left[0].lineno}: write {left[0].func.id}(zh=…, en=…) with exactly these "
                          "two keywords, so the build can keep one language")
    return code


# --- Chinese typography: full-width punctuation next to Chinese (GB/T 15834) -------------------
# A Chinese reader sees "，；：？！（）" next to Chinese text; a half-width , ; : ? ! ( ) touching a
# Chinese character (an ideograph or a full-width/CJK mark) is refused outside code, math and links.
HALF_TO_FULL = {",": "，", ";": "；", ":": "：", "?": "？", "!": "！", "(": "（", ")": "）"}
ZH_CHAR = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
# What is not prose: code (fenced, inline), math ($$…$$, $…$), a link's target, an HTML tag, a URL,
# a format field ({…}, also in f-strings) and a %-format key.
_NOT_PROSE = re.compile(
    r"^[ \t]*(```|~~~).*?^[ \t]*\1[^\n]*$"
    r"|(`+).+?\2"
    r"|\$\$.+?\$\$"
    r"|(?<![\\$])\$[^$\n]+?(?<!\\)\$"
    r"|\]\([^)\s]*(?:[ \t]+\"[^\"\n]*\")?\)"
    r"|<[A-Za-z/!][^<>\n]*>"
    r"|https?://[^\s<>()\]]+"
    r"|\{[^{}\n]*(?:\{[^{}\n]*\}[^{}\n]*)*\}"
    r"|%\([A-Za-z_]\w*\)",
    re.S | re.M,
)
# "(" right after these opens notation (Lap(1/ε), M(D), e/(e+1), Φ⁻¹(…)); after a word see _halfwidth_marks.
_NOTATION_BEFORE = re.compile(r"[\u0370-\u03ff\u00b2\u00b3\u00b9\u2070-\u209f'′%\\/+\-=^·×√]")


_IDEOGRAPH = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_MATH_INSIDE = re.compile(r"[\u0370-\u03ff=<>≤≥√^±]| [+\-*/] ")


def _prose_mask(text: str) -> list[bool]:
    """True for each character of ``text`` that is prose (see :data:`_NOT_PROSE`)."""
    mask = [True] * len(text)
    for match in _NOT_PROSE.finditer(text):
        for i in range(match.start(), match.end()):
            mask[i] = False
    return mask


def _halfwidth_marks(text: str, zh_only: bool = False) -> list[int]:
    """Indices of the half-width marks of ``text`` to write full-width: each , ; : ? ! touching a
    Chinese character in prose, and both parentheses of a prose pair either of which touches one
    (a pair that is notation, such as ``Lap(b)`` or ``f(真值)``, stays: see ``notation``).

    ``zh_only``: ``text`` is Chinese only (a Chinese cell, a ``zh=`` string, a ``# zh:`` comment),
    so a mark also counts as touching when the nearest character, across spaces and ``*``/``~``
    emphasis, is Chinese or the edge of math, code or a link (``$\\delta$;`` ends a Chinese clause).
    """
    mask = _prose_mask(text)

    def side(i: int, step: int) -> bool:
        k = i + step
        if zh_only:
            while 0 <= k < len(text) and text[k] in " *~":
                k += step
        if not 0 <= k < len(text):
            return False
        return bool(ZH_CHAR.match(text[k])) or (zh_only and not mask[k])

    touching = lambda i: side(i, -1) or side(i, 1)  # noqa: E731
    marks: set[int] = set()
    stack: list[int] = []
    in_notation: list[tuple[int, int]] = []

    def notation(j: int, i: int) -> bool:
        """f(x), F(j - 真值), Lap(b), e/(e+1): notation.  Alice(第 5 条), RAPPOR(6.5.1), ESA(…), x²(6.4 节): prose."""
        inside = text[j + 1:i]
        chinese = ZH_CHAR.search(inside) is not None
        glued = j > 0 and (_IDEOGRAPH.match(text[j - 1]) or not mask[j - 1])
        if not chinese and text[i + 1:i + 2] == "-":
            return True  # (ε, δ)-DP, (0, δ)-差分隐私
        if not chinese and not glued and _MATH_INSIDE.search(inside):
            return True  # 近似差分隐私 (ε, δ), (0, δ)-DP: a formula
        if j > 0 and _NOTATION_BEFORE.match(text[j - 1]):
            return not chinese
        if re.fullmatch(r"[\d\s.,-]*,[\d\s.,-]*|\.\.\.|…", inside) or (not chinese and ", " in inside):
            return True  # shape (5,), (2, 3); rng.random(...); Laplace(0, b)
        code = re.search(r"[\w.]+$", text[:j])
        if code is not None and re.search(r"[._\d]", code[0]):
            return True  # rng.random(size), x.astype(int), fit_model(…)
        word = re.search(r"[A-Za-z]+$", text[:j])
        if word is None:
            return False
        word = word[0]
        if chinese and not re.search(r"[+\-*/=<>|,]", inside):
            return False  # p(例如 …), Alice(第 5 条): prose
        return len(word) == 1 or (len(word) <= 4 and not word.isupper())

    for i, ch in enumerate(text):
        if ch == "\n" and i + 1 < len(text) and text[i + 1] == "\n":
            stack = []  # a paragraph ends: an unclosed "(" pairs with nothing after it
        if not mask[i] or ch not in HALF_TO_FULL:
            continue
        if ch == "(":
            stack.append(i)
        elif ch == ")":
            if stack:
                j = stack.pop()
                if notation(j, i):
                    in_notation.append((j, i))
                elif touching(i) or touching(j):
                    marks.update((i, j))
            elif touching(i):
                marks.add(i)
        elif touching(i) and not (ch == "!" and text[i + 1:i + 2] in ("[", "=")):
            marks.add(i)
    for j in stack:  # "(" never closed
        if touching(j) and not notation(j, len(text)):
            marks.add(j)
    # a separator inside notation stays: max(加噪的计数, 1)
    return sorted(i for i in marks if text[i] in "()" or not any(a < i < b for a, b in in_notation))


# Beyond , ; : ? ! ( ): straight quotes "…" around or next to Chinese are “…” (the slides and the
# guide use them), an em dash —— takes no spaces, and a , ; glued between two words of a Chinese
# line ("2007;Dwork", "2017,arXiv", "ESA,6.5.2") or a : glued before a word ("0.0012:Gumbel",
# "csdn.net:NNLS") is full-width.  A number keeps its separators (1,000, 3:2) and an identifier its colon (arXiv:1709).
_DASH = re.compile(r"[ \t]*——[ \t]*")


def _typography_fixes(text: str, zh_only: bool = False, quotes: bool = True) -> list[tuple[int, int, str]]:
    """``(start, end, replacement)`` for each straight quote pair, spaced em dash and glued , ; : of
    Chinese prose in ``text`` (see above); ``quotes=False`` for a string literal, whose delimiters
    are quotes."""
    mask = _prose_mask(text)
    fixes: list[tuple[int, int, str]] = []
    for line in re.finditer(r"[^\n]+", text):
        a0, b0 = line.span()
        chinese_line = zh_only or ZH_CHAR.search(line[0]) is not None
        if quotes:
            marks = [i for i in range(a0, b0) if text[i] == '"' and mask[i]]
            for a, b in zip(marks[0::2], marks[1::2]):
                near = text[max(a0, a - 1):a] + text[b + 1:min(b0, b + 2)]
                if zh_only or ZH_CHAR.search(text[a + 1:b]) or ZH_CHAR.search(near):
                    fixes += [(a, a + 1, "“"), (b, b + 1, "”")]
        if not chinese_line:
            continue
        for m in _DASH.finditer(text, a0, b0):
            if m[0] != "——" and all(mask[m.start():m.end()]) and m.start() > a0 and not _keeps_space(text, m.start()):
                fixes.append((m.start(), m.end(), "——"))
        for i in range(a0 + 1, b0 - 1):
            ch, before, after = text[i], text[i - 1], text[i + 1]
            if not mask[i] or not (mask[i - 1] and mask[i + 1]) or before.isspace() or after.isspace():
                continue
            if ZH_CHAR.match(before) or ZH_CHAR.match(after):
                continue  # touching Chinese: _halfwidth_marks' rule
            if ch in ",;" and not (before.isdigit() and after.isdigit()) and before.isalnum() and after.isalnum():
                fixes.append((i, i + 1, HALF_TO_FULL[ch]))
            elif ch == ":" and (before.isdigit() or before.isalpha()) and after.isalpha():
                fixes.append((i, i + 1, "："))
    return fixes


def _keeps_space(text: str, i: int) -> bool:
    """True if the spaces before index ``i`` separate it from a list/quote/heading marker or a table bar."""
    line_start = text.rfind("\n", 0, i) + 1
    before = text[line_start:i].strip()
    return before in ("", "-", "*", "+", ">") or bool(re.fullmatch(r"#+|\d+[.)]", before)) or before.endswith("|")


def fix_halfwidth(text: str, zh_only: bool = False, quotes: bool = True) -> str:
    """``text`` with the marks of :func:`_halfwidth_marks` full-width (repeated until none is left:
    a mark next to a new full-width one is next to Chinese), and the spaces that stood between such
    a mark and its neighbours outside the parentheses dropped (a full-width mark carries its own)."""
    for _ in range(20):
        marks = _halfwidth_marks(text, zh_only)
        if not marks:
            break
        out = list(text)
        for i in marks:
            out[i] = HALF_TO_FULL[text[i]]
        drop: set[int] = set()
        for i in marks:
            if text[i] != "(":  # spaces after ，；：？！）
                k = i + 1
                while k < len(text) and text[k] == " ":
                    k += 1
                if k < len(text) and text[k] not in "|\n":
                    drop.update(range(i + 1, k))
            if text[i] != ")":  # spaces before （，；：？！
                k = i - 1
                while k >= 0 and text[k] == " ":
                    k -= 1
                if k < i - 1 and not _keeps_space(text, k + 1):
                    drop.update(range(k + 1, i))
        text = "".join(ch for n, ch in enumerate(out) if n not in drop)
    for start, end, new in sorted(_typography_fixes(text, zh_only, quotes), reverse=True):
        text = text[:start] + new + text[end:]
    return text


def _chinese_code_spans(code: str, zh_only: bool = False) -> list[tuple[int, int, bool]]:
    """Spans ``(start, end, zh_only)`` of ``code`` that a Chinese reader reads as prose: every string
    literal holding a Chinese character (other than an ``en=`` argument; Chinese only if it is a
    ``zh=`` argument or the cell is), and every comment holding one (a ``# zh: … # en: …`` pair up
    to its English half, Chinese only; a ``# en: …`` comment not at all)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
        tree = ast.parse(code)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return []
    rows = code.splitlines(keepends=True)
    starts = [0]
    for row in rows:
        starts.append(starts[-1] + len(row))

    def char_pos(line: int, byte_col: int) -> int:  # ast columns are UTF-8 byte offsets
        return starts[line - 1] + len(rows[line - 1].encode("utf-8")[:byte_col].decode("utf-8"))

    by_language: dict[str, list[tuple[int, int]]] = {"zh": [], "en": []}
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg in by_language:
            value = node.value
            by_language[node.arg].append((char_pos(value.lineno, value.col_offset),
                                          char_pos(value.end_lineno, value.end_col_offset)))
    inside = lambda a, b, lang: any(x <= a and b <= y for x, y in by_language[lang])  # noqa: E731
    spans = []
    for token in tokens:
        if not _IDEOGRAPH.search(token.string):
            continue  # no Chinese word: code, or a set of punctuation marks
        a = starts[token.start[0] - 1] + token.start[1]  # tokenize columns are characters
        b = starts[token.end[0] - 1] + token.end[1]
        if token.type == tokenize.STRING and not inside(a, b, "en"):
            spans.append((a, b, zh_only or inside(a, b, "zh")))
        elif token.type == tokenize.COMMENT and not token.string.startswith("# en:"):
            cut = token.string.find("# en:", 1)
            marked = token.string.startswith("# zh:")
            spans.append((a + 5 * marked, a + cut if cut > 0 else b, zh_only or marked))
    return spans


def fix_halfwidth_code(code: str, zh_only: bool = False) -> str:
    """``code`` with :func:`fix_halfwidth` applied inside its Chinese strings and comments only."""
    for a, b, zh in reversed(_chinese_code_spans(code, zh_only)):
        code = code[:a] + fix_halfwidth(code[a:b], zh, quotes=False) + code[b:]
    return code


def _spans(text: str, kind: str, zh_only: bool) -> list[tuple[int, int, bool]]:
    return [(0, len(text), zh_only)] if kind == "markdown" else _chinese_code_spans(text, zh_only)


def halfwidth_problems(text: str, kind: str, where: str, first_line: int = 1, zh_only: bool = False) -> list[str]:
    """One message per line of ``text`` (markdown, ``kind="markdown"``, or code whose Chinese strings
    and comments count, ``kind="code"``) that holds a half-width mark touching Chinese (see
    :func:`_halfwidth_marks`): "where, line N: …context… (write ，；：？！（）)"."""
    problems = []
    seen = set()
    for a, b, zh in _spans(text, kind, zh_only):
        found = [(i, f"half-width {text[a + i]!r} next to Chinese", HALF_TO_FULL[text[a + i]])
                 for i in _halfwidth_marks(text[a:b], zh)]
        for start, end, new in _typography_fixes(text[a:b], zh, quotes=kind == "markdown"):
            what = {"“": "straight quote", "”": "straight quote", "——": "spaces around ——"}.get(new, f"half-width {text[a + start]!r}")
            found.append((start, f"{what} in Chinese text", new))
        for i, what, new in sorted(found):
            at = a + i
            line = text.count("\n", 0, at) + first_line
            if line in seen:
                continue
            seen.add(line)
            context = text[max(a, at - 12):at + 13].replace("\n", " ")
            problems.append(f"{where}, line {line}: {what} in {context!r}: write {new}; "
                            "`python course/build.py --fix-punctuation FILE` rewrites a file")
    return problems


def count_halfwidth(text: str, kind: str, zh_only: bool = False) -> int:
    """How many half-width marks :func:`halfwidth_problems` counts in ``text``."""
    return sum(len(_halfwidth_marks(text[a:b], zh)) + len(_typography_fixes(text[a:b], zh, kind == "markdown"))
               for a, b, zh in _spans(text, kind, zh_only))


def zh_part(text: str) -> tuple[str, str]:
    """A bilingual page split into its Chinese part and the rest: the English part starts at
    ``<a id="english">`` (course/README.md); a page without one is Chinese (bilingual line by line)."""
    cut = text.find('<a id="english"></a>')
    return (text, "") if cut < 0 else (text[:cut], text[cut:])


def fix_file(path: Path) -> bool:
    """Rewrite ``path`` with full-width marks where :func:`halfwidth_problems` would refuse it:
    a lecture source (Chinese and shared cells), a notebook (markdown cells; Chinese strings and
    comments of code cells) or a Markdown page (its Chinese part).  True if it changed."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        nb = json.loads(text)
        for cell in nb["cells"]:
            source = "".join(cell["source"])
            fixed = fix_halfwidth(source) if cell["cell_type"] == "markdown" else fix_halfwidth_code(source)
            if fixed != source:
                cell["source"] = _lines(fixed)
        new = json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    elif path.parent.name == "_src" and path.name != "README.md":
        parts = re.split(r"^(# %%.*)$", text, flags=re.M)  # [preamble, marker, body, marker, body, …]
        for k in range(1, len(parts), 2):
            match = _MARKER.match(parts[k])
            if match is None or match["lang"] == "en":
                continue
            zh_only = match["lang"] == "zh"
            parts[k + 1] = (fix_halfwidth(parts[k + 1], zh_only) if match["kind"]
                            else fix_halfwidth_code(parts[k + 1], zh_only))
        new = "".join(parts)
    else:
        zh, rest = zh_part(text)
        new = fix_halfwidth(zh, zh_only=bool(rest)) + rest
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


# --- One term per concept (course/_src/terms.toml) ---------------------------------------------
TERMS_FILE = SRC / "terms.toml"
ASSIGNMENTS_FILE = SRC / "assignments.toml"
# A quotation of the textbook or a source keeps its words: "…", “…”, 「…」, 《…》 (one line).
_QUOTATION = re.compile(r'"[^"\n]*"|“[^”\n]*”|「[^」\n]*」|《[^》\n]*》')


def load_terms() -> list[dict]:
    """The glossary entries of course/_src/terms.toml (zh, en, first, variants)."""
    if not TERMS_FILE.exists():  # a course folder without a glossary (a test's scratch copy)
        return []
    return tomllib.loads(TERMS_FILE.read_text(encoding="utf-8"))["term"]


def term_problems(text: str, kind: str, where: str, first_line: int = 1, terms: list[dict] | None = None) -> list[str]:
    """One message per listed variant (course/_src/terms.toml) in Chinese ``text`` (markdown, or the
    Chinese strings and comments of code), outside quotations, math and code."""
    terms = load_terms() if terms is None else terms
    problems = []
    for a, b, _ in _spans(text, kind, False):
        segment = text[a:b]
        if kind == "code":
            segment = re.sub(r"^[A-Za-z]*('''|\"\"\"|'|\")|('''|\"\"\"|'|\")$", lambda m: " " * len(m[0]), segment)
        mask = _prose_mask(segment)
        prose = "".join(ch if keep else " " for ch, keep in zip(segment, mask))
        prose = _QUOTATION.sub(lambda m: " " * len(m[0]), prose)
        for term in terms:
            for variant in term.get("variants", []):
                for match in re.finditer(variant, prose):
                    line = text.count("\n", 0, a + match.start()) + first_line
                    problems.append(f"{where}, line {line}: {match[0]!r} is not the course's term: write "
                                    f"{term['zh']} ({term['en']}; course/_src/terms.toml), or quote the textbook "
                                    "in \"…\"")
    return problems


# --- Generated parts of pages and notebooks (course/_src/assignments.toml, terms.toml) -----------
def load_assignments() -> dict:
    """course/_src/assignments.toml: ``randomness`` rules by kind and the ordered ``assignment`` list."""
    return tomllib.loads(ASSIGNMENTS_FILE.read_text(encoding="utf-8"))


def _glossary(lang: str) -> str:
    rows = []
    for term in load_terms():
        first = term["first"]
        if (SRC / f"{first}.md").exists():
            link = f"[{first}]({'' if lang == 'zh' else 'en/'}{first}.ipynb)"
        else:
            link = f"[`{first}`](../release/{first}/{first}.ipynb)"
        rows.append(f"| {term['zh']} | {term['en']} | {link} |")
    head = "| 中文 | English | 首次讲到 |" if lang == "zh" else "| 中文 | English | first taught in |"
    return "\n".join([head, "|---|---|---|", *rows])


def _assignment_table(lang: str) -> str:
    data = load_assignments()
    if lang == "zh":
        head = ["| 作业 | 内容 | 对应章节 | 随机数 | 发布版本 |", "|---|---|---|---|---|"]
    else:
        head = ["| assignment | what you implement | sections | randomness | published version |", "|---|---|---|---|---|"]
    rows = []
    for a in data["assignment"]:
        rule = data["randomness"][a["randomness"]]["short_" + lang]
        sections = a["sections"] if lang == "zh" else a.get("sections_en", a["sections"])
        rows.append(f"| `{a['name']}` | {a[lang]} | {sections} | {rule} | "
                    f"[{a['name']}.ipynb](../release/{a['name']}/{a['name']}.ipynb) |")
    return "\n".join(head + rows)


def _student_list() -> str:
    data = load_assignments()["assignment"]
    names = "、".join(f"`{a['name']}`" for a in data)
    return (f"`release/` 中的 {len(data)} 个计分作业（按课程顺序）：{names}。\n"
            f"The {len(data)} graded assignments in `release/`, in the order of the course: "
            + ", ".join(f"`{a['name']}`" for a in data) + ".")


def _student_rule() -> str:
    data = load_assignments()
    by_kind: dict[str, list[str]] = {}
    for a in data["assignment"]:
        by_kind.setdefault(a["randomness"], []).append(f"`{a['name']}`")
    zh = "；".join(f"{'、'.join(names)} {data['randomness'][kind]['short_zh']}" for kind, names in by_kind.items())
    en = "; ".join(f"{', '.join(names)}: {data['randomness'][kind]['short_en']}" for kind, names in by_kind.items())
    return ("- 只在标有 `YOUR CODE HERE` / `在此处填写你的代码` 的单元格里写代码，用你自己的代码实现函数，"
            "不能调用 `helpers` 里现成的机制。随机性只能来自传入的 `rng`，不能用 `np.random.*`、`random` 模块或"
            f"自己新建的生成器：{zh}。每个作业的规则单元格写明细节。\n"
            "  Write code only in the solution cells and implement the functions yourself, without the ready-made "
            "mechanisms of `helpers`. Randomness comes only from the `rng` you are given, never `np.random.*`, the "
            f"`random` module or a generator of your own: {en}. Each assignment's rules cell gives the details.")


# A generated block of a Markdown page: <!-- BEGIN generated: NAME … --> … <!-- END generated: NAME -->
_BLOCK = re.compile(r"(<!-- BEGIN generated: (?P<name>[\w-]+)[^>]*-->\n)(?P<body>.*?)\n?(<!-- END generated: (?P=name) -->)", re.S)
BLOCKS = {
    "glossary-zh": lambda: _glossary("zh"),
    "glossary-en": lambda: _glossary("en"),
    "assignments-zh": lambda: _assignment_table("zh"),
    "assignments-en": lambda: _assignment_table("en"),
    "student-assignments": _student_list,
    "student-rules": _student_rule,
}


def render_page(text: str, where: str) -> str:
    """``text`` with every generated block rewritten from course/_src/*.toml (other text untouched)."""
    def fill(match: re.Match) -> str:
        if match["name"] not in BLOCKS:
            raise SourceError(f"{where}: unknown generated block {match['name']!r} (known: {', '.join(BLOCKS)})")
        return match[1] + BLOCKS[match["name"]]() + "\n" + match[4]
    return _BLOCK.sub(fill, text)


def rules_cell(source: str, kind: str, where: str) -> str:
    """The rules cell ``source`` (**规则 / Rules**, Chinese bullets, a blank line, English bullets)
    with the first bullet of each language replaced by the randomness rule of ``kind``."""
    rule = load_assignments()["randomness"][kind]
    lines = source.split("\n")
    bullets = [i for i, line in enumerate(lines) if line.startswith("- ")]
    zh = next((i for i in bullets if _IDEOGRAPH.search(lines[i])), None)
    en = next((i for i in bullets if zh is not None and i > zh and not lines[i - 1].strip()
               and not _IDEOGRAPH.search(lines[i])), None)
    if zh is None or en is None:
        raise SourceError(f"{where}: the rules cell needs a Chinese bullet list, a blank line and an English one")
    lines[zh], lines[en] = rule["zh"], rule["en"]
    return "\n".join(lines)


def assignment_targets() -> dict[Path, str]:
    """Every file with a part generated from course/_src/*.toml, mapped to the text it should have."""
    root = COURSE.parent
    result: dict[Path, str] = {}
    if not ASSIGNMENTS_FILE.exists():
        return result
    for page in (COURSE / "README.md", root / "autograder" / "STUDENT_README.md"):
        if page.exists():
            result[page] = render_page(page.read_text(encoding="utf-8"), str(page.relative_to(root)))
    for a in load_assignments()["assignment"]:
        path = root / "source" / a["name"] / f"{a['name']}.ipynb"
        if not path.exists():  # the student bundle has release/ only
            continue
        nb = json.loads(path.read_text(encoding="utf-8"))
        cell = next((c for c in nb["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "rules"), None)
        if cell is None:
            raise SourceError(f"{path.relative_to(root)}: no markdown cell with grade_id 'rules'")
        cell["source"] = _lines(rules_cell("".join(cell["source"]), a["randomness"], str(path.relative_to(root))))
        result[path] = json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    return result


def _lines(text: str) -> list[str]:
    parts = text.splitlines(keepends=True)
    return parts


def render(cells: list[Cell], lang: str, stem: str, labels: list[str] | None = None,
           position: str | None = None) -> str:
    """The notebook JSON for one language, as a string (deterministic).

    ``labels`` (one per ``##`` section, from the teaching plan) are written into the headings, and
    ``position`` (the plan's "在课程中的位置" paragraph, :func:`teaching_plan.position`) replaces
    ``{{POSITION}}``.

    Raises :class:`SourceError` naming every comment the notebook would show in the other
    language (file, cell, source line), and any code cell :func:`localize` refuses.
    """
    source = f"course/_src/{stem}.md"
    out = []
    problems = []
    section = 0
    terms = load_terms()
    for cell in cells:
        if cell.lang not in (None, lang):
            continue
        text = cell.text.replace("{{LANG}}", lang).replace("{{ROOT}}", ROOTS[lang])
        if teaching_plan.POSITION in text:
            if position is None:
                problems.append(f"{source}: {lang} cell {len(out)} (marker line {cell.line}) uses "
                                f"{teaching_plan.POSITION}, which only a build with the teaching plan fills in")
            text = text.replace(teaching_plan.POSITION, position or "")
        if cell.kind == "markdown" and labels is not None:
            text, section = teaching_plan.label_headings(text, labels, lang, section)
        if cell.kind == "code":
            where = f"{source}: {lang} code cell {len(out)} (marker line {cell.line})"
            problems += comment_problems(cell, lang, where)
            text = localize(text, lang, where)
            problems += docstring_problems(text, lang, where)
            if lang == "zh":  # what the Chinese notebook shows: its strings and comments
                problems += halfwidth_problems(text, "code", f"{where}, built", zh_only=cell.lang == "zh")
                problems += term_problems(text, "code", f"{where}, built", terms=terms)
        elif lang == "zh":
            where = f"{source}: zh markdown cell {len(out)} (marker line {cell.line}), source"
            problems += halfwidth_problems(text, "markdown", where, first_line=cell.first, zh_only=cell.lang == "zh")
            problems += term_problems(text, "markdown", where, first_line=cell.first, terms=terms)
        index = len(out)
        entry: dict = {
            "cell_type": cell.kind,
            "id": f"{lang}-{index:03d}",
            "metadata": {"tags": cell.tags} if cell.tags else {},
            "source": _lines(text),
        }
        if cell.kind == "code":
            entry["execution_count"] = None
            entry["outputs"] = []
        out.append(entry)
    if problems:
        raise SourceError("\n".join(problems))
    notebook = {
        "cells": out,
        "metadata": {
            "kernelspec": KERNELSPEC,
            "language_info": LANGUAGE_INFO,
            "dp_course": {"source": f"_src/{stem}.md", "lang": lang,
                          "note": "generated by course/build.py: edit the source, not this file"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


README = COURSE / "README.md"
_PLAN_REGION = "<!-- plan:{lang} -->"
_PLAN_END = "<!-- /plan:{lang} -->"


def parse_all() -> dict[str, list[Cell]]:
    """Every lecture source, parsed: {stem: cells}.  Raises :class:`SourceError` listing every problem."""
    parsed, problems = {}, []
    for source in sorted(SRC.glob("*.md")):
        if source.name == "README.md":
            continue
        try:
            parsed[source.stem] = parse_source(source.read_text(encoding="utf-8"),
                                               name=str(source.relative_to(COURSE.parent)))
        except SourceError as error:  # report every source's problems at once
            problems.append(str(error))
    if problems:
        raise SourceError("\n".join(problems))
    return parsed


def load_plan(parsed: dict[str, list[Cell]] | None = None, text: str | None = None) -> teaching_plan.Plan:
    """The checked teaching plan (plan.toml, or ``text``); a refused plan raises :class:`SourceError`."""
    try:
        return teaching_plan.load(parse_all() if parsed is None else parsed, text)
    except teaching_plan.PlanError as error:
        raise SourceError(f"teaching plan refused:\n{error}") from None


def readme_with_plan(readme: str, plan: teaching_plan.Plan) -> str:
    """course/README.md with its plan regions rewritten (refused if a marker is missing)."""
    for lang in LANGS:
        begin, end = _PLAN_REGION.format(lang=lang), _PLAN_END.format(lang=lang)
        if readme.count(begin) != 1 or readme.count(end) != 1 or readme.index(begin) > readme.index(end):
            raise SourceError(f"course/README.md: needs one line {begin} and, after it, one line {end} "
                              "(the build writes the plan tables between them)")
        head, rest = readme.split(begin, 1)
        _, tail = rest.split(end, 1)
        note = ("<!-- generated by build.py from _src/plan.toml: edit the plan, not this table -->"
                if lang == "en" else "<!-- 由 build.py 根据 _src/plan.toml 生成：请修改计划文件，不要改这里 -->")
        readme = f"{head}{begin}\n{note}\n\n{teaching_plan.plan_tables(plan, lang)}\n\n{end}{tail}"
    return readme


def targets(prefixes: list[str] | None = None) -> dict[Path, str]:
    """Map every notebook path to the text it should have; without ``prefixes`` also the pages and
    source notebooks with a part generated from course/_src/assignments.toml, terms.toml and plan.toml."""
    result: dict[Path, str] = {}
    parsed = parse_all()
    plan = load_plan(parsed)
    problems = []
    for stem, cells in parsed.items():
        if prefixes and not any(stem.startswith(p) for p in prefixes):
            continue
        labels = [s.label for s in plan.notebooks[stem]]
        try:
            for lang in LANGS:
                result[OUT_DIRS[lang] / f"{stem}.ipynb"] = render(cells, lang, stem, labels,
                                                                  teaching_plan.position(plan, stem, lang))
        except SourceError as error:  # report every source's problems at once
            problems.append(str(error))
    if not prefixes:
        try:
            result.update(assignment_targets())
        except SourceError as error:
            problems.append(str(error))
    if problems:
        raise SourceError("\n".join(problems))
    if not prefixes:  # course/README.md: the assignments' part (above) and the plan tables
        result[README] = readme_with_plan(result.get(README, README.read_text(encoding="utf-8")), plan)
    return result


def teaching_content(text: str) -> object:
    """What a source determines: each cell's type, id, source and tags, and the course metadata.

    Outputs, execution counts and the metadata JupyterLab and nbclient add when a
    notebook is run and saved (widget state, timings, kernel versions) are left out, so
    ``--check`` keeps passing after a student runs and saves a lecture notebook; an
    edited cell, added or deleted cell still makes the notebook out of date.
    """
    try:
        nb = json.loads(text)
        return ([(c.get("cell_type"), c.get("id"), "".join(c.get("source", "")), c.get("metadata", {}).get("tags", []))
                 for c in nb["cells"]], nb.get("metadata", {}).get("dp_course"))
    except (ValueError, KeyError, TypeError, AttributeError):
        return text  # not a notebook: only an identical file is up to date


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 if a notebook is out of date")
    parser.add_argument("--fix-punctuation", nargs="+", metavar="FILE", type=Path,
                        help="rewrite these files (lecture sources, notebooks, Markdown pages) with full-width "
                             "punctuation next to Chinese (see fix_file), then build")
    parser.add_argument("prefixes", nargs="*", help="only sources whose name starts with one of these")
    parser.add_argument("--plan", action="store_true", help="print the teaching plan with minutes, then exit")
    parser.add_argument("--plan-json", action="store_true", help="print the teaching plan as JSON, then exit")
    parser.add_argument("--plan-sections", action="store_true", help="print every section's counts and minutes")
    args = parser.parse_args(argv)
    for path in args.fix_punctuation or []:
        print(f"{path}: {'rewritten' if fix_file(path) else 'unchanged'}", file=sys.stderr)
    if args.plan or args.plan_json or args.plan_sections:
        try:
            plan = load_plan()
        except SourceError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        if args.plan_json:
            print(json.dumps(teaching_plan.as_json(plan), ensure_ascii=False, indent=1))
        elif args.plan_sections:
            print(teaching_plan.section_report(plan))
        else:
            print(teaching_plan.plan_tables(plan, "zh"))
        return 0
    try:
        wanted = targets(args.prefixes)
    except SourceError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    stale = []
    for path, text in wanted.items():
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if args.check and current is not None and current != text and teaching_content(current) == teaching_content(text):
            continue  # run and saved in JupyterLab (outputs, counts, widget state): still up to date
        if current != text:
            stale.append(path)
            if not args.check:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
    rel = [str(p.relative_to(COURSE.parent)) for p in stale]
    if args.check:
        if stale:
            print("out of date (run `python course/build.py`):", *rel, sep="\n  ", file=sys.stderr)
            return 1
        print(f"{len(wanted)} notebooks and pages up to date", file=sys.stderr)
        return 0
    print(f"wrote {len(stale)} of {len(wanted)} files (notebooks and course/README.md)", *rel, sep="\n  " if rel else "", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
