"""The lecture source format (``course/_src/<stem>.md``, see course/_src/README.md): cells, and each
language's code (``tr``/``label`` calls, ``# zh:``/``# en:`` comments) with the checks that refuse a comment
or docstring a notebook would show in the other language."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

COURSE = Path(__file__).resolve().parents[1]

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
