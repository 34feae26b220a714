"""课程目标达成度 (course-objective attainment) for 工程教育认证, from the graded class and the exam.

    python -m autograder report OUT [OUT ...] --out REPORT.html --objectives docs/objectives.toml \
        [--exam exam.csv] [--threshold 0.6]

adds a table per course objective to the class report and writes ``attainment.csv`` beside it
(UTF-8 with a byte-order mark, so that Excel and WPS open the Chinese columns as they are).

**The objectives** (a TOML file, the course's is ``docs/objectives.toml``): each ``[[objective]]``
has an ``id`` (the programme's name for it, 课程目标 1 …), a description ``zh``, the 学习要求 it
serves (``requirements``) and its assessment parts (考核环节) ``[[objective.part]]``, each with a
``name`` (作业, 考试 …), a ``weight`` and its items: graded cells ``"assignment:grade_id"`` in
``cells`` (scores and points from the grading outputs, after manual grading when the report reads the
gradebook), exam questions ``{question = "2h:9", max = 12}`` in ``exam`` (question 9 of the 2-hour
unit's papers; A and B are parallel question by question).

**The exam CSV** the lecturer fills in: a header ``学号,试卷,1,2,…`` (or ``student,paper,…``), one
row per student, ``试卷`` the paper taken (``2h-A``, ``4h-B`` …), then the points of each question.

**The computation.** For student *s* and a part *p*, the part's attainment is the points *s* earned on
its items over their maximum, a_p(s) = Σ score / Σ max; the objective's attainment is
A(s) = Σ_p w_p a_p(s) / Σ_p w_p, over the parts assessed in this class (an item is assessed when its
assignment was graded, or its unit's paper appears in the exam CSV; a part with no assessed item is left
out and the table says so). A student missing a submission or an exam row gets 0 on those items (缺交、
缺考按 0 分计), counted in the table. The class attainment is the mean of A(s) over the students; the
table adds the share of students with A(s) ≥ the threshold and the three weakest items (lowest class
mean of score/max).
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

#: Default share of full attainment a student must reach (a programme's usual 0.6).
THRESHOLD = 0.6
#: Items listed as the weakest per objective.
WEAKEST = 3
CSV_NAME = "attainment.csv"


@dataclass
class Part:
    name: str
    weight: float
    cells: list[str] = field(default_factory=list)  # "assignment:grade_id"
    exam: dict[str, float] = field(default_factory=dict)  # "unit:number" -> max points


@dataclass
class Objective:
    id: str
    zh: str
    requirements: list[str]
    parts: list[Part]


def load_objectives(path: Path) -> tuple[list[Objective], float]:
    """The objectives of a TOML file and its default threshold; ``ValueError`` says what is wrong."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"--objectives {path}：文件不存在 / no such file")
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}：不是有效的 TOML / not valid TOML ({exc})") from None
    threshold = raw.get("attainment", {}).get("threshold", THRESHOLD)
    problems, objectives = [], []
    for n, row in enumerate(raw.get("objective", []), start=1):
        where = f"{path}: [[objective]] {row.get('id', n)!r}"
        parts = []
        for part in row.get("part", []):
            weight = part.get("weight")
            exam = {}
            for item in part.get("exam", []):
                question, top = (item.get("question"), item.get("max")) if isinstance(item, dict) else (None, None)
                if not (isinstance(question, str) and re.fullmatch(r"[^:\s]+:\d+", question)
                        and isinstance(top, (int, float)) and top > 0):
                    problems.append(f"{where}: part {part.get('name')!r}: exam item {item!r} must be "
                                    "{question = \"unit:number\", max = points > 0}")
                    continue
                exam[question] = float(top)
            cells = part.get("cells", [])
            if not all(isinstance(c, str) and re.fullmatch(r"[^:\s]+:[^:\s]+", c) for c in cells):
                problems.append(f"{where}: part {part.get('name')!r}: cells must be \"assignment:grade_id\"; got {cells!r}")
                cells = []
            if not isinstance(weight, (int, float)) or not weight > 0 or not (cells or exam):
                problems.append(f"{where}: part {part.get('name')!r} needs weight > 0 and cells or exam items")
                continue
            parts.append(Part(str(part.get("name", "")), float(weight), list(cells), exam))
        if not row.get("id") or not parts:
            problems.append(f"{where}: needs an id and at least one [[objective.part]]")
            continue
        objectives.append(Objective(str(row["id"]), str(row.get("zh", "")), list(row.get("requirements", [])), parts))
    if not objectives and not problems:
        problems.append(f"{path}: no [[objective]]")
    if not isinstance(threshold, (int, float)) or not 0 < threshold <= 1:
        problems.append(f"{path}: [attainment] threshold must be in (0, 1]; got {threshold!r}")
    if problems:
        raise ValueError("课程目标文件有误 / objectives file refused:\n" + "\n".join(problems))
    return objectives, float(threshold)


def read_exam(path: Path) -> dict[str, dict[str, float]]:
    """``{student: {"unit:number": points}}`` from the lecturer's exam CSV; ``ValueError`` names the bad cell."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"--exam {path}：文件不存在 / no such file")
    with open(path, newline="", encoding="utf-8-sig") as handle:
        table = list(csv.reader(handle))
    if not table:
        raise ValueError(f"{path}：空文件 / empty file")
    header = [h.strip() for h in table[0]]
    if len(header) < 3 or header[0] not in ("学号", "student") or header[1] not in ("试卷", "paper") \
            or not all(h.isdigit() for h in header[2:]):
        raise ValueError(f"{path}：表头应为 学号,试卷,1,2,…（或 student,paper,1,2,…）；实际为 {header} / "
                         "the header must be 学号,试卷,1,2,… (question numbers)")
    out: dict[str, dict[str, float]] = {}
    for line, row in enumerate(table[1:], start=2):
        if not any(c.strip() for c in row):
            continue
        student, paper = row[0].strip(), row[1].strip() if len(row) > 1 else ""
        match = re.fullmatch(r"([^-\s]+)-[A-Za-z]", paper)
        if not student or not match:
            raise ValueError(f"{path} 第 {line} 行：需要学号和试卷（如 2h-A）；实际为 {row[:2]} / line {line}: "
                             "a student id and a paper such as 2h-A are needed")
        if student in out:
            raise ValueError(f"{path} 第 {line} 行：学号 {student} 出现了两次 / student listed twice")
        scores = {}
        for number, value in zip(header[2:], row[2:]):
            value = value.strip()
            if not value:
                continue
            try:
                points = float(value)
            except ValueError:
                points = math.nan
            if not math.isfinite(points) or points < 0:
                raise ValueError(f"{path} 第 {line} 行第 {number} 题：{value!r} 不是非负的分数 / "
                                 f"line {line}, question {number}: not a non-negative number")
            scores[f"{match.group(1)}:{int(number)}"] = points
        out[student] = scores
    return out


def _cell_scores(rows: list[dict]) -> tuple[dict[str, dict[str, tuple[float, float]]], set[str]]:
    """``{student: {"assignment:grade_id": (score, points)}}`` and the assignments graded."""
    out: dict[str, dict[str, tuple[float, float]]] = {}
    graded = set()
    for row in rows:
        student, assignment = str(row.get("student")), str(row.get("assignment"))
        graded.add(assignment)
        mine = out.setdefault(student, {})
        for cell in row.get("cells") or []:
            if isinstance(cell, dict):
                mine[f"{assignment}:{cell.get('grade_id')}"] = (float(cell.get("score") or 0.0),
                                                                float(cell.get("points") or 0.0))
    return out, graded


def compute(objectives: list[Objective], rows: list[dict], exam: dict[str, dict[str, float]] | None,
            threshold: float) -> list[dict]:
    """One dict per objective: class attainment, share at or above ``threshold``, parts, weakest items.

    Raises ``ValueError`` for an exam score above its question's maximum or a cell whose maximum in the
    grading outputs is not positive.
    """
    cells, graded = _cell_scores(rows)
    exam = exam or {}
    units = {key.split(":")[0] for scores in exam.values() for key in scores}
    students = sorted(set(cells) | set(exam))
    for student, scores in exam.items():
        for objective in objectives:
            for part in objective.parts:
                for question, top in part.exam.items():
                    if scores.get(question, 0.0) > top + 1e-9:
                        raise ValueError(f"考试成绩：{student} 的第 {question} 题得 {scores[question]:g} 分，超过满分 "
                                         f"{top:g} / exam: {student} scored above the maximum of {question}")
    maxima = {key: top for s in cells.values() for key, (_, top) in s.items()}
    out = []
    for objective in objectives:
        per_student = {s: [0.0, 0.0] for s in students}  # Σ w·a, Σ w
        parts, items = [], {}
        for part in objective.parts:
            assessed_cells = [c for c in part.cells if c.split(":")[0] in graded]
            assessed_exam = {q: top for q, top in part.exam.items() if q.split(":")[0] in units}
            for c in assessed_cells:
                if maxima.get(c, 0.0) <= 0:
                    raise ValueError(f"课程目标 {objective.id}：评分单元格 {c} 不在评分结果中或满分为 0 / "
                                     f"graded cell {c} is not in the grading outputs (or has no points)")
            top = sum(maxima[c] for c in assessed_cells) + sum(assessed_exam.values())
            if top == 0:
                parts.append({"name": part.name, "weight": part.weight, "attainment": None})
                continue
            values = []
            for s in students:
                got = sum(cells.get(s, {}).get(c, (0.0, 0.0))[0] for c in assessed_cells)
                got += sum(exam.get(s, {}).get(q, 0.0) for q in assessed_exam)
                a = got / top
                values.append(a)
                per_student[s][0] += part.weight * a
                per_student[s][1] += part.weight
            parts.append({"name": part.name, "weight": part.weight,
                          "attainment": sum(values) / len(values) if values else None})
            for c in assessed_cells:
                items[c] = sum(cells.get(s, {}).get(c, (0.0, 0.0))[0] for s in students) / (maxima[c] * len(students))
            for q, qmax in assessed_exam.items():
                items[f"考试 {q}"] = sum(exam.get(s, {}).get(q, 0.0) for s in students) / (qmax * len(students))
        scores = [w_a / w for w_a, w in per_student.values() if w > 0]
        missing = sum(1 for s in students if not all(
            c in cells.get(s, {}) for p in objective.parts for c in p.cells if c.split(":")[0] in graded)
            or not all(q in exam.get(s, {}) for p in objective.parts for q in p.exam if q.split(":")[0] in units))
        out.append({"id": objective.id, "zh": objective.zh, "requirements": objective.requirements,
                    "students": len(scores), "threshold": threshold,
                    "attainment": sum(scores) / len(scores) if scores else None,
                    "at_threshold": sum(a >= threshold - 1e-12 for a in scores) / len(scores) if scores else None,
                    "parts": parts, "missing": missing,
                    "weakest": sorted(items.items(), key=lambda kv: (kv[1], kv[0]))[:WEAKEST]})
    return out


def _fmt(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def attainment_csv(table: list[dict]) -> str:
    """The CSV a programme's template takes: 课程目标, 目标描述, 支撑的学习要求, 达成度, … (one row each)."""
    names = list(dict.fromkeys(p["name"] for row in table for p in row["parts"]))
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(["课程目标", "目标描述", "支撑的学习要求", "达成度", "达到阈值的学生比例", "阈值", "学生数",
                     *[f"{n}达成度（权重）" for n in names], "缺交或缺考人数", "最弱的评分项（班级得分率）"])
    for row in table:
        by_name = {p["name"]: p for p in row["parts"]}
        writer.writerow([row["id"], row["zh"], "、".join(row["requirements"]), _fmt(row["attainment"]),
                         _fmt(row["at_threshold"]), f"{row['threshold']:g}", row["students"],
                         *[("本班未考核" if by_name[n]["attainment"] is None else _fmt(by_name[n]["attainment"]))
                           + f"（{by_name[n]['weight']:g}）" if n in by_name else "" for n in names],
                         row["missing"], "；".join(f"{k} {v:.2f}" for k, v in row["weakest"])])
    return buffer.getvalue()


def write_csv(path: Path, table: list[dict]) -> None:
    Path(path).write_text(attainment_csv(table), encoding="utf-8-sig")


def html_section(table: list[dict], escape) -> list[str]:
    """The class report's section (``escape``: the report's HTML escaping)."""
    out = ["<h2 id=attainment>课程目标达成度 Course-objective attainment</h2>",
           "<p class=muted>每个学生的达成度 = Σ 权重 × 该考核环节得分率 / Σ 权重；班级达成度为全体学生的平均；"
           "缺交、缺考按 0 分计。/ A student's attainment is the weighted mean of the parts' score ratios; "
           f"the class attainment is its mean over students. 同时写出 {CSV_NAME}。</p>",
           "<table><thead><tr><th>课程目标</th><th>支撑的学习要求</th><th>达成度</th><th>达到阈值的比例</th>"
           "<th>各考核环节（权重）</th><th>最弱的评分项</th></tr></thead><tbody>"]
    for row in table:
        parts = "<br>".join(f"{escape(p['name'])}（{p['weight']:g}）：{_fmt(p['attainment'])}"
                            + ("（本班未考核）" if p["attainment"] is None else "") for p in row["parts"])
        weakest = "<br>".join(f"{escape(k)}：{v:.2f}" for k, v in row["weakest"])
        out.append(f"<tr><td>{escape(row['id'])}<br><span class=muted>{escape(row['zh'])}</span></td>"
                   f"<td>{escape('、'.join(row['requirements']))}</td><td class=n>{_fmt(row['attainment'])}</td>"
                   f"<td class=n>{_fmt(row['at_threshold'])}（阈值 {row['threshold']:g}，{row['students']} 人）</td>"
                   f"<td>{parts}</td><td>{weakest}</td></tr>")
    return out + ["</tbody></table>"]
