"""A long-lived grading worker: many students, one warm Python process.

``python -m autograder.worker --template T --workdir W --assignment A ...``
reads one JSON task per line on stdin and answers one JSON result per line
(JSON only, never pickles of objects student code touched). Importing
nbgrader, nbconvert and jupyter_client once saves the ~2 s start-up that
every ``nbgrader autograde`` command pays.

Each task is graded in a fresh course root written from the in-memory
template (source, release and a gradebook holding only the assignment), so a
submission can neither see nor change another student's gradebook rows, and
no SQLite file ever has two writers. The kernel is started through :mod:`autograder.kernel`
(memory cap), with ``DP_COURSE_SEED`` in its environment; a watchdog kills
its process group when the notebook overruns its time limit.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import threading
import time
import traceback
from pathlib import Path

from autograder.limits import MEMORY_ENV, PIDFILE_ENV, SINGLE_THREAD_ENV

KERNEL_NAME = "autograder-python"
#: Seconds the whole notebook may run beyond the per-cell limit before the kill.
WATCHDOG_GRACE = 20


def ensure_venv_on_path() -> None:
    """nbgrader runs the ``alembic`` executable: put this Python's ``bin/`` first."""
    bin_dir = str(Path(sys.executable).parent)
    if os.environ.get("PATH", "").split(os.pathsep)[0] != bin_dir:
        os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")


def write_kernelspec(jupyter_dir: Path) -> None:
    """A kernelspec that starts ipykernel through :mod:`autograder.kernel`."""
    spec_dir = Path(jupyter_dir) / "kernels" / KERNEL_NAME
    spec_dir.mkdir(parents=True, exist_ok=True)
    spec = {
        "argv": [sys.executable, "-m", "autograder.kernel", "-f", "{connection_file}"],
        "display_name": "Python 3 (autograder, limited)",
        "language": "python",
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec, indent=1), encoding="utf-8")


def nbgrader_config(root: Path, *, timeout: int, exchange: Path):
    """The minimal nbgrader configuration of one grading course root."""
    from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
    from nbgrader.preprocessors import GetGrades
    from traitlets.config import Config

    from autograder.feedback import StripHiddenTests

    c = Config()
    c.CourseDirectory.root = str(root)
    c.CourseDirectory.course_id = "dp-course"
    c.CourseDirectory.db_url = f"sqlite:///{Path(root) / 'gradebook.db'}"
    c.OverwriteCells.add_missing_cells = True
    c.Execute.timeout = int(timeout)
    c.Execute.kernel_name = KERNEL_NAME
    c.Exchange.root = str(exchange)
    c.GenerateFeedback.preprocessors = [GetGrades, CSSHTMLHeaderPreprocessor, StripHiddenTests]
    return c


def prepare_template(course: Path, assignment: str, dest: Path, *, timeout: int) -> Path:
    """Course root holding ``source/A``, nbgrader's ``release/A`` and a gradebook."""
    from nbgrader.apps import NbGraderAPI

    ensure_venv_on_path()
    course, dest = Path(course), Path(dest)
    src = course / "source" / assignment
    if not src.is_dir() or not list(src.glob("*.ipynb")):
        raise FileNotFoundError(f"no notebooks in {src}")
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(src, dest / "source" / assignment,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    api = NbGraderAPI(config=nbgrader_config(dest, timeout=timeout, exchange=dest / "exchange"))
    result = api.generate_assignment(assignment, force=True, create=True)
    if not result.get("success"):
        raise RuntimeError(f"nbgrader generate_assignment failed:\n{result.get('error')}")
    return dest


class TemplateFiles:
    """The template course root, held in memory.

    Every task's course root is written from these bytes, and the source and
    release notebooks are read from them after the kernel ran: student code
    that rewrites files on disk can change neither later students' roots nor
    the tests its own recheck runs.
    """

    def __init__(self, root: Path):
        root = Path(root)
        self.files = {p.relative_to(root).as_posix(): p.read_bytes()
                      for p in sorted(root.rglob("*")) if p.is_file()}

    def materialize(self, dest: Path) -> None:
        for rel, data in self.files.items():
            path = Path(dest) / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)

    def data_files(self, assignment: str) -> dict[str, bytes]:
        """The assignment's files in ``source/`` other than notebooks."""
        prefix = f"source/{assignment}/"
        return {rel[len(prefix):]: data for rel, data in self.files.items()
                if rel.startswith(prefix) and not rel.endswith(".ipynb")}

    def notebooks(self, step: str, assignment: str) -> dict:
        import nbformat

        prefix = f"{step}/{assignment}/"
        return {rel[len(prefix):]: nbformat.reads(data.decode("utf-8"), as_version=4)
                for rel, data in self.files.items()
                if rel.startswith(prefix) and rel.endswith(".ipynb") and "/" not in rel[len(prefix):]}


def _gradebook_scores(root: Path, assignment: str, sid: str) -> dict:
    from nbgrader.api import Gradebook, MissingEntry

    scores = {}
    try:
        with Gradebook(f"sqlite:///{Path(root) / 'gradebook.db'}") as gb:
            submission = gb.find_submission(assignment, sid)
            for nb in submission.notebooks:
                for grade in nb.grades:
                    scores[(nb.name, grade.name)] = grade.auto_score
    except MissingEntry:
        pass
    return scores


def _execution_problems(path: Path) -> list[str]:
    import nbformat

    problems = []
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception:
        return problems
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") != "error":
                continue
            if output.get("ename") == "CellTimeoutError":
                problems.append("timeout: a cell exceeded the time limit")
            elif output.get("ename") == "MemoryError":
                problems.append("memory limit exceeded")
    return sorted(set(problems))


def _copy_report(student_nb) -> list[dict]:
    """Similarity of each solution function to :mod:`helpers.mechanisms` (a note, never points)."""
    import ast

    from autograder.sanitize import is_solution

    functions = {}
    for cell in student_nb.cells:
        if cell.cell_type != "code" or not is_solution(cell):
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                functions[node.name] = ast.get_source_segment(cell.source, node) or ""
    try:
        from helpers.checks import copy_report
    except ImportError:
        return []
    try:
        return [row for row in copy_report(functions) if row.get("similarity") is not None]
    except Exception:
        return []


def start_zygote(workdir: Path):
    """Start the kernel zygote (see :mod:`autograder.kernel`); returns the process or None."""
    import subprocess

    from autograder.kernel import ZYGOTE_ENV

    sock = Path(workdir) / "zygote.sock"
    if sock.exists():
        sock.unlink()
    empty = Path(workdir) / "zygote-cwd"
    empty.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, **SINGLE_THREAD_ENV)
    env.pop(MEMORY_ENV, None)
    proc = subprocess.Popen([sys.executable, "-m", "autograder.kernel", "--zygote", str(sock)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=empty, env=env,
                            start_new_session=True)
    if proc.stdout.readline().strip() != b"ready":
        proc.kill()
        return None
    os.environ[ZYGOTE_ENV] = str(sock)
    return proc


class _ServerSlot:
    """The worker's recheck fork server, started on first use."""

    def __init__(self):
        self.server, self.preload = None, ("numpy", "scipy.stats", "helpers.checks")

    def get(self):
        from autograder.recheck import ForkServer

        if self.server is None or self.server.proc.poll() is not None:
            self.server = ForkServer(self.preload)
        return self.server

    def reset(self):
        if self.server is not None:
            self.server.close()
        self.server = None


_SERVER = _ServerSlot()


class Watchdog:
    """Kills the kernel's process group when a notebook overruns its limit."""

    def __init__(self, pidfile: Path, seconds: float):
        self.pidfile, self.fired = Path(pidfile), False
        self.timer = threading.Timer(seconds, self._kill)
        self.timer.daemon = True

    def _kill(self):
        self.fired = True
        try:
            pid = int(self.pidfile.read_text())
            os.killpg(pid, signal.SIGKILL)
        except (OSError, ValueError):
            pass

    def __enter__(self):
        self.timer.start()
        return self

    def __exit__(self, *exc):
        self.timer.cancel()


def inspect_student_code(name: str, student_nb, source_nb, release_nb) -> list[str]:
    """Static flags for the student's code cells of one sanitized notebook."""
    from autograder import astcheck, recheck
    from autograder.sanitize import is_solution, nbgrader_meta, normalize_source

    protected = astcheck.imported_names(recheck.instructor_code(source_nb))
    # Ungraded code cells shipped in the release are instructor code too.
    shipped = {normalize_source(c.source) for c in release_nb.cells
               if c.cell_type == "code" and not nbgrader_meta(c)}
    flags = []
    for index, cell in enumerate(student_nb.cells):
        meta = nbgrader_meta(cell)
        if cell.cell_type != "code" or (meta and not is_solution(cell)):
            continue
        if not meta and normalize_source(cell.source) in shipped:
            continue
        flags += astcheck.inspect_code(cell.source, protected,
                                       where=f"{Path(name).stem} cell {index + 1}")
    return flags


def run_recheck_all(sanitized: dict, sources: dict, *, seed: int, timeout: int,
                    memory_mb: int | None, files: dict) -> dict:
    """Recheck every notebook; ``{"scores": {(nb, gid): s}, "errors": {...}, "notes": [...]}``."""
    from autograder import recheck

    out = {"scores": {}, "errors": {}, "notes": [], "seconds": 0.0}
    for name, student_nb in sanitized.items():
        blocks = recheck.build_blocks(student_nb, sources[name])
        try:
            outcome = recheck.run_blocks(blocks, seed=seed, timeout=timeout, memory_mb=memory_mb,
                                         server=_SERVER.get(), files=files)
        except (EOFError, OSError, TypeError, KeyError, ValueError):
            _SERVER.reset()  # the fork server broke: a brand-new interpreter instead
            outcome = recheck.run_blocks(blocks, seed=seed, timeout=timeout, memory_mb=memory_mb,
                                         files=files)
        for gid, score in outcome["scores"].items():
            out["scores"][(name, gid)] = score
        for gid, message in outcome["errors"].items():
            out["errors"][(name, gid)] = message
        if outcome["status"] != "ok":
            out["notes"].append(f"recheck of {name}: {outcome['status']}")
        out["seconds"] += outcome["seconds"]
    return out


def publish_feedback(api, *, root: Path, sid: str, assignment: str, sources: dict,
                     out_dir: Path, result: dict) -> None:
    """``generate_feedback``, then copy each page that shows no hidden test."""
    from autograder import feedback

    fb = api.generate_feedback(assignment, sid, force=True)
    produced = sorted((root / "feedback" / sid / assignment).glob("*.html"))
    if not fb.get("success") and not produced:
        result["notes"].append("no feedback (nbgrader generate_feedback failed)")
    for html in produced:
        source_nb = sources.get(html.stem + ".ipynb")
        if source_nb is None:
            continue
        secrets = [line for c in source_nb.cells if c.cell_type == "code"
                   for line in feedback.hidden_lines(c.source)]
        if feedback.leaked_lines(html, secrets):
            result["errors"].append(f"feedback withheld: hidden test visible in {html.name}")
            continue
        out_dir.mkdir(parents=True, exist_ok=True)
        shutil.copy2(html, out_dir / html.name)
        result["feedback"].append(html.name)


def grade_one(task: dict, *, template, workdir: Path, assignment: str,
              timeout: int, memory_mb: int | None, keep: bool = False,
              run_recheck: bool = True) -> dict:
    """Grade one submission; always returns a JSON-able result dict.

    sanitize -> (recheck, in a thread) + nbgrader autograde -> feedback -> scores.
    The recheck needs only the sanitized notebook, so it overlaps with
    nbgrader's kernel start-up.
    """
    import nbformat
    from nbgrader.apps import NbGraderAPI

    from autograder.sanitize import is_test, nbgrader_meta, sanitize_submission

    started = time.monotonic()
    if not isinstance(template, TemplateFiles):
        template = TemplateFiles(template)
    sid, seed = task["sid"], int(task["seed"])
    root = Path(workdir) / f"root-{sid}"
    if root.exists():
        shutil.rmtree(root)
    template.materialize(root)
    releases = template.notebooks("release", assignment)
    sources = template.notebooks("source", assignment)
    result = {"student": task["student"], "assignment": assignment, "seed": seed,
              "cells": [], "flags": [], "errors": [], "repairs": [], "notes": [],
              "feedback": [], "timings": {}, "similarity": []}
    timings = result["timings"]
    rechecked = {"scores": {}, "errors": {}}
    nb_scores = {}
    try:
        sub_dir = root / "submitted" / sid / assignment
        found = sanitize_submission(Path(task["src"]), root / "release" / assignment, sub_dir)
        for key in ("flags", "errors", "repairs"):
            result[key] += found[key]
        # Read before any kernel runs: what the kernel writes later does not count.
        sanitized = {name: nbformat.read(sub_dir / name, as_version=4) for name in found["notebooks"]}
        for name, student_nb in sanitized.items():
            result["flags"] += inspect_student_code(name, student_nb, sources[name], releases[name])
            result["similarity"] += _copy_report(student_nb)
        for row in result["similarity"]:
            if row.get("flagged"):
                result["notes"].append(f"{row['function']} looks copied from helpers.mechanisms "
                                       f"(similarity {row['similarity']})")
        thread = None
        if sanitized and run_recheck:
            def _recheck():
                rechecked.update(run_recheck_all(
                    sanitized, sources, seed=seed, timeout=timeout, memory_mb=memory_mb,
                    files=template.data_files(assignment)))
            thread = threading.Thread(target=_recheck, daemon=True)
            thread.start()
        elif sanitized:
            result["notes"].append("recheck skipped (--no-recheck)")
        if sanitized:
            os.environ["DP_COURSE_SEED"] = str(seed)
            os.environ[PIDFILE_ENV] = str(root / "kernel.pid")
            api = NbGraderAPI(config=nbgrader_config(root, timeout=timeout,
                                                     exchange=root / "exchange"))
            tick = time.monotonic()
            with Watchdog(root / "kernel.pid", timeout + WATCHDOG_GRACE) as dog:
                outcome = api.autograde(assignment, sid, force=True, create=True)
            timings["autograde"] = round(time.monotonic() - tick, 3)
            if dog.fired:
                result["errors"].append(f"timeout: notebook exceeded {timeout + WATCHDOG_GRACE} s")
            elif not outcome.get("success"):
                last = (outcome.get("error") or "nbgrader failed").strip().splitlines()[-1:]
                result["errors"].append("nbgrader: " + (last[0][:200] if last else "failed"))
            nb_scores = _gradebook_scores(root, assignment, sid)
            for name in sanitized:
                graded = root / "autograded" / sid / assignment / name
                result["errors"] += [p for p in _execution_problems(graded)
                                     if p not in result["errors"]]
            if (root / "autograded" / sid / assignment).is_dir():
                tick = time.monotonic()
                publish_feedback(api, root=root, sid=sid, assignment=assignment, sources=sources,
                                 out_dir=Path(task["feedback_dir"]), result=result)
                timings["feedback"] = round(time.monotonic() - tick, 3)
        if thread is not None:
            thread.join()
            result["notes"] += rechecked.get("notes", [])
            timings["recheck"] = round(rechecked.get("seconds", 0.0), 3)
        for name, rel in sorted(releases.items()):
            for cell in rel.cells:
                if not is_test(cell):
                    continue
                gid, points = nbgrader_meta(cell)["grade_id"], float(nbgrader_meta(cell).get("points") or 0)
                by_nbgrader = nb_scores.get((Path(name).stem, gid))
                by_nbgrader = float(by_nbgrader) if by_nbgrader is not None else 0.0
                by_recheck = rechecked["scores"].get((name, gid), 0.0) if run_recheck else by_nbgrader
                why = rechecked["errors"].get((name, gid))
                result["cells"].append({
                    "notebook": name, "grade_id": gid, "points": points, "nbgrader": by_nbgrader,
                    "recheck": by_recheck, "score": min(by_nbgrader, by_recheck),
                    "recheck_error": why})
                if by_recheck < by_nbgrader:
                    result["flags"].append(
                        f"{gid}: nbgrader gave {by_nbgrader:g} but the recheck {by_recheck:g}"
                        + (f" ({why[:120]})" if why else ""))
    except Exception:  # one broken submission must not stop the batch
        result["errors"].append("autograder: " + traceback.format_exc().strip().splitlines()[-1][:200])
    finally:
        os.environ.pop(PIDFILE_ENV, None)
        if not keep:
            shutil.rmtree(root, ignore_errors=True)
    result["seconds"] = round(time.monotonic() - started, 3)
    return finalize(result)


def finalize(result: dict) -> dict:
    """Add ``score``, ``max_score`` and ``status`` to a worker result."""
    cells = result.get("cells", [])
    result["max_score"] = round(sum(c["points"] for c in cells), 6)
    result["score"] = round(sum(c["score"] for c in cells), 6)
    result["nbgrader_score"] = round(sum(c["nbgrader"] for c in cells), 6)
    result["recheck_score"] = round(sum(c["recheck"] for c in cells), 6)
    # Deduplicate while keeping order.
    for key in ("flags", "errors", "repairs", "notes"):
        result[key] = list(dict.fromkeys(result.get(key, [])))
    if result["flags"]:
        result["status"] = "flagged: " + "; ".join(result["flags"])
    elif result["errors"]:
        result["status"] = "error: " + "; ".join(result["errors"])
    else:
        result["status"] = "ok"
    result["status"] = " ".join(result["status"].split())[:500]
    return result


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m autograder.worker")
    parser.add_argument("--template", required=True, type=Path)
    parser.add_argument("--workdir", required=True, type=Path)
    parser.add_argument("--assignment", required=True)
    parser.add_argument("--timeout", type=int, required=True)
    parser.add_argument("--memory-mb", type=int, default=None)
    parser.add_argument("--no-recheck", action="store_true")
    parser.add_argument("--no-zygote", action="store_true",
                        help="start every kernel as a new interpreter")
    args = parser.parse_args(argv)

    # Results go to the original stdout; everything else (nbgrader logs, stray
    # prints) to stderr, so the protocol stream stays clean.
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    ensure_venv_on_path()
    args.workdir.mkdir(parents=True, exist_ok=True)
    jupyter_dir = args.workdir / "jupyter"
    write_kernelspec(jupyter_dir)
    os.environ["JUPYTER_PATH"] = str(jupyter_dir)
    os.environ.update(SINGLE_THREAD_ENV)
    os.environ.setdefault("MPLBACKEND", "Agg")
    if args.memory_mb:
        os.environ[MEMORY_ENV] = str(args.memory_mb)
    import nbgrader.apps  # noqa: F401  (warm the imports before the first task)

    template = None  # read on the first task: the parent builds it while we warm up
    zygote = None if args.no_zygote else start_zygote(args.workdir)
    _SERVER.get()
    protocol.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        task = json.loads(line)
        if template is None:
            template = TemplateFiles(args.template)
        result = grade_one(task, template=template, workdir=args.workdir,
                           assignment=args.assignment, timeout=args.timeout,
                           memory_mb=args.memory_mb, run_recheck=not args.no_recheck)
        result["task"] = task["index"]
        protocol.write(json.dumps(result) + "\n")
    _SERVER.reset()
    if zygote is not None:
        zygote.stdin.close()
        zygote.wait(timeout=30)


if __name__ == "__main__":
    main()
