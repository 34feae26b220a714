"""Each class meeting's deck as an editable PowerPoint file (``make slides``; opened by PowerPoint,
WPS 演示 and LibreOffice Impress), written from the same pages as the HTML deck (slides/build.py,
:func:`deck_pages`): the same titles, the body lines as bullet paragraphs, a Markdown table (表 6-1 …)
as a table at the body's size, each figure as a picture with its caption, and the speaker notes in the
notes pane.

PowerPoint has no TeX: math is written as text with Unicode letters, sub- and superscripts where
Unicode has them (:func:`tex_to_text`: ``e^{\\pm\\varepsilon}`` → ``e^(±ε)``, ``\\frac{1}{2}`` → ``1/2``,
``\\Delta_1`` → ``Δ₁``), which a lecturer can retype with the equation editor where it matters.
"""

from __future__ import annotations

import re
from pathlib import Path

from pptx import Presentation
from pptx.enum.text import PP_ALIGN
from pptx.oxml.ns import qn
from pptx.util import Emu, Inches, Pt

#: 16:9 at 13.333 x 7.5 in: the HTML deck's 1280 x 720 px at 96 px per inch.
WIDTH, HEIGHT = Inches(13.333), Inches(7.5)
FONT = "Microsoft YaHei"  # WPS and PowerPoint on Windows have it; elsewhere the app substitutes a CJK font
MARGIN = Inches(0.45)

_SYMBOLS = {
    "varepsilon": "ε", "epsilon": "ε", "delta": "δ", "Delta": "Δ", "pi": "π", "sigma": "σ", "mu": "μ",
    "lambda": "λ", "beta": "β", "alpha": "α", "gamma": "γ", "theta": "θ", "omega": "ω", "Omega": "Ω",
    "Phi": "Φ", "phi": "φ", "ell": "ℓ", "infty": "∞", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥",
    "ne": "≠", "neq": "≠", "approx": "≈", "times": "×", "cdot": "·", "cdots": "⋯", "ldots": "…",
    "dots": "…", "pm": "±", "to": "→", "rightarrow": "→", "leftarrow": "←", "leftrightarrow": "↔",
    "Rightarrow": "⇒", "in": "∈", "notin": "∉", "subseteq": "⊆", "sum": "Σ", "prod": "∏", "lVert": "‖",
    "rVert": "‖", "|": "‖", "mid": "|", "lvert": "|", "rvert": "|", "{": "{", "}": "}", "%": "%",
    "ln": "ln", "log": "log", "exp": "exp", "max": "max", "min": "min", "Pr": "Pr", "sqrt": "√",
    "neg": "¬", "cup": "∪", "cap": "∩", "emptyset": "∅", "forall": "∀", "exists": "∃", "sim": "~",
    "propto": "∝", "langle": "⟨", "rangle": "⟩", "lfloor": "⌊", "rfloor": "⌋", "lceil": "⌈", "rceil": "⌉",
}
_SPACES = {",": " ", ";": " ", ":": " ", "!": "", "quad": "  ", "qquad": "   ", " ": " "}
_SUP = dict(zip("0123456789+-=()nix", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿⁱˣ"))
_SUB = dict(zip("0123456789+-=()aeijknmx", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑᵢⱼₖₙₘₓ"))


def _group(tex: str, i: int) -> tuple[str, int]:
    """The argument at ``tex[i:]`` (a ``{…}`` group, a command or one character) and the index after it."""
    while i < len(tex) and tex[i] == " ":
        i += 1
    if i >= len(tex):
        return "", i
    if tex[i] == "{":
        depth = 0
        for j in range(i, len(tex)):
            depth += {"{": 1, "}": -1}.get(tex[j], 0)
            if depth == 0:
                return tex[i + 1:j], j + 1
        return tex[i + 1:], len(tex)
    if tex[i] == "\\":
        m = re.match(r"\\([A-Za-z]+|.)", tex[i:])
        return m[0], i + len(m[0])
    return tex[i], i + 1


def _wrap(text: str) -> str:
    """``text`` as one operand: parenthesised unless it is one symbol or a number."""
    return text if re.fullmatch(r"[\w.′']|\d+(\.\d+)?|[A-Za-zα-ωΑ-Ω]\S?|\|[^|]+\|", text) else f"({text})"


def tex_to_text(tex: str) -> str:
    """TeX math as plain text a slide or a notes pane can hold (see the module docstring)."""
    out, i = [], 0
    while i < len(tex):
        ch = tex[i]
        if ch == "\\":
            m = re.match(r"\\([A-Za-z]+|.)", tex[i:])
            name, i = m[1], i + len(m[0])
            if name == "frac" or name in ("dfrac", "tfrac"):
                num, i = _group(tex, i)
                den, i = _group(tex, i)
                out.append(f"{_wrap(tex_to_text(num))}/{_wrap(tex_to_text(den))}")
            elif name == "sqrt":
                arg, i = _group(tex, i)
                out.append("√" + _wrap(tex_to_text(arg)))
            elif name in ("hat", "bar", "tilde", "widehat"):
                arg, i = _group(tex, i)
                mark = {"hat": "\u0302", "widehat": "\u0302", "bar": "\u0304", "tilde": "\u0303"}[name]
                text = tex_to_text(arg)
                out.append(text + mark if len(text) == 1 else f"{name}({text})")
            elif name in ("mathrm", "text", "operatorname", "mathbf", "mathit", "textbf", "mathcal", "mathbb"):
                arg, i = _group(tex, i)
                out.append(tex_to_text(arg) if name.startswith("math") or name == "operatorname" else arg)
            elif name in ("left", "right", "big", "Big", "bigl", "bigr", "Bigl", "Bigr", "displaystyle"):
                continue
            elif name in _SPACES:
                out.append(_SPACES[name])
            else:
                out.append(_SYMBOLS.get(name, name))
                rest = tex[i:].lstrip(" ")
                if name in ("ln", "log", "exp", "max", "min", "Pr", "in", "le", "leq", "ge", "geq", "approx",
                            "times", "to", "ne", "neq", "mid") or not rest:
                    if rest and rest[0] not in "(_^{[":
                        out.append(" ")
                elif re.match(r"[\w(\\]", rest):
                    i = len(tex) - len(rest)  # "\Delta f" is Δf: TeX ignores the space
        elif ch in "^_":
            arg, i = _group(tex, i + 1)
            text = tex_to_text(arg)
            table = _SUP if ch == "^" else _SUB
            if text and all(c in table for c in text):
                out.append("".join(table[c] for c in text))
            else:
                out.append(ch + _wrap(text))
                if not out[-1].endswith(")") and re.match(r"[A-Za-z\\]", tex[i:i + 1]):
                    out.append(" ")  # e^ε Pr[…], not e^εPr[…]
        elif ch in "{}":
            i += 1
        else:
            out.append(ch)
            i += 1
    return re.sub(r" {2,}", " ", "".join(out)).strip()


_MATH = re.compile(r"\$\$(.+?)\$\$|(?<![\\$])\$(?!\$)(.+?)(?<![\\$])\$", re.S)
_RUN = re.compile(r"\*\*(.+?)\*\*|`([^`]+)`")


def markdown_text(line: str) -> list[tuple[str, str]]:
    """One Markdown line as runs ``(text, style)``, style "" / "bold" / "code"; math as text, escapes
    and link syntax dropped."""
    line = _MATH.sub(lambda m: tex_to_text(m[1] if m[1] is not None else m[2]), line)
    line = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", line)
    line = re.sub(r"\\([\\`*_{}\[\]()#+\-.!|])", r"\1", line)
    runs, at = [], 0
    for m in _RUN.finditer(line):
        runs.append((line[at:m.start()], ""))
        runs.append((m[1], "bold") if m[1] is not None else (m[2], "code"))
        at = m.end()
    runs.append((line[at:], ""))
    return [(text, style) for text, style in runs if text]


def plain(line: str) -> str:
    return "".join(text for text, _ in markdown_text(line))


def _set_font(run, size: float | None = None, style: str = "") -> None:
    font = run.font
    if size:
        font.size = Pt(size)
    font.bold = style == "bold" or None
    name = "Consolas" if style == "code" else FONT
    font.name = name
    rpr = run._r.get_or_add_rPr()
    for tag in ("a:ea", "a:cs"):
        element = rpr.find(qn(tag))
        if element is None:
            element = rpr.makeelement(qn(tag), {})
            rpr.append(element)
        element.set("typeface", FONT)


def _paragraphs(frame, lines: list[str], size: float, bullets: bool = True) -> None:
    """Markdown lines into a text frame: "- x" a bullet (level by indent), "$$…$$" a centred formula,
    any other line a paragraph; blank lines dropped."""
    first = True
    for raw in lines:
        if not raw.strip():
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        text = raw.strip()
        bullet = re.match(r"^([-*+]|\d+[.)])\s+", text)
        paragraph = frame.paragraphs[0] if first else frame.add_paragraph()
        first = False
        if bullet:
            text = text[bullet.end():]
            paragraph.level = min(indent // 2, 4)
        elif text.startswith("$$"):
            paragraph.alignment = PP_ALIGN.CENTER
        if not (bullet and bullets):
            _no_bullet(paragraph)
        for part, style in markdown_text(text):
            run = paragraph.add_run()
            run.text = part
            _set_font(run, size - 4 * paragraph.level, style)


def _no_bullet(paragraph) -> None:
    ppr = paragraph._p.get_or_add_pPr()
    ppr.set("marL", "0")
    ppr.set("indent", "0")
    if ppr.find(qn("a:buNone")) is None:
        ppr.insert(0, ppr.makeelement(qn("a:buNone"), {}))


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _place(shape, left, top, width, height) -> None:
    shape.left, shape.top, shape.width, shape.height = Emu(left), Emu(top), Emu(width), Emu(height)


TABLE_POINTS, ROW_HEIGHT = 26, Inches(0.6)  # the body text's size; a row of one line at that size


def _text_width(text: str, points: float) -> int:
    """About how wide ``text`` is drawn (EMU): a Chinese character 1 em, anything else 0.65 em
    (generous: WPS and LibreOffice substitute wider Latin fonts than Microsoft YaHei, and a cell that
    wraps "Benn/y" reads badly)."""
    ems = sum(1.0 if ord(ch) > 0x2E80 else 0.65 for ch in text)
    return int(Pt(points * ems))


def _table(slide, rows: list[list[str]], left: int, top: int, room: int) -> None:
    """A Markdown table (header first) as a PowerPoint table: each column as wide as its widest
    cell at :data:`TABLE_POINTS`, the whole no wider than ``room`` (then every column narrowed
    alike and long cells wrap), the header row bold."""
    columns = len(rows[0])
    pad = Inches(0.45)  # the cell's own margins (0.1 in a side) and some air
    widths = [max(_text_width(plain(row[c]) if c < len(row) else "", TABLE_POINTS) for row in rows) + pad
              for c in range(columns)]
    scale = min(1.0, room / sum(widths))
    widths = [int(w * scale) for w in widths]
    shape = slide.shapes.add_table(len(rows), columns, left, top, sum(widths), ROW_HEIGHT * len(rows))
    table = shape.table
    for c, width in enumerate(widths):
        table.columns[c].width = Emu(width)
    for r, row in enumerate(rows):
        for c, cell in enumerate(row[:columns]):
            frame = table.cell(r, c).text_frame
            _paragraphs(frame, [cell], TABLE_POINTS, bullets=False)
            if r == 0:
                for run in frame.paragraphs[0].runs:
                    run.font.bold = True


def write_deck(pages: list, figures_dir: Path, target: Path) -> None:
    """Write one deck (:func:`slides.build.deck_pages`) to ``target``."""
    from PIL import Image

    prs = Presentation()
    prs.slide_width, prs.slide_height = WIDTH, HEIGHT
    title_layout, content_layout, picture_layout = prs.slide_layouts[0], prs.slide_layouts[1], prs.slide_layouts[5]
    for page in pages:
        if page.kind == "title":
            slide = prs.slides.add_slide(title_layout)
            title, subtitle = slide.placeholders[0], slide.placeholders[1]
            _place(title, MARGIN, Inches(1.8), WIDTH - 2 * MARGIN, Inches(1.5))
            _place(subtitle, MARGIN, Inches(3.6), WIDTH - 2 * MARGIN, Inches(2.4))
            title.text_frame.text = plain(page.title)
            _set_font(title.text_frame.paragraphs[0].runs[0], 54, "bold")
            _paragraphs(subtitle.text_frame, page.lines, 26, bullets=False)
        else:
            slide = prs.slides.add_slide(picture_layout if page.figure else content_layout)
            title = slide.shapes.title
            _place(title, MARGIN, Inches(0.35), WIDTH - 2 * MARGIN, Inches(0.95))
            title.text_frame.text = plain(page.title)
            title.text_frame.paragraphs[0].alignment = PP_ALIGN.LEFT
            _set_font(title.text_frame.paragraphs[0].runs[0], 34, "bold")
            top = Inches(1.4)
            if page.crumb:  # the notebook and section, small above the title as in the HTML deck
                crumb = slide.shapes.add_textbox(MARGIN, Inches(0.1), WIDTH - 2 * MARGIN, Inches(0.35))
                crumb.text_frame.text = plain(page.crumb)
                _set_font(crumb.text_frame.paragraphs[0].runs[0], 12)
            if page.figure:
                image = figures_dir / page.figure
                with Image.open(image) as im:
                    ratio = im.width / im.height
                box_w, box_h = WIDTH - 2 * MARGIN, HEIGHT - top - Inches(0.75)
                w = min(box_w, int(box_h * ratio))
                h = int(w / ratio)
                slide.shapes.add_picture(str(image), int((WIDTH - w) / 2), top, w, h)
                caption = slide.shapes.add_textbox(MARGIN, top + h + Inches(0.05), WIDTH - 2 * MARGIN, Inches(0.6))
                _paragraphs(caption.text_frame, [page.caption], 20, bullets=False)
                caption.text_frame.paragraphs[0].alignment = PP_ALIGN.CENTER
            else:
                rows = [_cells(line) for line in page.lines if line.lstrip().startswith("|")]
                rows = [row for row in rows if not all(re.fullmatch(r":?-{3,}:?", c) for c in row)]
                text = [line for line in page.lines if not line.lstrip().startswith("|")]
                body = slide.placeholders[1]
                used = Inches(0.62) * sum(1 for line in text if line.strip())
                _place(body, MARGIN, top, WIDTH - 2 * MARGIN, used if rows else HEIGHT - top - Inches(0.5))
                _paragraphs(body.text_frame, text, 26)
                if rows:  # a Markdown table as a PowerPoint table, its text as large as the body's
                    _table(slide, rows, MARGIN + Inches(0.3), top + used + Inches(0.1), WIDTH - 2 * MARGIN - Inches(0.3))
        notes = slide.notes_slide.notes_text_frame
        _paragraphs(notes, page.notes, 14, bullets=False)
    target.parent.mkdir(parents=True, exist_ok=True)
    prs.save(str(target))
