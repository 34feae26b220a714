"""A submission must not hold a trusted grading worker beyond its own limits (issue 35 §4).

Red team s10: a submission that asks for 8 MB of draws and never reads them blocked the judge's
write with no deadline (145 s at ``--timeout 5``); a loop of sleeping calls held its worker until
the submission's wall deadline (430 s at the defaults); ``rng.random(0)`` and refused methods were
free and unlimited judge work. Each case is scored through the grader's real path
(``score_submission``, bubblewrap when it can run) and must end within a few seconds.
"""

from __future__ import annotations

import threading
import time

import pytest

from autograder import jail

pytestmark = pytest.mark.skipif(jail.probe() is not None, reason="bubblewrap cannot run here")


def _cell(source: str, **meta):
    import nbformat

    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = dict({"grade": False, "solution": False, "locked": True, "schema_version": 3}, **meta)
    return cell


def _notebook(student: str, test: str):
    """A source notebook: one solution cell, one test cell of 1 point (it is its own submission)."""
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.cells = [_cell(student, grade_id="answer", solution=True, locked=False),
                      _cell(test, grade_id="test_it", grade=True, points=1)]
    return notebook


def _score(notebook, limit: float, **kwargs) -> tuple[dict, float]:
    """``score_submission`` in a thread: (result, wall seconds); fails after ``limit`` s instead of
    hanging the suite when the judge blocks (the defect guarded against)."""
    from autograder.scorer import score_submission

    out: dict = {}

    def run():
        out["result"] = score_submission(notebook, notebook, seed=1, memory_mb=512, sandboxed=True, **kwargs)

    started = time.monotonic()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(limit)
    elapsed = time.monotonic() - started
    assert not thread.is_alive(), f"the judge was still held after {elapsed:.0f} s"
    return out["result"], elapsed


def test_a_write_the_student_never_reads_obeys_the_step():
    """8 MB of draws asked for, the answer never read (``wire.recv`` replaced by a sleep): the judge's
    write waits like a read, the sandbox's sleep counted, and ends at the submission's sleep limit."""
    student = ("import time, wire\n"
               "def hold(rng):\n"
               "    wire.recv = lambda *a, **k: time.sleep(1000)\n"
               "    return rng.random(1 << 20)\n")
    nb = _notebook(student, "import numpy as np\nhold(np.random.default_rng(0))\n")
    result, elapsed = _score(nb, 90, timeout=5, sleep_seconds=4)
    (test,) = result["tests"]
    assert test["score"] == 0
    assert any("slept or blocked" in p and "did not read" in p for p in result["problems"]), result["problems"]
    assert elapsed < 30, elapsed


def test_sleeping_calls_end_at_the_submission_sleep_limit():
    """Each call sleeps 1.5 s, well within its own backstop (3 x the call limit): the sleep of all the
    calls together ends the submission at ``sleep_seconds``, not at its wall deadline."""
    student = "import time\ndef nap(x):\n    time.sleep(1.5)\n    return x\n"
    nb = _notebook(student, "for i in range(40):\n    assert nap(i) == i\n")
    result, elapsed = _score(nb, 90, timeout=5, sleep_seconds=4)
    assert result["tests"][0]["score"] == 0
    assert any("in all" in p and "--sleep-limit" in p and "nap" in p for p in result["problems"]), result["problems"]
    assert elapsed < 20, elapsed


def test_an_honest_submission_sleeps_far_below_the_limit():
    """Computing is never counted: the same loop without the sleep scores, at a 1 s sleep limit."""
    student = "def nap(x):\n    return sum(range(20000)) * 0 + x\n"
    nb = _notebook(student, "for i in range(200):\n    assert nap(i) == i\n")
    result, _ = _score(nb, 120, timeout=5, sleep_seconds=1)
    assert not result["problems"], result["problems"]
    assert result["tests"][0]["score"] == 1


@pytest.mark.parametrize("rng, ask", [("RecordingGenerator(1)", "rng.random([0])"),
                                      ("RecordingGenerator(1)", "rng.laplace()")])
def test_free_draw_requests_are_capped_and_charged(rng, ask):
    """Requests that draw nothing (``rng.random([0])``: a list size is asked of the judge) or are refused (``laplace`` of a recording
    generator, the refusal caught) cost the judge an exchange each: at most ``MAX_REQUESTS`` per call,
    then the sandbox is killed; before, a million of them made the judge work until the sandbox's
    own CPU limit (as long as the sandbox itself, outside every limit)."""
    from autograder.served import MAX_REQUESTS

    student = ("import numpy as np\n"
               "def spin(rng):\n"
               "    for _ in range(10 ** 6):\n"
               "        try:\n"
               f"            {ask}\n"
               "        except Exception:\n"
               "            pass\n"
               "    return 0\n")
    nb = _notebook(student, f"import numpy as np\nfrom helpers.checks import RecordingGenerator\nspin({rng})\n")
    judge = time.process_time()
    result, _ = _score(nb, 120, timeout=20, sleep_seconds=30)
    judge = time.process_time() - judge
    assert result["tests"][0]["score"] == 0
    assert any(f"more than {MAX_REQUESTS:,} requests" in p for p in result["problems"]), result["problems"]
    assert judge < 8, judge


_LIMITED_WORKER = r'''
import time
from autograder.jail import Sandbox
from autograder.worker import limit_self

limit_self({"worker_memory_mb": 400, "worker_cpu_seconds": 3})
box = Sandbox(sandboxed=True, deadline=time.monotonic() + 60, memory_mb=1024, cpu_seconds=30)
try:
    box.send({"cells": ["x = bytearray(600 << 20)\nprint(len(x))"], "files": {}, "graded": [],
              "limits": box.limits, "cell_timeout": 30.0, "call_timeout": 5.0})
    cell, _ = box.recv(33, "cell")
finally:
    box.close()
print("sandbox", cell["error"], cell["stdout"].strip(), flush=True)
try:
    bytearray(600 << 20)
    print("worker allocated 600 MiB", flush=True)
except MemoryError:
    print("worker MemoryError", flush=True)
while True:
    pass
'''


def test_a_grading_worker_has_its_own_memory_and_cpu_limits():
    """``worker.limit_self``: the trusted worker's allocation past ``worker_memory_mb`` fails, its
    CPU past ``worker_cpu_seconds`` ends it (SIGXCPU: the grader then gives that one submission an
    error row); the sandbox it starts keeps its own limits (600 MiB allocated in a 1 GiB sandbox from
    a worker limited to 400 MiB)."""
    import signal
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", _LIMITED_WORKER], capture_output=True, text=True, timeout=120)
    assert "sandbox None 629145600" in proc.stdout, (proc.stdout, proc.stderr[-2000:])
    assert "worker MemoryError" in proc.stdout, proc.stdout
    assert proc.returncode == -signal.SIGXCPU, (proc.returncode, proc.stderr[-2000:])


def test_a_worker_past_its_cpu_costs_one_row(tmp_path, monkeypatch):
    """Through ``grade``: with 1 s of worker CPU per submission (the judge's audits of a private_mean
    notebook need about 8 s), each submission gets an ``error:`` row naming the worker's CPU limit,
    a new worker takes the next one, and the batch completes."""
    import shutil
    from pathlib import Path

    from autograder import grade as grading

    repo = Path(__file__).resolve().parents[2]
    for student in ("s1", "s2"):
        folder = tmp_path / "subs" / student / "private_mean"
        folder.mkdir(parents=True)
        shutil.copy(repo / "source" / "private_mean" / "private_mean.ipynb", folder / "private_mean.ipynb")
    monkeypatch.setattr(grading, "WORKER_CPU_FACTOR", 0)
    monkeypatch.setattr(grading, "WORKER_CPU_SLACK", 1)
    result = grading.grade(assignment="private_mean", submissions=tmp_path / "subs", out=tmp_path / "out", jobs=1,
                           timeout=20, seed=5, quiet=True)
    rows = result["submissions"]
    assert [r["student"] for r in rows] == ["s1", "s2"]
    assert all("used more than its 1 s of CPU time" in r["status"] for r in rows), [r["status"] for r in rows]
    assert result["runs"][0]["worker_cpu_seconds"] == 1
