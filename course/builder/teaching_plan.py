"""The teaching plan: which ``##`` section of which lecture notebook is taught in which path.

    python course/build.py --plan            # the plan per path and class meeting, with minutes
    python course/build.py --plan-json       # the same as JSON (for the instructor's guide, the slides)
    python course/build.py --plan-sections   # every section with its counts and minutes

The plan is data: ``course/_src/plan.toml`` (read its header for the format and for how the
minutes are estimated).  ``course/build.py`` uses this module to write each section's label
into the built notebooks' headings and the plan tables into ``course/README.md``, and refuses
(:class:`PlanError`) a plan that

* puts more minutes in a path than its class hours hold (2 课时 = 90 min, 4 课时 = 180 min);
* names a notebook or a section that does not exist;
* leaves a section of a lecture notebook without a label;
* teaches, in a path, a section that needs a section the path leaves out (an optional one).

A section is named by its English heading as written in the source (the Chinese heading is
the one at the same position: the two languages have their ``##`` headings in the same order,
which :func:`sections` checks).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: tomli (a dependency of pytest there)
    import tomli as tomllib

COURSE = Path(__file__).resolve().parents[1]
SRC = COURSE / "_src"
PLAN = SRC / "plan.toml"

LABELS = ("core", "4h", "optional")
#: How each label is written into a built heading, per language.
LABEL_TEXT = {
    "core": {"zh": "核心", "en": "core"},
    "4h": {"zh": "4 课时", "en": "4-hour"},
    "optional": {"zh": "选学", "en": "optional"},
}
_HEADING = re.compile(r"^## (?P<title>.+?)\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_CJK_CHAR = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LATIN_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[.,'][A-Za-z0-9]+)*")
_DISPLAY_MATH = re.compile(r"\$\$.+?\$\$", re.S)
_INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\$)(.+?)(?<![\\$])\$")
_DETAILS = re.compile(r"<details>.*?</details>", re.S)
_LIVE = re.compile(r"^\S.*\.widget\s*$", re.M)  # a cell ending with `live.widget` shows a slider figure
_STATIC = re.compile(r"plt\.show\(\)|\bdisplay_figure\(|\bfig\.show\(\)")


class PlanError(ValueError):
    """A teaching plan the build refuses (what is wrong, and what was expected)."""


@dataclass
class Section:
    """One ``##`` section of a lecture notebook (both languages), with what it takes to present."""

    stem: str
    index: int  # position among the notebook's sections (0-based)
    zh: str  # the Chinese heading (without "## ")
    en: str  # the English heading
    chars: int = 0  # Chinese characters and Latin words of its Chinese text (answers left out)
    inline_math: int = 0
    display_math: int = 0
    code_cells: int = 0
    figures: int = 0  # static figures (a code cell that shows one)
    live_figures: int = 0  # slider figures
    label: str = ""
    id: str = ""
    needs: list[str] = field(default_factory=list)
    minutes: int = 0


def _math_free(text: str) -> tuple[str, int, int]:
    display = len(_DISPLAY_MATH.findall(text))
    text = _DISPLAY_MATH.sub(" ", text)
    inline = len(_INLINE_MATH.findall(text))
    return _INLINE_MATH.sub(" ", text), inline, display


def count_text(text: str) -> tuple[int, int, int]:
    """(characters, inline formulas, display formulas) of Chinese markdown, answers left out.

    Characters are CJK ideographs plus Latin words and numbers (one each): what a reader says.
    """
    text = _DETAILS.sub(" ", text)
    text, inline, display = _math_free(text)
    text = re.sub(r"\]\([^)]*\)", "]", text)  # link targets are not read aloud
    text = re.sub(r"<[^>]+>", " ", text)
    return len(_CJK_CHAR.findall(text)) + len(_LATIN_TOKEN.findall(text)), inline, display


def _split(cells: list, lang: str) -> tuple[list[tuple[str, list]], list]:
    """The ``##`` sections of one language: [(heading, [(kind, text), …]), …] and the intro's parts."""
    intro: list = []
    sections: list[tuple[str, list]] = []
    for cell in cells:
        if cell.lang not in (None, lang):
            continue
        if cell.kind == "code":
            (sections[-1][1] if sections else intro).append(("code", cell.text))
            continue
        fenced = False
        chunk: list[str] = []
        for line in cell.text.split("\n"):
            if _FENCE.match(line):
                fenced = not fenced
            match = None if fenced else _HEADING.match(line)
            if match:
                if chunk:
                    (sections[-1][1] if sections else intro).append(("markdown", "\n".join(chunk)))
                chunk = []
                sections.append((match["title"], []))
            else:
                chunk.append(line)
        if chunk:
            (sections[-1][1] if sections else intro).append(("markdown", "\n".join(chunk)))
    return sections, intro


def _measure(parts: list, target) -> None:
    for kind, text in parts:
        if kind == "markdown":
            chars, inline, display = count_text(text)
            target.chars += chars
            target.inline_math += inline
            target.display_math += display
        else:
            target.code_cells += 1
            if _LIVE.search(text.rstrip().split("\n")[-1]):
                target.live_figures += 1
            elif _STATIC.search(text):
                target.figures += len(_STATIC.findall(text))


def sections(stem: str, cells: list) -> tuple[list[Section], Section]:
    """The sections of one parsed source (course/build.py's cells) and its intro (before the first ``##``).

    Raises :class:`PlanError` when the Chinese and English notebooks have different numbers of sections.
    """
    zh, zh_intro = _split(cells, "zh")
    en, _ = _split(cells, "en")
    if len(zh) != len(en):
        raise PlanError(f"course/_src/{stem}.md: {len(zh)} Chinese '## ' headings but {len(en)} English ones "
                        f"(zh: {[h for h, _ in zh]}; en: {[h for h, _ in en]}); each section needs both")
    out = []
    for index, ((zh_title, parts), (en_title, _)) in enumerate(zip(zh, en)):
        section = Section(stem, index, zh_title, en_title)
        _measure(parts, section)
        out.append(section)
    intro = Section(stem, -1, "(导入)", "(introduction)")
    _measure(zh_intro, intro)
    return out, intro


def minutes(item: Section, method: dict) -> int:
    """Minutes to present a section by the plan's method (see the header of plan.toml), rounded up.

    A heading with nothing under it (its text is in its subsections) takes no time.
    """
    if item.chars == 0 and item.code_cells == 0:
        return 0
    seconds = (60 * item.chars / method["chars_per_minute"]
               + method["seconds_per_inline_formula"] * item.inline_math
               + method["seconds_per_display_formula"] * item.display_math
               + method["seconds_per_code_cell"] * item.code_cells
               + method["seconds_per_figure"] * item.figures
               + method["seconds_per_live_figure"] * item.live_figures)
    return math.ceil(seconds / 60 + method["question_minutes"])


def intro_minutes(item: Section, method: dict) -> int:
    """The introduction (title, objectives, setup) is presented, not asked about: no question."""
    return max(1, math.ceil(minutes(item, method) - method["question_minutes"]))


@dataclass
class Meeting:
    path: str
    number: int
    stems: list[str]
    assignments: list[str]
    sections: list[Section]
    intros: dict[str, int]
    selfcheck: int = 0  # the 自测 that ends the meeting (plan.toml [method] selfcheck_minutes)

    @property
    def minutes(self) -> int:
        return sum(s.minutes for s in self.sections) + sum(self.intros.values()) + self.selfcheck


@dataclass
class Plan:
    method: dict
    paths: list[dict]
    notebooks: dict[str, list[Section]]
    intros: dict[str, Section]
    meetings: dict[str, list[Meeting]]
    textbook: dict = field(default_factory=dict)  # the chapter's own schedule ([textbook])
    chapters: dict[str, str] = field(default_factory=dict)  # notebook stem -> chapter section ("6.1")
    changes: dict[tuple[str, str], dict] = field(default_factory=dict)  # (path id, chapter) -> {zh, en}
    requirements: list[dict] = field(default_factory=list)  # the chapter's 学习要求 ([[requirement]])

    def label_of(self, stem: str, index: int) -> str:
        return self.notebooks[stem][index].label

    def by_id(self) -> dict[str, Section]:
        return {s.id: s for sections_ in self.notebooks.values() for s in sections_}


def load(parsed: dict[str, list], text: str | None = None, name: str = "course/_src/plan.toml") -> Plan:
    """Check the plan (``text``, default plan.toml) against the parsed sources ``{stem: cells}``.

    Raises :class:`PlanError` listing every problem found.
    """
    raw = tomllib.loads(PLAN.read_text(encoding="utf-8") if text is None else text)
    problems: list[str] = []
    method = raw.get("method", {})
    needed = ("chars_per_minute", "seconds_per_inline_formula", "seconds_per_display_formula",
              "seconds_per_code_cell", "seconds_per_figure", "seconds_per_live_figure", "question_minutes",
              "selfcheck_minutes")
    missing = [k for k in needed if not isinstance(method.get(k), (int, float)) or method.get(k) < 0]
    if missing or not method.get("chars_per_minute"):
        raise PlanError(f"{name}: [method] needs non-negative numbers {', '.join(needed)} "
                        f"(chars_per_minute > 0); missing or wrong: {', '.join(missing) or 'chars_per_minute'}")

    notebooks: dict[str, list[Section]] = {}
    intros: dict[str, Section] = {}
    for stem, cells in parsed.items():
        try:
            notebooks[stem], intros[stem] = sections(stem, cells)
        except PlanError as error:
            problems.append(str(error))
    ids: dict[str, Section] = {}
    declared = raw.get("notebook", [])
    seen_stems = set()
    for entry in declared:
        stem = entry.get("stem")
        if stem not in notebooks:
            problems.append(f"{name}: notebook {stem!r} does not exist (lecture notebooks: {', '.join(sorted(notebooks))})")
            continue
        seen_stems.add(stem)
        by_heading = {s.en: s for s in notebooks[stem]}
        for row in entry.get("section", []):
            heading, label, sid = row.get("heading"), row.get("label"), row.get("id")
            section = by_heading.get(heading)
            if section is None:
                problems.append(f"{name}: notebook {stem}: no section with the English heading {heading!r} "
                                f"(its sections: {'; '.join(repr(s.en) for s in notebooks[stem])})")
                continue
            if section.label:
                problems.append(f"{name}: notebook {stem}: section {heading!r} is declared twice")
                continue
            if label not in LABELS:
                problems.append(f"{name}: notebook {stem}: section {heading!r} has label {label!r}; "
                                f"expected one of {', '.join(LABELS)}")
                continue
            if not isinstance(sid, str) or not re.fullmatch(r"[a-z0-9][a-z0-9-]*", sid) or sid in ids:
                problems.append(f"{name}: notebook {stem}: section {heading!r} needs a unique id of lowercase "
                                f"letters, digits and '-'; got {sid!r}")
                continue
            section.label, section.id = label, sid
            section.needs = list(row.get("needs", []))
            ids[sid] = section
    for stem, items in notebooks.items():
        for s in items:
            if not s.label and not any(f"section {s.en!r}" in p for p in problems):
                problems.append(f"course/_src/{stem}.md: section '## {s.en}' ('## {s.zh}') has no label in {name} "
                                f"(add it to [[notebook]] stem = {stem!r} with label = one of {', '.join(LABELS)})")
    for s in ids.values():
        for need in s.needs:
            if need not in ids:
                problems.append(f"{name}: section {s.id!r} needs {need!r}, which is not a section id")
    for s in [*ids.values(), *intros.values()]:
        s.minutes = minutes(s, method) if s.index >= 0 else intro_minutes(s, method)

    rank = {label: i for i, label in enumerate(LABELS)}
    for s in ids.values():
        for need in s.needs:
            if need in ids and rank[ids[need].label] > rank[s.label]:
                problems.append(f"{name}: section {s.id!r} ({s.en}, labelled {s.label}) needs {need!r} "
                                f"({ids[need].en}), labelled {ids[need].label}: a path that teaches the first "
                                f"leaves the second out; label {need!r} {s.label} (or {s.id!r} {ids[need].label})")

    paths = raw.get("path", [])
    meetings: dict[str, list[Meeting]] = {}
    for path in paths:
        pid, labels = path.get("id"), path.get("labels", [])
        budget = path.get("minutes")
        if (any(lab not in LABELS for lab in labels) or not isinstance(budget, int)
                or not all(isinstance(path.get(k), str) for k in ("zh", "en"))):
            problems.append(f"{name}: path {pid!r} needs labels from {LABELS}, whole minutes and zh/en names; "
                            f"got labels={labels!r}, minutes={budget!r}")
            continue
        when: dict[str, int] = {}  # section id -> meeting number
        meetings[pid] = []
        started: set[str] = set()
        for number, m in enumerate(path.get("meeting", []), start=1):
            chosen: list[Section] = []
            for sid in m.get("sections", []):
                section = ids.get(sid)
                if section is None:
                    problems.append(f"{name}: path {pid}, meeting {number}: no section with id {sid!r}")
                elif section.label not in labels:
                    problems.append(f"{name}: path {pid}, meeting {number}: section {sid!r} ({section.en}) is "
                                    f"labelled {section.label}; path {pid} teaches only {', '.join(labels)}")
                elif sid in when:
                    problems.append(f"{name}: path {pid}: section {sid!r} is in meetings {when[sid]} and {number}")
                elif section.minutes == 0:
                    # An empty heading gets 0 min, and the slides' agenda and the guide's tables drop it.
                    problems.append(f"{name}: path {pid}, meeting {number}: section {sid!r} ('## {section.zh}') has "
                                    f"nothing under its heading in course/_src/{section.stem}.md (the next '## ' "
                                    "heading follows it directly), so it takes 0 min and no agenda shows it; "
                                    "put its content under it")
                else:
                    when[sid] = number
                    chosen.append(section)
            stems = list(dict.fromkeys(s.stem for s in chosen))
            intros_ = {stem: intros[stem].minutes for stem in stems if stem not in started}
            started |= set(stems)
            meeting = Meeting(pid, number, stems, list(m.get("assignments", [])), chosen, intros_,
                              method["selfcheck_minutes"] if chosen else 0)
            meetings[pid].append(meeting)
            limit = path.get("meeting_minutes")
            if isinstance(limit, int) and meeting.minutes > limit:
                problems.append(f"{name}: path {pid} ({path['zh']}), meeting {number} takes {meeting.minutes} min "
                                f"with its {meeting.selfcheck} min of 自测, more than a class meeting's {limit} min")
        total = sum(m.minutes for m in meetings[pid])
        if total > budget:
            problems.append(f"{name}: path {pid} ({path['zh']}) takes {total} min, more than its {budget} min; "
                            "label sections optional or move them to another path")
        for s in ids.values():
            if s.label in labels and s.id not in when:
                problems.append(f"{name}: path {pid}: section {s.id!r} ({s.stem}: {s.en}) is labelled {s.label} "
                                f"but is in none of the path's meetings")
        for sid, number in when.items():
            for need in ids[sid].needs:
                if need in ids and need not in when:
                    problems.append(f"{name}: path {pid}: section {sid!r} ({ids[sid].en}) needs {need!r} "
                                    f"({ids[need].en}, labelled {ids[need].label}), which path {pid} does not teach")
                elif need in when and when[need] > number:
                    problems.append(f"{name}: path {pid}: section {sid!r} (meeting {number}) needs {need!r}, "
                                    f"which comes later (meeting {when[need]})")
    chapters = {e["stem"]: e["chapter"] for e in declared if e.get("stem") in notebooks and e.get("chapter")}
    textbook = raw.get("textbook", {})
    changes, requirements = {}, []
    if paths:  # a plan without paths (a test's tiny course) has no schedule to compare
        changes = _check_schedule(raw, paths, meetings, chapters, textbook, name, problems)
        requirements = _check_requirements(raw, paths, meetings, ids, name, problems)
    if problems:
        raise PlanError("\n".join(problems))
    return Plan(method, paths, notebooks, intros, meetings, textbook, chapters, changes, requirements)


def _chapter_meetings(meetings: list[Meeting], chapters: dict[str, str]) -> dict[str, list[int]]:
    """chapter section ("6.1") -> the numbers of the meetings of a path that teach it."""
    out: dict[str, list[int]] = {}
    for m in meetings:
        for stem in m.stems:
            if stem in chapters and m.number not in out.setdefault(chapters[stem], []):
                out[chapters[stem]].append(m.number)
    return out


def schedule_differences(plan_paths: list[dict], meetings: dict[str, list[Meeting]], chapters: dict[str, str],
                         textbook: dict) -> dict[tuple[str, str], tuple[list[int], list[int]]]:
    """(path, chapter) -> (the chapter's meetings in the textbook's schedule, in this plan) where they differ."""
    out = {}
    for path in plan_paths:
        pid = path.get("id")
        ours = _chapter_meetings(meetings.get(pid, []), chapters)
        theirs: dict[str, list[int]] = {}
        for number, items in enumerate(textbook.get(pid, []), start=1):
            for chapter in items:
                theirs.setdefault(chapter, []).append(number)
        for chapter in sorted(set(chapters.values())):
            if ours.get(chapter, []) != theirs.get(chapter, []):
                out[(pid, chapter)] = (theirs.get(chapter, []), ours.get(chapter, []))
    return out


def _check_schedule(raw: dict, paths: list[dict], meetings: dict[str, list[Meeting]], chapters: dict[str, str],
                    textbook: dict, name: str, problems: list[str]) -> dict[tuple[str, str], dict]:
    """Every difference from the chapter's schedule needs a reason ([[path.change]]); no reason without one."""
    if not textbook or not all(isinstance(textbook.get(k), str) for k in ("zh", "en")):
        problems.append(f"{name}: [textbook] needs zh and en (the chapter's schedule as text) and, per path id, "
                        "its meetings as lists of chapter sections")
        return {}
    changes = {}
    for path in paths:
        for change in path.get("change", []):
            key = (path.get("id"), change.get("chapter"))
            if not all(isinstance(change.get(k), str) and change.get(k) for k in ("zh", "en")):
                problems.append(f"{name}: path {key[0]}: [[path.change]] for chapter {key[1]!r} needs zh and en")
            changes[key] = change
    differences = schedule_differences(paths, meetings, chapters, textbook)
    for key, (theirs, ours) in differences.items():
        if key not in changes:
            problems.append(f"{name}: path {key[0]} teaches {key[1]} in meetings {ours or 'none'}, the chapter's "
                            f"schedule in {theirs or 'none'}: say why in a [[path.change]] chapter = {key[1]!r}")
    for key in sorted(set(changes) - set(differences)):
        problems.append(f"{name}: path {key[0]}: [[path.change]] for chapter {key[1]!r}, but the path follows the "
                        "chapter's schedule there: remove it")
    return changes


def _check_requirements(raw: dict, paths: list[dict], meetings: dict[str, list[Meeting]], ids: dict[str, Section],
                        name: str, problems: list[str]) -> list[dict]:
    """Every 学习要求 names its sections; a path leaving one out says where its students meet it instead."""
    requirements = raw.get("requirement", [])
    if not requirements:
        problems.append(f"{name}: no [[requirement]]: list the chapter's learning requirements (学习要求)")
    for req in requirements:
        rid = req.get("id")
        if not all(isinstance(req.get(k), str) and req.get(k) for k in ("id", "zh", "en", "level")):
            problems.append(f"{name}: requirement {rid!r} needs id, level, zh and en")
        unknown = [s for s in req.get("sections", []) if s not in ids]
        if unknown or not req.get("sections"):
            problems.append(f"{name}: requirement {rid!r}: sections {req.get('sections')!r} must be section ids "
                            f"(unknown: {unknown})")
            continue
        elsewhere = req.get("elsewhere", {})
        units = req.get("paths", [p.get("id") for p in paths])
        for path in paths:
            pid = path.get("id")
            if pid not in units:
                continue
            taught = {s.id for m in meetings.get(pid, []) for s in m.sections}
            missing = [s for s in req["sections"] if s not in taught]
            note = elsewhere.get(pid)
            if missing and not (isinstance(note, dict) and note.get("zh") and note.get("en")):
                problems.append(f"{name}: path {pid} leaves out {missing} of requirement {rid} ({req.get('zh')}): "
                                f"say where its students meet it in [requirement.elsewhere.{pid}] zh/en")
            elif note and not missing:
                problems.append(f"{name}: requirement {rid}: [requirement.elsewhere.{pid}], but path {pid} teaches all "
                                "its sections: remove the note")
            reading = note.get("reading") if isinstance(note, dict) else None
            count = len(meetings.get(pid, []))
            if reading is not None and not (isinstance(reading, int) and 1 <= reading <= count):
                problems.append(f"{name}: requirement {rid}: [requirement.elsewhere.{pid}] reading = {reading!r}: "
                                f"the meeting after which its left-out sections are read, 1..{count}")
    return requirements


def required_reading(plan: Plan, path: str, number: int) -> list[Section]:
    """Sections a path leaves out of class but examines, to be read after its meeting ``number``.

    From ``[requirement.elsewhere.<path>] reading = <meeting>``: the requirement's sections that
    the path's meetings do not teach (the 课后 slide lists them as 必读, apart from 【选学】).
    """
    ids, taught = plan.by_id(), {s.id for m in plan.meetings.get(path, []) for s in m.sections}
    out: list[Section] = []
    for req in plan.requirements:
        note = req.get("elsewhere", {}).get(path)
        if isinstance(note, dict) and note.get("reading") == number:
            out += [ids[s] for s in req["sections"] if s not in taught and ids[s] not in out]
    return sorted(out, key=lambda s: (list(plan.notebooks).index(s.stem), s.index))


def requirement_coverage(plan: Plan) -> list[dict]:
    """Per 学习要求 and path: the meetings that teach its sections and, when some are left out, where instead."""
    out = []
    for req in plan.requirements:
        row = {k: req[k] for k in ("id", "level", "zh", "en", "sections")}
        row["units"] = req.get("paths", [p["id"] for p in plan.paths])
        row["paths"] = {}
        for path in plan.paths:
            pid = path["id"]
            taught = [(m.number, [s.id for s in m.sections if s.id in req["sections"]]) for m in plan.meetings[pid]]
            row["paths"][pid] = {"meetings": [{"number": n, "sections": ids_} for n, ids_ in taught if ids_],
                                 "elsewhere": req.get("elsewhere", {}).get(pid)}
        out.append(row)
    return out


_NUMBERED = re.compile(r"^(\d+\.\d+(?:\.\d+)?)\s")
POSITION = "{{POSITION}}"
_POS = {
    "zh": {"lead": "**在课程中的位置**（由课程的教学计划生成）：", "sep": "、", "semi": "；", "gap": "",
           "meeting": "{path}方案在第 {n} 次课讲 {sections}", "more": "第 {n} 次课讲 {sections}",
           "none": "{path}方案的课上不讲本笔记本，可课后阅读",
           "left": "；{sections} 只在 {others}方案的课上讲，{path}方案请课后自学",
           "textbook": "教材的建议进度：{schedule}。", "optional": "标【选学】的小节在任何方案中都不在课上讲，供课后自学。",
           "lab": "本笔记本是选学的拓展实验：各小节都标为【选学】，不在任何课时方案的课上讲。",
           "end": "。", "and": "和"},
    "en": {"lead": "**Where this sits** (generated from the course's teaching plan):", "sep": ", ",
           "semi": "; ", "gap": " ", "meeting": "the {path} plan teaches {sections} in meeting {n}",
           "more": "{sections} in meeting {n}",
           "none": "the {path} plan does not teach this notebook in class (read it after class)",
           "left": "; {sections} only in the {others} plan's meetings: in the {path} plan, read them after class",
           "textbook": "The chapter's suggested schedule: {schedule}.",
           "optional": "Sections marked [optional] are taught in no plan's meetings: they are for self-study.",
           "lab": "This notebook is an optional depth lab: every section is marked [optional] and taught in no plan's meetings.",
           "end": ".", "and": " and "},
}


def _short(section: Section, lang: str) -> str:
    """A numbered section by its number ("6.1.4"), any other by its heading in quotes."""
    title = section.zh if lang == "zh" else section.en
    match = _NUMBERED.match(title)
    return match.group(1) if match else f"“{title}”"


def position(plan: Plan, stem: str, lang: str) -> str:
    """The "在课程中的位置" paragraph of one notebook, from the plan (what replaces ``{{POSITION}}``).

    Per path, the meetings that teach the notebook's sections and the sections only another path
    teaches; then the chapter's own schedule and, where this plan departs from it, the reason
    ([[path.change]]).  It ends with a space in English, so that hand-written text can follow.
    """
    t = _POS[lang]
    sections_ = plan.notebooks[stem]
    if not plan.paths:
        return ""
    parts = [t["lead"]]
    if all(s.label == "optional" for s in sections_):
        parts += [t["lab"], t["textbook"].format(schedule=plan.textbook[lang])]
        return t["gap"].join(parts) + t["gap"]
    clauses = []
    for path in plan.paths:
        pid = path["id"]
        pname = path["zh"] if lang == "zh" else f"{path['minutes'] // path.get('meeting_minutes', 45)}-hour"
        taught = [(m.number, [s for s in m.sections if s.stem == stem]) for m in plan.meetings[pid]]
        taught = [(n, items) for n, items in taught if items]
        if not taught:
            clauses.append(t["none"].format(path=pname))
            continue
        text = t["semi"].join(t["meeting" if i == 0 else "more"].format(
            path=pname, n=n, sections=t["sep"].join(_short(s, lang) for s in items)) for i, (n, items) in enumerate(taught))
        shown = {s.id for _, items in taught for s in items}
        left = [s for s in sections_ if s.label != "optional" and s.id not in shown]
        if left:
            others = [p["zh"] if lang == "zh" else f"{p['minutes'] // p.get('meeting_minutes', 45)}-hour"
                      for p in plan.paths if p is not path and all(s.label in p["labels"] for s in left)]
            names = t["sep"].join(_short(s, lang) for s in left)
            left_text = t["left"].format(sections=names, others=t["and"].join(others), path=pname)
            text += left_text.replace("” 只在", "”只在")  # a space after a number, none after a quote
        clauses.append(text)
    first = t["semi"].join(clauses) + t["end"]
    parts.append(first[0].upper() + first[1:] if lang == "en" else first)
    parts.append(t["textbook"].format(schedule=plan.textbook[lang]))
    chapter = plan.chapters.get(stem)
    parts += [plan.changes[(p["id"], chapter)][lang] for p in plan.paths if (p["id"], chapter) in plan.changes]
    if any(s.label == "optional" for s in sections_):
        parts.append(t["optional"])
    return t["gap"].join(parts) + t["gap"]


def heading_with_label(title: str, label: str, lang: str) -> str:
    """``6.1.1 差分攻击`` → ``6.1.1 差分攻击【核心】``; English ``6.1.1 … [core]``."""
    text = LABEL_TEXT[label][lang]
    return f"{title}【{text}】" if lang == "zh" else f"{title} [{text}]"


def label_headings(text: str, labels: list[str], lang: str, start: int) -> tuple[str, int]:
    """Write the labels into the ``## `` headings of one markdown cell (sections numbered from ``start``)."""
    out, fenced, index = [], False, start
    for line in text.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        match = None if fenced else _HEADING.match(line)
        if match:
            line = "## " + heading_with_label(match["title"], labels[index], lang)
            index += 1
        out.append(line)
    return "\n".join(out), index


PATH_TEXT = {
    "zh": {"selfcheck": "自测（笔记本末尾的练习，当场检查）",
           "meeting": "第 {n} 次课", "notebook": "笔记本", "sections": "讲授的小节", "minutes": "分钟",
           "assignment": "布置作业", "total": "合计", "intro": "导入", "sep": "；", "column": "课次"},
    "en": {"selfcheck": "self-check (the notebook's exercises, checked on the spot)",
           "meeting": "meeting {n}", "notebook": "notebook", "sections": "sections taught", "minutes": "minutes",
           "assignment": "assignment", "total": "total", "intro": "introduction", "sep": "; ", "column": "meeting"},
}


def plan_tables(plan: Plan, lang: str) -> str:
    """The Markdown plan tables (one per path) for course/README.md, in ``lang``."""
    t = PATH_TEXT[lang]
    root = "" if lang == "zh" else "en/"
    blocks = []
    for path in plan.paths:
        pid = path["id"]
        rows = [f"**{path[lang]}**（{path['minutes']} {t['minutes']}）" if lang == "zh"
                else f"**{path[lang]}** ({path['minutes']} {t['minutes']})", "",
                f"| {t['column']} | {t['notebook']} | {t['sections']} | "
                f"{t['minutes']} | {t['assignment']} |", "|---|---|---|---|---|"]
        for m in plan.meetings[pid]:
            for i, stem in enumerate(m.stems):
                chosen = [s for s in m.sections if s.stem == stem]
                names = [t["intro"]] * (stem in m.intros) + [(s.zh if lang == "zh" else s.en).replace("|", "\\|")
                                                             for s in chosen]
                mins = m.intros.get(stem, 0) + sum(s.minutes for s in chosen)
                first = i == 0
                meeting = t["meeting"].format(n=m.number) if first else ""
                assign = ("、" if lang == "zh" else ", ").join(f"`{a}`" for a in m.assignments) if first else ""
                rows.append(f"| {meeting} | [{stem}]({root}{stem}.ipynb) | {t['sep'].join(names)} | {mins} | {assign} |")
            if m.selfcheck:
                rows.append(f"| | | {t['selfcheck']} | {m.selfcheck} | |")
        total = sum(m.minutes for m in plan.meetings[pid])
        rows.append(f"| {t['total']} | | | {total} | |")
        blocks.append("\n".join(rows))
    return "\n\n".join(blocks)


def as_json(plan: Plan) -> dict:
    """The resolved plan as plain data (paths, meetings, sections with counts and minutes)."""
    def row(s: Section) -> dict:
        return {"id": s.id, "notebook": s.stem, "zh": s.zh, "en": s.en, "label": s.label, "needs": s.needs,
                "minutes": s.minutes, "chars": s.chars, "inline_math": s.inline_math, "display_math": s.display_math,
                "code_cells": s.code_cells, "figures": s.figures, "live_figures": s.live_figures}
    return {
        "method": plan.method,
        "paths": [{**{k: v for k, v in p.items() if k != "meeting"},
                   "total_minutes": sum(m.minutes for m in plan.meetings[p["id"]]),
                   "meetings": [{"number": m.number, "notebooks": m.stems, "assignments": m.assignments,
                                 "minutes": m.minutes, "intro_minutes": m.intros,
                                 "selfcheck_minutes": m.selfcheck,
                                 "sections": [s.id for s in m.sections]} for m in plan.meetings[p["id"]]]}
                  for p in plan.paths],
        "sections": [row(s) for items in plan.notebooks.values() for s in items],
        "textbook": plan.textbook,
        "changes": [{"path": p, "chapter": c, "zh": v["zh"], "en": v["en"]} for (p, c), v in plan.changes.items()],
        "requirements": requirement_coverage(plan),
    }


def section_report(plan: Plan) -> str:
    """Every section with its label, minutes and the counts they come from (one line each)."""
    lines = []
    for stem, items in plan.notebooks.items():
        i = plan.intros[stem]
        lines.append(f"{stem}  (introduction {i.minutes} min, {i.chars} chars, "
                     f"{i.code_cells} code cells)")
        for s in items:
            lines.append(f"  {s.label:8} {s.minutes:3} min  {s.chars:5} chars {s.inline_math:3}+{s.display_math} math "
                         f"{s.code_cells} code {s.figures} fig {s.live_figures} live  {s.id}: {s.en}")
    return "\n".join(lines)
