"""Benchmark: what a submission costs the trusted, sandboxed grader, and plain ``nbgrader autograde``.

``python -m autograder.bench [--assignment laplace|all] [--jobs 2] [--copies 9] [--n 40] [--no-nbgrader]``

For each assignment it first prints the per-submission figure: the wall time of grading 1
and ``--copies`` reference submissions, and the slope, i.e. what each more submission of a
class costs at ``--jobs``. Then it builds ``n`` mixed submissions (cycling through a corpus
read as data, ``tests/corpus`` of the course by default or ``--corpus DIR``: correct variants
and realistic mistakes; without one, two thirds reference solution and one third a wrong
``laplace_noise``) and times, in one run, on the same submissions:

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

from autograder import corpus
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


def _corpus_variants(assignment: str, corpus_dir: Path | None) -> list[dict[str, str]] | None:
    """The solutions of ``corpus_dir``'s entries for ``assignment`` (read as data), else None."""
    if corpus_dir is None or not (corpus_dir / "manifest.json").is_file():
        return None
    if assignment not in corpus.load_manifest(corpus_dir):
        return None
    return [entry["solutions"] for entry in corpus.corpus_entries(corpus_dir, assignment)]


def _submissions(template: Path, assignment: str, out: Path, n: int, corpus_dir: Path | None = None,
                 reference_only: bool = False) -> None:
    name = f"{assignment}.ipynb"
    release = nbformat.read(template / "release" / assignment / name, as_version=4)
    source = nbformat.read(template / "source" / assignment / name, as_version=4)
    good = _reference_solutions(source)
    wrong = dict(good)
    if assignment == "laplace":
        wrong["laplace_noise"] = WRONG_LAPLACE_NOISE
    variants = [good, good, wrong]
    variants_of_corpus = None if reference_only else _corpus_variants(assignment, corpus_dir)
    if reference_only:
        variants = [good]
    elif variants_of_corpus:
        variants = [dict(good, **solutions) for solutions in variants_of_corpus]
    for i in range(n):
        nb = _fill(release, variants[i % len(variants)])
        folder = out / f"student{i:03d}" / assignment
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / name)


def _nbgrader_scores(root: Path, assignment: str) -> dict[str, float]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        return {s.student.id: float(s.score) for s in gb.assignment_submissions(assignment)}


#: The six graded assignments in the course's order (``--assignment all``).
ASSIGNMENTS = ("laplace", "exponential", "randomized_response", "private_mean", "privacy_budget",
               "local_frequency")


def marginal_seconds(course: Path, assignment: str, tmp: Path, *, jobs: int, timeout: int,
                     copies: int) -> dict:
    """Wall time per extra reference submission: grade 1 copy, then ``copies``; the slope.

    A run's fixed cost (starting workers, building the spec, the class report) is about the
    same for 1 and for ``copies`` submissions, so ``(t_copies - t_1) / (copies - 1)`` is what
    each more submission of a class costs. Every copy must score full marks: a slope measured
    on failing submissions would flatter the grader.
    """
    template = tmp / f"template-{assignment}"
    for kind in ("source", "release"):
        shutil.copytree(course / kind / assignment, template / kind / assignment)
    times, full = {}, True
    for n in (1, copies):
        subs = tmp / f"reference-{assignment}-{n}"
        _submissions(template, assignment, subs, n, reference_only=True)
        start = time.perf_counter()
        rep = grade(assignment=assignment, submissions=subs, out=tmp / f"out-{assignment}-{n}", jobs=jobs,
                    timeout=timeout, quiet=True, sandbox=True, course=course)
        times[n] = time.perf_counter() - start
        full = full and all(r["score"] == r["max_score"] and r["status"] == "ok" for r in rep["submissions"])
    return {"one": times[1], "many": times[copies], "copies": copies,
            "per_submission": (times[copies] - times[1]) / (copies - 1), "full_marks": full,
            **cpu_seconds(rep["submissions"])}


def cpu_seconds(rows) -> dict:
    """Median CPU seconds per submission of ``rows`` (a report's): the sandboxes' (the student's code
    and its runner, counted by their cgroups) and the trusted worker's (checks, draws served,
    feedback). Unlike wall time, these do not depend on what else the machine runs: at ``--jobs N``
    on N free cores, a submission costs about their sum / N of wall time."""
    sandbox, judge = [], []
    for row in rows:
        for notebook in (row.get("timings") or {}).values():
            cpu = notebook.get("cpu") or {}
            if None not in (cpu.get("visible"), cpu.get("hidden"), notebook.get("judge_cpu")):
                # the third sandbox (replayed draws) where there was one
                sandbox.append(cpu["visible"] + cpu["hidden"] + (cpu.get("replays") or 0.0))
                judge.append(notebook["judge_cpu"])
    middle = (lambda xs: sorted(xs)[len(xs) // 2] if xs else float("nan"))
    return {"sandbox_cpu": middle(sandbox), "judge_cpu": middle(judge)}


def compare_nbgrader(course: Path, assignment: str, tmp: Path, args, corpus_dir: Path | None) -> bool:
    """Grade the same ``--n`` submissions with plain ``nbgrader autograde`` and with the grader."""
    template = tmp / f"mixed-{assignment}"
    for kind in ("source", "release"):
        shutil.copytree(course / kind / assignment, template / kind / assignment)
    subs = tmp / f"submitted-{assignment}"
    _submissions(template, assignment, subs, args.n, corpus_dir=corpus_dir)

    root = tmp / f"plain-{assignment}"
    shutil.copytree(template, root)
    shutil.copytree(subs, root / "submitted")
    (root / "nbgrader_config.py").write_text(CONFIG.format(
        root=str(root), timeout=args.timeout, exchange=str(tmp / "exchange")), encoding="utf-8")
    env = dict(os.environ, MPLBACKEND="Agg")
    nbgrader = [str(Path(sys.executable).parent / "nbgrader")]
    subprocess.run(nbgrader + ["generate_assignment", assignment, "--force"], cwd=root, env=env,
                   check=True, capture_output=True)
    start = time.perf_counter()
    subprocess.run(nbgrader + ["autograde", assignment, "--force"], cwd=root, env=env,
                   check=True, capture_output=True)
    plain_autograde = time.perf_counter() - start
    plain = _nbgrader_scores(root, assignment)
    uses_helpers = {p.parts[-3] for p in subs.rglob("*.ipynb") if _solutions_use_helpers(p)}

    start = time.perf_counter()
    rep = grade(assignment=assignment, submissions=subs, out=tmp / f"out-mixed-{assignment}", jobs=args.jobs,
                timeout=args.timeout, quiet=True, sandbox=True, course=course)
    ours_seconds = time.perf_counter() - start

    ours = {r["student"]: r["score"] for r in rep["submissions"]}
    diff = {s: (plain.get(s), ours.get(s)) for s in sorted(set(plain) | set(ours)) if plain.get(s) != ours.get(s)}
    # Expected: code that imports helpers (the reference answers) runs in nbgrader's kernel but
    # cannot import it in the sandbox, so those functions fail every test instead of one.
    explained = {s for s in diff if s in uses_helpers}
    same = not set(diff) - explained
    print(f"  {args.n} mixed submissions (corpus entries when a corpus is given):")
    print(f"  plain nbgrader autograde (sequential):           {plain_autograde:7.1f} s")
    print(f"  trusted grader, sandbox on, --jobs {args.jobs}:            {ours_seconds:7.1f} s   "
          f"speed-up: {plain_autograde / ours_seconds:4.2f}x   identical grades: {same}")
    if explained:
        print(f"  expected differences (solution imports helpers, not importable in the sandbox): "
              f"{ {s: diff[s] for s in sorted(explained)} }")
    if not same:
        print("  differences (nbgrader, trusted grader):", {s: diff[s] for s in sorted(set(diff) - explained)})
    return same


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.bench")
    parser.add_argument("--assignment", default="laplace",
                        help="an assignment of source/, or 'all' for the six in the course's order")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=int, default=120)
    parser.add_argument("--copies", type=int, default=9,
                        help="reference submissions graded for the per-submission figure (against 1; default 9)")
    parser.add_argument("--n", type=int, default=40, help="mixed submissions for the nbgrader comparison")
    parser.add_argument("--no-nbgrader", action="store_true", help="skip the plain-nbgrader comparison")
    parser.add_argument("--reps", type=int, default=20,
                        help="sandboxes started for the sandbox's own cost (0: skip)")
    parser.add_argument("--corpus", type=Path, default=None,
                        help="a corpus folder (manifest.json, <assignment>/<function>/<variant>.py) whose "
                             "entries make the mixed submissions (default: tests/corpus of the course "
                             "when it has one)")
    args = parser.parse_args(argv)
    if args.copies < 2:
        parser.error("--copies must be at least 2")

    bin_dir = str(Path(sys.executable).parent)
    os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")
    course = default_course()
    corpus_dir = args.corpus or (course / "tests" / "corpus")
    assignments = ASSIGNMENTS if args.assignment == "all" else (args.assignment,)
    unknown = [a for a in assignments if not (course / "source" / a).is_dir()]
    if unknown:
        parser.error(f"no such assignment in {course / 'source'}: {', '.join(unknown)}")
    print(f"{os.cpu_count()} CPUs, --jobs {args.jobs}")
    ok = True
    tmp = Path(tempfile.mkdtemp(prefix="autograder-bench-"))
    try:
        for assignment in assignments:
            m = marginal_seconds(course, assignment, tmp, jobs=args.jobs, timeout=args.timeout, copies=args.copies)
            ok = ok and m["full_marks"]
            print(f"{assignment}: 1 reference submission {m['one']:6.1f} s, {m['copies']} of them "
                  f"{m['many']:6.1f} s: {m['per_submission']:5.2f} s per submission "
                  f"(1,000 in {m['per_submission'] * 1000 / 60:4.1f} min); all full marks: {m['full_marks']}")
            print(f"  CPU per submission (median): sandboxes {m['sandbox_cpu']:.2f} s, trusted worker "
                  f"{m['judge_cpu']:.2f} s; on {args.jobs} free cores about "
                  f"{(m['sandbox_cpu'] + m['judge_cpu']) / args.jobs:.2f} s of wall time each")
            if not args.no_nbgrader:
                ok = compare_nbgrader(course, assignment, tmp, args, corpus_dir) and ok
        if args.reps > 0:
            cost = {label: _sandbox_seconds(sandboxed, args.reps) for label, sandboxed in
                    (("bubblewrap", True), ("plain process", False))}
            print(f"student runner started, empty notebook, stopped: {cost['bubblewrap'] * 1000:7.0f} ms in "
                  f"bubblewrap, {cost['plain process'] * 1000:.0f} ms without: the sandbox costs "
                  f"{(cost['bubblewrap'] - cost['plain process']) * 1000:.0f} ms per submission")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0 if ok else 1


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
