"""Command line: ``python -m autograder {grade,merge,report,bundle,import-gradebook} ...`` (thin layer).

Exit status: 0 when the batch completed (whatever the grades), 2 for usage
errors (bad options, unknown assignment, missing folders).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m autograder",
                                     description="Trusted headless grading of the course's nbgrader assignments.")
    sub = parser.add_subparsers(dest="command", required=True)

    g = sub.add_parser("grade", help="grade DIR/<student>/<assignment>/*.ipynb")
    g.add_argument("--assignment", required=True, help="assignment name (a folder of source/)")
    g.add_argument("--submissions", required=True, type=Path,
                   help="folder laid out like nbgrader's submitted/: <student>/<assignment>/*.ipynb")
    g.add_argument("--out", required=True, type=Path, help="output folder")
    g.add_argument("--jobs", type=int, default=2, help="parallel workers (default 2)")
    g.add_argument("--timeout", type=int, default=120,
                   help="seconds per cell and per call of a student function (the cell or call is "
                        "interrupted, grading goes on); a submission still running at TIMEOUT + 20 s "
                        "is killed (default 120)")
    g.add_argument("--submission-timeout", type=int, default=None,
                   help="seconds for the whole notebook in each of its sandboxes, past which it is killed "
                        "and scores 0 (default TIMEOUT + 20)")
    g.add_argument("--sleep-limit", type=int, default=30,
                   help="wall-clock seconds a notebook's sandboxes may spend asleep or blocked in all "
                        "(sleep, a pipe they do not read), past which it is killed and the row says "
                        "timeout; computing is never counted, however busy the machine (default 30)")
    g.add_argument("--worker-memory-mb", type=int, default=4096,
                   help="address space of each trusted grading worker beyond its start, MiB (default 4096; 0 = none); its "
                        "CPU per submission is 2 x the notebook's budget + 60 s; past either, that "
                        "submission's row is an error and grading goes on")
    g.add_argument("--memory-mb", type=int, default=2048,
                   help="address-space cap of the student's sandbox, MiB (default 2048; 0 = none)")
    g.add_argument("--seed", type=int, default=None,
                   help="run seed (default: drawn and recorded in report.json); pass it to reproduce")
    g.add_argument("--shard", default=None, help="K/N: grade only the students at positions K-1, K-1+N, ... of the "
                        "sorted student ids (round-robin; shards are disjoint and cover everyone)")
    g.add_argument("--course", type=Path, default=None,
                   help="course root holding source/ (default: this repository)")
    g.add_argument("--resume", action="store_true",
                   help="keep the rows already in OUT (same assignment, source checksum and seed) "
                        "and grade only the missing students")
    g.add_argument("--no-sandbox", action="store_true",
                   help="run student code WITHOUT bubblewrap (macOS, containers without user "
                        "namespaces): only on a throw-away machine; every row says unsandboxed")
    g.add_argument("--quiet", action="store_true", help="no progress on stderr")

    m = sub.add_parser("merge", help="join the outputs of several shards")
    m.add_argument("inputs", nargs="+", type=Path, help="output folders of grade runs")
    m.add_argument("--out", required=True, type=Path, help="merged output folder")

    r = sub.add_parser("report", help="the class report: one HTML page over grading outputs (instructors only)")
    r.add_argument("inputs", nargs="+", type=Path, help="output folders of grade runs (shards or assignments)")
    r.add_argument("--out", required=True, type=Path, help="HTML file to write")
    r.add_argument("--gradebook", type=Path, default=None,
                   help="nbgrader gradebook.db: use the final scores after manual grading")

    b = sub.add_parser("bundle", help="build the student bundle (no source/, no solutions)")
    b.add_argument("--out", required=True, type=Path, help="folder, or a path ending in .zip")
    b.add_argument("--course", type=Path, default=None, help="course root (default: this repository)")

    i = sub.add_parser("import-gradebook", help="put a grade run's scores, autograded notebooks and "
                                                "feedback into a course's nbgrader gradebook (Formgrader)")
    i.add_argument("--assignment", required=True, help="assignment name")
    i.add_argument("--out", required=True, type=Path, help="output folder of `grade`")
    i.add_argument("--course", required=True, type=Path, help="nbgrader course root holding gradebook.db")
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    # Each command imports only what it runs (lazy, for start-up: nbgrader, nbconvert and matplotlib
    # take seconds to import, and --help or a merge needs none of them).
    try:
        if args.command == "grade":
            from autograder.grade import grade

            grade(assignment=args.assignment, submissions=args.submissions, out=args.out,
                  jobs=args.jobs, timeout=args.timeout, memory_mb=args.memory_mb or None,
                  seed=args.seed, shard=args.shard, course=args.course, quiet=args.quiet,
                  resume=args.resume, sandbox=not args.no_sandbox, submission_timeout=args.submission_timeout,
                  sleep_limit=args.sleep_limit, worker_memory_mb=args.worker_memory_mb or None)
        elif args.command == "merge":
            from autograder.reports.report import merge

            merged = merge(args.inputs, args.out)
            print(f"merged {len(merged['submissions'])} rows into {args.out / 'grades.csv'}",
                  file=sys.stderr)
        elif args.command == "report":
            from autograder.reports.classreport import build_report

            built = build_report(args.inputs, args.out, gradebook=args.gradebook)
            print(f"class report (instructors only) written to {args.out} in {built['seconds']:.1f} s",
                  file=sys.stderr)
        elif args.command == "bundle":
            from autograder.bundle import build_bundle

            path = build_bundle(args.out, course=args.course)
            print(f"student bundle written to {path}", file=sys.stderr)
        elif args.command == "import-gradebook":
            from autograder.nbgrader.gradebook import import_results

            for r in import_results(args.course, args.out, args.assignment):
                print(f"{r['student']}: {r['score']:g} in the gradebook (grades.csv {r['expected']:g}); "
                      f"autograded notebook from {r['autograded']}; {r['feedback']} feedback file(s)")
    except (ValueError, FileNotFoundError) as exc:
        parser.error(str(exc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
