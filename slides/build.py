#!/usr/bin/env python3
"""Build one offline reveal.js deck per class meeting of each teaching path (``make slides``).

    python slides/build.py                 # write slides/html/ (index.html, one deck per meeting, each
                                           # also as an editable .pptx: slides/pptx_deck.py)
    python slides/build.py --check-sources # only check the slide sources against the plan (fast)

What goes in a deck comes from three places, and nothing is typed twice:

* the teaching plan ``course/_src/plan.toml`` (via ``course/build.py``): the paths, their class
  meetings, the sections of each meeting in order, their minutes and the assignments;
* the slide text ``course/_src/slides/<notebook>.md``, kept beside the lecture source: for each
  section id of the plan, its slides (format below);
* the figures: PNG images of the lecture notebook's own figures at their default parameters,
  made by running the Chinese notebook's code cells headless (matplotlib Agg, the notebook's
  seeded ``rng``): the k-th figure a section's code shows is ``figure k`` of that section, saved at
  slide size (:func:`slide_png`: it fills the slide under its title, text at least 24 px).

The build refuses a slide that would show raw Markdown (an image or link that did not parse, ``**``,
a line starting with ``#``), an empty slide and a slide without speaker notes.

Slide source format (Markdown)::

    # <section id>                 the plan's id of a section of this notebook
    ## <slide title>               a new slide
    - a short line                 the slide body: a few short lines, math in $…$ / $$…$$
    | 列 | 列 |                    and at its end a table (a textbook table: 表 6-1 …), or
    ![caption](figure 1)           one figure of the section
    ???                            everything after this (up to the next ## or #) is speaker notes

A slide holds at most 7 short lines, or at most 3 short lines and one table of at most 8 rows
(header included), the table last: the PowerPoint deck puts the text above the table.  A title
does not tell the room to drag (拖动, drag): on a slide a slider figure is a still picture at the
notebook's default parameters; the live demonstration goes in the speaker notes, and a slider
figure's notes that do not ask for it get :data:`LIVE_NOTE`.

Every section that a path teaches must have at least one slide; the build refuses (exit 2,
saying what is wrong) a slide source naming an unknown notebook or section, a section taught
without slides, or a figure the section does not draw.  Math is typeset in the browser by the
local KaTeX; reveal.js and KaTeX are copied from ``slides/node_modules`` (``npm ci`` in the make
target) into ``slides/html/vendor``, so a deck opens from disk with no network.
"""

from __future__ import annotations

import argparse
import html
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import mistune

ROOT = Path(__file__).resolve().parents[1]
COURSE = ROOT / "course"
SLIDE_SRC = COURSE / "_src" / "slides"
OUT = ROOT / "slides" / "html"
NODE = ROOT / "slides" / "node_modules"
STYLE = ROOT / "slides" / "deck.css"

_spec = importlib.util.spec_from_file_location("course_build", COURSE / "build.py")
course_build = importlib.util.module_from_spec(_spec)
sys.modules["course_build"] = course_build
_spec.loader.exec_module(course_build)
teaching_plan = course_build.teaching_plan
_spec = importlib.util.spec_from_file_location("slides_pptx_deck", ROOT / "slides" / "pptx_deck.py")
pptx_deck = importlib.util.module_from_spec(_spec)
sys.modules["slides_pptx_deck"] = pptx_deck
_spec.loader.exec_module(pptx_deck)

#: The vendored files a deck loads (source in node_modules -> path under html/vendor).
VENDOR = {
    "reveal.js/dist/reset.css": "reveal/reset.css",
    "reveal.js/dist/reveal.css": "reveal/reveal.css",
    "reveal.js/dist/theme/white.css": "reveal/theme/white.css",
    "reveal.js/dist/theme/fonts": "reveal/theme/fonts",
    "reveal.js/dist/reveal.js": "reveal/reveal.js",
    "reveal.js/plugin/notes/notes.js": "reveal/notes.js",
    "katex/dist/katex.min.css": "katex/katex.min.css",
    "katex/dist/katex.min.js": "katex/katex.min.js",
    "katex/dist/fonts": "katex/fonts",
}
# A caption may hold brackets ("灰色区域是 $[-b, b]$"): the caption runs to the last "](figure N)".
_FIGURE = re.compile(r"^!\[(?P<alt>.*)\]\(figure (?P<n>\d+)\)\s*$")
# Markdown a slide must not show as text once rendered (an image or link that did not parse, bold
# left as stars, a heading marker at the start of a line).
_RAW_MARKDOWN = re.compile(r"!\[|\]\(|\*\*|__|(?:^|\n)[ \t]*#{1,6}[ \t]")
# What a slide shows as text: the HTML without its math (kept for KaTeX), code, tags and notes.
_NOT_TEXT = re.compile(r'<span class="tex"[^>]*>.*?</span>|<code>.*?</code>|<aside class="notes">.*?</aside>', re.S)
# A title that tells the room to drag a slider: on a slide the figure does not move.
_DRAG = re.compile(r"拖动|拖到|拖一拖|滑块|\bdrag", re.I)
_TABLE_RULE = re.compile(r":?-{3,}:?")
#: The speaker-notes line a slider figure's slide gets when its notes do not ask for the live demo.
LIVE_NOTE = "【现场演示】幻灯片上是默认参数下的静态图：在笔记本中现场拖动滑块。"
MAX_LINES, MAX_LINES_WITH_TABLE, MAX_TABLE_ROWS = 7, 3, 8
_MATH = re.compile(r"\$\$(?P<display>.+?)\$\$|(?<![\\$])\$(?!\$)(?P<inline>.+?)(?<![\\$])\$", re.S)


class SlideError(ValueError):
    """A slide source or plan the slide build refuses."""


@dataclass
class Slide:
    title: str
    body: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    figure: tuple[int, str] | None = None  # (number within the section, caption)
    line: int = 0


def parse_slides(text: str, name: str) -> dict[str, list[Slide]]:
    """{section id: [Slide, …]} of one slide source (see the module docstring for the format)."""
    out: dict[str, list[Slide]] = {}
    section: str | None = None
    slide: Slide | None = None
    in_notes = False
    text = re.sub(r"<!--.*?-->", lambda m: "\n" * m[0].count("\n"), text, flags=re.S)
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("# "):
            section, slide, in_notes = line[2:].strip(), None, False
            if section in out:
                raise SlideError(f"{name}:{number}: section {section!r} appears twice")
            out[section] = []
        elif line.startswith("## "):
            if section is None:
                raise SlideError(f"{name}:{number}: a slide before the first '# <section id>' line")
            slide, in_notes = Slide(line[3:].strip(), line=number), False
            out[section].append(slide)
        elif line.strip() == "???":
            if slide is None:
                raise SlideError(f"{name}:{number}: '???' (speaker notes) outside a slide")
            in_notes = True
        elif slide is not None:
            figure = _FIGURE.match(line)
            if figure and not in_notes:
                if slide.figure or any(l.strip() for l in slide.body):
                    raise SlideError(f"{name}:{number}: a slide holds a few short lines or one figure, not both")
                slide.figure = (int(figure["n"]), figure["alt"])
            else:
                if not in_notes and slide.figure and line.strip():
                    raise SlideError(f"{name}:{number}: a slide holds a few short lines or one figure, not both")
                (slide.notes if in_notes else slide.body).append(line)
        elif line.strip():
            raise SlideError(f"{name}:{number}: text outside a slide: {line[:60]!r}")
    for sid, slides in out.items():
        for s in slides:
            if _DRAG.search(s.title):
                raise SlideError(f"{name}:{s.line}: slide title {s.title!r} tells the room to drag, but a slide "
                                 "shows a still picture: title it by what the figure shows (\"ε 越小，两个分布越像\") "
                                 "and ask for the live demo in the speaker notes (\"在笔记本中现场拖动 ε 滑块\")")
            lines = [l for l in s.body if l.strip()]
            table = [n for n, l in enumerate(lines) if l.lstrip().startswith("|")]
            rows = [l for l in lines if l.lstrip().startswith("|")
                    and not all(_TABLE_RULE.fullmatch(c) for c in _table_cells(l))]
            text = len(lines) - len(table)
            if table and table != list(range(len(lines) - len(table), len(lines))):
                raise SlideError(f"{name}:{s.line}: slide {s.title!r}: a table comes last, in one piece "
                                 "(its rows one after another, the short lines above it)")
            if table and (text > MAX_LINES_WITH_TABLE or len(rows) > MAX_TABLE_ROWS):
                raise SlideError(f"{name}:{s.line}: slide {s.title!r} has {text} lines and a table of {len(rows)} "
                                 f"rows; a slide with a table holds at most {MAX_LINES_WITH_TABLE} short lines and "
                                 f"{MAX_TABLE_ROWS} rows, header included (put the rest in the speaker notes)")
            if not table and len(lines) > MAX_LINES:
                raise SlideError(f"{name}:{s.line}: slide {s.title!r} has {len(lines)} lines; a slide holds "
                                 f"at most {MAX_LINES} short lines (put the rest in the speaker notes after '???')")
            if not lines and not s.figure:
                raise SlideError(f"{name}:{s.line}: slide {s.title!r} is empty: give it a few short lines or a figure")
            if not any(l.strip() for l in s.notes):
                raise SlideError(f"{name}:{s.line}: slide {s.title!r} has no speaker notes (write them after '???')")
    return out


def _table_cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def load_sources() -> tuple[object, dict[str, dict[str, list[Slide]]]]:
    """The checked plan and every slide source; :class:`SlideError` lists every problem."""
    try:
        parsed = course_build.parse_all()
        plan = course_build.load_plan(parsed)
    except course_build.SourceError as error:
        raise SlideError(str(error)) from None
    slides: dict[str, dict[str, list[Slide]]] = {}
    problems = []
    for path in sorted(SLIDE_SRC.glob("*.md")):
        name = f"course/_src/slides/{path.name}"
        if path.stem not in plan.notebooks:
            problems.append(f"{name}: no lecture notebook {path.stem!r} (sources: {', '.join(plan.notebooks)})")
            continue
        text = path.read_text(encoding="utf-8")
        # the course's rule for Chinese text (course/build.py): full-width ，；：？！（） next to Chinese
        problems += course_build.halfwidth_problems(text, "markdown", name)
        try:
            slides[path.stem] = parse_slides(text, name)
        except SlideError as error:
            problems.append(str(error))
            continue
        known = {s.id for s in plan.notebooks[path.stem]}
        for sid in slides[path.stem]:
            if sid not in known:
                problems.append(f"{name}: no section {sid!r} in {path.stem} (its sections: {', '.join(sorted(known))})")
    for pid, meetings in plan.meetings.items():
        for m in meetings:
            for s in m.sections:
                if not slides.get(s.stem, {}).get(s.id):
                    problems.append(f"course/_src/slides/{s.stem}.md: section {s.id!r} ({s.zh}) is taught in path "
                                    f"{pid}, meeting {m.number}, but has no slide ('# {s.id}' then '## title')")
    if problems:
        raise SlideError("\n".join(problems))
    return plan, slides


# --------------------------------------------------------------------------- figures

#: A figure slide's picture area (CSS px of the 1280 x 720 slide, slides/deck.css) and the figure size
#: that fills it: about 110 px per inch, so a 17 pt label is 26 px on the projected slide.
FIGURE_BOX = (1220, 540)
FIGURE_INCHES = {"wide": (11.0, 4.9), "height": 4.9}
MIN_POINTS = 17  # the smallest text of a slide figure: 17 pt x 110 px/in / 72 = 26 px >= 24 px
SLIDE_DPI = 220  # 2x the slide's 110 px per inch: sharp on a 1080p projector
SLIDE_RC = {"font.size": MIN_POINTS, "axes.titlesize": MIN_POINTS + 2, "axes.labelsize": MIN_POINTS,
            "xtick.labelsize": MIN_POINTS, "ytick.labelsize": MIN_POINTS, "legend.fontsize": MIN_POINTS,
            "figure.titlesize": MIN_POINTS + 3, "lines.linewidth": 2.2}


def slide_png(fig, path: Path) -> None:
    """Save a lecture figure at slide size: resized to fill :data:`FIGURE_BOX` (a wide figure to
    11 x 4.9 in, a narrower one to 4.9 in high at its own aspect), every text at least
    :data:`MIN_POINTS`, laid out again, at :data:`SLIDE_DPI`.  A slider figure's animated artists
    (drawn by blitting in the notebook) are drawn as ordinary ones."""
    from matplotlib.text import Text

    for artist in fig.findobj():
        if artist.get_animated():
            artist.set_animated(False)
    for ax in fig.axes:
        ax.tick_params(labelsize=MIN_POINTS)
    for text in fig.findobj(Text):
        if text.get_fontsize() < MIN_POINTS:
            text.set_fontsize(MIN_POINTS)
    width, height = fig.get_size_inches()
    box_aspect = FIGURE_BOX[0] / FIGURE_BOX[1]
    if width / height >= 0.8 * box_aspect:
        fig.set_size_inches(*FIGURE_INCHES["wide"])
    else:
        high = FIGURE_INCHES["height"]
        fig.set_size_inches(min(FIGURE_INCHES["wide"][0], max(high * width / height * 1.15, 6.5)), high)
    try:
        fig.set_layout_engine("constrained")
    except RuntimeError:  # a layout the figure cannot switch to: fall back to cropping
        pass
    fig.savefig(path, dpi=SLIDE_DPI, bbox_inches="tight", pad_inches=0.08)


def capture_figures(stem: str, out_dir: Path, last: str | None = None) -> dict[str, list[str]]:
    """Run the Chinese notebook ``stem``'s code cells headless; save every figure it shows.

    With ``last`` (a section id), stop at the first section after it: the sections a deck does
    not show (optional ones at the end, self-checks) are not run.

    Returns {section id: [PNG file names, in the order shown]}.  Static figures are taken when a
    cell calls ``plt.show()`` (or leaves a figure open); slider figures (``LiveFigure``) as their
    canvas shows them at the builder's default parameters.
    """
    os.environ["MPLBACKEND"] = "Agg"
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sys.path.insert(0, str(ROOT))
    from helpers.lectures.widgets import LiveFigure

    matplotlib.rcParams.update(SLIDE_RC)

    parsed = course_build.parse_all()
    plan = course_build.load_plan(parsed)
    ids = [s.id for s in plan.notebooks[stem]]
    figures: dict[str, list[str]] = {}
    current = {"section": "intro"}

    def save(fig, slider: bool = False) -> None:
        sid = current["section"]
        # a slider figure is marked in its name: its slide's notes ask for the live demo (LIVE_NOTE)
        name = f"{stem}--{sid}--{len(figures.setdefault(sid, [])) + 1}{'.slider' if slider else ''}.png"
        slide_png(fig, out_dir / name)
        figures[sid].append(name)

    def show(*_args, **_kwargs) -> None:
        for number in plt.get_fignums():
            save(plt.figure(number))
        plt.close("all")

    plt.show = show
    namespace: dict = {"__name__": "__main__"}
    seen: set[int] = set()
    index = 0
    os.chdir(COURSE)
    for cell in parsed[stem]:
        if cell.lang not in (None, "zh"):
            continue
        text = cell.text.replace("{{LANG}}", "zh").replace("{{ROOT}}", "")
        if cell.kind == "markdown":
            for line in text.split("\n"):
                if line.startswith("## "):
                    if last is not None and last in ids and index > ids.index(last):
                        return figures  # past the last section a deck shows
                    current["section"] = ids[index]
                    index += 1
            continue
        code = course_build.localize(text, "zh", f"{stem} code")
        exec(compile(code, f"<{stem}: {current['section']}>", "exec"), namespace)  # noqa: S102 - our own notebook
        for value in list(namespace.values()):
            if isinstance(value, LiveFigure) and id(value) not in seen:
                seen.add(id(value))
                save(value.fig, slider=True)
        show()
    return figures


def figures_for(stems: dict[str, str], out_dir: Path) -> dict[str, dict[str, list[str]]]:
    """Capture the figures of several notebooks ({stem: last section id needed}), each in its own
    process (two at a time)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    running = []
    result: dict[str, dict[str, list[str]]] = {}
    pending = list(stems)
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONHASHSEED": "0"}
    while pending or running:
        while pending and len(running) < 2:
            stem = pending.pop(0)
            proc = subprocess.Popen([sys.executable, __file__, "--figures-of", stem, "--out", str(out_dir),
                                     "--last", stems[stem]],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            running.append((stem, proc))
        stem, proc = running.pop(0)
        stdout, stderr = proc.communicate(timeout=600)
        if proc.returncode != 0:
            raise SlideError(f"running the code of course/{stem}.ipynb for its figures failed:\n{stderr[-3000:]}")
        result[stem] = json.loads(stdout.strip().splitlines()[-1])
    return result


# --------------------------------------------------------------------------- HTML

def _markdown(lines: list[str]) -> str:
    """Markdown to HTML with the math kept verbatim for KaTeX (``<span class="tex">``)."""
    text = "\n".join(lines).strip()
    maths: list[str] = []

    def keep(match: re.Match) -> str:
        display = match["display"] is not None
        tex = match["display"] if display else match["inline"]
        maths.append(f'<span class="tex" data-display="{int(display)}">{html.escape(tex.strip())}</span>')
        return f"\x00{len(maths) - 1}\x00"

    text = _MATH.sub(keep, text)
    rendered = mistune.html(text)
    return re.sub(r"\x00(\d+)\x00", lambda m: maths[int(m[1])], rendered)


def _escape_block(text: str) -> str:
    """``text`` with a leading block marker escaped (``1\\.``, ``\\-``, ``\\#``): Markdown keeps it as text."""
    text = re.sub(r"^(\s*)(\d+)([.)])(\s)", r"\1\2\\\3\4", text)
    return re.sub(r"^(\s*)([-+*>#])", r"\1\\\2", text)


def _inline(text: str) -> str:
    """One line of Markdown as inline HTML.  A line that Markdown would read as a block (a numbered
    section heading "1. 单列合成…" is an ordered list, "- x" a bullet, "# x" a heading) is escaped
    first: a title, crumb or list item shows its text as written."""
    text = _escape_block(text)
    rendered = re.sub(r"^<p>(.*)</p>\s*$", r"\1", _markdown([text]), flags=re.S)
    if re.search(r"<(?:p|ol|ul|li|h\d|blockquote|pre)\b", rendered):
        raise SlideError(f"one line of slide text {text!r} renders as a block: {rendered[:80]!r}")
    return rendered


def raw_markdown(fragment: str) -> list[str]:
    """The Markdown that a rendered slide (or speaker-notes) fragment still shows as text:
    ``![``, ``](``, ``**``, ``__``, a heading ``#`` at the start of a line; math and code do not count."""
    text = html.unescape(re.sub(r"<[^>]+>", "\n", _NOT_TEXT.sub(" ", fragment)))
    return [text[max(0, m.start() - 20):m.end() + 20].strip().replace("\n", " ") for m in _RAW_MARKDOWN.finditer(text)]


def _section_html(title: str, body: str, notes: str, crumb: str = "", classes: str = "") -> str:
    crumb_html = f'<p class="crumb">{crumb}</p>' if crumb else ""
    aside = f'<aside class="notes">{notes}</aside>' if notes else ""
    return (f'<section class="{classes}">{crumb_html}<h2>{_inline(title)}</h2>'
            f'<div class="body">{body}</div>{aside}</section>')




@dataclass
class Page:
    """One slide of a deck, as both writers (HTML here, PowerPoint in slides/pptx.py) need it: the
    Markdown it comes from and the HTML it renders to."""
    title: str                      # Markdown (one line)
    html: str                       # the complete <section>
    lines: list[str]                # the body as Markdown lines (empty for a figure slide)
    notes: list[str]                # the speaker notes as Markdown lines
    crumb: str = ""                 # plain text: notebook · section
    figure: str | None = None       # the PNG's file name under figures/
    caption: str = ""               # Markdown (one line)
    kind: str = ""                  # "title" for the title slide


def deck_pages(plan, path: dict, meeting, slides: dict[str, dict[str, list[Slide]]],
               figures: dict[str, dict[str, list[str]]]) -> list[Page]:
    """One class meeting's slides, in order: title, 本次课, every section's slides, 课后."""
    count = len(plan.meetings[path["id"]])
    pages = []
    notebooks = "、".join(meeting.stems)
    subtitle = f"{path['zh']}方案 · 第 {meeting.number} 次课（共 {count} 次）"
    notes = (f"本次课按教学计划（course/_src/plan.toml）约 {meeting.minutes} 分钟；"
             "每一节的分钟数写在各节第一张幻灯片的讲稿开头。按 S 键打开讲稿视图。")
    pages.append(Page("差分隐私", (
        f'<section class="title"><h1>差分隐私</h1><h3>{subtitle}</h3>'
        f'<p>讲义：{html.escape(notebooks)}</p><p class="small">约 {meeting.minutes} 分钟 · 每次课 45 分钟</p>'
        f'<aside class="notes">{notes}</aside></section>'),
        [subtitle, f"讲义：{notebooks}", f"约 {meeting.minutes} 分钟 · 每次课 45 分钟"], [notes], kind="title"))
    agenda = [s for s in meeting.sections if s.minutes]
    notes = "开场时用一两句话说明本次课要回答的问题。"
    items = "".join(f"<li>{_inline(s.zh)} <span class=\"min\">{s.minutes} 分钟</span></li>" for s in agenda)
    pages.append(Page("本次课", _section_html("本次课", f"<ol class=\"agenda\">{items}</ol>", notes),
                      [f"{n}\\. {s.zh}（{s.minutes} 分钟）" for n, s in enumerate(agenda, start=1)], [notes]))
    for s in meeting.sections:
        crumb = f"{html.escape(s.stem)} · {_inline(s.zh)}"
        for i, slide in enumerate(slides[s.stem][s.id]):
            notes_md = list(slide.notes)
            if i == 0:
                notes_md = [f"【{s.zh} · 约 {s.minutes} 分钟 · 笔记本 {s.stem}.ipynb】", ""] + notes_md
            notes = _markdown(notes_md)
            figure, caption = None, ""
            if slide.figure:
                number, caption = slide.figure
                shown = figures.get(s.stem, {}).get(s.id, [])
                if number > len(shown):
                    raise SlideError(f"course/_src/slides/{s.stem}.md:{slide.line}: figure {number} of section "
                                     f"{s.id!r}, but its code shows {len(shown)} figure(s)")
                figure = shown[number - 1]
                if figure.endswith(".slider.png") and not re.search("拖动|拖到", "".join(slide.notes)):
                    notes_md = notes_md + ["", LIVE_NOTE]
                    notes = _markdown(notes_md)
                body = (f'<figure><img src="figures/{figure}" alt="{html.escape(caption)}">'
                        f"<figcaption>{_inline(caption)}</figcaption></figure>")
                classes = "figure"
            else:
                # a blank line before a table: Markdown would read its rows as part of the line above
                lines = list(slide.body)
                first = next((n for n, l in enumerate(lines) if l.lstrip().startswith("|")), None)
                if first is not None:
                    lines[first:first] = [""]
                body, classes = _markdown(lines), ""
            raw = raw_markdown(f"<h2>{_inline(slide.title)}</h2>{body}{notes}")
            if raw:
                raise SlideError(f"course/_src/slides/{s.stem}.md:{slide.line}: slide {slide.title!r} would show "
                                 f"raw Markdown: {raw[:3]}")
            pages.append(Page(slide.title, _section_html(slide.title, body, notes, crumb, classes),
                              [] if figure else list(slide.body), notes_md, f"{s.stem} · {s.zh}", figure, caption))
    titles = {a["name"]: a["zh"] for a in course_build.load_assignments()["assignment"]}  # as course/README.md
    # 选学 on the 课后 slide: further reading, not the notebooks' 小结, 练习 or 自测 (a 自测 the class does in
    # the meeting, listed as after-class reading: session 15's walkthrough)
    taught = {x.id for x in meeting.sections}
    optional = [x for stem in meeting.stems for x in plan.notebooks[stem] if x.label == "optional"
                and x.id not in taught and x.zh not in ("小结", "练习", "课后习题") and not x.zh.startswith("自测")]
    body, lines = "", []
    # What a path leaves out of class but examines: read after this meeting (plan.toml `reading`).
    required = teaching_plan.required_reading(plan, path["id"], meeting.number)
    if required:
        items = "".join(f"<li>{html.escape(x.stem)} · {_inline(x.zh)}</li>" for x in required)
        body += f"<p>必读（课上不讲，考试范围内）：</p><ul class=\"small\">{items}</ul>"
        lines += ["必读（课上不讲，考试范围内）："] + [f"- {x.stem} · {x.zh}" for x in required]
    if meeting.assignments:
        where = "自己的电脑：`作业/` 文件夹，做完点工具栏的“提交”，把 `提交/` 中的文件上传到学习平台；课程服务器：Nbgrader ▸ Assignment List"
        items = "".join(f"<li><code>{a}</code>：{_inline(titles[a])}</li>" for a in meeting.assignments)
        body += f"<p>作业（{_inline(where)}）：</p><ul>{items}</ul>"
        lines += [f"作业（{where}）："] + [f"- `{a}`：{titles[a]}" for a in meeting.assignments]
    if optional:
        # one slide holds about eight list items: the 必读 ones first, then as many 选学 as fit
        shown = optional[:max(2, 5 - len(required))]
        head = (f"选学（课后自学，标题带【选学】）：" if len(shown) == len(optional)
                else f"选学（课后自学，标题带【选学】，共 {len(optional)} 节，例如）：")
        items = "".join(f"<li>{html.escape(x.stem)} · {_inline(x.zh)}</li>" for x in shown)
        body += f"<p>{head}</p><ul class=\"small\">{items}</ul>"
        lines += [head] + [f"- {x.stem} · {x.zh}" for x in shown]
    if meeting.number < count:
        body += f"<p>下次课：第 {meeting.number + 1} 次课</p>"
        lines.append(f"下次课：第 {meeting.number + 1} 次课")
    notes = ("提醒学生：讲义笔记本可以从头到尾运行，带滑块的图可以自己拖动；选学部分不在考试范围内，除非另行说明"
             + ("；必读部分课上不讲，但在考试范围内。" if required else "。"))
    pages.append(Page("课后", _section_html("课后", body or "<p>本章结束。</p>", notes), lines or ["本章结束。"], [notes]))
    for page in pages:  # the generated slides too (agenda, 课后): nothing a projector would show raw
        if raw_markdown(page.html):
            raise SlideError(f"deck {path['id']}-{meeting.number}: a slide would show raw Markdown: "
                             f"{raw_markdown(page.html)[:3]}")
    return pages


def deck_html(plan, path: dict, meeting, slides: dict[str, dict[str, list[Slide]]],
              figures: dict[str, dict[str, list[str]]], pages: list[Page] | None = None) -> str:
    """One class meeting's deck (a complete HTML page)."""
    title = f"差分隐私 · {path['zh']} · 第 {meeting.number} 次课"
    parts = [page.html for page in pages or deck_pages(plan, path, meeting, slides, figures)]
    return f"""<!doctype html>
<html lang="zh-CN">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<link rel="stylesheet" href="vendor/reveal/reset.css">
<link rel="stylesheet" href="vendor/reveal/reveal.css">
<link rel="stylesheet" href="vendor/reveal/theme/white.css">
<link rel="stylesheet" href="vendor/katex/katex.min.css">
<link rel="stylesheet" href="deck.css">
</head>
<body>
<div class="reveal"><div class="slides">
{chr(10).join(parts)}
</div></div>
<script src="vendor/katex/katex.min.js"></script>
<script src="vendor/reveal/reveal.js"></script>
<script src="vendor/reveal/notes.js"></script>
<script>
for (const el of document.querySelectorAll('.tex')) {{
  try {{
    // the speaker view (notes.js) copies the notes' HTML into a window without KaTeX's stylesheet:
    // MathML, which Chromium, Firefox and Safari draw themselves, keeps a superscript raised there
    const output = el.closest('aside.notes') ? 'mathml' : 'html';
    katex.render(el.textContent, el, {{displayMode: el.dataset.display === '1', output, throwOnError: true}});
  }} catch (error) {{ el.dataset.error = String(error); el.classList.add('tex-error'); }}
}}
Reveal.initialize({{width: 1280, height: 720, margin: 0.04, hash: true, transition: 'none',
                   slideNumber: 'c/t', plugins: [RevealNotes]}});
</script>
</body>
</html>
"""


def index_html(plan) -> str:
    rows = []
    for path in plan.paths:
        items = "".join(
            f'<li><a href="{path["id"]}-{m.number}.html">第 {m.number} 次课</a>：'
            f'{html.escape("、".join(m.stems))}（约 {m.minutes} 分钟）'
            f'<a class="pptx" href="{path["id"]}-{m.number}.pptx">PowerPoint</a></li>' for m in plan.meetings[path["id"]])
        rows.append(f"<h2>{path['zh']}方案（共 {sum(m.minutes for m in plan.meetings[path['id']])} 分钟）</h2><ul>{items}</ul>")
    return f"""<!doctype html>
<html lang="zh-CN"><head><meta charset="utf-8"><title>差分隐私 · 课堂幻灯片</title>
<link rel="stylesheet" href="deck.css"></head>
<body class="index"><h1>差分隐私 · 课堂幻灯片</h1>
<p>每次课一套幻灯片（reveal.js，离线可用）。放映时按 F 全屏，按 S 打开讲稿视图，按 Esc 看全部幻灯片。
每套幻灯片也有可编辑的 PowerPoint 文件（.pptx，PowerPoint、WPS 演示都能打开），内容、图和讲稿相同；公式写成文本，需要时可用公式编辑器重排。</p>
{''.join(rows)}
</body></html>
"""


def vendor() -> None:
    if not NODE.is_dir():
        raise SlideError("slides/node_modules is missing: run `make slides` (it runs `npm ci` in slides/)")
    for source, target in VENDOR.items():
        src, dst = NODE / source, OUT / "vendor" / target
        if not src.exists():
            raise SlideError(f"slides/node_modules/{source} is missing: run `cd slides && npm ci`")
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst, dirs_exist_ok=True)
        else:
            shutil.copyfile(src, dst)


def build() -> list[Path]:
    plan, slides = load_sources()
    if OUT.exists():
        shutil.rmtree(OUT)
    (OUT / "figures").mkdir(parents=True)
    vendor()
    shutil.copyfile(STYLE, OUT / "deck.css")
    shown = [s for ms in plan.meetings.values() for m in ms for s in m.sections
             if any(slide.figure for slide in slides[s.stem][s.id])]
    wanted = {stem: max((s for s in shown if s.stem == stem), key=lambda s: s.index).id
              for stem in sorted({s.stem for s in shown})}
    figures = figures_for(wanted, OUT / "figures")
    written = []
    for path in plan.paths:
        for meeting in plan.meetings[path["id"]]:
            pages = deck_pages(plan, path, meeting, slides, figures)
            target = OUT / f"{path['id']}-{meeting.number}.html"
            target.write_text(deck_html(plan, path, meeting, slides, figures, pages), encoding="utf-8")
            pptx_deck.write_deck(pages, OUT / "figures", target.with_suffix(".pptx"))  # the same deck, editable
            written.append(target)
    (OUT / "index.html").write_text(index_html(plan), encoding="utf-8")
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check-sources", action="store_true", help="check the slide sources only")
    parser.add_argument("--figures-of", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--last", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.figures_of:
        print(json.dumps(capture_figures(args.figures_of, Path(args.out), args.last)))
        return 0
    try:
        if args.check_sources:
            load_sources()
            print("slide sources match the plan", file=sys.stderr)
            return 0
        written = build()
    except SlideError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"wrote {len(written)} decks: slides/html/index.html", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
