"""Time the class report on synthetic grading outputs (a script, not a timed test).

    ./.venv/bin/python -m tests.support.report_bench [--students 1000] [--assignments 1]

Writes ``report.json``/``grades.csv`` of ``--students`` synthetic results per assignment (ten test
cells, diagnoses, privacy audits, static-scan flags, clusters of identical solutions, errors and
grading times) to a temporary folder, builds the report with ``python -m autograder report``'s
function and prints the time. Goal: under 10 s for 1,000 students.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np


from autograder.reports import report  # noqa: E402
from autograder.reports.classreport import build_report  # noqa: E402

CELLS = [("test_noise_basics", 1, None), ("test_noise_distribution", 2, ["laplace.scale_inverted", "laplace.extra_u2_term"]),
         ("test_noise_rng", 1, ["common.rng_unused"]), ("test_mechanism_basics", 1, ["common.no_value_error"]),
         ("test_mechanism_distribution", 2, ["laplace.sensitivity_ignored", "laplace.scale_inverted"]),
         ("test_mechanism_privacy", 1, ["common.crashed"]), ("test_a", 0.5, None), ("test_b", 0.5, None),
         ("test_c", 0.5, None), ("test_d", 0.5, None)]


def synthetic_rows(assignment: str, n: int, rng: np.random.Generator) -> list[dict]:
    rows = []
    for i in range(n):
        student = f"s{i:05d}"
        cells = []
        for grade_id, points, ids in CELLS:
            ok = rng.random() < 0.75
            hidden_failed = not ok and rng.random() < 0.3
            audits = []
            if grade_id == "test_mechanism_privacy":
                audits = [{"claimed": 1.0, "lower_bound": float(rng.gamma(9, 0.1) if ok else rng.uniform(0.5, 3)),
                           "hidden": False}]
            cells.append({"notebook": f"{assignment}.ipynb", "grade_id": grade_id, "points": points,
                          "score": points if ok else 0.0, "hidden": True, "hidden_failed": hidden_failed,
                          "diagnosis": None if ok or not ids else ids[int(rng.integers(len(ids)))],
                          "message": None if ok else "AssertionError: synthetic failure", "audits": audits})
        error = rng.random() < 0.01
        rows.append({"student": student, "assignment": assignment, "seed": i, "cells": cells,
                     "score": sum(c["score"] for c in cells), "max_score": sum(c["points"] for c in cells),
                     "errors": ["timeout: grading exceeded 300 s"] if error else [],
                     "flags": ["laplace cell 3: calls eval"] if rng.random() < 0.02 else [], "notes": [], "repairs": [],
                     "similarity": [{"function": "laplace_noise", "similarity": 0.5, "nodes": 80, "flagged": False,
                                     "fingerprint": f"{int(rng.integers(300)):016x}"}],
                     "seconds": float(rng.lognormal(1.5, 0.3)) * (10 if rng.random() < 0.005 else 1),
                     "feedback": [f"{assignment}.html"], "status": "error: timeout" if error else "ok"})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--students", type=int, default=1000)
    parser.add_argument("--assignments", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory(prefix="report-bench-") as tmp:
        outs = []
        for a in range(args.assignments):
            out = Path(tmp) / f"out{a}"
            report.write_outputs(out, synthetic_rows(f"assignment{a}", args.students, rng), {"runs": []})
            outs.append(out)
        started, cpu = time.perf_counter(), time.process_time()
        built = build_report(outs, Path(tmp) / "class_report.html")
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
        size = (Path(tmp) / "class_report.html").stat().st_size
    print(f"class report of {args.students} students x {args.assignments} assignment(s): {elapsed:.2f} s "
          f"wall ({cpu:.2f} s CPU; imports included, build_report's own figure {built['seconds']:.2f} s), "
          f"{size / 1e6:.2f} MB; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
