"""Grade one assignment for a folder of submissions, over ``jobs`` trusted workers.

:func:`grade` is what the CLI and the tests call. It lists the submissions
(one row per student folder, whatever its name), builds the assignment
spec (``source/`` with hidden tests and nbgrader's release version, held in
memory; the temporary folder nbgrader needs is removed at once, on every
exit path), starts ``jobs`` :mod:`autograder.worker` processes and hands
them one student at a time. Each worker runs the student's cells in a
bubblewrap sandbox and the tests in itself. Everything a worker answers is
validated here: a malformed or missing answer, a dead or overrunning worker
gives that student an ``error:`` row and a fresh worker; no other row is
touched. ``grades.csv`` and ``report.json`` are rewritten atomically as rows
arrive, so ``--resume`` can finish a batch that was killed.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
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

from autograder.hostcheck import no_sandbox_message
from autograder.jail import (SLEEP_LIMIT, WALL_FACTOR, WALL_SLACK, isolation, probe, remove_left_by, sweep_stale,
                             worker_group)
from autograder.reports import report, shard as sharding
from autograder.scorer import DIAGNOSIS
from autograder.students import assignment_folder, list_submissions
from autograder.worker import IN_GROUP, MAX_RESULT, SLACK, expected_cells

#: Longest line accepted from a worker (its own cap, worker.MAX_RESULT, plus slack).
MAX_LINE = MAX_RESULT + (1 << 20)
#: Largest feedback page or autograded notebook accepted (characters).
MAX_TEXT = 24 << 20
#: Largest --timeout and --submission-timeout (one day): the judge's waits are derived from them
#: (WALL_FACTOR x a notebook's budget per submission), and a wait past ~24.8 days overflows epoll
#: (OverflowError in the middle of a run, an empty report.json left behind).
MAX_SECONDS = 24 * 3600
#: Address space of each trusted grading worker (MiB, ``--worker-memory-mb``): an honest grading
#: worker peaks at a few hundred MiB; the judge keeps at most 2^24 served draws per call.
WORKER_MEMORY_MB = 4096
#: CPU seconds of a trusted worker per submission: this many times the notebooks' CPU budgets plus
#: the slack (the judge's checks and the feedback cost a few seconds for an honest submission).
WORKER_CPU_FACTOR, WORKER_CPU_SLACK = 2, 60
UNSANDBOXED = " [unsandboxed]"
#: The command of a trusted grading worker (a test puts a worker that overruns its memory in its place).
WORKER_COMMAND = [sys.executable, "-m", "autograder.worker"]
#: Memory a worker's cgroup allows while it starts (imports, the spec), beyond ``--worker-memory-mb``;
#: once it is ready the cap becomes what it then holds plus ``--worker-memory-mb`` (as its RLIMIT_AS).
WORKER_START_MB = 1024


def default_course() -> Path:
    """The course root: the repository that holds this package."""
    return Path(__file__).resolve().parents[1]


def student_seed(run_seed: int, assignment: str, student: str) -> int:
    """Per-submission seed, a function of the run seed only (not of jobs or shards)."""
    digest = hashlib.sha256(f"{run_seed}/{assignment}/{student}".encode("utf-8", "surrogateescape")).digest()
    return int.from_bytes(digest[:4], "big")


def _alembic_head_in_process() -> None:
    """Let nbgrader read its gradebook schema's head in this process.

    ``generate_assignment`` creates a fresh gradebook, and nbgrader's ``get_alembic_version``
    asks for the schema head by running the ``alembic`` executable: a new Python that imports
    SQLAlchemy, 1.7 s of CPU at the start of every grading run. The head is read here from the
    same migration scripts with alembic's own ``ScriptDirectory`` (0.1 s); should that fail
    (another nbgrader layout), nbgrader's own way stays.
    """
    import nbgrader
    import nbgrader.api

    original = nbgrader.api.get_alembic_version
    if getattr(original, "in_process", False):
        return

    def get_alembic_version() -> str:
        try:
            from alembic.script import ScriptDirectory

            head = ScriptDirectory(os.path.join(os.path.dirname(nbgrader.__file__), "alembic")).get_current_head()
        except Exception:  # noqa: BLE001 - nbgrader's subprocess gives the same answer, slower
            head = None
        return head if isinstance(head, str) and head else original()

    get_alembic_version.in_process = True
    nbgrader.api.get_alembic_version = get_alembic_version


def prepare_spec(course: Path, assignment: str, *, timeout: int, memory_mb, sandboxed: bool,
                 submission_seconds: float, limits: dict | None = None) -> dict:
    """Source and release notebooks (nbgrader ``generate_assignment``) and release data files."""
    from nbgrader.apps import NbGraderAPI
    from traitlets.config import Config

    _alembic_head_in_process()

    src = course / "source" / assignment
    if not list(src.glob("*.ipynb")):
        raise FileNotFoundError(f"no notebooks in {src}")
    bin_dir = str(Path(sys.executable).parent)
    if os.environ.get("PATH", "").split(os.pathsep)[0] != bin_dir:  # nbgrader runs `alembic`
        os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")
    tmp = Path(tempfile.mkdtemp(prefix="autograder-source-"))
    try:
        shutil.copytree(src, tmp / "source" / assignment,
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
        c = Config()
        c.CourseDirectory.root = str(tmp)
        c.CourseDirectory.course_id = "dp-course"
        c.CourseDirectory.db_url = f"sqlite:///{tmp / 'gradebook.db'}"
        c.Exchange.root = str(tmp / "exchange")
        outcome = NbGraderAPI(config=c).generate_assignment(assignment, force=True, create=True)
        if not outcome.get("success"):
            raise RuntimeError(f"nbgrader generate_assignment failed:\n{outcome.get('error')}")
        release = tmp / "release" / assignment
        names = sorted(p.name for p in src.glob("*.ipynb"))
        files = {p.relative_to(release).as_posix(): base64.b64encode(p.read_bytes()).decode()
                 for p in sorted(release.rglob("*")) if p.is_file() and p.suffix != ".ipynb"
                 and p.stat().st_size < (16 << 20)}
        return {"assignment": assignment,
                "sources": {n: (src / n).read_text(encoding="utf-8-sig") for n in names},
                "releases": {n: (release / n).read_text(encoding="utf-8-sig") for n in names},
                "files": files, "timeout": timeout, "memory_mb": memory_mb, "sandboxed": sandboxed,
                "submission_seconds": submission_seconds, **(limits or {})}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _log(message: str, quiet: bool) -> None:
    if not quiet:
        print(message, file=sys.stderr, flush=True)


def _die_with_parent() -> None:
    import ctypes

    try:
        ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001
        pass


class _Worker:
    """A trusted grading worker, in a cgroup of its own where one can be made (:func:`jail.worker_group`:
    ``memory_mb`` beyond what it holds when ready, no swap, tasks, one CPU share of at most one core);
    else it limits its own address space (``worker.limit_self``). :attr:`how` says which."""

    def __init__(self, spec_line: str, log, sandboxed: bool = True, memory_mb: int | None = None):
        self.sandboxed, self.memory_mb = sandboxed, memory_mb
        env = dict(os.environ)
        env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
        env.pop(IN_GROUP, None)
        self.group, how = worker_group((memory_mb + WORKER_START_MB) << 20) if memory_mb else (None, "no limit")
        group = self.group

        def pre_exec() -> None:  # in the child, before the worker's Python runs: all of it is in the group
            _die_with_parent()
            if group is not None:
                group.join()

        if group is not None:
            env[IN_GROUP] = "1"
        try:
            self.proc = subprocess.Popen(WORKER_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                         env=env, start_new_session=True, preexec_fn=pre_exec)
        except subprocess.SubprocessError as exc:  # joining the group failed: the worker's own rlimits
            if group is None:
                raise
            group.remove()
            self.group, how = None, f"cannot join the cgroup: {exc}"
            env.pop(IN_GROUP, None)
            self.proc = subprocess.Popen(WORKER_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                         env=env, start_new_session=True, preexec_fn=_die_with_parent)
        self.how = how if self.group is not None else (f"rlimit only ({how})" if memory_mb else "no limit")
        self.proc.stdin.write(spec_line.encode() + b"\n")
        self.proc.stdin.flush()
        self.buffer, self.overlong, self.ready, self.task = bytearray(), False, False, None
        self.deadline = time.monotonic() + 300  # start-up

    def started(self) -> None:
        """Ready: the group's cap becomes what the worker holds now plus ``memory_mb`` (as its RLIMIT_AS
        counts from what it holds at its first submission)."""
        if self.group is not None:
            try:
                self.group.set_memory((self.group.usage() or 0) + (self.memory_mb << 20))
            except OSError:  # the start-up allowance stays
                pass

    def out_of_memory(self) -> bool:
        """Whether the kernel's OOM killer ended a process of this worker's group."""
        return self.group is not None and self.group.oom_kills() > 0

    def send(self, task: dict, seconds: float) -> None:
        self.task, self.deadline = task, time.monotonic() + seconds
        message = {"index": task["index"], "path": os.fsdecode(task["path"]), "seed": task["seed"]}
        self.proc.stdin.write((json.dumps(message, ensure_ascii=True) + "\n").encode())
        self.proc.stdin.flush()

    def lines(self) -> tuple[list, bool]:
        """Complete JSON lines read so far; a line over :data:`MAX_LINE` bytes becomes ``None``.

        Only the new chunk is searched for a newline (linear in the output,
        whatever the worker sends), and an overlong line is dropped as it
        arrives instead of being held.
        """
        chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
        out = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            if not self.overlong:
                self.buffer += piece
                if len(self.buffer) > MAX_LINE:
                    self.buffer, self.overlong = bytearray(), True
                    out.append(None)
            if end < 0:
                break
            if not self.overlong and self.buffer.strip():
                try:
                    out.append(json.loads(bytes(self.buffer)))
                except (ValueError, RecursionError):
                    out.append(None)
            self.buffer, self.overlong, start = bytearray(), False, end + 1
        return out, not chunk

    def kill(self) -> None:
        if self.proc.poll() is None:  # SIGTERM first: the worker removes its sandboxes' cgroups
            try:
                self.proc.terminate()
                self.proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        self.proc.wait()
        if self.sandboxed:  # killed before it removed its sandboxes' cgroups and uid slots

            remove_left_by(self.proc.pid)
        if self.group is not None:
            self.group.remove()


def _strings(value, cap=500, count=200) -> list[str]:
    if type(value) is not list or len(value) > count or not all(type(v) is str for v in value):
        raise ValueError("not a list of strings")
    return [v[:cap] for v in value]


def _cell_details(got: dict) -> dict:
    """What the class report reads of a cell: the diagnosis id, whether the cell has hidden tests and
    failed in them, the privacy audits' ``{claimed, lower_bound, hidden}`` (``ValueError`` if malformed)."""
    diagnosis = got.get("diagnosis")
    if diagnosis is not None and (type(diagnosis) is not str or not DIAGNOSIS.fullmatch(diagnosis)):
        raise ValueError("bad diagnosis")
    audits = got.get("audits", [])
    if type(audits) is not list or len(audits) > 20:
        raise ValueError("bad audits")
    clean = []
    for audit in audits:
        if type(audit) is not dict or not all(type(audit.get(k)) in (int, float) and math.isfinite(audit[k])
                                              for k in ("claimed", "lower_bound")):
            raise ValueError("bad audit")
        clean.append({"claimed": float(audit["claimed"]), "lower_bound": float(audit["lower_bound"]),
                      "hidden": audit.get("hidden") is True})
    return {"diagnosis": diagnosis, "hidden": got.get("hidden") is True,
            "hidden_failed": got.get("hidden_failed") is True, "audits": clean}


def validate(result, expected: list[dict], notebooks: list[str]) -> dict:
    """A worker's result, checked field by field (``ValueError`` when anything is off)."""
    if type(result) is not dict:
        raise ValueError("result is not an object")
    cells = result.get("cells")
    if type(cells) is not list or len(cells) != len(expected):
        raise ValueError("wrong test cells")
    clean_cells = []
    for got, want in zip(cells, expected):
        if type(got) is not dict or got.get("notebook") != want["notebook"] or got.get("grade_id") != want["grade_id"]:
            raise ValueError("wrong test cells")
        score = got.get("score")
        if type(score) not in (int, float) or float(score) not in (0.0, want["points"]):
            raise ValueError(f"impossible score for {want['grade_id']}")
        message = got.get("message")
        if message is not None and type(message) is not str:
            raise ValueError("bad message")
        clean_cells.append(dict(want, score=float(score), message=message[:2000] if message else None,
                                **_cell_details(got)))
    clean = {"cells": clean_cells}
    for key in ("errors", "flags", "repairs", "notes"):
        clean[key] = _strings(result.get(key, []))
    for key in ("feedback", "autograded"):
        pages = result.get(key, {})
        if type(pages) is not dict or not set(pages) <= set(notebooks) \
                or not all(type(v) is str and len(v) <= MAX_TEXT for v in pages.values()):
            raise ValueError(f"bad {key}")
        clean[key] = pages
    similarity = result.get("similarity", [])
    if type(similarity) is not list or len(similarity) > 100:
        raise ValueError("bad similarity")
    clean["similarity"] = [{k: v for k, v in row.items() if type(k) is str and type(v) in (str, int, float, bool)
                            and k in ("function", "similarity", "nodes", "flagged", "fingerprint")}
                           for row in similarity if type(row) is dict]
    timings = result.get("timings", {})
    clean["timings"] = {}
    if type(timings) is dict and len(json.dumps(timings)) < 10_000:
        clean["timings"] = json.loads(json.dumps(timings, allow_nan=False))
    seconds = result.get("seconds")
    clean["seconds"] = float(seconds) if type(seconds) in (int, float) and math.isfinite(seconds) else None
    return clean


def _isolation() -> dict:
    """What the kernel enforces per sandbox here (cgroup or rlimits only, seccomp, uids)."""
    return isolation()


def _row(student: str, assignment: str, seed: int, result: dict, sandboxed: bool) -> dict:
    cells = result["cells"]
    row = {"student": student, "assignment": assignment, "seed": seed,
           "score": round(sum(c["score"] for c in cells), 6),
           "max_score": round(sum(c["points"] for c in cells), 6), "sandbox": sandboxed}
    for key in ("cells", "errors", "flags", "repairs", "notes", "similarity", "timings", "seconds"):
        row[key] = result.get(key, [] if key not in ("timings", "seconds") else None)
    row["feedback"] = sorted(f"{Path(n).stem}.html" for n in result.get("feedback", {}))
    row["autograded"] = sorted(result.get("autograded", {}))
    for key in ("errors", "flags", "repairs", "notes"):
        row[key] = list(dict.fromkeys(row[key]))
    status = ("error: " + "; ".join(row["errors"])) if row["errors"] else "ok"
    row["status"] = " ".join(status.split())[:480] + ("" if sandboxed else UNSANDBOXED)
    return row


def _failed(expected: list[dict], reason: str) -> dict:
    return {"cells": [dict(c, score=0.0, message=None) for c in expected], "errors": [reason],
            "flags": [], "repairs": [], "notes": [], "similarity": [], "timings": {}, "seconds": None,
            "feedback": {}, "autograded": {}}


def _publish(out: Path, student: str, assignment: str, result: dict) -> None:
    """Feedback pages and executed notebooks of one student (names from the spec, never the worker)."""
    for folder, pages, suffix in (("feedback", result["feedback"], ".html"),
                                  ("autograded", result["autograded"], ".ipynb")):
        for name, text in pages.items():
            report.write_atomic(out / folder / student / assignment / (Path(name).stem + suffix), text)


def _run_pool(tasks, *, jobs, spec_line, expected, notebooks, per_task, on_result, log, on_worker=None):
    worker_cpu = json.loads(spec_line).get("worker_cpu_seconds") or 0
    worker_memory = json.loads(spec_line).get("worker_memory_mb") or None
    pending = deque(tasks)
    selector = selectors.DefaultSelector()
    workers: list[_Worker] = []
    done = 0
    sandboxed = json.loads(spec_line).get("sandboxed", True)

    def spawn():
        worker = _Worker(spec_line, log, sandboxed, worker_memory)
        if on_worker is not None:
            on_worker(worker.how)
        selector.register(worker.proc.stdout, selectors.EVENT_READ, worker)
        workers.append(worker)

    def retire(worker):
        selector.unregister(worker.proc.stdout)
        worker.kill()
        workers.remove(worker)
        if pending:
            spawn()

    def finish(worker, result):
        nonlocal done
        task, worker.task = worker.task, None
        done += 1
        on_result(task, result)

    for _ in range(min(jobs, len(tasks))):
        spawn()
    try:
        while done < len(tasks):
            for worker in list(workers):
                if worker.ready and worker.task is None and pending:
                    worker.send(pending.popleft(), per_task)
            active = [w for w in workers if w.task is not None or not w.ready]
            if not active:
                raise RuntimeError("no grading worker is running")
            wait = max(0.0, min(w.deadline for w in active) - time.monotonic())
            for key, _ in selector.select(timeout=wait):
                worker = key.data
                lines, ended = worker.lines()
                broken = None
                for line in lines:
                    if not worker.ready:
                        if line == {"ready": True}:
                            worker.ready = True
                            worker.started()
                        else:
                            broken = "grading worker failed to start"
                    elif worker.task is None or type(line) is not dict or line.get("index") != worker.task["index"] \
                            or set(line) != {"index", "result"}:
                        broken = "grading worker sent a malformed message"
                    else:
                        try:
                            finish(worker, validate(line["result"], expected, notebooks))
                        except (ValueError, TypeError, KeyError, AttributeError) as exc:
                            broken = f"grading worker sent a malformed result ({str(exc)[:100]})"
                    if broken:
                        break
                if ended and not broken:
                    broken = "grading process died" if worker.ready else "grading worker failed to start"
                    if worker.proc.poll() is None:
                        try:
                            worker.proc.wait(timeout=5)
                        except subprocess.TimeoutExpired:
                            pass
                    if worker.proc.returncode == -signal.SIGXCPU:
                        broken = (f"grading worker used more than its {worker_cpu:g} s of CPU time for this "
                                  "submission (the judge's side: checks, feedback)")
                    elif worker.out_of_memory():
                        broken = (f"memory limit: the grading worker used more than its {worker_memory} MiB "
                                  "for this submission (the judge's side: checks, feedback)")
                if broken:
                    if worker.task is not None:
                        finish(worker, _failed(expected, broken))
                    elif not worker.ready and not any(w.ready for w in workers if w is not worker):
                        raise RuntimeError(f"{broken}; see its log")
                    retire(worker)
            now = time.monotonic()
            for worker in list(workers):
                if (worker.task is not None or not worker.ready) and now >= worker.deadline:
                    if worker.task is not None:
                        finish(worker, _failed(expected, f"timeout: grading exceeded {per_task:g} s"))
                    retire(worker)
    finally:
        for worker in workers:
            if worker.task is not None:  # interrupted mid-submission: let it remove its sandboxes
                try:
                    worker.proc.terminate()
                except OSError:
                    pass
        for worker in workers:
            try:
                worker.proc.stdin.close()
                worker.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                pass
            worker.kill()
        selector.close()


def grade(*, assignment: str, submissions, out, jobs: int = 2, timeout: int = 120,
          memory_mb: int | None = 2048, seed: int | None = None, shard: str | None = None,
          course=None, quiet: bool = False, resume: bool = False, sandbox: bool = True,
          submission_timeout: int | None = None, sleep_limit: int = SLEEP_LIMIT,
          worker_memory_mb: int | None = WORKER_MEMORY_MB) -> dict:
    """Grade ``submissions/<student>/<assignment>/`` into ``out``; returns the report.

    ``timeout`` limits each cell and each call of a student function (CPU seconds of the
    sandbox); ``submission_timeout`` (default ``timeout + 20``) the whole notebook in each of
    its sandboxes; ``sleep_limit`` the wall-clock seconds a notebook's sandboxes may sleep or block
    in all. ``worker_memory_mb`` is the address space of each trusted grading worker (``None``:
    unlimited); its CPU per submission is ``WORKER_CPU_FACTOR`` x the notebooks' budgets + slack.

    ``seed`` reproduces an earlier run; ``shard="K/N"`` grades one slice of
    students; ``resume`` keeps the rows already in ``out`` (same assignment,
    source checksum and seed) and grades the others; ``sandbox=False`` runs
    student code without bubblewrap (every status then says so).
    """
    submissions, out = Path(submissions), Path(out)
    course = Path(course) if course else default_course()
    if jobs < 1:
        raise ValueError(f"--jobs must be >= 1; got {jobs}")
    if not 1 <= timeout <= MAX_SECONDS:
        raise ValueError(f"--timeout must be between 1 and {MAX_SECONDS} seconds; got {timeout}")
    if submission_timeout is not None and not 1 <= submission_timeout <= MAX_SECONDS:
        raise ValueError(f"--submission-timeout must be between 1 and {MAX_SECONDS} seconds; "
                         f"got {submission_timeout}")
    if not 1 <= sleep_limit <= MAX_SECONDS:
        raise ValueError(f"--sleep-limit must be between 1 and {MAX_SECONDS} seconds; got {sleep_limit}")
    if worker_memory_mb is not None and worker_memory_mb < 256:
        raise ValueError(f"--worker-memory-mb must be at least 256 (or 0: no limit); got {worker_memory_mb}")
    if not submissions.is_dir():
        raise ValueError(f"--submissions {submissions} is not a folder")
    if not (course / "source" / assignment).is_dir():
        raise ValueError(f"unknown assignment {assignment!r}: no folder {course / 'source' / assignment}")
    if sandbox:
        sweep_stale()  # cgroups and uid slots of graders killed by SIGKILL
        why = probe()
        if why:  # bilingual, with the routes that work (a Linux machine or WSL 2, or the class server)
            raise ValueError(no_sandbox_message(why))
    entries = [(s.student, s, s.refused) for s in list_submissions(submissions)]
    shard_kn = sharding.parse_shard(shard) if shard else None
    if shard_kn:
        keep = set(sharding.select_shard([e[0] for e in entries], *shard_kn))
        entries = [e for e in entries if e[0] in keep]
    checksum = report.source_checksum(course / "source" / assignment)
    if resume and seed is None and (out / "report.json").is_file():
        try:
            seed = json.loads((out / "report.json").read_text(encoding="utf-8"))["runs"][0]["seed"]
        except (ValueError, KeyError, IndexError, TypeError):
            pass
    run_seed = int(seed) if seed is not None else secrets.randbits(32)
    kept = report.completed(out, assignment, checksum, run_seed) if resume else {}
    previous_runs = []
    if kept:
        previous_runs = json.loads((out / "report.json").read_text(encoding="utf-8")).get("runs", [])
    started = time.time()
    submission_seconds = submission_timeout if submission_timeout is not None else timeout + 20
    notebooks_count = max(1, len(list((course / "source" / assignment).glob("*.ipynb"))))
    # Time limits count the sandboxes' CPU time; their wall-clock backstop is WALL_FACTOR x as long.

    per_task = notebooks_count * (WALL_FACTOR * submission_seconds + WALL_SLACK) + SLACK
    worker_limits = {"worker_memory_mb": worker_memory_mb,
                     "worker_cpu_seconds": notebooks_count * (WORKER_CPU_FACTOR * submission_seconds) + WORKER_CPU_SLACK}
    run = {"assignment": assignment, "seed": run_seed, "source_checksum": checksum, "shard": shard,
           "jobs": jobs, "timeout": timeout, "submission_timeout": submission_seconds, "memory_mb": memory_mb,
           "sleep_limit": sleep_limit, **worker_limits,
           "sandbox": "bubblewrap" if sandbox else "none (--no-sandbox: student code ran with the grader's rights)",
           "isolation": _isolation() if sandbox else None, "worker_isolation": [],
           "students": len(entries), "resumed": len(kept),
           "started": datetime.fromtimestamp(started, timezone.utc).isoformat(),
           "python": platform.python_version(),
           # the time and memory budgets too: a submission near a limit scores by them
           "reproduce": (f"python -m autograder grade --assignment {assignment} --submissions DIR --out DIR "
                         f"--seed {run_seed} --timeout {timeout} --submission-timeout {submission_seconds} "
                         f"--memory-mb {memory_mb or 0} --sleep-limit {sleep_limit} "
                         f"--worker-memory-mb {worker_memory_mb or 0}" + (f" --shard {shard}" if shard else "")
                         + ("" if sandbox else " --no-sandbox"))}
    runs = previous_runs + [run]
    rows = {s: r for s, r in kept.items()}
    out.mkdir(parents=True, exist_ok=True)

    def on_signal(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    old_handlers = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        try:
            old_handlers[sig] = signal.signal(sig, on_signal)
        except ValueError:  # not the main thread
            pass
    log_dir = Path(tempfile.mkdtemp(prefix="autograder-log-"))
    try:
        spec = prepare_spec(course, assignment, timeout=timeout, memory_mb=memory_mb, sandboxed=sandbox,
                            submission_seconds=submission_seconds,
                            limits=dict(worker_limits, sleep_seconds=sleep_limit))
        import nbformat

        sources = {n: nbformat.reads(t, as_version=4) for n, t in spec["sources"].items()}
        expected = expected_cells(sources)
        notebooks = sorted(sources)
        tasks = []
        for index, (student, submission, refused) in enumerate(entries):
            if student in rows:
                continue
            for folder in ("feedback", "autograded"):  # nothing stale from an earlier run
                shutil.rmtree(out / folder / student / assignment, ignore_errors=True)
            seed_s = student_seed(run_seed, assignment, student)
            folder, why = assignment_folder(submission, assignment)
            if folder is None:
                rows[student] = _row(student, assignment, seed_s, _failed(expected, why), sandbox)
                continue
            tasks.append({"index": index, "student": student, "path": folder, "seed": seed_s})
        last_write = [0.0]

        def flush(force=False):
            if force or time.monotonic() - last_write[0] > 1.0:
                run["duration_s"] = round(time.time() - started, 2)
                report.write_outputs(out, list(rows.values()), {"runs": runs})
                last_write[0] = time.monotonic()

        def on_worker(how):
            # what limits each trusted worker's memory (its cgroup, else its RLIMIT_AS), as "isolation" says
            # for the sandboxes; workers started later can differ (a group not made): all are listed
            if how not in run["worker_isolation"]:
                run["worker_isolation"].append(how)
                _log(f"grading workers' memory: {how}", quiet)

        def on_result(task, result):
            row = _row(task["student"], assignment, task["seed"], result, sandbox)
            _publish(out, task["student"], assignment, result)
            rows[task["student"]] = row
            _log(f"[{len(rows)}/{len(entries)}] {task['student']}: {row['status'][:100]}", quiet)
            flush()

        _log(f"grading {len(tasks)} submission(s) of {assignment} with {jobs} worker(s), seed {run_seed}"
             + ("" if sandbox else ", UNSANDBOXED"), quiet)
        flush(force=True)
        if tasks:
            with open(log_dir / "workers.log", "ab") as log:
                try:
                    _run_pool(tasks, jobs=jobs, spec_line=json.dumps(spec), expected=expected, notebooks=notebooks,
                              per_task=per_task, on_result=on_result, log=log, on_worker=on_worker)
                except BaseException:
                    # Ctrl-C, SIGTERM, a crash: every row already reported on stderr is written before
                    # the grader stops (flush() writes at most once a second while grading).
                    flush(force=True)
                    raise
        flush(force=True)
    finally:
        shutil.rmtree(log_dir, ignore_errors=True)
        for sig, handler in old_handlers.items():
            signal.signal(sig, handler)
    _log(f"wrote {out / 'grades.csv'} ({len(rows)} rows) in {run['duration_s']} s", quiet)
    try:
        # lazy: matplotlib, for a page drawn once at the end (the workers and --help never need it)
        from autograder.reports.classreport import REPORT_NAME, build_report

        build_report([out], out / REPORT_NAME)
        _log(f"class report (instructors only): {out / REPORT_NAME}", quiet)
    except Exception as exc:  # noqa: BLE001 - the grades are written; the report is a view of them
        _log(f"class report not written: {type(exc).__name__}: {exc}", quiet)
    return {"runs": runs, "submissions": sorted(rows.values(), key=lambda r: r["student"])}
