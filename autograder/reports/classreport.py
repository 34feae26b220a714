"""The class report: one self-contained HTML page (Chinese and English) over grading outputs.

    python -m autograder report OUT [OUT ...] --out REPORT.html [--gradebook gradebook.db]
        [--objectives docs/objectives.toml [--exam exam.csv] [--threshold 0.6]]

Reads ``report.json`` of each ``OUT`` of ``python -m autograder grade`` (shards, or several
assignments; ``grade`` also writes ``OUT/class_report.html`` itself) and shows, per assignment:
the score distribution (histogram, median, quartiles, zeros, full marks); per test cell the pass
rate of the visible part and of the whole cell (hidden tests included); the most common
diagnoses per cell (the checks' ``CheckFailure.diagnosis`` ids, so submissions group by mistake,
not by wording), each with its count and the students, linked to their feedback; the privacy
audits' lower bounds on ε against the claimed ε; static-scan notes, clusters of identical
normalized solutions (``similarity`` fingerprints: groups, not pairs), errors and timeouts,
grading time with outliers; per assignment a sortable table of the students (score, each cell's
result with its diagnosis, flags, a link to the feedback); across assignments a sortable student ×
assignment table. Each diagnosis id is shown with its meaning from ``helpers/checks/diagnoses.py``;
messages are shortened to whole sentences. With ``--objectives`` the page ends with the
course-objective attainment (课程目标达成度, :mod:`autograder.reports.attainment`), also written as
``attainment.csv`` beside the page.

Plots are matplotlib PNGs (the course's CJK font set-up, :func:`helpers.fonts.configure_fonts`)
embedded as ``data:`` URIs; the page loads nothing from the network. It names students: it is
for instructors only (``grade`` writes it next to ``grades.csv``, which is no less private).
"""

from __future__ import annotations

import base64
import html
import io
import json
import os
import statistics
import time
from collections import Counter, defaultdict
from pathlib import Path

from autograder.reports import attainment
from autograder.reports.report import write_atomic
from helpers.checks.diagnoses import DIAGNOSES, GRADER_DIAGNOSES
from helpers.fonts import configure_fonts

#: Students listed by name under one diagnosis or flag before the rest is folded away.
SHOWN = 30
#: A grading time above Q3 + OUTLIER_IQR × IQR (and above 2 × the median) is marked as an outlier.
OUTLIER_IQR = 3.0
#: Name of the report ``grade`` writes next to ``grades.csv``.
REPORT_NAME = "class_report.html"


# --- reading ----------------------------------------------------------------------------


def load_outputs(outs) -> tuple[list[dict], list[dict]]:
    """``(runs, rows)`` of the ``report.json`` of every output folder; each row gets ``_out``.

    Raises ``ValueError`` for a folder that is not a grading output or a (student, assignment)
    graded in two of them.
    """
    runs, rows, seen = [], [], {}
    for out in map(Path, outs):
        path = out / "report.json"
        if not path.is_file():
            raise ValueError(f"{out}: no report.json (not an output of `python -m autograder grade`)")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise ValueError(f"{path} is not valid JSON ({exc})") from None
        if not isinstance(data, dict) or not isinstance(data.get("submissions"), list):
            raise ValueError(f"{path} has no submissions")
        runs += [r for r in data.get("runs", []) if isinstance(r, dict)]
        for row in data["submissions"]:
            if not isinstance(row, dict):
                continue
            key = (str(row.get("student")), str(row.get("assignment")))
            if key in seen:
                raise ValueError(f"{key[0]} / {key[1]} graded twice ({seen[key]} and {out})")
            seen[key] = out
            rows.append(dict(row, _out=out))
    return runs, rows


def apply_gradebook(rows: list[dict], gradebook: Path) -> dict:
    """Replace scores by the gradebook's final ones (manual grades override), through nbgrader's
    :class:`nbgrader.api.Gradebook`. Returns ``{"path", "manual", "students"}``: the number of cells
    with a manual grade and of rows found in the gradebook."""
    from nbgrader.api import Gradebook, MissingEntry

    gradebook = Path(gradebook)
    if not gradebook.is_file():
        raise ValueError(f"--gradebook {gradebook}: no such file")
    manual = found = 0
    with Gradebook(f"sqlite:///{gradebook.resolve()}") as gb:
        for row in rows:
            try:
                submission = gb.find_submission(row["assignment"], row["student"])
            except MissingEntry:
                continue
            found += 1
            grades = {(Path(n.name).stem, g.name): g for n in submission.notebooks for g in n.grades}
            for cell in row.get("cells", []):
                grade = grades.get((Path(str(cell.get("notebook"))).stem, cell.get("grade_id")))
                if grade is None or grade.score is None:
                    continue
                if grade.manual_score is not None:
                    manual += 1
                cell["score"] = float(grade.score)
            row["score"] = float(submission.score)
            row["max_score"] = float(submission.max_score)
    return {"path": str(gradebook), "manual": manual, "students": found}


# --- numbers ----------------------------------------------------------------------------


def _quartiles(values: list[float]) -> tuple[float, float, float]:
    if len(values) == 1:
        return values[0], values[0], values[0]
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q2, q3


#: Sentence ends at which a long message may be cut (Chinese and English).
_SENTENCE_END = ("。", "！", "？", "；", ". ", "! ", "? ", "; ")


def whole_sentences(text: str, limit: int) -> str:
    """``text`` shortened to whole sentences of at most about ``limit`` characters per line.

    A failure message has a Chinese line and an English line; each is cut after its last
    sentence end within ``limit`` (never inside a word), else after its last space or CJK
    character, with "…" marking the cut. Short lines are kept whole.
    """
    lines = []
    for line in str(text).splitlines():
        if len(line) <= limit:
            lines.append(line)
            continue
        head = line[:limit]
        cut = max((head.rfind(end) + len(end.rstrip()) for end in _SENTENCE_END if head.rfind(end) > 0), default=-1)
        if cut > limit // 3:
            lines.append(head[:cut] + " …")
            continue
        space = head.rfind(" ")
        cjk = max((i for i, ch in enumerate(head) if "\u4e00" <= ch <= "\u9fff"), default=-1)
        cut = max(space, cjk + 1 if cjk >= 0 else -1)
        lines.append((head[:cut].rstrip() if cut > 0 else head) + " …")
    return "\n".join(lines).strip()


def _cell_key(cell: dict) -> tuple[str, str]:
    return str(cell.get("notebook")), str(cell.get("grade_id"))


def _diagnosis(cell: dict) -> str:
    """The group a failed cell falls in: the check's id; ``common.not_run`` for a cell that did not
    run (no notebook, grading stopped); else ``unlabelled:<exception>``."""
    if cell.get("diagnosis"):
        return cell["diagnosis"]
    message = cell.get("message") or ""
    if not message:
        return "common.not_run"
    return f"unlabelled:{message.split(':', 1)[0].strip() if ':' in message else 'error'}"


def summarize(rows: list[dict]) -> dict:
    """Every number the page shows, per assignment (also what the tests compare with the outputs)."""
    by_assignment = defaultdict(list)
    for row in rows:
        by_assignment[str(row.get("assignment"))].append(row)
    summary = {}
    for assignment, group in sorted(by_assignment.items()):
        group.sort(key=lambda r: str(r.get("student")))
        scores = [float(r.get("score") or 0.0) for r in group]
        max_score = max((float(r.get("max_score") or 0.0) for r in group), default=0.0)
        q1, median, q3 = _quartiles(scores) if scores else (None, None, None)
        cells = {}
        for row in group:
            for cell in row.get("cells") or []:
                key = _cell_key(cell)
                entry = cells.setdefault(key, {"notebook": key[0], "grade_id": key[1],
                                               "points": float(cell.get("points") or 0.0), "n": 0, "passed": 0,
                                               "visible_passed": 0, "hidden": False, "diagnoses": {},
                                               "audits": []})
                entry["n"] += 1
                entry["hidden"] = entry["hidden"] or bool(cell.get("hidden"))
                passed = float(cell.get("score") or 0.0) >= entry["points"] > 0 or \
                    (entry["points"] == 0 and not cell.get("message"))
                if passed:
                    entry["passed"] += 1
                    entry["visible_passed"] += 1
                else:
                    if cell.get("hidden_failed"):
                        entry["visible_passed"] += 1
                    group_id = _diagnosis(cell)
                    d = entry["diagnoses"].setdefault(group_id, {"count": 0, "students": [], "example": None})
                    d["count"] += 1
                    d["students"].append(str(row.get("student")))
                    d["example"] = d["example"] or whole_sentences(cell.get("message") or "", 300)
                entry["audits"] += [{"student": str(row.get("student")), "claimed": audit["claimed"],
                                     "lower_bound": audit["lower_bound"], "hidden": bool(audit.get("hidden")),
                                     "exceeded": audit["lower_bound"] > audit["claimed"]}
                                    for audit in cell.get("audits") or []]
        for entry in cells.values():
            entry["diagnoses"] = dict(sorted(entry["diagnoses"].items(), key=lambda kv: (-kv[1]["count"], kv[0])))
        errors = [{"student": str(r.get("student")), "reason": "; ".join(r.get("errors") or []) or str(r.get("status"))}
                  for r in group if str(r.get("status", "")).startswith("error")]
        seconds = [(str(r.get("student")), float(r["seconds"])) for r in group
                   if isinstance(r.get("seconds"), (int, float))]
        outliers = []
        if len(seconds) >= 4:
            t1, tm, t3 = _quartiles([s for _, s in seconds])
            limit = max(t3 + OUTLIER_IQR * (t3 - t1), 2 * tm)
            outliers = [(s, t) for s, t in seconds if t > limit]
        flags = {str(r.get("student")): list(r.get("flags") or []) + [n for n in r.get("notes") or []
                                                                      if "looks copied" in n]
                 for r in group}
        clusters = defaultdict(list)
        for row in group:
            for sim in row.get("similarity") or []:
                if sim.get("fingerprint") and int(sim.get("nodes") or 0) >= 40:
                    clusters[(sim.get("function"), sim["fingerprint"])].append(str(row.get("student")))
        groups = sorted(([f, sorted(set(s))] for (f, _), s in clusters.items() if len(set(s)) > 1),
                        key=lambda c: (-len(c[1]), c[0] or ""))
        clustered = {student: k for k, (_, members) in enumerate(groups) for student in members}
        slow = {student for student, _ in outliers}
        table = []
        for row in group:
            student = str(row.get("student"))
            results = {}
            for cell in row.get("cells") or []:
                points = float(cell.get("points") or 0.0)
                score = float(cell.get("score") or 0.0)
                passed = score >= points > 0 or (points == 0 and not cell.get("message"))
                results[str(cell.get("grade_id"))] = {"score": score, "points": points, "passed": passed,
                                                      "diagnosis": None if passed else _diagnosis(cell)}
            marks = []
            if str(row.get("status", "")).startswith("error"):
                marks.append("超时 timeout" if "timeout" in str(row.get("status")).lower() + " ".join(
                    row.get("errors") or []).lower() else "错误 error")
            if flags.get(student):
                marks.append(f"静态扫描 static scan × {len(flags[student])}")
            if student in clustered:
                marks.append(f"几乎相同 near-identical #{clustered[student] + 1}")
            if any(audit["lower_bound"] > audit["claimed"] for cell in row.get("cells") or []
                   for audit in cell.get("audits") or []):
                marks.append("审计超出 ε audit above ε")
            if student in slow:
                marks.append("评分慢 slow")
            table.append({"student": student, "score": float(row.get("score") or 0.0), "cells": results,
                          "flags": marks})
        summary[assignment] = {
            "n": len(group), "table": table, "max_score": max_score, "scores": scores, "students": [str(r.get("student")) for r in group],
            "median": median, "q1": q1, "q3": q3,
            "zeros": sum(1 for s in scores if s == 0), "full": sum(1 for s in scores if max_score and s >= max_score),
            "cells": list(cells.values()), "errors": errors,
            "timeouts": sum(1 for e in errors if "timeout" in e["reason"].lower()),
            "seconds": seconds, "outliers": outliers,
            "flags": {s: f for s, f in flags.items() if f},
            "clusters": groups,
        }
    return summary


# --- plots ------------------------------------------------------------------------------


def _png(fig) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90)  # fixed margins: a tight bounding box draws twice
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def _figure(width: float, height: float, left: float = 0.8):
    """A figure with fixed margins in inches (``left`` for the y labels)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    fig.subplots_adjust(left=left / width, right=1 - 0.15 / width, bottom=0.6 / height, top=1 - 0.15 / height)
    return fig, fig.add_subplot()


def _legend_above(fig, ax) -> None:
    """The legend above the axes, where no point can hide behind it."""
    height = fig.get_figheight()
    fig.subplots_adjust(top=1 - 0.4 / height)
    ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=2, fontsize=7, frameon=False)


def plot_scores(a: dict) -> str:
    return _png(score_figure(a)[0])


def score_figure(a: dict):
    """The score histogram: students per score, on an axis of whole students."""
    from matplotlib.ticker import MaxNLocator

    fig, ax = _figure(7.0, 2.6)
    top = a["max_score"] or 1.0
    step = 1.0 if all(float(s).is_integer() for s in a["scores"]) else 0.5
    bins = [step * i - step / 2 for i in range(int(top / step) + 2)] if top / step <= 120 else 40
    ax.hist(a["scores"], bins=bins, color="#4878a8")
    for value, style, label in ((a["median"], "-", "中位数 median"), (a["q1"], ":", "四分位 quartiles"), (a["q3"], ":", None)):
        ax.axvline(value, color="#c0392b", linestyle=style, label=label)
    ax.set_xlabel("得分 score")
    ax.set_ylabel("学生数 students")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    ax.set_ylim(0, max(ax.get_ylim()[1], 1))
    ax.legend(loc="upper left", fontsize=8)
    return fig, ax


def plot_pass_rates(a: dict) -> str:
    cells = a["cells"]
    fig, ax = _figure(7.0, 0.45 * len(cells) + 1.0,
                      left=0.25 + 0.065 * max(len(c["grade_id"]) for c in cells))
    ys = range(len(cells))
    visible = [c["visible_passed"] / c["n"] * 100 for c in cells]
    whole = [c["passed"] / c["n"] * 100 for c in cells]
    ax.barh([y + 0.2 for y in ys], visible, height=0.4, color="#8fb3d9", label="可见测试 visible tests")
    ax.barh([y - 0.2 for y in ys], whole, height=0.4, color="#2c5d8f", label="含隐藏测试 with hidden tests")
    ax.set_yticks(list(ys), [c["grade_id"] for c in cells], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("通过率 pass rate (%)")
    _legend_above(fig, ax)
    return _png(fig)


def plot_audits(cell: dict) -> str:
    """One row per claimed ε (a cell may audit several settings), a point per student and audit."""
    import numpy as np

    points = cell["audits"]
    claims = sorted({p["claimed"] for p in points})
    fig, ax = _figure(7.0, 0.7 * len(claims) + 1.3, left=1.5)
    row = np.array([claims.index(p["claimed"]) for p in points], dtype=float)
    y = row + np.random.default_rng(0).uniform(-0.25, 0.25, row.size)  # fixed jitter: the page does not change
    x = np.array([p["lower_bound"] for p in points])
    bad = np.array([p["exceeded"] for p in points])
    ax.scatter(x[~bad], y[~bad], s=10, color="#2c5d8f", alpha=0.6, label="未超出 within the claim")
    ax.scatter(x[bad], y[bad], s=14, color="#c0392b", label="超出声称的 ε above the claimed ε")
    for i, claimed in enumerate(claims):
        ax.plot([claimed, claimed], [i - 0.4, i + 0.4], color="black", linestyle="--")
    ax.set_yticks(range(len(claims)), [f"声称 claimed ε = {c:g}" for c in claims], fontsize=8)
    ax.set_ylim(len(claims) - 0.5, -0.5)
    ax.set_xlabel("ε 的审计下界 audited lower bound on ε（虚线：声称的 ε / dashed: claimed ε）")
    _legend_above(fig, ax)
    return _png(fig)


def plot_times(a: dict) -> str:
    import numpy as np

    fig, ax = _figure(7.0, 1.9, left=0.3)
    seconds = np.array([t for _, t in a["seconds"]])
    slow = {s for s, _ in a["outliers"]}
    bad = np.array([s in slow for s, _ in a["seconds"]])
    jitter = np.random.default_rng(1).uniform(-0.3, 0.3, seconds.size)
    ax.scatter(seconds[~bad], jitter[~bad], s=8, color="#2c5d8f", alpha=0.5, label="正常 normal")
    ax.scatter(seconds[bad], jitter[bad], s=14, color="#c0392b", label="异常慢 outlier")
    ax.set_yticks([])
    ax.set_ylim(-0.6, 0.6)
    ax.set_xlabel("每份提交的评分时间 grading time per submission (s)")
    _legend_above(fig, ax)
    return _png(fig)


# --- the page ---------------------------------------------------------------------------

_CSS = """
body{font-family:"Noto Sans CJK SC","Noto Sans SC","Source Han Sans SC","WenQuanYi Micro Hei","PingFang SC",
"Microsoft YaHei",sans-serif;margin:1.5em auto;max-width:72em;padding:0 1em;color:#222;line-height:1.45}
h1{font-size:1.5em}h2{font-size:1.25em;border-bottom:2px solid #2c5d8f;padding-bottom:.2em;margin-top:2em}
h3{font-size:1.05em;margin-top:1.4em}table{border-collapse:collapse;margin:.5em 0;font-size:.9em}
td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}th{background:#eef3f8}
td.n{text-align:right}.bad{color:#c0392b}.muted{color:#777}img{max-width:100%}
details{margin:.2em 0}summary{cursor:pointer}code{font-size:.9em}
th.sort{cursor:pointer}th.sort:after{content:" \\2195";color:#999}
.scroll{overflow-x:auto}table.students th code{font-size:.8em}
"""

_SORT_JS = """
document.querySelectorAll("table.sortable").forEach(function(t){
 t.querySelectorAll("th.sort").forEach(function(th,i){th.addEventListener("click",function(){
  var rows=Array.from(t.tBodies[0].rows),dir=th.dataset.dir==="asc"?-1:1;th.dataset.dir=dir>0?"asc":"desc";
  rows.sort(function(a,b){var x=a.cells[i].dataset.v,y=b.cells[i].dataset.v,p=parseFloat(x),q=parseFloat(y);
   if(isNaN(p)&&isNaN(q))return dir*x.localeCompare(y);if(isNaN(p))return 1;if(isNaN(q))return -1;return dir*(p-q);});
  rows.forEach(function(r){t.tBodies[0].appendChild(r);});});});});
"""


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _num(value) -> str:
    return "—" if value is None else (f"{value:g}" if isinstance(value, float) else str(value))


def _pct(part: int, whole: int) -> str:
    return "—" if not whole else f"{100 * part / whole:.0f}%"


class _Links:
    """Links to each student's feedback page, relative to the report's folder."""

    def __init__(self, rows: list[dict], report_dir: Path):
        self.targets = {}
        for row in rows:
            pages = row.get("feedback") or []
            if pages:
                path = Path(row["_out"]) / "feedback" / str(row["student"]) / str(row["assignment"]) / str(pages[0])
                self.targets[(str(row["student"]), str(row["assignment"]))] = \
                    os.path.relpath(path, report_dir).replace(os.sep, "/")

    def student(self, student: str, assignment: str) -> str:
        target = self.targets.get((student, assignment))
        if not target:
            return f"<span>{_e(student)}</span>"
        from urllib.parse import quote

        return f'<a href="{_e(quote(target))}">{_e(student)}</a>'

    def students(self, students: list[str], assignment: str) -> str:
        shown = ", ".join(self.student(s, assignment) for s in students[:SHOWN])
        if len(students) <= SHOWN:
            return shown
        rest = ", ".join(self.student(s, assignment) for s in students[SHOWN:])
        return f"{shown} <details><summary>另外 {len(students) - SHOWN} 人 / {len(students) - SHOWN} more</summary>{rest}</details>"


def _assignment_html(name: str, a: dict, links: _Links) -> list[str]:
    out = [f'<h2 id="a-{_e(name)}">{_e(name)}</h2>']
    if not a["n"]:
        return out + ["<p class=muted>没有提交 / no submissions</p>"]
    out.append(
        f"<p>{a['n']} 份提交 submissions · 满分 max {_num(a['max_score'])} · 中位数 median {_num(a['median'])} · "
        f"四分位 quartiles {_num(a['q1'])} – {_num(a['q3'])} · 零分 zero: {a['zeros']} · 满分 full marks: {a['full']}</p>")
    out.append(f'<img class=plot alt="score distribution {_e(name)}" src="{plot_scores(a)}">')
    out.append("<h3>各测试单元 Per test cell</h3>")
    if a["cells"]:
        out.append(f'<img class=plot alt="pass rates {_e(name)}" src="{plot_pass_rates(a)}">')
    out.append("<table><thead><tr><th>单元 cell</th><th>分值 points</th><th>可见测试通过 visible passed</th>"
               "<th>全部通过 passed (with hidden)</th><th>最常见的诊断 most common diagnoses</th></tr></thead><tbody>")
    for c in a["cells"]:
        hidden = _pct(c["passed"], c["n"]) if c["hidden"] else f"{_pct(c['passed'], c['n'])} <span class=muted>(无隐藏测试 no hidden tests)</span>"
        diag = [f"<details><summary><code>{_e(group_id)}</code> × {d['count']}{_meaning(group_id)}</summary>"
                f"<div class=muted>{_e(d['example'])}</div>{links.students(d['students'], name)}</details>"
                for group_id, d in c["diagnoses"].items()]
        if len(diag) > 8:  # the most common first; the long tail folded
            diag[8:] = [f"<details><summary class=muted>另有 {len(diag) - 8} 种 / {len(diag) - 8} more</summary>"
                        + "".join(diag[8:]) + "</details>"]
        out.append(f"<tr><td><code>{_e(c['grade_id'])}</code></td><td class=n>{_num(c['points'])}</td>"
                   f"<td class=n>{_pct(c['visible_passed'], c['n'])}</td><td class=n>{hidden}</td>"
                   f"<td>{''.join(diag) or '<span class=muted>—</span>'}</td></tr>")
    out.append("</tbody></table>")
    out += _students_html(name, a, links)
    for c in a["cells"]:
        if c["audits"]:
            exceeded = sorted({p["student"] for p in c["audits"] if p["exceeded"]})
            audited = len({p["student"] for p in c["audits"]})
            out.append(f"<h3>隐私审计 Privacy audit: <code>{_e(c['grade_id'])}</code></h3>")
            out.append(f'<img class=plot alt="privacy audit {_e(c["grade_id"])}" src="{plot_audits(c)}">')
            out.append(f"<p>{len(exceeded)} / {audited} 人的审计下界超过声称的 ε "
                       f"(lower bound above the claimed ε): {links.students(exceeded, name) or '—'}</p>")
    out.append("<h3>需要人工查看 Flags</h3>")
    if a["errors"]:
        out.append(f"<p>错误与超时 errors and timeouts: {len(a['errors'])} (超时 timeouts: {a['timeouts']})</p><table><tbody>")
        out += [f"<tr><td>{links.student(e['student'], name)}</td><td>{_e(e['reason'][:400])}</td></tr>"
                for e in a["errors"][:200]]
        out.append("</tbody></table>")
    else:
        out.append("<p>没有错误或超时 / no errors or timeouts</p>")
    if a["flags"]:
        out.append(f"<details><summary>静态扫描提示 static-scan notes: {len(a['flags'])} 人 students</summary><table><tbody>")
        out += [f"<tr><td>{links.student(s, name)}</td><td>{'<br>'.join(_e(x) for x in f[:10])}</td></tr>"
                for s, f in sorted(a["flags"].items())]
        out.append("</tbody></table></details>")
    else:
        out.append("<p>没有静态扫描提示 / no static-scan notes</p>")
    if a["clusters"]:
        out.append(f"<p>几乎相同的提交 near-identical solutions (same normalized syntax tree): {len(a['clusters'])} 组 groups</p><ul>")
        out += [f"<li><code>{_e(f)}</code>: {len(s)} 人 students — {links.students(s, name)}</li>" for f, s in a["clusters"][:50]]
        out.append("</ul>")
    else:
        out.append("<p>没有几乎相同的提交 / no near-identical solutions</p>")
    if a["seconds"]:
        out.append(f'<img class=plot alt="grading time {_e(name)}" src="{plot_times(a)}">')
        if a["outliers"]:
            out.append("<p>评分时间异常 grading-time outliers: " + ", ".join(
                f"{links.student(s, name)} ({t:.1f} s)" for s, t in sorted(a["outliers"], key=lambda x: -x[1])[:50]) + "</p>")
    return out


def _meaning(diagnosis: str) -> str:
    """`` — meaning`` of a diagnosis id from the checks' table (nothing for an id not in it)."""
    entry = DIAGNOSES.get(diagnosis) or GRADER_DIAGNOSES.get(diagnosis)
    return "" if entry is None else f" — {_e(entry.meaning_zh)} <span class=muted>{_e(entry.meaning_en)}</span>"


def _breakable(name: str) -> str:
    """``name`` escaped, with line-break opportunities after its ``_`` and ``:`` (long ids in narrow columns)."""
    return _e(name).replace("_", "_<wbr>").replace(":", ":<wbr>")


def _students_html(name: str, a: dict, links: _Links) -> list[str]:
    """One row per student: score, each cell's result (the diagnosis of a failed one), flags, feedback."""
    grade_ids = [c["grade_id"] for c in a["cells"]]
    out = [f'<h3 id="students-{_e(name)}">每个学生 Per student</h3>',
           "<p class=muted>点击表头排序（再点一次反向）；✓ 表示该单元满分，否则显示得分，鼠标悬停可看诊断 id。"
           " / Click a header to sort (again to reverse); ✓ is full marks for the cell, else the score, "
           "with the diagnosis id on hover.</p>",
           f'<div class=scroll><table class="sortable students" data-assignment="{_e(name)}"><thead><tr>'
           "<th class=sort>学生 student</th>"
           f"<th class=sort>得分 score (/{_num(a['max_score'])})</th>"
           + "".join(f'<th class=sort title="{_e(g)}"><code>{_breakable(g)}</code></th>' for g in grade_ids)
           + "<th class=sort>标记 flags</th><th>反馈 feedback</th></tr></thead><tbody>"]
    for entry in a["table"]:
        student = entry["student"]
        cells = [f'<td data-v="{_e(student)}">{_e(student)}</td>',
                 f'<td class=n data-v="{entry["score"]}">{_num(entry["score"])}</td>']
        for grade_id in grade_ids:
            r = entry["cells"].get(grade_id)
            if r is None:
                cells.append('<td class=n data-v="">—</td>')
            elif r["passed"]:
                cells.append(f'<td class=n data-v="{r["score"]}">✓</td>')
            else:
                cells.append(f'<td class="n bad" data-v="{r["score"]}" title="{_e(r["diagnosis"] or "")}">'
                             f'{_num(r["score"])}<br><small>{_breakable((r["diagnosis"] or "").split(".")[-1])}</small></td>')
        cells.append(f'<td data-v="{_e(" ".join(entry["flags"]))}">{"<br>".join(_e(f) for f in entry["flags"])}</td>')
        target = links.targets.get((student, name))
        if target:
            from urllib.parse import quote

            cells.append(f'<td data-v=""><a class=feedback href="{_e(quote(target))}">反馈 feedback</a></td>')
        else:
            cells.append('<td data-v="" class=muted>—</td>')
        out.append("<tr>" + "".join(cells) + "</tr>")
    return out + ["</tbody></table></div>"]


def _table_html(summary: dict, rows: list[dict]) -> list[str]:
    assignments = sorted(summary)
    scores = defaultdict(dict)
    for row in rows:
        scores[str(row["student"])][str(row["assignment"])] = float(row.get("score") or 0.0)
    out = ["<h2 id=table>学生 × 作业 Students × assignments</h2>",
           "<p class=muted>点击表头排序 / click a header to sort</p><table class=sortable id=all-assignments><thead><tr>"
           "<th class=sort>学生 student</th>"
           + "".join(f"<th class=sort>{_e(a)} (/{_num(summary[a]['max_score'])})</th>" for a in assignments)
           + "<th class=sort>合计 total</th></tr></thead><tbody>"]
    for student in sorted(scores):
        cells = [f'<td data-v="{_e(student)}">{_e(student)}</td>']
        for a in assignments:
            value = scores[student].get(a)
            cells.append(f'<td class=n data-v="{"" if value is None else value}">{_num(value)}</td>')
        total = sum(scores[student].values())
        cells.append(f'<td class=n data-v="{total}">{_num(total)}</td>')
        out.append("<tr>" + "".join(cells) + "</tr>")
    return out + ["</tbody></table>"]


def build_report(outs, dest: Path, gradebook: Path | None = None, objectives: Path | None = None,
                 exam: Path | None = None, threshold: float | None = None) -> dict:
    """Write the class report of the grading outputs ``outs`` to ``dest``; returns the summary.

    With ``objectives`` (and optionally the lecturer's ``exam`` CSV) it adds the course-objective
    attainment (:mod:`autograder.reports.attainment`) and writes ``attainment.csv`` beside ``dest``.
    """
    started = time.monotonic()
    dest = Path(dest) / REPORT_NAME if Path(dest).is_dir() else Path(dest)
    runs, rows = load_outputs(outs)
    manual = apply_gradebook(rows, gradebook) if gradebook else None
    table = None
    if objectives is not None:
        goals, default = attainment.load_objectives(objectives)
        table = attainment.compute(goals, rows, attainment.read_exam(exam) if exam else None,
                                   default if threshold is None else threshold)
    elif exam is not None or threshold is not None:
        raise ValueError("--exam 与 --threshold 需要与 --objectives 一起使用 / --exam and --threshold need --objectives")
    summary = summarize(rows)
    links = _Links(rows, dest.resolve().parent)
    body = ["<h1>班级评分报告 Class grading report</h1>",
            f"<p class=muted>{len(rows)} 份提交 submissions · {len(summary)} 个作业 assignments · "
            f"评分输出 grading outputs: {_e(', '.join(str(o) for o in outs))}"
            f"{' · 沙箱 sandbox: ' + _e(runs[-1].get('sandbox')) if runs else ''}</p>",
            "<p>本页列出学生的学号与成绩：只供教师查看。/ This page names students: for instructors only.</p>"]
    if manual:
        body.append(f"<p><b>分数为人工评分之后的最终分数</b>（nbgrader 成绩册 {_e(manual['path'])}，"
                    f"{manual['manual']} 个单元有人工评分）。/ <b>Scores are final, after manual grading</b> "
                    f"(nbgrader gradebook {_e(manual['path'])}: {manual['manual']} manually graded cells, "
                    f"{manual['students']} submissions found).</p>")
    else:
        body.append("<p class=muted>分数为自动评分结果（未读取 nbgrader 成绩册）。/ Autograder scores "
                    "(no nbgrader gradebook read: manual grades not included).</p>")
    if len(summary) > 1:
        body.append("<p>" + " · ".join(f'<a href="#a-{_e(a)}">{_e(a)}</a>' for a in summary)
                    + ' · <a href="#table">学生 × 作业 table</a></p>')
    import matplotlib

    with matplotlib.rc_context():  # the course's CJK fonts for these figures, the caller's settings kept
        configure_fonts()
        for name, a in summary.items():
            body += _assignment_html(name, a, links)
    if len(summary) > 1:
        body += _table_html(summary, rows)
    if table is not None:
        body += attainment.html_section(table, _e)
        attainment.write_csv(dest.parent / attainment.CSV_NAME, table)
    page = ("<!DOCTYPE html><html lang=zh-CN><head><meta charset=utf-8>"
            "<meta name=viewport content='width=device-width, initial-scale=1'>"
            "<meta http-equiv=Content-Security-Policy content=\"default-src 'none'; img-src data:; "
            "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">"
            f"<title>班级评分报告 Class report</title><style>{_CSS}</style></head><body>"
            + "\n".join(body) + f"<script>{_SORT_JS}</script></body></html>\n")
    write_atomic(dest, page)
    os.chmod(dest, 0o600)  # every student's id and scores: the instructor's eyes only
    return {"summary": summary, "seconds": round(time.monotonic() - started, 3), "path": str(dest),
            "manual": manual, "attainment": table}
