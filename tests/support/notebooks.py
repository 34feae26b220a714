"""Notebooks in tests: run one headless and say where the time went (the notebook tests); fill an
assignment's solution cells and run its graded cells directly (the checks' tests, the fixtures)."""

from __future__ import annotations

import contextlib
import copy
import io
import math
import time
from datetime import datetime
from queue import Empty
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import numpy as np
from nbclient import NotebookClient

import helpers.checks as checks
from tests.support import corpus

LIMIT_S = 60.0  # the course's limit for one notebook, top to bottom


@dataclass
class NotebookRun:
    nb: nbformat.NotebookNode
    startup_s: float
    cell_s: list[tuple[int, float, str]] = field(default_factory=list)

    @property
    def execution_s(self) -> float:
        return sum(seconds for _, seconds, _ in self.cell_s)

    @property
    def total_s(self) -> float:
        return self.startup_s + self.execution_s

    def kernel_s(self, index: int) -> float | None:
        """Seconds the kernel itself reports for a cell (execute_input to execute_reply)."""
        timing = self.nb.cells[index].metadata.get("execution", {})
        try:
            began = datetime.fromisoformat(timing["iopub.execute_input"].replace("Z", "+00:00"))
            ended = datetime.fromisoformat(timing["shell.execute_reply"].replace("Z", "+00:00"))
        except (KeyError, ValueError):
            return None
        return (ended - began).total_seconds()

    def describe(self) -> str:
        slowest = sorted(self.cell_s, key=lambda c: -c[1])[:3]
        cells = "; ".join(f"cell {i} {s:.1f} s, kernel-side {self.kernel_s(i)} s ({first!r})"
                          for i, s, first in slowest)
        return (f"kernel start {self.startup_s:.1f} s, cells {self.execution_s:.1f} s; "
                f"slowest: {cells}")


POLL_SLICE_S = 0.25


def poll_in_slices(channel) -> None:
    """Make ``channel.get_msg(timeout)`` re-poll every 0.25 s instead of once.

    Works around nbclient issue #312 (open): in a cell that creates widgets, the
    single ``socket.poll(timeout)`` behind ``get_msg`` sometimes misses the
    wake-up for a reply that has already arrived, and returns only at the
    deadline: the cell then "takes" exactly the cell timeout (seen here:
    120.0 s for a cell that runs in 0.1 s). A fresh poll sees the waiting
    message at once, so a missed wake-up costs at most one slice.
    """
    original = channel.get_msg

    async def get_msg(timeout: float | None = None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            remaining = POLL_SLICE_S if deadline is None else deadline - time.monotonic()
            try:
                return await original(timeout=max(0.0, min(POLL_SLICE_S, remaining)))
            except Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    raise

    channel.get_msg = get_msg


def run_notebook(path: Path, *, timeout: int = 120, allow_errors: bool = False) -> NotebookRun:
    """Run every cell in order (the notebook's folder as cwd); CellExecutionError on failure
    unless ``allow_errors`` (then the errors are in the cells' outputs)."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=allow_errors,
                            resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    with client.setup_kernel():
        poll_in_slices(client.kc.shell_channel)
        poll_in_slices(client.kc.iopub_channel)
        run = NotebookRun(nb, startup_s=time.perf_counter() - start)
        for index, cell in enumerate(nb.cells):
            began = time.perf_counter()
            client.execute_cell(cell, index)
            if cell.cell_type == "code":
                first_line = cell.source.strip().splitlines()[0][:50] if cell.source.strip() else ""
                run.cell_s.append((index, time.perf_counter() - began, first_line))
        client.set_widgets_metadata()  # what NotebookClient.execute() does at the end
    return run


def assert_within_limit(run: NotebookRun, name: str) -> None:
    assert run.total_s < LIMIT_S, f"{name} took {run.total_s:.1f} s (limit {LIMIT_S:.0f} s): {run.describe()}"


# --- an assignment's graded cells, run directly (no grader, no sandbox) -----------------------


def read(assignment: str, version: str = "source") -> nbformat.NotebookNode:
    """The committed ``source/`` or ``release/`` notebook of ``assignment``."""
    return nbformat.read(corpus.notebook_path(corpus.REPO / version, assignment), as_version=4)


def graded_cells(assignment: str, version: str = "source") -> list[tuple[str, str]]:
    """``(grade_id, code)`` of each graded cell, hidden tests included (of ``source/``)."""
    return [(c.metadata["nbgrader"]["grade_id"], c.source) for c in read(assignment, version).cells
            if c.metadata.get("nbgrader", {}).get("grade")]


def solution_cells(assignment: str, version: str = "source") -> dict[str, str]:
    """``{grade_id: code}`` of the solution cells as they stand (the reference solution in ``source/``)."""
    return {c.metadata["nbgrader"]["grade_id"]: c.source for c in read(assignment, version).cells
            if c.metadata.get("nbgrader", {}).get("solution")}


def reference_solutions(source_nb) -> dict[str, str]:
    """``{grade_id: code}`` of a source notebook's solution cells, ``### BEGIN/END SOLUTION`` removed."""
    out = {}
    for cell in source_nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution"):
            lines = [line for line in cell.source.splitlines() if not line.strip().startswith("### ")]
            out[meta["grade_id"]] = "\n".join(lines)
    return out


def fill(release_nb, solutions: dict[str, str]):
    """A copy of ``release_nb`` whose solution cells named in ``solutions`` hold that code."""
    nb = copy.deepcopy(release_nb)
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and meta.get("grade_id") in solutions:
            cell.source = solutions[meta["grade_id"]]
    return nb


def namespace(solutions: dict[str, str]) -> dict:
    """The notebook's namespace after its setup, with the student's functions loaded as the grader does."""
    ns = {"np": np, "math": math, "__name__": "__main__"}
    for name, code in solutions.items():
        checks.load_student_code(code, ns, filename=f"<{name}>")
    return ns


#: Results of run_graded_cells by (assignment, solutions): the corpus tests (messages) and the
#: diagnosis table (ids) read the same runs (one "corpus-direct" xdist group: one process).
_RUNS: dict[tuple, dict[str, Exception]] = {}


def run_graded_cells(assignment: str, solutions: dict[str, str],
                     printed: list[str] | None = None) -> dict[str, Exception]:
    """Run ``assignment``'s graded cells on ``solutions`` in order, in one namespace:
    ``{grade_id: the exception}`` of the cells that fail (what they print goes to ``printed``).

    The checks are deterministic (their own seeds), so a run is done once per process and
    shared, unless ``printed`` asks for the output."""
    key = (assignment, tuple(sorted(solutions.items())))
    if printed is None and key in _RUNS:
        return dict(_RUNS[key])
    failed = _run_graded_cells(assignment, solutions, printed)
    _RUNS[key] = failed
    return dict(failed)


def _run_graded_cells(assignment: str, solutions: dict[str, str], printed: list[str] | None) -> dict[str, Exception]:
    ns = namespace(solutions)
    failed = {}
    for grade_id, code in graded_cells(assignment):
        try:
            with contextlib.redirect_stdout(io.StringIO()) as out:
                try:
                    exec(code, ns)
                finally:
                    if printed is not None:
                        printed += out.getvalue().splitlines()
        except Exception as error:  # noqa: BLE001  (a crash of the check is a result too)
            failed[grade_id] = error
    return failed


def failing_cells(assignment: str, solutions: dict[str, str], printed: list[str] | None = None) -> dict[str, str]:
    """``{grade_id: message}`` of the graded cells that fail; ``"CRASH <type>: ..."`` when a cell
    fails with something other than a check's AssertionError."""
    return {grade_id: str(error) if isinstance(error, AssertionError) else f"CRASH {type(error).__name__}: {error}"
            for grade_id, error in run_graded_cells(assignment, solutions, printed).items()}
