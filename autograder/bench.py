"""Benchmark: the trusted, sandboxed grader against plain sequential ``nbgrader autograde``.

``python -m autograder.bench [--n 40] [--jobs 2] [--assignment laplace]``

Builds ``n`` honest submissions (cycling through the issue-3 corpus in
``tests/corpus``: correct variants and realistic mistakes; without the
corpus, two thirds reference solution and one third a wrong
``laplace_noise``), then times, in one run, on the same submissions:

1. plain nbgrader: one ``nbgrader autograde`` command in a course root with a
   minimal ``nbgrader_config.py`` (students graded one after another);
2. ``autograder grade --jobs N`` with the bubblewrap sandbox (student cells
   sandboxed, tests in the trusted workers, executed notebooks, feedback);
3. the cost of the sandbox itself: ``--reps`` sandboxes started, given an
   empty notebook and stopped, against the same runner without bubblewrap.

It prints the wall times, the ratio, the per-submission cost of the sandbox,
and whether every student got the same score from nbgrader and from the
trusted grader (both use fixed seeds per student only in the grader, so a
difference would be a statistical test at its stated 1e-6 level, or a bug).
A script, not a test: run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import copy
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from autograder.grade import default_course, grade
from autograder.jail import Sandbox

CONFIG = """c = get_config()
c.CourseDirectory.root = {root!r}
c.CourseDirectory.course_id = "dp-course"
c.OverwriteCells.add_missing_cells = True
c.CourseDirectory.db_url = "sqlite:///{root}/gradebook.db"
c.Execute.timeout = {timeout}
c.Exchange.root = {exchange!r}
"""


#: A realistic mistake for the ``laplace`` assignment without a corpus: the scale is 2b.
WRONG_LAPLACE_NOISE = '''def laplace_noise(b, size, rng):
    """Wrong on purpose: the scale is 2b."""
    if not b > 0:
        raise ValueError("b must be > 0")
    u = rng.random(size) - 0.5
    return -2 * b * np.sign(u) * np.log1p(-2 * np.abs(u))
'''


def _reference_solutions(source_nb) -> dict[str, str]:
    """``{grade_id: code}`` of the source's solution cells, ``### BEGIN/END SOLUTION`` removed."""
    return {cell.metadata["nbgrader"]["grade_id"]:
            "\n".join(line for line in cell.source.splitlines() if not line.strip().startswith("### "))
            for cell in source_nb.cells if cell.metadata.get("nbgrader", {}).get("solution")}


def _fill(release_nb, solutions: dict[str, str]):
    """A copy of the release notebook whose solution cells hold ``solutions``."""
    nb = copy.deepcopy(release_nb)
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and meta.get("grade_id") in solutions:
            cell.source = solutions[meta["grade_id"]]
    return nb


def _corpus_variants(assignment: str) -> list[dict[str, str]] | None:
    """The corpus entries' solutions when run from a checkout with ``tests/corpus``, else None."""
    if not (Path(__file__).resolve().parents[1] / "tests" / "corpus" / "manifest.json").is_file():
        return None
    try:
        from tests.support import corpus   # run from the repository root (python -m autograder.bench)
    except ImportError:
        return None
    if assignment not in corpus.load_manifest():
        return None
    return [entry["solutions"] for entry in corpus.corpus_entries(assignment)]


def _submissions(template: Path, assignment: str, out: Path, n: int) -> None:
    name = f"{assignment}.ipynb"
    release = nbformat.read(template / "release" / assignment / name, as_version=4)
    source = nbformat.read(template / "source" / assignment / name, as_version=4)
    good = _reference_solutions(source)
    wrong = dict(good)
    if assignment == "laplace":
        wrong["laplace_noise"] = WRONG_LAPLACE_NOISE
    variants = [good, good, wrong]
    corpus = _corpus_variants(assignment)
    if corpus:
        variants = [dict(good, **solutions) for solutions in corpus]
    for i in range(n):
        nb = _fill(release, variants[i % len(variants)])
        folder = out / f"student{i:03d}" / assignment
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / name)


def _nbgrader_scores(root: Path, assignment: str) -> dict[str, float]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        return {s.student.id: float(s.score) for s in gb.assignment_submissions(assignment)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.bench")
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--assignment", default="laplace")
    parser.add_argument("--timeout", type=int, default=120)
    parser.add_argument("--reps", type=int, default=20, help="sandboxes started for the cost estimate")
    args = parser.parse_args(argv)

    bin_dir = str(Path(sys.executable).parent)
    os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")
    course = default_course()
    tmp = Path(tempfile.mkdtemp(prefix="autograder-bench-"))
    try:
        template = tmp / "template"
        shutil.copytree(course / "source" / args.assignment, template / "source" / args.assignment)
        shutil.copytree(course / "release" / args.assignment, template / "release" / args.assignment)
        subs = tmp / "submitted"
        _submissions(template, args.assignment, subs, args.n)

        root = tmp / "plain"
        shutil.copytree(template, root)
        shutil.copytree(subs, root / "submitted")
        (root / "nbgrader_config.py").write_text(CONFIG.format(
            root=str(root), timeout=args.timeout, exchange=str(tmp / "exchange")), encoding="utf-8")
        env = dict(os.environ, MPLBACKEND="Agg")
        nbgrader = [str(Path(sys.executable).parent / "nbgrader")]
        subprocess.run(nbgrader + ["generate_assignment", args.assignment, "--force"], cwd=root, env=env,
                       check=True, capture_output=True)
        start = time.perf_counter()
        subprocess.run(nbgrader + ["autograde", args.assignment, "--force"], cwd=root, env=env,
                       check=True, capture_output=True)
        plain_autograde = time.perf_counter() - start
        plain = _nbgrader_scores(root, args.assignment)
        uses_helpers = {p.parts[-3] for p in subs.rglob("*.ipynb") if _solutions_use_helpers(p)}

        start = time.perf_counter()
        rep = grade(assignment=args.assignment, submissions=subs, out=tmp / "out", jobs=args.jobs,
                    timeout=args.timeout, quiet=True, sandbox=True)
        ours_seconds = time.perf_counter() - start
        cost = {label: _sandbox_seconds(sandboxed, args.reps) for label, sandboxed in
                (("bubblewrap", True), ("plain process", False))}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    ours = {r["student"]: r["score"] for r in rep["submissions"]}
    diff = {s: (plain.get(s), ours.get(s)) for s in sorted(set(plain) | set(ours)) if plain.get(s) != ours.get(s)}
    # Expected: code that imports helpers (the reference answers) runs in nbgrader's kernel but
    # cannot import it in the sandbox, so those functions fail every test instead of one.
    explained = {s for s in diff if s in uses_helpers}
    same = not set(diff) - explained
    print(f"{args.n} submissions of {args.assignment}, {os.cpu_count()} CPUs")
    print(f"plain nbgrader autograde (sequential):           {plain_autograde:7.1f} s")
    print(f"trusted grader, sandbox on, --jobs {args.jobs}:            {ours_seconds:7.1f} s   "
          f"speed-up: {plain_autograde / ours_seconds:4.2f}x   identical grades: {same}")
    print(f"student runner started, empty notebook, stopped: {cost['bubblewrap'] * 1000:7.0f} ms in bubblewrap, "
          f"{cost['plain process'] * 1000:.0f} ms without: the sandbox costs "
          f"{(cost['bubblewrap'] - cost['plain process']) * 1000:.0f} ms per submission")
    if explained:
        print(f"  expected differences (solution imports helpers, not importable in the sandbox): "
              f"{ {s: diff[s] for s in sorted(explained)} }")
    if not same:
        print("  differences (nbgrader, trusted grader):", {s: diff[s] for s in sorted(set(diff) - explained)})
    return 0 if same else 1


def _solutions_use_helpers(path: Path) -> bool:
    import nbformat

    nb = nbformat.read(path, as_version=4)
    return any("helpers" in c.source for c in nb.cells
               if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution"))


def _sandbox_seconds(sandboxed: bool, reps: int) -> float:
    """Mean wall time to start the runner, run an empty notebook, get its report and stop it."""
    total = 0.0
    for _ in range(reps):
        start = time.perf_counter()
        box = Sandbox(sandboxed=sandboxed, deadline=time.monotonic() + 60, memory_mb=2048, cpu_seconds=60)
        box.send({"cells": [], "files": {}, "graded": [], "limits": box.limits, "cell_timeout": 30.0,
                  "call_timeout": 30.0})
        box.recv(60, "start")
        box.close()
        total += time.perf_counter() - start
    return total / reps


if __name__ == "__main__":
    sys.exit(main())
