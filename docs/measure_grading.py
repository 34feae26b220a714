#!/usr/bin/env python3
"""CPU seconds per submission of ``python -m autograder grade`` (the figures of the guide's section 7.1).

    .venv/bin/python docs/measure_grading.py [--n 10] [--jobs 2] ASSIGNMENT [ASSIGNMENT ...]

For each assignment: ``n`` submissions filled with the reference solutions of ``source/``
(as ``python -m autograder.bench`` fills them), graded by the CLI in a subprocess; the CPU
time is the user + system time of that process tree (``getrusage(RUSAGE_CHILDREN)``: the grader,
its workers and their sandboxes), reported per submission because the machine may be shared.
A script, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def measure(assignment: str, n: int, jobs: int) -> dict:
    # the reference solutions as autograder.bench fills them (the product's code, not the tests')
    sys.path.insert(0, str(REPO))
    import nbformat

    from autograder.bench import _fill, _reference_solutions

    tmp = Path(tempfile.mkdtemp(prefix="measure-grading-"))
    try:
        name = f"{assignment}.ipynb"
        release = nbformat.read(REPO / "release" / assignment / name, as_version=4)
        good = _reference_solutions(nbformat.read(REPO / "source" / assignment / name, as_version=4))
        for i in range(n):
            folder = tmp / "submitted" / f"student{i:03d}" / assignment
            folder.mkdir(parents=True)
            nbformat.write(_fill(release, good), folder / name)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "autograder", "grade", "--assignment", assignment,
                               "--submissions", str(tmp / "submitted"), "--out", str(tmp / "out"),
                               "--jobs", str(jobs)], cwd=REPO, capture_output=True, text=True,
                              env=dict(os.environ, MPLBACKEND="Agg"))
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode:
            raise SystemExit(f"{assignment}: grading failed:\n{done.stderr[-2000:]}")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        scores = [row["score"] for row in json.loads((tmp / "out" / "report.json").read_text())["submissions"]]
        return {"assignment": assignment, "n": n, "cpu_per_submission": round(cpu / n, 2), "wall": round(wall, 1),
                "scores": sorted(set(scores)), "load": round(os.getloadavg()[0], 1)}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("assignments", nargs="+")
    parser.add_argument("--n", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    for assignment in args.assignments:
        print(json.dumps(measure(assignment, args.n, args.jobs), ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
