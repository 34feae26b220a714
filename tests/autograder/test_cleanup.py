"""A grader killed with SIGKILL leaves cgroups and uid-slot locks; the next start sweeps them.

Through the real CLI: a submission whose cell sleeps, so that the worker holds its sandboxes
(cgroups, uid slots) when the grader is killed. SIGKILL cannot be handled: the workers die with
their parent (PR_SET_PDEATHSIG), the sandboxes with them, and their cgroup folders and lock files
stay behind (asserted: otherwise the sweep would be tested on nothing). The next
``python -m autograder grade`` removes them before it starts (their owner pids are gone), and
leaves alone what live graders hold. (SIGTERM, which the grader handles, is checked in
tests/autograder/test_attack_batch.py: nothing is left even before the next start.) ~1 min (5 min at load 20).
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from autograder import jail
from autograder.jail.sweep import SWEEP_LOCK

REPO = Path(__file__).resolve().parents[2]
SLEEPER = "import time\ntime.sleep(120)\n"

pytestmark = [pytest.mark.nbgrader, pytest.mark.slow,
              pytest.mark.skipif(jail.probe() is not None, reason="bubblewrap cannot run here")]


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry))
            except (OSError, IndexError, ValueError):
                pass
    return found


def _held(path: str) -> bool:
    """Whether a live process holds the flock of a uid slot's file."""
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def _grade(subs: Path, out: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "autograder", "grade", "--assignment", "laplace",
                             "--submissions", str(subs), "--out", str(out), "--jobs", "1", "--timeout", "60"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=out.parent)


def test_sigkill_leftovers_are_swept_at_the_next_start(tmp_path):
    if not jail.isolation()["memory_isolation"].startswith("cgroup"):
        pytest.skip("no per-sandbox cgroup here")
    release = nbformat.read(REPO / "release" / "laplace" / "laplace.ipynb", as_version=4)
    subs = tmp_path / "subs"
    for student in ("s1",):
        nb = nbformat.read(REPO / "release" / "laplace" / "laplace.ipynb", as_version=4)
        nb.cells.insert(1, nbformat.v4.new_code_cell(SLEEPER))
        (subs / student / "laplace").mkdir(parents=True)
        nbformat.write(nb, subs / student / "laplace" / "laplace.ipynb")
    # Other graders (other tests beside this one) sweep at their start: held off while this test looks
    # at what the SIGKILL left, released before its own next grader starts.
    jail.LOCK_DIR.mkdir(mode=0o700, exist_ok=True)
    hold = os.open(SWEEP_LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(hold, fcntl.LOCK_EX)
    proc = _grade(subs, tmp_path / "out")
    workers, groups, locks, worker_groups = [], [], [], []
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None:
            workers = _children(proc.pid)
            groups, locks = jail.owned_by(workers)
            worker_groups = jail.owned_by([proc.pid])[0]  # the grader's groups: its workers' own (issue 35)
            # the worker holds its visible and hidden sandboxes' groups (and their CpuShare)
            if len(groups) >= 2 and len(locks) >= 2:
                break
            time.sleep(0.5)
        assert groups and locks, f"no sandbox was running when the grader was to be killed: {groups} {locks}"
        assert worker_groups and all(g.endswith("-worker") for g in worker_groups), worker_groups
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    deadline = time.monotonic() + 30  # the workers follow their grader (PDEATHSIG); slower under load
    while time.monotonic() < deadline and [w for w in workers if Path(f"/proc/{w}").exists()]:
        time.sleep(0.2)
    time.sleep(1)
    try:
        left_groups, left_locks = jail.owned_by(workers)
        # A grader of another test may claim a dead worker's uid slot meanwhile (its flock is free;
        # seen once in a full run): that file then names the other grader, needs no sweep, and is
        # removed when that grader releases it. Every other lock file must still be there.
        claimed = [p for p in locks if p not in left_locks and (not Path(p).exists() or _held(p))]
        assert left_groups and (left_locks or claimed), "SIGKILL left nothing: the sweep below would test nothing"
        assert set(locks) <= set(left_locks) | set(claimed), f"lock files lost their dead owner's pid: {locks}"
        assert jail.owned_by([proc.pid])[0] == worker_groups, "the worker's group did not stay: nothing to sweep"
        assert not [w for w in workers if Path(f"/proc/{w}").exists()], "workers survived their grader"
    finally:
        os.close(hold)

    (tmp_path / "subs2" / "s3" / "laplace").mkdir(parents=True)
    nbformat.write(release, tmp_path / "subs2" / "s3" / "laplace" / "laplace.ipynb")
    again = _grade(tmp_path / "subs2", tmp_path / "out2")
    _, err = again.communicate(timeout=300)
    assert again.returncode == 0, err.decode(errors="replace")[-1500:]
    still_groups, still_locks = jail.owned_by(workers)
    assert not still_groups and not still_locks, f"not swept: {still_groups[:3]} {still_locks[:3]}"
    assert not [g for g in left_groups if Path(g).exists()]
    assert not [g for g in worker_groups if Path(g).exists()], worker_groups
