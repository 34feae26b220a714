"""Benchmark: the parallel autograder against plain sequential ``nbgrader autograde``.

``python -m autograder.bench [--n 40] [--jobs 2] [--assignment laplace]``

Builds ``n`` honest submissions (cycling through the issue-3 corpus in
``tests/corpus``: correct variants and realistic mistakes; without the
corpus, two thirds reference solution and one third a wrong
``laplace_noise``), then times, on the same submissions:

1. plain nbgrader: one ``nbgrader autograde`` command in a course root with a
   minimal ``nbgrader_config.py`` (students graded one after another), then
   one ``nbgrader generate_feedback`` command;
2. ``autograder grade --jobs N`` (sanitize, autograde, recheck, feedback);
3. the same with ``--no-recheck`` (nbgrader's own work only, in parallel).

It prints the wall times, the ratios, and whether every student got the same
score from nbgrader and from the autograder. A script, not a test: run it on
a quiet machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CONFIG = """c = get_config()
c.CourseDirectory.root = {root!r}
c.CourseDirectory.course_id = "dp-course"
c.OverwriteCells.add_missing_cells = True
c.Execute.timeout = {timeout}
c.Exchange.root = {exchange!r}
"""


def _submissions(template: Path, assignment: str, out: Path, n: int) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "autograder"))
    import copy

    import autograder_cases as cases
    import nbformat

    name = f"{assignment}.ipynb"
    release = nbformat.read(template / "release" / assignment / name, as_version=4)
    source = nbformat.read(template / "source" / assignment / name, as_version=4)
    good = cases.reference_solutions(source)
    wrong = dict(good)
    if assignment == "laplace":
        wrong["laplace_noise"] = cases.WRONG_LAPLACE_NOISE
    variants = [good, good, wrong]
    corpus_dir = Path(__file__).resolve().parents[1] / "tests" / "corpus"
    if (corpus_dir / "manifest.json").is_file():
        import importlib.util

        spec = importlib.util.spec_from_file_location("corpus_build", corpus_dir / "build.py")
        corpus = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(corpus)
        variants = [dict(good, **entry["solutions"]) for entry in corpus.corpus_entries(assignment)]
    for i in range(n):
        nb = cases._fill(copy.deepcopy(release), variants[i % len(variants)])
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
    parser.add_argument("--skip-no-recheck", action="store_true")
    args = parser.parse_args(argv)

    from autograder.grade import default_course, grade
    from autograder.worker import ensure_venv_on_path, prepare_template

    ensure_venv_on_path()
    course = default_course()
    tmp = Path(tempfile.mkdtemp(prefix="autograder-bench-"))
    try:
        template = prepare_template(course, args.assignment, tmp / "template", timeout=args.timeout)
        subs = tmp / "submitted"
        _submissions(template, args.assignment, subs, args.n)

        root = tmp / "plain"
        shutil.copytree(template, root)
        shutil.copytree(subs, root / "submitted")
        (root / "nbgrader_config.py").write_text(CONFIG.format(
            root=str(root), timeout=args.timeout, exchange=str(tmp / "exchange")), encoding="utf-8")
        env = dict(os.environ, MPLBACKEND="Agg")
        nbgrader = [str(Path(sys.executable).parent / "nbgrader")]
        start = time.perf_counter()
        subprocess.run(nbgrader + ["autograde", args.assignment, "--force"], cwd=root, env=env,
                       check=True, capture_output=True)
        plain_autograde = time.perf_counter() - start
        start = time.perf_counter()
        subprocess.run(nbgrader + ["generate_feedback", args.assignment, "--force"], cwd=root,
                       env=env, check=True, capture_output=True)
        plain_feedback = time.perf_counter() - start
        plain = _nbgrader_scores(root, args.assignment)

        runs = {}
        for label, recheck in (("full", True), ("no-recheck", False)):
            if label == "no-recheck" and args.skip_no_recheck:
                continue
            start = time.perf_counter()
            rep = grade(assignment=args.assignment, submissions=subs, out=tmp / f"out-{label}",
                        jobs=args.jobs, timeout=args.timeout, quiet=True, recheck=recheck)
            runs[label] = (time.perf_counter() - start, rep)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print(f"{args.n} submissions of {args.assignment}, {os.cpu_count()} CPUs")
    print(f"plain nbgrader autograde (sequential):        {plain_autograde:7.1f} s")
    print(f"plain nbgrader autograde + generate_feedback: {plain_autograde + plain_feedback:7.1f} s")
    same_all = True
    for label, (seconds, rep) in runs.items():
        ours = {r["student"]: r["score"] for r in rep["submissions"]}
        same = ours == plain
        same_all &= same
        print(f"autograder --jobs {args.jobs} ({label}): {seconds:7.1f} s   "
              f"speed-up vs autograde: {plain_autograde / seconds:4.2f}x   "
              f"vs autograde+feedback: {(plain_autograde + plain_feedback) / seconds:4.2f}x   "
              f"identical grades: {same}")
        if not same:
            diff = {s: (plain.get(s), ours.get(s)) for s in sorted(set(plain) | set(ours))
                    if plain.get(s) != ours.get(s)}
            print("  differences (nbgrader, autograder):", diff)
    return 0 if same_all else 1


if __name__ == "__main__":
    sys.exit(main())
