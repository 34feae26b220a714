"""Command line: ``python -m autograder {grade,merge,report,bundle,dist,import-gradebook,import-submissions,
export-grades} ...`` (thin layer).

Exit status: 0 when the batch completed (whatever the grades), 2 for usage
errors (bad options, unknown assignment, missing folders) and when this computer
cannot sandbox student code (macOS, Windows, WSL 1, no bubblewrap: the message says
what works instead, in Chinese and English).
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
                   help="memory of each trusted grading worker beyond its start, MiB (its own cgroup where one can be "
                        "made, else its address space; default 4096; 0 = none); its "
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
    r.add_argument("--objectives", type=Path, default=None,
                   help="course objectives (TOML, e.g. docs/objectives.toml): add the 课程目标达成度 table "
                        "and write attainment.csv beside the report")
    r.add_argument("--exam", type=Path, default=None,
                   help="exam scores the lecturer entered: CSV 学号,试卷,1,2,… (needs --objectives)")
    r.add_argument("--threshold", type=float, default=None,
                   help="attainment a student must reach to count as attaining (default: the objectives "
                        "file's, else 0.6)")

    b = sub.add_parser("bundle", help="build the student bundle (no source/, no solutions)")
    b.add_argument("--out", required=True, type=Path, help="folder, or a path ending in .zip")
    b.add_argument("--course", type=Path, default=None, help="course root (default: this repository)")

    d = sub.add_parser("dist", help="the release packs: a student zip and a lecturer zip (slides, guide, grader)")
    d.add_argument("--out", type=Path, default=Path("dist"), help="folder for the two zips (default dist/)")
    d.add_argument("--course", type=Path, default=None, help="course root (default: this repository)")
    d.add_argument("--student-only", action="store_true", help="only the student pack (needs no built slides)")

    i = sub.add_parser("import-gradebook", help="put a grade run's scores, autograded notebooks and "
                                                "feedback into a course's nbgrader gradebook (Formgrader)")
    i.add_argument("--assignment", required=True, help="assignment name")
    i.add_argument("--out", required=True, type=Path, help="output folder of `grade`")
    i.add_argument("--course", required=True, type=Path, help="nbgrader course root holding gradebook.db")
    s = sub.add_parser("import-submissions", help="an LMS's bulk download (Moodle, Canvas, 学习通 ...) -> "
                                                  "DIR/<student>/<assignment>/<notebook>.ipynb")
    s.add_argument("download", type=Path, help="the LMS's 'download all submissions' zip, or the folder it unpacked to")
    s.add_argument("--assignment", required=True, help="assignment name (a folder of source/)")
    s.add_argument("--out", required=True, type=Path, help="submissions folder to fill (grade's --submissions)")
    s.add_argument("--pattern", default=None,
                   help="regular expression with a group (?P<id>...) naming the student in a file or folder "
                        "name, for LMSs other than Moodle and Canvas (optional groups: name, time)")
    s.add_argument("--roster", type=Path, default=None,
                   help="CSV mapping LMS accounts to student numbers: Moodle's grading worksheet, Canvas's "
                        "gradebook export, or columns lms_id,学号")
    s.add_argument("--course", type=Path, default=None, help="course root holding source/ (default: this repository)")

    e = sub.add_parser("export-grades", help="grades and feedback of a grade run in the forms an LMS imports")
    e.add_argument("out", type=Path, help="output folder of `grade` (holds grades.csv and feedback/)")
    e.add_argument("--format", required=True, choices=("plain", "moodle", "canvas"),
                   help="plain: 学号,成绩 (UTF-8 with BOM); moodle: grading worksheet; canvas: gradebook import")
    e.add_argument("--roster", type=Path, default=None,
                   help="Moodle: the grading worksheet downloaded from the assignment (filled in); Canvas: the "
                        "gradebook export (names, ids, sections)")
    e.add_argument("--submissions", type=Path, default=None,
                   help="the folder import-submissions filled (its manifest maps students to LMS accounts)")
    e.add_argument("--column", default=None, help="Canvas: the assignment's column title, e.g. 'laplace (12345)'")
    e.add_argument("--points", type=float, default=None,
                   help="the LMS assignment's maximum points: scores are rescaled to it (default: as graded)")
    return parser


#: Outcomes of import-submissions, in the order the summary lists them, with their Chinese names.
OUTCOMES = {"placed": "已放置", "older copy": "旧版本（保留了最新的）", "wrong assignment": "其他作业的笔记本",
            "not placed": "无法确定是谁的", "not a notebook": "不是笔记本", "refused": "拒绝读取", "ignored": "系统文件"}


def _import_summary(manifest: dict) -> str:
    counts = manifest["counts"]
    order = [k for k in OUTCOMES if k in counts] + sorted(set(counts) - set(OUTCOMES))
    lines = [f"{manifest['assignment']}: " + "，".join(f"{OUTCOMES.get(k, k)} {counts[k]}" for k in order)
             + " / " + ", ".join(f"{k} {counts[k]}" for k in order)]
    for record in sorted(manifest["records"], key=lambda r: (order.index(r["outcome"]), r["file"])):
        if record["outcome"] != "placed" or record.get("detail"):
            lines.append(f"  [{OUTCOMES.get(record['outcome'], '')} {record['outcome']}] {record['file']}"
                         + (f" -> {record['student']}" if record.get("student") else "")
                         + (f": {record['detail']}" if record.get("detail") else ""))
    by_lms_id = sorted(r["student"] for r in manifest["placed"] if r.get("how") in ("moodle id", "canvas id"))
    if by_lms_id:
        lines.append(f"  {len(by_lms_id)} 份按学习平台的账号编号放置（Moodle 的参与者编号每个作业不同）：用 --roster "
                     "给出该作业的评分工作表或成绩册导出，可换成学号 / placed under the LMS's account number "
                     "(Moodle's participant ids differ per assignment): give --roster (the grading worksheet or "
                     f"gradebook export) to use student numbers: {', '.join(by_lms_id)}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    # Each command imports only what it runs (lazy, for start-up: nbgrader, nbconvert and matplotlib
    # take seconds to import, and --help or a merge needs none of them).
    try:
        if args.command == "grade":
            if not args.no_sandbox:
                from autograder.hostcheck import platform_problem

                problem = platform_problem()
                if problem:  # before importing the grader: it needs Linux-only modules
                    print(problem, file=sys.stderr)
                    return 2
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

            if args.threshold is not None and not 0 < args.threshold <= 1:
                raise ValueError(f"--threshold {args.threshold:g}：应在 (0, 1] 内 / must be in (0, 1]")
            built = build_report(args.inputs, args.out, gradebook=args.gradebook, objectives=args.objectives,
                                 exam=args.exam, threshold=args.threshold)
            print(f"class report (instructors only) written to {args.out} in {built['seconds']:.1f} s",
                  file=sys.stderr)
            if built["attainment"] is not None:
                print(f"course-objective attainment written to {Path(built['path']).parent / 'attainment.csv'}",
                      file=sys.stderr)
        elif args.command == "bundle":
            from autograder.bundle import build_bundle

            path = build_bundle(args.out, course=args.course)
            print(f"student bundle written to {path}", file=sys.stderr)
        elif args.command == "dist":
            from autograder.dist import build_dist

            for path in build_dist(args.out, course=args.course, student_only=args.student_only):
                print(path)
        elif args.command == "import-gradebook":
            from autograder.nbgrader.gradebook import import_results

            for r in import_results(args.course, args.out, args.assignment):
                print(f"{r['student']}: {r['score']:g} in the gradebook (grades.csv {r['expected']:g}); "
                      f"autograded notebook from {r['autograded']}; {r['feedback']} feedback file(s)")
        elif args.command == "import-submissions":
            from autograder.lms.importer import import_submissions

            manifest = import_submissions(args.download, args.assignment, args.out, pattern=args.pattern,
                                          roster=args.roster, course=args.course)
            print(_import_summary(manifest), file=sys.stderr)
            print(f"清单 / manifest: {args.out / f'import_{args.assignment}.csv'}", file=sys.stderr)
        elif args.command == "export-grades":
            from autograder.lms.export import export_grades

            for summary in export_grades(args.out, args.format, roster=args.roster, submissions=args.submissions,
                                         column=args.column, points=args.points):
                print(f"{summary['assignment']}: 成绩 / grades {summary['grades']}; "
                      f"反馈 / feedback pages {len(summary['feedback'])} in {args.out / 'lms' / 'feedback'}",
                      file=sys.stderr)
                if summary["unmatched"]:
                    print(f"  未写入（不知道学习平台账号）/ not written (no LMS account known): "
                          f"{', '.join(summary['unmatched'])}", file=sys.stderr)
                if summary["errors"]:
                    print(f"  评分出错的行（按已通过的测试给分）/ rows with grading errors (scored by the tests "
                          f"that ran): {', '.join(summary['errors'])}", file=sys.stderr)
    except (ValueError, FileNotFoundError) as exc:
        parser.error(str(exc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
