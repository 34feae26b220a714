"""What the class report must agree with: ``grades.csv`` and ``report.json`` of a grading output.

Used by ``tests/checks/test_assignments.py`` on the corpus grading it already runs (no extra grading)
and by ``tests/autograder/test_classreport.py``.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from pathlib import Path

from autograder.reports.classreport import REPORT_NAME, build_report
from autograder.reports.report import read_grades


def report_problems(out: Path, dest: Path | None = None) -> list[str]:
    """Differences between the report built from ``out`` and ``out``'s own files (empty: none)."""
    out = Path(out)
    dest = dest or out / REPORT_NAME
    summary = build_report([out], dest)["summary"]
    page = dest.read_text(encoding="utf-8")
    grades = read_grades(out / "grades.csv")
    rows = json.loads((out / "report.json").read_text(encoding="utf-8"))["submissions"]
    problems = []
    for assignment in sorted({g["assignment"] for g in grades}):
        got = summary.get(assignment)
        mine = [g for g in grades if g["assignment"] == assignment]
        scores = sorted(float(g["score"]) for g in mine)
        top = max(float(g["max_score"]) for g in mine)
        q1, median, q3 = (statistics.quantiles(scores, n=4, method="inclusive") if len(scores) > 1
                          else scores * 3)
        want = {"n": len(mine), "zeros": scores.count(0.0), "full": sum(s >= top for s in scores),
                "median": median, "q1": q1, "q3": q3, "max_score": top}
        have = {k: got[k] for k in want} if got else None
        if have != want:
            problems.append(f"{assignment}: report {have} != grades.csv {want}")
            continue
        if f"零分 zero: {want['zeros']}" not in page or f"满分 full marks: {want['full']}" not in page:
            problems.append(f"{assignment}: the page does not show {want['zeros']} zeros / {want['full']} full marks")
        errors = sum(g["status"].startswith("error") for g in mine)
        if len(got["errors"]) != errors:
            problems.append(f"{assignment}: {len(got['errors'])} errors in the report, {errors} in grades.csv")
        for cell in got["cells"]:
            subs = [(r["student"], c) for r in rows if r["assignment"] == assignment for c in r["cells"]
                    if c["grade_id"] == cell["grade_id"] and c["notebook"] == cell["notebook"]]
            passed = sum(c["score"] == c["points"] for _, c in subs)
            visible = passed + sum(bool(c.get("hidden_failed")) for _, c in subs if c["score"] != c["points"])
            groups = Counter(c.get("diagnosis") or ("unlabelled:" + (c["message"].split(":", 1)[0] if ":" in c["message"]
                                                                     else "error") if c.get("message") else "common.not_run")
                             for _, c in subs if c["score"] != c["points"])
            if (cell["n"], cell["passed"], cell["visible_passed"]) != (len(subs), passed, visible):
                problems.append(f"{assignment}/{cell['grade_id']}: report n/passed/visible "
                                f"{cell['n']}/{cell['passed']}/{cell['visible_passed']} != report.json "
                                f"{len(subs)}/{passed}/{visible}")
            have_groups = {k: v["count"] for k, v in cell["diagnoses"].items()}
            if have_groups != dict(groups):
                problems.append(f"{assignment}/{cell['grade_id']}: diagnosis groups {have_groups} != {dict(groups)}")
            for group_id, d in cell["diagnoses"].items():
                students = sorted(s for s, c in subs if c["score"] != c["points"] and c.get("diagnosis") == group_id)
                if f"<code>{group_id}</code> × {d['count']}" not in page:
                    problems.append(f"{assignment}/{cell['grade_id']}: the page does not show {group_id} × {d['count']}")
                if group_id not in ("common.not_run",) and not group_id.startswith("unlabelled") \
                        and sorted(d["students"]) != students:
                    problems.append(f"{assignment}/{cell['grade_id']}: {group_id} students {d['students']} != {students}")
    return problems
