"""Issue 35 §4: each trusted grading worker in a cgroup of its own (memory without swap, tasks, one
CPU share of at most one core), so that the judge's side overrunning its memory costs one row.

Before, a worker limited only its own address space (RLIMIT_AS): memory it held outside its address
space (a memfd, tmpfs pages, its children's) was not counted, and the machine paid for it. Now the
worker's group counts all of it; the kernel's OOM killer ends that worker, its submission gets an
``error: memory limit`` row, and a new worker grades the next one. The group is removed at the end.
Through ``grade`` with a worker that fills a memfd for the student named ``a_hog``: 12 s at load 6 (slow).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder import jail

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(jail.probe() is not None, reason="bubblewrap cannot run here")

#: A worker whose judge, for the student ``a_hog``, holds 1.5 GiB in a memfd (not in its address
#: space, so RLIMIT_AS never sees it) before grading as usual.
HOG_WORKER = r'''
import os
import autograder.worker as worker

real = worker.grade_one


def grade_one(task, spec):
    if os.path.basename(os.path.dirname(task["path"])) == "a_hog":
        fd = os.memfd_create("judge")
        block = b"\1" * (64 << 20)
        for _ in range(24):
            os.write(fd, block)
        print("the judge holds 1.5 GiB outside its address space", flush=True)
    return real(task, spec)


worker.grade_one = grade_one
worker.main()
'''


@pytest.mark.slow
@pytest.mark.nbgrader
def test_a_worker_over_its_memory_costs_one_row_and_the_batch_goes_on(tmp_path, monkeypatch):
    from autograder import grade as grading

    group, how = jail.worker_group(64 << 20)
    if group is None:
        pytest.skip(f"no cgroup for a grading worker here: {how}")
    group.remove()
    for student in ("a_hog", "b_ok"):
        folder = tmp_path / "subs" / student / "laplace"
        folder.mkdir(parents=True)
        shutil.copy(REPO / "source" / "laplace" / "laplace.ipynb", folder / "laplace.ipynb")
    (tmp_path / "hog_worker.py").write_text(HOG_WORKER)
    monkeypatch.setattr(grading, "WORKER_COMMAND", [sys.executable, str(tmp_path / "hog_worker.py")])
    result = grading.grade(assignment="laplace", submissions=tmp_path / "subs", out=tmp_path / "out", jobs=1,
                           timeout=30, seed=3, quiet=True, worker_memory_mb=512)
    rows = {r["student"]: r for r in result["submissions"]}
    assert rows["a_hog"]["status"].startswith("error: memory limit: the grading worker used more than its 512 MiB"), \
        rows["a_hog"]["status"]
    assert rows["a_hog"]["score"] == 0
    assert rows["b_ok"]["status"] == "ok" and rows["b_ok"]["score"] == rows["b_ok"]["max_score"] == 10, rows["b_ok"]
    (run,) = result["runs"]
    assert run["worker_isolation"] and all(h.startswith("cgroup") for h in run["worker_isolation"]), run
    # the workers' groups are gone with them (named after this process, the grader)
    groups, _ = jail.owned_by([os.getpid()])
    assert not [g for g in groups if g.endswith("-worker")], groups


def test_without_a_cgroup_the_worker_limits_its_own_address_space(tmp_path):
    """The fallback: no group (``IN_GROUP`` unset), RLIMIT_AS as before; in a group, the group's cap instead."""
    from autograder.worker import IN_GROUP

    code = ("import resource\nfrom autograder.worker import limit_self\n"
            "limit_self({'worker_memory_mb': 400})\nprint(resource.getrlimit(resource.RLIMIT_AS)[0])\n")
    env = {k: v for k, v in os.environ.items() if k != IN_GROUP}
    alone = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    grouped = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                             env=dict(env, **{IN_GROUP: "1"}))
    import resource

    assert 400 << 20 < int(alone.stdout) != resource.RLIM_INFINITY, (alone.stdout, alone.stderr[-1000:])
    assert int(grouped.stdout) == resource.RLIM_INFINITY, (grouped.stdout, grouped.stderr[-1000:])


def test_the_worker_group_is_beside_its_sandboxes(monkeypatch, tmp_path):
    """The worker's sandboxes' groups are made in the grader's group, beside the worker's, never inside
    it (v1 would count them in the worker's memory; v2 allows no group inside one with processes)."""
    from autograder.jail import cgroup

    cgroup_file = tmp_path / "cgroup"
    cgroup_file.write_text("4:memory:/grader/autograder-12-34-worker\n1:cpu:/grader\n")
    real = Path.read_text
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: real(cgroup_file if str(self) == "/proc/self/cgroup"
                                                                         else self, *a, **k))
    assert cgroup._own_cgroup("memory") == "/grader" and cgroup._own_cgroup("cpu") == "/grader"


def test_worker_group_v2_files(tmp_path, monkeypatch):
    """The v2 branch (GitHub runners) on a stand-in hierarchy: the worker's group sits under
    ``<root>/autograder/`` beside its sandboxes' groups, with its memory (no swap), tasks, one CPU
    share of at most one core; its cap moves to what it holds when ready plus the limit."""
    from autograder.jail import cgroup

    (tmp_path / "cgroup.controllers").write_text("cpu memory pids\n")
    monkeypatch.setattr(cgroup, "_mounts", lambda: [("cgroup2", str(tmp_path), {"rw"})])
    group, how = jail.worker_group(300 << 20)
    assert group is not None and how.startswith("cgroup v2"), how
    (d,) = group.dirs
    assert d.parent == tmp_path / "autograder" and d.name.endswith(cgroup.WORKER_SUFFIX), d
    assert (d / "memory.max").read_text() == str(300 << 20) and (d / "pids.max").read_text() == str(cgroup.WORKER_PIDS)
    assert (d / "cpu.weight").read_text() == str(jail.CPU_WEIGHT)
    assert (d / "cpu.max").read_text() == f"{jail.CPU_PERIOD_US} {jail.CPU_PERIOD_US}"
    (d / "memory.current").write_text(str(40 << 20))
    group.set_memory(group.usage() + (256 << 20))
    assert (d / "memory.max").read_text() == str(296 << 20)
    (d / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    assert group.oom_kills() == 1  # what makes the grader's row say "memory limit"
    sandbox, _ = jail.Cgroup.create(64 << 20, 64)
    assert sandbox is not None and sandbox.dirs[0].parent == d.parent  # beside it, never inside


def test_a_worker_joins_its_group_or_says_why_not(monkeypatch, tmp_path):
    """``grade._Worker``: in its group from its first instruction (``/proc/self/cgroup``), told so
    (``IN_GROUP``: no RLIMIT_AS then), the group removed with it; without a group, ``rlimit only (why)``."""
    from autograder import grade as grading
    from autograder.worker import IN_GROUP

    probe = ("import os, sys\nsys.stdin.readline()\n"
             f"print(os.environ.get({IN_GROUP!r}, '-'), open('/proc/self/cgroup').read().replace(chr(10), ' '), flush=True)\n")
    monkeypatch.setattr(grading, "WORKER_COMMAND", [sys.executable, "-c", probe])
    log = open(tmp_path / "log", "wb")
    group, how = jail.worker_group(64 << 20)
    if group is not None:
        group.remove()
        worker = grading._Worker("{}", log, sandboxed=False, memory_mb=256)  # noqa: SLF001
        said = worker.proc.stdout.readline().decode()
        folder = worker.group.dirs[0]
        assert worker.how.startswith("cgroup") and said.startswith("1 ") and folder.name in said, (worker.how, said)
        worker.kill()
        assert not folder.exists()
    monkeypatch.setattr(grading, "worker_group", lambda memory: (None, "no controller (test)"))
    worker = grading._Worker("{}", log, sandboxed=False, memory_mb=256)  # noqa: SLF001
    said = worker.proc.stdout.readline().decode()
    assert worker.how == "rlimit only (no controller (test))" and said.startswith("- "), (worker.how, said)
    worker.kill()
