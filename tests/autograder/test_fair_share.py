"""Fair share: a submission with 62 spinning children barely slows a classmate graded beside it.

Two batches through the real CLI (``--jobs 2``), the same three honest submissions in both:
once beside a hog (a cell that forks 62 busy children and spins itself, in both of its sandboxes,
until its CPU-time limit), once beside a fourth honest submission instead. The honest students'
grading time (``seconds`` of their rows) is compared. Each sandbox group has an equal CPU weight
and both sandboxes of a submission share one (``jail.CpuShare``), so the hog gets one
classmate's share, not 63 processes' worth (measured 8-25x slower before).

The issue's target is a ratio <= 1.5. With the one-core cap of each submission (``jail.CPU_PERIOD_US``)
it measured 0.76 and 0.74 (two runs, load 2-30; before the cap 1.09 and 1.64); on this 2-core machine
shared with other jobs the two batches of one run can differ by ~35% either way with no effect at all
(the calm batch was the slower one), so the test asserts <= 2.0 (still far below the 8-25x of no fair
share) and prints the measured value (run with ``-s`` to see it). The hog's cell must also be stopped (a timeout) while the honest students keep
their full marks: time limits count each sandbox's own CPU time (with a wall-clock backstop, which
is what stops the hog first when the machine is busy). Cost: two small batches, 29 s on an idle 2-core machine
(57-95 s in the fresh-clone suite at --timeout 8).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from tests.fixtures.attacks import build as attacks  # noqa: E402

from autograder import jail  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
#: --timeout: the hog's spinning cell is stopped once it has used this much CPU in each of its two
#: sandboxes; meanwhile the honest three are graded (0.2 s of CPU per sandbox, about 10 s in all).
#: At 8 the hog row took 58 s of a 95 s test (its cell reached 11 s of CPU at ~0.4 core per sandbox).
TIMEOUT = 3
BOUND = 2.0

HOG = '''
import os
for _ in range(62):
    try:
        if os.fork() == 0:
            while True:
                pass
    except OSError:
        break
while True:
    pass
'''

pytestmark = [pytest.mark.nbgrader, pytest.mark.slow,
              pytest.mark.skipif(jail.probe() is not None, reason="bubblewrap cannot run here")]


def _batch(folder: Path, first) -> dict:
    release = nbformat.read(REPO / "release" / "laplace" / "laplace.ipynb", as_version=4)
    source = nbformat.read(REPO / "source" / "laplace" / "laplace.ipynb", as_version=4)
    correct = attacks.fill(release, attacks.reference_solutions(source))
    subs = folder / "subs"
    for student, nb in {"a_first": first(correct), "b_honest": correct, "c_honest": correct,
                        "d_honest": correct}.items():
        (subs / student / "laplace").mkdir(parents=True)
        nbformat.write(nb, subs / student / "laplace" / "laplace.ipynb")
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", "--assignment", "laplace",
                           "--submissions", str(subs), "--out", str(folder / "out"), "--jobs", "2",
                           "--timeout", str(TIMEOUT), "--seed", "7"], capture_output=True, text=True,
                          timeout=600, cwd=folder)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = {r["student"]: r for r in json.loads((folder / "out" / "report.json").read_text())["submissions"]}
    rows["_wall"] = time.monotonic() - started
    return rows


def test_hog_slows_classmates_by_little(tmp_path):
    if not jail.isolation()["memory_isolation"].startswith("cgroup") or "cpu." not in jail.isolation()["memory_isolation"]:
        pytest.skip("no cgroup cpu controller here: no fair share to measure")
    (tmp_path / "hog").mkdir()
    (tmp_path / "calm").mkdir()
    hog = _batch(tmp_path / "hog", lambda nb: attacks.add_cells(nb, [HOG]))
    calm = _batch(tmp_path / "calm", lambda nb: nb)
    honest = ["b_honest", "c_honest", "d_honest"]
    for rows in (hog, calm):
        for s in honest:
            assert rows[s]["score"] == 10 and rows[s]["status"] == "ok", rows[s]
    # its spinning cell is stopped (its functions, defined later, are correct: they may earn points)
    assert hog["a_first"]["status"].startswith("error: timeout"), hog["a_first"]["status"]
    with_hog = sum(hog[s]["seconds"] for s in honest)
    without = sum(calm[s]["seconds"] for s in honest)
    ratio = with_hog / without
    print(f"fair share: honest classmates {with_hog:.1f} s beside the hog, {without:.1f} s beside an honest "
          f"submission: ratio {ratio:.2f} (target 1.5, asserted {BOUND}); hog row {hog['a_first']['seconds']} s")
    assert ratio <= BOUND, f"classmates {ratio:.2f}x slower beside a hog ({with_hog:.1f} s vs {without:.1f} s)"
