"""CPU time of every graded cell for the reference solution and for plain per-element Python loops.

The grader's limits count the sandbox's own CPU time: ``--timeout`` (default 120 s) per call of a
student function and per test cell (all its calls together). This script runs each assignment's
source notebook (hidden tests included) in one process, with the solution cells replaced by the
corpus's loop solutions, and prints each cell's CPU time (``time.process_time``: the checks' own
work included, so the student's share is smaller) and its margin against the limit::

    .venv/bin/python tests/power/measure_cpu_margins.py [--limit 120]

The result is :data:`helpers.checks.limits.LOOP_CPU_SECONDS`.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import sys
import time
from pathlib import Path

import nbformat
import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from helpers.checks import load_student_code  # noqa: E402

#: The plain-loop corpus solutions (``tests/corpus/<assignment>/<function>/<variant>.py``) of each assignment.
LOOPS = {
    "laplace": {"laplace_noise": "python_loop", "laplace_mechanism": "loop"},
    "exponential": {"exponential_probabilities": "python_loop", "exponential_mechanism": "python_loop"},
    "randomized_response": {"rr_perturb": "python_loop"},
    "local_frequency": {"grr_perturb": "python_loop", "grr_estimate": "loop"},
    "private_mean": {"private_mean": "pure_python_loop", "clip": "loop"},
    "privacy_budget": {"answer_histogram": "python_loop", "averaging_attack": "python_sum"},
}


def cell_cpu(assignment: str, replace: dict[str, str]) -> dict[str, float]:
    nb = nbformat.read(REPO / "source" / assignment / f"{assignment}.ipynb", as_version=4)
    ns = {"np": np, "math": math, "__name__": "__main__"}
    times = {}
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type != "code":
            continue
        source = cell.source
        if meta.get("solution") and meta.get("grade_id") in replace:
            source = (REPO / "tests" / "corpus" / assignment / meta["grade_id"] / f"{replace[meta['grade_id']]}.py").read_text()
        if meta.get("solution"):
            load_student_code(source, ns, filename=f"<{meta.get('grade_id')}>")
            continue
        start = time.process_time()
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(source.replace("### BEGIN HIDDEN TESTS", "").replace("### END HIDDEN TESTS", ""), ns)
            ok = True
        except Exception as exc:  # noqa: BLE001
            ok = f"{type(exc).__name__}: {str(exc)[:200]}"
        if meta.get("grade"):
            times[meta["grade_id"]] = (round(time.process_time() - start, 3), ok)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=float, default=120.0)
    args = parser.parse_args()
    table = {}
    for assignment, loops in LOOPS.items():
        ref, loop = cell_cpu(assignment, {}), cell_cpu(assignment, loops)
        table[assignment] = {}
        for cell in ref:
            r, l = ref[cell][0], loop[cell][0]
            table[assignment][cell] = {"reference": r, "loop": l, "loop_ok": loop[cell][1] is True,
                                       "margin": round(args.limit / max(l, 1e-3))}
            print(f"{assignment:20s} {cell:28s} ref {r:7.3f} s  loop {l:7.3f} s  "
                  f"({'passes' if loop[cell][1] is True else loop[cell][1]})  margin {args.limit / max(l, 1e-3):8.0f}x",
                  flush=True)
    print(json.dumps(table, indent=1))


if __name__ == "__main__":
    main()
