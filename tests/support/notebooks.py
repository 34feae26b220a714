"""Execute a notebook headless and say where the time went (shared by the notebook tests)."""

from __future__ import annotations

import time
from datetime import datetime
from queue import Empty
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbclient import NotebookClient

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
