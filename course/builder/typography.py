"""Chinese typography (GB/T 15834): full-width punctuation next to Chinese, “” quotes, —— without spaces;
the rule the build, the slides and the guide apply, and its fixer (``python course/build.py --fix-punctuation``)."""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from pathlib import Path

from .source import _MARKER

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


def _lines(text: str) -> list[str]:
    parts = text.splitlines(keepends=True)
    return parts
