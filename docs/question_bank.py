"""The question bank (``docs/questions.toml``) and the exam papers built from it.

Used by ``docs/build_guide.py`` (``make guide``: the guide's §8 and §1's table of 学习要求; ``make exam``:
``docs/exam/*.md``).  Every question is tagged with the path that examines it, the 学习要求 it serves
(ids of ``[[requirement]]`` in ``course/_src/plan.toml``) and a difficulty; a paper is a blueprint of
slots (kind, requirement, difficulty) filled, slot by slot, with the first two unused questions that fit,
one for paper A and one for paper B, so the two are parallel and share no question.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
BANK = REPO / "docs" / "questions.toml"
EXAM_DIR = REPO / "docs" / "exam"

KINDS = {"choice": "选择题", "short": "简答题", "calc": "计算题"}
PATHS = {"2": "2 课时", "4": "4 课时", "选学": "选学"}
DIFFICULTIES = ("易", "中", "难")
#: Which question paths each unit's papers may use.
UNIT_PATHS = {"2h": ("2",), "4h": ("2", "4")}
LETTERS = "ABCD"


class BankError(ValueError):
    """The bank or a paper's blueprint is wrong (what, where, and what was expected)."""


@dataclass
class Question:
    id: str
    number: int
    kind: str
    path: str
    requirements: list[str]
    difficulty: str
    text: str
    answer: str
    points: int
    source: str = ""
    key: str = ""
    rubric: tuple = ()


@dataclass
class Paper:
    unit: str
    zh: str
    minutes: int
    form: str  # "A" or "B"
    questions: list[Question]

    @property
    def points(self) -> int:
        return sum(q.points for q in self.questions)


def load(text: str | None = None, requirements: dict[str, dict] | None = None) -> tuple[list[Question], list[dict]]:
    """The questions (in bank order) and the paper blueprints; :class:`BankError` lists every problem.

    ``requirements``: the plan's 学习要求 by id (``--plan-json``'s ``requirements``), to check the tags.
    """
    raw = tomllib.loads(BANK.read_text(encoding="utf-8") if text is None else text)
    points = raw.get("points", {})
    problems = []
    if sorted(points) != sorted(KINDS) or not all(isinstance(v, int) and v > 0 for v in points.values()):
        raise BankError(f"docs/questions.toml: [points] needs a whole number > 0 for each of {', '.join(KINDS)}")
    questions = []
    for n, row in enumerate(raw.get("question", []), start=1):
        where = f"docs/questions.toml: question {row.get('id', n)!r}"
        if row.get("id") != f"Q{n}":
            problems.append(f"{where}: ids must run Q1, Q2, … in order; expected 'Q{n}'")
        kind, path, diff = row.get("kind"), row.get("path"), row.get("difficulty")
        reqs = row.get("requirements", [])
        if kind not in KINDS or path not in PATHS or diff not in DIFFICULTIES:
            problems.append(f"{where}: kind {kind!r} (one of {list(KINDS)}), path {path!r} (one of {list(PATHS)}), "
                            f"difficulty {diff!r} (one of {list(DIFFICULTIES)})")
            continue
        if not reqs or (requirements is not None and any(r not in requirements for r in reqs)):
            problems.append(f"{where}: requirements {reqs!r} must name 学习要求 of course/_src/plan.toml "
                            f"({', '.join(requirements or [])})")
        if not row.get("text") or not row.get("answer"):
            problems.append(f"{where}: needs text and answer")
        rubric = tuple((int(p), str(t)) for p, t in row.get("rubric", []))
        if kind == "choice":
            options = re.findall(r"(?:^|\s|　)([A-D])\. ", row.get("text", ""))
            if row.get("key") not in options or rubric:
                problems.append(f"{where}: a choice question needs key = one of its options {options} and no rubric")
            elif not row.get("answer", "").startswith(row["key"]):
                problems.append(f"{where}: the answer must start with the key {row['key']!r}")
        elif sum(p for p, _ in rubric) != points[kind] or len(rubric) < 2:
            problems.append(f"{where}: a {KINDS[kind]} needs a rubric of two or more lines whose points add up to "
                            f"{points[kind]}; got {[p for p, _ in rubric]}")
        questions.append(Question(row.get("id", ""), n, kind, path, list(reqs), diff, row.get("text", "").strip(),
                                  row.get("answer", "").strip(), points[kind], row.get("source", ""),
                                  row.get("key", ""), rubric))
    papers = raw.get("paper", [])
    for paper in papers:
        if paper.get("unit") not in UNIT_PATHS or not paper.get("slots"):
            problems.append(f"docs/questions.toml: [[paper]] unit {paper.get('unit')!r} must be one of "
                            f"{list(UNIT_PATHS)} with slots")
    if problems:
        raise BankError("\n".join(problems))
    return questions, papers


def build_papers(questions: list[Question], blueprints: list[dict]) -> list[Paper]:
    """Papers A and B of every blueprint: slot by slot, the first two unused questions that fit."""
    out, problems = [], []
    for bp in blueprints:
        unit = bp["unit"]
        used: set[str] = set()
        forms: dict[str, list[Question]] = {"A": [], "B": []}
        for kind, req, diff in bp["slots"]:
            fits = [q for q in questions if q.kind == kind and q.requirements[0] == req and q.difficulty == diff
                    and q.path in UNIT_PATHS[unit] and q.id not in used]
            if len(fits) < 2:
                problems.append(f"docs/questions.toml: paper {unit}: slot ({kind}, {req}, {diff}) needs two unused "
                                f"questions with that kind, first requirement and difficulty on path "
                                f"{'/'.join(UNIT_PATHS[unit])}; found {[q.id for q in fits]}")
                continue
            forms["A"].append(fits[0])
            forms["B"].append(fits[1])
            used |= {fits[0].id, fits[1].id}
        order = list(KINDS)
        for form, chosen in forms.items():
            chosen.sort(key=lambda q: order.index(q.kind))  # stable: the blueprint's order within a kind
            out.append(Paper(unit, bp.get("zh", unit), bp.get("minutes", 0), form, chosen))
    if problems:
        raise BankError("\n".join(problems))
    return out


def _tag(q: Question, requirements: dict[str, dict]) -> str:
    """〔path｜学习要求 ids｜difficulty｜points〕 (the ids' texts: the guide's §1.1, a key's last table)."""
    return f"〔{PATHS[q.path]}｜{'、'.join(q.requirements)}｜{q.difficulty}｜{q.points} 分〕"


def _quote(text: str) -> list[str]:
    return [f"> {line}" if line else ">" for line in text.split("\n")]


def render_bank(questions: list[Question], requirements: dict[str, dict]) -> str:
    """The guide's §8 questions: by kind (the supplement after), each with its tags, answer and rubric."""
    parts = []
    heading = None
    for q in questions:
        supplement = q.number > 27
        title = ("补充" if supplement else "") + KINDS[q.kind]
        if title != heading:
            parts.append(f"### {title}\n")
            heading = title
        source = f"（{q.source}）" if q.source else ""
        lines = q.text.split("\n")
        parts.append(f"**{q.id}**{source}{_tag(q, requirements)}{lines[0]}")
        parts.append("")
        parts += [line + "\n" for line in lines[1:]]  # each option its own paragraph
        label = "答案" if q.kind != "short" else "参考答案"
        parts += _quote(f"{label}：{q.answer}")
        if q.rubric:
            parts.append(">")
            parts.append("> 评分细则：" + "；".join(f"{text}（{p} 分）" for p, text in q.rubric) + "。")
        parts.append("")
    return "\n".join(parts)


#: The height (in lines of text) left blank under a question of each kind on the students' paper.
ANSWER_LINES = {"short": 10, "calc": 12}


def render_paper(paper: Paper, requirements: dict[str, dict], key: bool) -> str:
    """A paper (``key=False``: what students get) or its answer key with the 评分细则 (``key=True``)."""
    title = f"差分隐私（第 6 章）{paper.zh}单元测验 {paper.form} 卷"
    lines = [f"# {title}{'：答案与评分细则' if key else ''}", "",
             "<!-- 由 docs/build_guide.py 根据 docs/questions.toml 生成（make exam）：请修改题库，不要改这里 -->", ""]
    kinds = [(k, [q for q in paper.questions if q.kind == k]) for k in KINDS]
    lines.append(f"满分 {paper.points} 分，建议用时 {paper.minutes} 分钟。"
                 + "，".join(f"{KINDS[k]} {len(qs)} 题，每题 {qs[0].points} 分" for k, qs in kinds if qs) + "。"
                 # e^-1, ln 20, 2Φ(0.354) − 1: not to be done by hand; a paper longer than a meeting
                 + "可以使用计算器。本卷在单独的测验或考试时段使用，不占本章的课时。")
    if key:
        other = "B" if paper.form == "A" else "A"
        lines.append(f"与 {other} 卷平行：逐题的题型、考查的学习要求与难度相同，没有相同的题。题号后是题库编号（教师指南第 8 节）。")
    else:
        # what a printed paper has: the student's name lines and the marker's score table
        # (full-width ＿: Markdown would read ASCII underscores as emphasis)
        blank = "＿" * 8
        present = [k for k, qs in kinds if qs]
        lines += ["", f"姓名：{blank}　　学号：{blank}　　班级：{blank}", "",
                  "| 题型 | " + " | ".join("一二三"[i] for i in range(len(present))) + " | 总分 |",
                  "|---|" + "---|" * (len(present) + 1),
                  "| 得分 | " + " | ".join("　" for _ in present) + " | 　 |"]
    lines.append("")
    number = 0
    for kind in KINDS:
        chosen = [q for q in paper.questions if q.kind == kind]
        if not chosen:
            continue
        lines.append(f"## {'一二三'[list(KINDS).index(kind)]}、{KINDS[kind]}（每题 {chosen[0].points} 分，共 "
                     f"{chosen[0].points * len(chosen)} 分）")
        lines.append("")
        for q in chosen:
            number += 1
            head = f"**{number}.**"
            if key:
                head += f"（{q.id}{_tag(q, requirements)}）"
            text = q.text.split("\n")
            lines.append(f"{head} {text[0]}")
            lines.append("")
            lines += [line + "\n" for line in text[1:]]  # each option its own paragraph
            if key:
                lines += _quote(f"{'答案' if kind != 'short' else '参考答案'}：{q.answer}")
                if q.rubric:
                    lines.append(">")
                    lines.append("> 评分细则：")
                    lines += [f"> - {p} 分：{t}" for p, t in q.rubric]
                elif kind == "choice":
                    lines.append(">")
                    lines.append(f"> 评分：选 {q.key} 得 {q.points} 分，其余 0 分。")
                lines.append("")
            elif kind != "choice":
                # room to answer on a printed paper (the lecturer pack's HTML, docs/exam/*.html)
                lines += [f'<div class="answer" style="height:{ANSWER_LINES[kind]}em"></div>', ""]
    if key:
        lines.append("## 覆盖的学习要求")
        lines.append("")
        lines.append("| 学习要求 | 题号 | 分值 |")
        lines.append("|---|---|---|")
        for rid, req in requirements.items():
            hits = [(i + 1, q) for i, q in enumerate(paper.questions) if rid in q.requirements]
            if hits:
                lines.append(f"| {rid} {req['zh']} | {'、'.join(str(i) for i, _ in hits)} | "
                             f"{sum(q.points for _, q in hits)} |")
        lines.append("")
        lines.append("（一题服务多个学习要求时，它的分值计入每一个。）")
    return "\n".join(lines).rstrip("\n") + "\n"


def paper_files(papers: list[Paper], requirements: dict[str, dict]) -> dict[Path, str]:
    """docs/exam/<unit>-<form>.md (the paper) and <unit>-<form>-key.md (answers, 评分细则) for every paper."""
    out = {}
    for paper in papers:
        out[EXAM_DIR / f"{paper.unit}-{paper.form}.md"] = render_paper(paper, requirements, key=False)
        out[EXAM_DIR / f"{paper.unit}-{paper.form}-key.md"] = render_paper(paper, requirements, key=True)
    return out


def render_requirements(plan: dict) -> str:
    """The guide's table: each 学习要求, where each path meets it (meetings or elsewhere), and the bank's questions."""
    sections = {s["id"]: s for s in plan["sections"]}
    paths = plan["paths"]
    head = "| 学习要求 | 教材小节 | " + " | ".join(p["zh"] for p in paths) + " |"
    rows = [head, "|---|---|" + "---|" * len(paths)]
    for req in plan["requirements"]:
        where = "、".join(_short_zh(sections[s]["zh"]) for s in req["sections"])
        cells = []
        for p in paths:
            cover = req["paths"][p["id"]]
            taught = "；".join(f"第 {m['number']} 次课（{'、'.join(_short_zh(sections[s]['zh']) for s in m['sections'])}）"
                              for m in cover["meetings"])
            note = cover["elsewhere"]["zh"] if cover.get("elsewhere") else ""
            if p["id"] not in req["units"]:
                cells.append(note or "不要求")
            else:
                cells.append("；".join(x for x in (taught, note) if x) or "—")
        rows.append(f"| {req['id']} {req['zh']} | {where} | " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(rows) + "\n"


def _short_zh(title: str) -> str:
    match = re.match(r"^(\d+\.\d+(?:\.\d+)?)\s", title)
    return match.group(1) if match else title
