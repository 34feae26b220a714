"""Grade one assignment for a folder of submissions, over ``jobs`` workers.

:func:`grade` is what the CLI and the tests call. It prepares one template
course root (``nbgrader generate_assignment`` from ``source/``), starts
``jobs`` long-lived :mod:`autograder.worker` processes (started first: they
warm up while the template is built), hands them one
student at a time, and writes ``grades.csv``, ``report.json`` and
``feedback/``. A worker that dies or overruns its deadline is killed (with
its kernel) and replaced; its student gets an ``error`` row. Every student
folder gets exactly one row.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import secrets
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import deque
from datetime import datetime, timezone
from pathlib import Path

from autograder import report, shard as sharding
from autograder.worker import WATCHDOG_GRACE, finalize, prepare_template

#: Extra seconds a worker gets per submission beyond notebook + recheck limits.
DEADLINE_SLACK = 90


def default_course() -> Path:
    """The course root: the repository that holds this package."""
    return Path(__file__).resolve().parents[1]


def student_seed(run_seed: int, assignment: str, student: str) -> int:
    """Per-submission seed, a function of the run seed only (not of jobs or shards)."""
    digest = hashlib.sha256(f"{run_seed}/{assignment}/{student}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def internal_id(student: str) -> str:
    """A student id nbgrader accepts whatever the folder is called."""
    return "s" + hashlib.sha1(student.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def list_students(submissions: Path) -> list[str]:
    return sorted(p.name for p in Path(submissions).iterdir()
                  if p.is_dir() and not p.name.startswith("."))


def _log(message: str, quiet: bool) -> None:
    if not quiet:
        print(message, file=sys.stderr, flush=True)


class _Worker:
    """One worker process and the task it is grading."""

    def __init__(self, number: int, *, template, tmp, assignment, timeout, memory_mb, log,
                 run_recheck=True, zygote=True):
        self.workdir = Path(tmp) / f"worker-{number}"
        cmd = [sys.executable, "-m", "autograder.worker", "--template", str(template),
               "--workdir", str(self.workdir), "--assignment", assignment,
               "--timeout", str(timeout)]
        if memory_mb:
            cmd += ["--memory-mb", str(memory_mb)]
        if not run_recheck:
            cmd.append("--no-recheck")
        if not zygote:
            cmd.append("--no-zygote")
        env = dict(os.environ)
        env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=log, env=env, start_new_session=True)
        self.buffer = b""
        self.ready = False
        self.task = None
        self.deadline = time.monotonic() + 300  # start-up

    def send(self, task: dict, seconds: float) -> None:
        self.task = task
        self.deadline = time.monotonic() + seconds
        self.proc.stdin.write((json.dumps(task) + "\n").encode())
        self.proc.stdin.flush()

    def lines(self) -> tuple[list[dict], bool]:
        """Complete JSON lines available now, and whether the stream ended."""
        chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
        self.buffer += chunk
        out = []
        while b"\n" in self.buffer:
            line, self.buffer = self.buffer.split(b"\n", 1)
            if line.strip():
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
        return out, not chunk

    def kill(self) -> None:
        if self.task is not None:
            pidfile = self.workdir / f"root-{self.task['sid']}" / "kernel.pid"
            try:
                os.killpg(int(pidfile.read_text()), signal.SIGKILL)
            except (OSError, ValueError):
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        self.proc.wait()


def _failed(task: dict, assignment: str, reason: str) -> dict:
    return finalize({"student": task["student"], "assignment": assignment, "seed": task["seed"],
                     "cells": [], "flags": [], "errors": [reason], "repairs": [], "notes": [],
                     "feedback": [], "seconds": None})


def _run_pool(tasks, *, jobs, template, tmp, assignment, timeout, memory_mb, quiet, prepare,
              run_recheck=True, zygote=True):
    """Grade ``tasks`` over ``jobs`` workers; ``prepare()`` builds the template meanwhile.

    Workers start first (their imports take seconds) and read the template
    only when their first task arrives; ``prepare`` returns the list of test
    cells used for rows that have no scores at all.
    """
    per_task = 2 * timeout + WATCHDOG_GRACE + DEADLINE_SLACK
    pending = deque(tasks)
    results: dict[int, dict] = {}
    log = open(Path(tmp) / "workers.log", "ab")
    selector = selectors.DefaultSelector()
    counter = [0]

    def spawn():
        counter[0] += 1
        worker = _Worker(counter[0], template=template, tmp=tmp, assignment=assignment,
                         timeout=timeout, memory_mb=memory_mb, log=log, run_recheck=run_recheck,
                         zygote=zygote)
        selector.register(worker.proc.stdout, selectors.EVENT_READ, worker)
        return worker

    def retire(worker):
        selector.unregister(worker.proc.stdout)
        worker.kill()

    def record(task, result):
        if not result.get("cells"):
            # Scoreless rows still list every test cell with 0 points earned.
            result["cells"] = [dict(cell, nbgrader=0.0, recheck=0.0, score=0.0,
                                    recheck_error=None) for cell in expected_cells]
            result = finalize(result)
        results[task["index"]] = result
        _log(f"[{len(results)}/{len(tasks)}] {task['student']}: {result['status'][:100]}", quiet)

    workers = [spawn() for _ in range(min(jobs, len(tasks)))]
    try:
        expected_cells = prepare()
        while len(results) < len(tasks):
            for worker in list(workers):
                if worker.ready and worker.task is None and pending:
                    worker.send(pending.popleft(), per_task)
            active = [w for w in workers if w.task is not None or not w.ready]
            if not active:
                break
            wait = max(0.0, min(w.deadline for w in active) - time.monotonic())
            events = selector.select(timeout=wait)
            for key, _ in events:
                worker = key.data
                lines, ended = worker.lines()
                for line in lines:
                    if line.get("ready"):
                        worker.ready = True
                    elif worker.task is not None and line.get("task") == worker.task["index"]:
                        line.pop("task", None)
                        record(worker.task, line)
                        worker.task = None
                if ended:
                    if worker.task is not None:
                        record(worker.task, _failed(worker.task, assignment,
                                                    "grading process died"))
                        worker.task = None
                    elif not worker.ready:
                        raise RuntimeError(f"worker failed to start; see {Path(tmp) / 'workers.log'}")
                    retire(worker)
                    workers.remove(worker)
                    if pending:
                        workers.append(spawn())
            now = time.monotonic()
            for worker in list(workers):
                if worker in active and now >= worker.deadline:
                    if worker.task is not None:
                        record(worker.task, _failed(worker.task, assignment,
                                                    f"timeout: grading exceeded {per_task} s"))
                        worker.task = None
                    retire(worker)
                    workers.remove(worker)
                    if pending:
                        workers.append(spawn())
    finally:
        for worker in workers:
            try:
                worker.proc.stdin.close()
            except OSError:
                pass
            try:
                worker.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                worker.kill()
        log.close()
    return [results[t["index"]] for t in tasks]


def grade(*, assignment: str, submissions, out, jobs: int = 2, timeout: int = 120,
          memory_mb: int | None = 2048, seed: int | None = None, shard: str | None = None,
          course=None, quiet: bool = False, keep_temp: bool = False,
          recheck: bool = True, zygote: bool = True) -> dict:
    """Grade ``submissions/<student>/<assignment>/`` into ``out``.

    Returns the report (also written to ``out/report.json``). ``seed``
    reproduces an earlier run; ``shard="K/N"`` grades one slice of students.
    ``recheck=False`` skips the independent re-run of the tests (trusted
    submissions or benchmarks only: tampering is then flagged, not undone).
    ``zygote=False`` starts every kernel as a new interpreter (slower).
    """
    submissions, out = Path(submissions), Path(out)
    course = Path(course) if course else default_course()
    if jobs < 1:
        raise ValueError(f"--jobs must be >= 1; got {jobs}")
    if timeout < 1:
        raise ValueError(f"--timeout must be >= 1 second; got {timeout}")
    if not submissions.is_dir():
        raise ValueError(f"--submissions {submissions} is not a folder")
    if not (course / "source" / assignment).is_dir():
        raise ValueError(f"unknown assignment {assignment!r}: no folder {course / 'source' / assignment}")
    students = list_students(submissions)
    shard_kn = sharding.parse_shard(shard) if shard else None
    if shard_kn:
        students = sharding.select_shard(students, *shard_kn)
    run_seed = int(seed) if seed is not None else secrets.randbits(32)
    started = time.time()
    out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="autograder-"))

    def prepare() -> list[dict]:
        import nbformat

        from autograder.sanitize import is_test, nbgrader_meta

        template = prepare_template(course, assignment, tmp / "template", timeout=timeout)
        cells = []
        for path in sorted((template / "release" / assignment).glob("*.ipynb")):
            nb = nbformat.read(path, as_version=4)
            cells += [{"notebook": path.name, "grade_id": nbgrader_meta(c)["grade_id"],
                       "points": float(nbgrader_meta(c).get("points") or 0)}
                      for c in nb.cells if is_test(c)]
        return cells

    try:
        for s in students:  # no stale feedback from an earlier run into the same OUT
            shutil.rmtree(out / "feedback" / s / assignment, ignore_errors=True)
        tasks = [{"index": i, "student": s, "sid": internal_id(s),
                  "src": str(submissions / s / assignment),
                  "seed": student_seed(run_seed, assignment, s),
                  "feedback_dir": str(out / "feedback" / s / assignment)}
                 for i, s in enumerate(students)]
        _log(f"grading {len(tasks)} submission(s) of {assignment} with {jobs} worker(s), "
             f"seed {run_seed}", quiet)
        results = []
        if tasks:
            results = _run_pool(tasks, jobs=jobs, template=tmp / "template", tmp=tmp,
                                assignment=assignment, timeout=timeout, memory_mb=memory_mb,
                                quiet=quiet, prepare=prepare, run_recheck=recheck, zygote=zygote)
        else:
            prepare()  # still check that the assignment builds
    finally:
        if not keep_temp:
            shutil.rmtree(tmp, ignore_errors=True)
    import nbgrader

    run = {"assignment": assignment, "seed": run_seed, "shard": shard, "jobs": jobs,
           "recheck": recheck, "zygote": zygote,
           "timeout": timeout, "memory_mb": memory_mb, "students": len(students),
           "started": datetime.fromtimestamp(started, timezone.utc).isoformat(),
           "duration_s": round(time.time() - started, 2),
           "nbgrader": nbgrader.__version__, "python": platform.python_version(),
           "reproduce": (f"python -m autograder grade --assignment {assignment} "
                         f"--submissions DIR --out DIR --seed {run_seed}"
                         + (f" --shard {shard}" if shard else ""))}
    report.write_grades(out / "grades.csv", results)
    report.write_report(out / "report.json", [run], results)
    _log(f"wrote {out / 'grades.csv'} ({len(results)} rows) in {run['duration_s']} s", quiet)
    return {"runs": [run], "submissions": results}
