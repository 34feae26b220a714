"""Independent re-check: the instructor's tests in a process the student's top level never touched.

nbgrader runs the student's cells and the test cells in one kernel, so a
student can patch the checks before they run. The recheck rebuilds the
notebook as a plain Python program:

* instructor cells come from the *source* notebook (they include the hidden
  tests), matched by ``grade_id``;
* student cells are reduced by :func:`autograder.astcheck.definitions_only`
  to safe imports, undecorated ``def`` statements and constants;

and runs it with ``python -I -m autograder.recheck`` in an empty temporary
folder, with the same ``DP_COURSE_SEED``, a memory cap and a time limit. The
runner writes one JSON line per test cell as soon as the cell finishes, so a
process that the student's code kills still reports the cells before.
"""

from __future__ import annotations

import json
import linecache
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograder.limits import CPU_ENV, MEMORY_ENV, SINGLE_THREAD_ENV, apply_limits_from_env


def _source(cell) -> str:
    source = cell.source
    return "".join(source) if isinstance(source, list) else source


def instructor_code(source_nb) -> list[str]:
    from autograder.sanitize import is_solution, nbgrader_meta

    return [_source(c) for c in source_nb.cells
            if c.cell_type == "code" and nbgrader_meta(c) and not is_solution(c)]


def build_blocks(student_nb, source_nb) -> list[dict]:
    """The recheck program for one sanitized notebook, as a list of blocks.

    Each block is ``{"kind": "instructor"|"student"|"test", "grade_id",
    "points", "source"}``.
    """
    from autograder import astcheck
    from autograder.sanitize import is_solution, is_test, nbgrader_meta

    source_cells = {}
    for cell in source_nb.cells:
        meta = nbgrader_meta(cell)
        if meta and meta.get("grade_id"):
            source_cells[meta["grade_id"]] = cell
    protected = astcheck.imported_names(instructor_code(source_nb))
    blocks = []
    for cell in student_nb.cells:
        if cell.cell_type != "code":
            continue
        meta = nbgrader_meta(cell)
        gid = meta.get("grade_id") if meta else None
        if gid in source_cells and not is_solution(source_cells[gid]):
            ref = source_cells[gid]
            blocks.append({
                "kind": "test" if is_test(ref) else "instructor",
                "grade_id": gid,
                "points": float(nbgrader_meta(ref).get("points") or 0),
                "source": astcheck.to_python(_source(ref)),
            })
        else:
            code = astcheck.definitions_only(_source(cell), protected)
            if code:
                blocks.append({"kind": "student", "grade_id": gid, "points": 0.0,
                               "source": code})
    return blocks


def _job_env(seed: int, memory_mb: int | None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AUTOGRADER_KERNEL")}
    env.update(SINGLE_THREAD_ENV)
    env.update({"DP_COURSE_SEED": str(seed), "MPLBACKEND": "Agg"})
    if memory_mb:
        env[MEMORY_ENV] = str(memory_mb)
    else:
        env.pop(MEMORY_ENV, None)
    return env


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _spawn_and_wait(job: Path, workdir: Path, env: dict, timeout: float) -> str:
    """Run the job in a brand-new interpreter; returns ok/died/timeout."""
    proc = subprocess.Popen(
        [sys.executable, "-I", "-m", "autograder.recheck", str(job)],
        cwd=workdir, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True)
    status = "ok"
    try:
        if proc.wait(timeout=timeout) != 0:
            status = "died"
    except subprocess.TimeoutExpired:
        status = "timeout"
    finally:
        _kill_group(proc.pid)
        proc.wait()
    return status


class ForkServer:
    """A clean process that imported the libraries once and forks one child per recheck.

    The server never runs student code: each recheck runs in a forked child
    (its own session, memory cap, environment and working folder), so the
    child is as fresh as a new interpreter, minus ~0.7 s of imports.
    """

    def __init__(self, preload=("numpy", "scipy.stats", "helpers.checks")):
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-m", "autograder.recheck", "--serve", *preload],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=_job_env(0, None), cwd=tempfile.gettempdir(), start_new_session=True)
        self.buffer = b""

    def _line(self, deadline: float | None):
        import selectors

        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            while b"\n" not in self.buffer:
                wait = None if deadline is None else max(0.0, deadline - time.monotonic())
                if not sel.select(wait):
                    return None
                chunk = os.read(self.proc.stdout.fileno(), 4096)
                if not chunk:
                    raise EOFError("recheck server ended")
                self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def run(self, job: Path, workdir: Path, env: dict, timeout: float) -> str:
        self.proc.stdin.write((json.dumps({"job": str(job), "cwd": str(workdir), "env": env})
                               + "\n").encode())
        self.proc.stdin.flush()
        pid = self._line(time.monotonic() + 30)["pid"]
        reply = self._line(time.monotonic() + timeout)
        if reply is None:
            _kill_group(pid)
            self._line(time.monotonic() + 30)
            return "timeout"
        return "ok" if reply["exit"] == 0 else "died"

    def close(self) -> None:
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            _kill_group(self.proc.pid)


def _serve(preload) -> None:
    import importlib

    for name in preload:
        try:
            importlib.import_module(name)
        except Exception:
            pass
    protocol = sys.stdout.buffer
    for line in sys.stdin.buffer:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:  # the child: fresh session, no protocol pipes
            code = 1
            try:
                os.setsid()
                null = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):
                    os.dup2(null, fd)
                os.chdir(request["cwd"])
                os.environ.clear()
                os.environ.update(request["env"])
                _main(request["job"])
                code = 0
            finally:
                os._exit(code)
        protocol.write((json.dumps({"pid": pid}) + "\n").encode())
        protocol.flush()
        _, status = os.waitpid(pid, 0)
        protocol.write((json.dumps({"exit": os.waitstatus_to_exitcode(status)}) + "\n").encode())
        protocol.flush()


def run_blocks(blocks: list[dict], *, seed: int, timeout: float,
               memory_mb: int | None, server: ForkServer | None = None,
               files: dict[str, bytes] | None = None) -> dict:
    """Run ``blocks`` in a fresh process (forked from ``server`` when given).

    ``files`` (relative path -> bytes) are written to the process's working
    folder first: the assignment's data files, as nbgrader copies them next
    to the autograded notebook.

    Returns ``{"scores": {grade_id: score}, "errors": {grade_id: message},
    "status": "ok"|"timeout"|"died", "seconds": float}``. Test cells that never
    reported score 0.
    """
    tests = [b for b in blocks if b["kind"] == "test"]
    with tempfile.TemporaryDirectory(prefix="recheck-") as tmp:
        job = Path(tmp) / "job.json"
        results = Path(tmp) / "results.jsonl"
        job.write_text(json.dumps({"blocks": blocks, "results": str(results)}), encoding="utf-8")
        workdir = Path(tmp) / "cwd"
        workdir.mkdir()
        for rel, data in (files or {}).items():
            target = (workdir / rel).resolve()
            if workdir.resolve() in target.parents:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
        env = _job_env(seed, memory_mb)
        # Backstop if the process outlives its supervisor: CPU seconds.
        env[CPU_ENV] = str(int(timeout) + 10)
        start = time.monotonic()
        if server is not None:
            status = server.run(job, workdir, env, timeout)
        else:
            status = _spawn_and_wait(job, workdir, env, timeout)
        seconds = time.monotonic() - start
        reported = {}
        if results.exists():
            for line in results.read_text(encoding="utf-8", errors="replace").splitlines():
                try:
                    row = json.loads(line)
                except ValueError:
                    continue
                if isinstance(row, dict) and row.get("grade_id") not in reported:
                    reported[row.get("grade_id")] = row
    scores, errors = {}, {}
    for block in tests:
        row = reported.get(block["grade_id"])
        if row is None:
            scores[block["grade_id"]] = 0.0
            errors[block["grade_id"]] = f"not reached (recheck {status})"
        else:
            scores[block["grade_id"]] = block["points"] if row.get("passed") is True else 0.0
            if row.get("error"):
                errors[block["grade_id"]] = str(row["error"])[:300]
    return {"scores": scores, "errors": errors, "status": status,
            "seconds": round(seconds, 3)}


#: Modules whose functions, classes and submodules must not change during a test.
GUARDED_MODULES = ("builtins", "numpy", "scipy", "math", "helpers", "json", "linecache",
                   "inspect", "ast", "autograder")


def module_snapshot() -> dict:
    """``{module: (id, {name: id(value)})}`` for callables and modules of guarded modules."""
    snap = {}
    for name, module in list(sys.modules.items()):
        if module is None or name.split(".")[0] not in GUARDED_MODULES:
            continue
        try:
            items = list(vars(module).items())
        except TypeError:
            continue
        snap[name] = (id(module), {key: id(value) for key, value in items
                                   if callable(value) or isinstance(value, type(sys))})
    return snap


def changed_modules(before: dict) -> list[str]:
    """What a test (that is, the student code it called) replaced or deleted."""
    changed = []
    for name, (module_id, attrs) in before.items():
        module = sys.modules.get(name)
        if module is None or id(module) != module_id:
            changed.append(f"sys.modules[{name!r}]")
            continue
        now = vars(module)
        for key, value_id in attrs.items():
            if key not in now or id(now[key]) != value_id:
                changed.append(f"{name}.{key}")
    return changed


class _NoIPython:
    """Stands in for ``get_ipython()`` in instructor cells (``%matplotlib inline``)."""

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


def _preimport(blocks) -> None:
    """Import what the instructor's cells import, so the baseline covers it."""
    import ast
    import importlib

    for block in blocks:
        if block["kind"] == "student":
            continue
        try:
            tree = ast.parse(block["source"])
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module]
            for name in names:
                try:
                    importlib.import_module(name)
                except Exception:
                    pass


def _main(job_path: str) -> None:
    apply_limits_from_env()
    job = json.loads(Path(job_path).read_text(encoding="utf-8"))
    # Opened before any student code runs; line-buffered so a crash keeps earlier lines.
    out = open(job["results"], "a", encoding="utf-8", buffering=1)
    namespace = {"__name__": "__main__", "display": lambda *a, **k: None,
                 "get_ipython": lambda: _NoIPython()}
    baseline = None
    for number, block in enumerate(job["blocks"]):
        error = None
        filename = f"<recheck-{number}-{block['grade_id'] or 'student'}>"
        # Registered like IPython does, so inspect.getsource works on student functions.
        linecache.cache[filename] = (len(block["source"]), None,
                                     block["source"].splitlines(True), filename)
        if block["kind"] == "test" and baseline is None:
            _preimport(job["blocks"])
            baseline = module_snapshot()
        try:
            exec(compile(block["source"], filename, "exec"), namespace)
        except BaseException as exc:  # noqa: BLE001 - SystemExit/KeyboardInterrupt are failures too
            error = f"{type(exc).__name__}: {exc}"
        if block["kind"] == "test":
            # Compared with the state before the *first* test: once a function
            # is replaced, every later test fails too.
            changed = changed_modules(baseline)
            if changed:
                error = "TamperError: code under test replaced " + ", ".join(changed[:5])
            else:
                for name, (module_id, attrs) in module_snapshot().items():
                    old = baseline.setdefault(name, (module_id, {}))[1]
                    for key, value_id in attrs.items():
                        old.setdefault(key, value_id)
            out.write(json.dumps({"grade_id": block["grade_id"], "passed": error is None,
                                  "error": error}) + "\n")
    out.close()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        _serve(sys.argv[2:])
    else:
        _main(sys.argv[1])
