"""``grades.csv`` and ``report.json``: writing one run, merging shards."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

COLUMNS = ("student", "assignment", "score", "max_score", "status")


def _number(value) -> str:
    value = float(value)
    return str(int(value)) if value.is_integer() else f"{value:.6g}"


def write_grades(path: Path, results) -> None:
    """One row per submission, sorted by assignment then student."""
    rows = sorted(results, key=lambda r: (r["assignment"], r["student"]))
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        for r in rows:
            writer.writerow([r["student"], r["assignment"], _number(r["score"]),
                             _number(r["max_score"]), r["status"]])


def read_grades(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def write_report(path: Path, runs, results) -> None:
    report = {"runs": list(runs),
              "submissions": sorted(results, key=lambda r: (r["assignment"], r["student"]))}
    Path(path).write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")


def merge(outs, dest: Path) -> dict:
    """Join the outputs of several shards (or assignments) into ``dest``.

    Raises ``ValueError`` when an input lacks its files or when two inputs
    graded the same (student, assignment).
    """
    dest = Path(dest)
    runs, results, seen = [], [], {}
    for out in map(Path, outs):
        report_path = out / "report.json"
        if not report_path.is_file() or not (out / "grades.csv").is_file():
            raise ValueError(f"{out}: no grades.csv/report.json (not an autograder output)")
        report = json.loads(report_path.read_text(encoding="utf-8"))
        rows = read_grades(out / "grades.csv")
        if len(rows) != len(report["submissions"]):
            raise ValueError(f"{out}: grades.csv and report.json disagree")
        runs += report["runs"]
        for result in report["submissions"]:
            key = (result["student"], result["assignment"])
            if key in seen:
                raise ValueError(f"{key[0]} / {key[1]} graded twice ({seen[key]} and {out})")
            seen[key] = out
            results.append(result)
    dest.mkdir(parents=True, exist_ok=True)
    for out in map(Path, outs):
        if (out / "feedback").is_dir() and out.resolve() != dest.resolve():
            shutil.copytree(out / "feedback", dest / "feedback", dirs_exist_ok=True)
    write_grades(dest / "grades.csv", results)
    write_report(dest / "report.json", runs, results)
    return {"runs": runs, "submissions": results}
