"""Execute a notebook headless and say where the time went (shared by the notebook tests)."""

from __future__ import annotations

import time
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

    def describe(self) -> str:
        slowest = sorted(self.cell_s, key=lambda c: -c[1])[:3]
        cells = "; ".join(f"cell {i} {s:.1f} s ({first!r})" for i, s, first in slowest)
        return (f"kernel start {self.startup_s:.1f} s, cells {self.execution_s:.1f} s; "
                f"slowest: {cells}")


def run_notebook(path: Path, *, timeout: int = 120) -> NotebookRun:
    """Run every cell in order (the notebook's folder as cwd); CellExecutionError on failure."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    with client.setup_kernel():
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
