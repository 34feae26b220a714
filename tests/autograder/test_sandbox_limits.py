"""Per-sandbox limits: memory (incl. shmem, memfd, tmpfs, children) and pids in a cgroup, the
seccomp filter, a uid per concurrent sandbox (red-team findings 1 and 7).

Each test starts the runner in bubblewrap directly (no nbgrader batch); all together ~20 s (8 s of
it the correct laplace solution scored end to end).
Without bubblewrap they are skipped; the cgroup-specific ones are skipped (and say why) where no
cgroup can be created, the seccomp ones where libseccomp is missing.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from autograder import jail

REPO = Path(__file__).resolve().parents[2]
CAP_MB = 256

pytestmark = pytest.mark.skipif(jail.probe() is not None, reason="bubblewrap cannot run here")


def _run(code: str, *, memory_mb: int = CAP_MB, seconds: float = 30.0) -> tuple[jail.Sandbox, dict | None]:
    """Run one cell; the sandbox (closed, so its cgroup is gone) and the cell's report or None."""
    box = jail.Sandbox(sandboxed=True, deadline=time.monotonic() + seconds + 10, memory_mb=memory_mb,
                       cpu_seconds=int(seconds))
    cell = None
    try:
        box.send({"cells": [code], "files": {}, "graded": [], "limits": box.limits,
                  "cell_timeout": seconds, "call_timeout": 5.0})
        cell, _ = box.recv(seconds + jail.GRACE, "cell")
    except jail.SandboxError:
        pass
    finally:
        box.close()
    return box, cell


def _needs_cgroup(box: jail.Sandbox) -> None:
    if not box.isolation["memory_isolation"].startswith("cgroup"):
        pytest.skip(f"no per-sandbox cgroup here: {box.isolation['memory_isolation']}")


@pytest.fixture
def no_seccomp(monkeypatch):
    """Measure the cgroup alone: without the filter that already refuses shmget and memfd_create."""
    monkeypatch.setattr(jail.seccomp, "_SECCOMP_CACHE", [(None, "disabled by the test")])


SHM_BOMB = r'''
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmdt.argtypes = [ctypes.c_void_p]
total = 0
for i in range(12):                            # 1.5 GiB of SysV shm, detached: RLIMIT_AS does not see it
    sid = libc.shmget(0, 128 << 20, 0o1000 | 0o600)
    if sid < 0:
        print("shmget refused", ctypes.get_errno())
        break
    addr = libc.shmat(sid, None, 0)
    ctypes.memset(addr, 1, 128 << 20)
    libc.shmdt(ctypes.c_void_p(addr))
    total += 128
print("allocated", total)
'''
MEMFD_BOMB = r'''
import os
fds, block = [], b"\1" * (60 << 20)
try:
    for i in range(20):                        # 1.2 GiB in memfds
        fd = os.memfd_create("x")
        os.write(fd, block)
        fds.append(fd)
except OSError as exc:
    print("memfd refused", exc.errno)
print("allocated", 60 * len(fds))
'''
FORK_BOMB = r'''
import os, time
kids = []
for i in range(6):                             # 6 x 100 MiB, each child under its own RLIMIT_AS
    pid = os.fork()
    if pid == 0:
        try:
            b = bytearray(100 << 20)
            for j in range(0, len(b), 4096):
                b[j] = 1
            time.sleep(2)
        finally:
            os._exit(0)
    kids.append(pid)
print("killed", sum(os.waitpid(p, 0)[1] != 0 for p in kids))
'''
TMPFS_FILL = r'''
n = 0
for k in range(10):                            # 600 MiB in 60 MiB files (each under RLIMIT_FSIZE)
    with open("big%d" % k, "wb") as f:
        for i in range(60):
            f.write(b"\1" * (1 << 20))
            n += 1
print("allocated", n)
'''


@pytest.mark.parametrize("bomb", [SHM_BOMB, MEMFD_BOMB, FORK_BOMB, TMPFS_FILL], ids=["shm", "memfd", "fork", "tmpfs"])
def test_memory_bombs_stay_under_the_cap(bomb, no_seccomp):
    """Without seccomp's help, the cgroup alone keeps the whole sandbox under --memory-mb."""
    box, cell = _run(bomb)
    _needs_cgroup(box)
    assert box.memory_peak is not None and box.memory_peak <= (CAP_MB << 20), box.memory_peak
    if cell is None:  # the group's OOM killer stopped the sandbox, and the reason says so
        assert box.problem.startswith("memory limit"), box.problem
    else:
        out = cell["stdout"]
        if "allocated" in out:
            assert int(out.split("allocated ")[1].split()[0]) < CAP_MB, out
        else:
            assert int(out.split("killed ")[1].split()[0]) > 0, out


def test_cgroup_is_removed_and_pids_capped():
    """At most PIDS_MAX tasks, nothing of the group left after close."""
    box, cell = _run("import os, time\nn = 0\ntry:\n    for i in range(200):\n"
                     "        if os.fork() == 0:\n            time.sleep(30)\n            os._exit(0)\n"
                     "        n += 1\nexcept OSError as exc:\n    print('fork refused', exc.errno)\n"
                     "print('forked', n)\n", memory_mb=1024)
    _needs_cgroup(box)
    assert cell is not None and cell["error"] is None, cell
    assert int(cell["stdout"].split("forked ")[1].split()[0]) < jail.PIDS_MAX, cell["stdout"]
    mine = f"autograder-{os.getpid()}-"
    for kind, mount, _ in jail.cgroup._mounts():  # noqa: SLF001
        assert not [p for p in Path(mount).rglob(f"{mine}*")], f"cgroup left in {mount}"


SYSCALLS = r'''
import ctypes, os, numpy as np
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def call(name, *args):
    r = libc.syscall(*args)
    print(name, r, ctypes.get_errno() if r < 0 else 0)
call("add_key", 248, b"user", b"note", b"secret", 6, -4)        # KEY_SPEC_USER_KEYRING
call("keyctl", 250, 0, -4, 0, 0, 0)                             # KEYCTL_GET_KEYRING_ID
call("request_key", 249, b"user", b"note", None, 0)
call("unshare", 272, 0x10000000)                                # CLONE_NEWUSER
call("ptrace", 101, 0, 0, 0, 0)                                 # PTRACE_TRACEME
print("numpy", float(np.linalg.norm(np.ones(4))), os.getuid())
'''


def test_seccomp_refuses_keyrings_and_namespaces():
    box, cell = _run(SYSCALLS)
    if box.isolation["seccomp"].startswith("none"):
        pytest.skip(box.isolation["seccomp"])
    assert cell is not None and cell["error"] is None, cell
    lines = dict(line.split(" ", 1) for line in cell["stdout"].splitlines())
    for name in ("add_key", "keyctl", "request_key", "unshare", "ptrace"):
        assert lines[name] == "-1 1", (name, lines[name])  # EPERM
    assert lines["numpy"].startswith("2.0")


def test_concurrent_sandboxes_have_their_own_uids():
    if os.geteuid() != 0:
        pytest.skip("without root the sandbox's uid lives in its own user namespace")
    boxes = [jail.Sandbox(sandboxed=True, deadline=time.monotonic() + 60, memory_mb=512, cpu_seconds=30)
             for _ in range(2)]
    uids = []
    try:
        for box in boxes:
            box.send({"cells": ["import os\nprint(os.getuid(), os.getgid())"], "files": {}, "graded": [],
                      "limits": box.limits, "cell_timeout": 30.0, "call_timeout": 5.0})
        for box in boxes:
            cell, _ = box.recv(30, "cell")
            uid, gid = map(int, cell["stdout"].split())
            assert uid == gid == box.uid
            uids.append(uid)
    finally:
        for box in boxes:
            box.close()
    assert uids[0] != uids[1] and all(jail.UID_BASE <= u < jail.UID_BASE + jail.UID_SLOTS for u in uids)
    # a closed sandbox's slot is free again (slots are claimed in a random order: its lock file is gone)
    assert not any((jail.LOCK_DIR / str(u - jail.UID_BASE)).exists() for u in uids)


#: What a submission can observe of its sandbox: argv (its own and bubblewrap's), open fds, uid/gid
#: (the slot replaced by its kind), environment, cgroup paths, hostname.
_OBSERVE = r"""
import os, re, socket
def observe():
    me = os.getuid()
    kind = "slot" if 60100 <= me < 61100 else str(me)
    text = "\n".join([
        open("/proc/self/cmdline", "rb").read().decode(errors="replace"),
        open("/proc/1/cmdline", "rb").read().decode(errors="replace"),
        " ".join(sorted(os.listdir("/proc/self/fd"))),
        f"{os.getuid() == os.getgid()} {os.getgroups()}",
        repr(sorted(os.environ.items())),
        open("/proc/self/cgroup").read(),
        socket.gethostname(),
    ])
    return text.replace(str(me), kind)
"""


def _cell(source: str, **meta):
    """A locked nbgrader code cell of a source notebook (``meta`` overrides the defaults)."""
    import nbformat

    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = dict({"grade": False, "solution": False, "locked": True, "schema_version": 3}, **meta)
    return cell


def _graded_notebook(*cells):
    """A Python source notebook of ``cells``: scored through the grader's real path (it is its own submission)."""
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.cells = list(cells)
    return notebook


def test_visible_and_hidden_sandboxes_look_the_same():
    """Issue 17: the sandbox of the hidden tests must not be told from the visible one by anything a
    submission observes (fd numbers in argv and /proc/self/fd, uid slot, environment, cgroup paths,
    hostname). A test cell compares what ``observe()`` returns in its visible block (first sandbox) and
    in its hidden block (second sandbox), through the grader's real scoring path. About 2 s."""
    from autograder.scorer import score_submission

    source = _graded_notebook(
        _cell(_OBSERVE, grade_id="observe", solution=True, locked=False),
        _cell("seen = observe()\n### BEGIN HIDDEN TESTS\nassert observe() == seen, (observe(), seen)\n"
              "### END HIDDEN TESTS", grade_id="test_same", grade=True, points=1),
    )
    result = score_submission(source, source, seed=1, timeout=30, memory_mb=512, sandboxed=True)
    assert not result["problems"], result["problems"]
    (test,) = result["tests"]
    assert test["score"] == 1, test


def test_hidden_calls_come_after_every_visible_call():
    """Red team: a hidden call between two visible ones showed its duration to the student's first
    process (the hidden tests' sandbox slept 3·b s, the visible one read b as the gap between its
    calls). Every hidden block now runs after the last visible call, the first sandbox closed: the
    hidden block of the first cell sees the visible stamps of the second. About 2 s."""
    from autograder.scorer import score_submission

    source = _graded_notebook(
        _cell("import time\ndef stamp():\n    return time.time()\n", grade_id="stamp", solution=True, locked=False),
        _cell("VISIBLE = [stamp()]\n### BEGIN HIDDEN TESTS\nassert stamp() > max(VISIBLE) and len(VISIBLE) == 2\n"
              "### END HIDDEN TESTS", grade_id="test_first", grade=True, points=1),
        _cell("VISIBLE.append(stamp())", grade_id="test_second", grade=True, points=1),
    )
    result = score_submission(source, source, seed=1, timeout=30, memory_mb=512, sandboxed=True)
    assert not result["problems"], result["problems"]
    assert [t["score"] for t in result["tests"]] == [1, 1], result["tests"]
    assert [o["hidden"] for o in result["tests"][0]["outputs"]] == [False, True]


def test_correct_solution_keeps_full_marks_in_the_sandbox():
    """The instructor's own solution, through the sandbox with every limit on."""
    import nbformat

    from autograder.scorer import score_submission

    source = nbformat.read(REPO / "source" / "laplace" / "laplace.ipynb", as_version=4)
    result = score_submission(source, source, seed=1, timeout=60, memory_mb=2048, sandboxed=True)
    assert not result["problems"], result["problems"]
    assert result["tests"] and all(t["score"] == t["points"] for t in result["tests"]), result["tests"]


def test_cgroup_v2_files(tmp_path, monkeypatch):
    """The v2 branch (GitHub runners) on a stand-in hierarchy: limits written where the kernel reads them."""
    (tmp_path / "cgroup.controllers").write_text("cpu memory pids\n")
    monkeypatch.setattr(jail.cgroup, "_mounts", lambda: [("cgroup2", str(tmp_path), {"rw"})])
    group, how = jail.Cgroup.create(300 << 20, 17)
    assert group is not None and group.version == 2 and how.startswith("cgroup v2"), how
    (d,) = group.dirs
    assert d.parent == tmp_path / "autograder"
    assert (d / "memory.max").read_text() == str(300 << 20) and (d / "pids.max").read_text() == "17"
    assert (tmp_path / "cgroup.subtree_control").read_text() == "+memory +pids +cpu"
    assert (d / "cpu.weight").read_text() == str(jail.CPU_WEIGHT) and "cpu.weight" in how  # fair share
    (d / "cpu.stat").write_text("usage_usec 2500000\nuser_usec 2000000\n")
    assert group.cpu_seconds() == 2.5  # time limits read the group's own CPU time here
    # a submission's two sandboxes nest in one CPU share (one weight between them)
    share = jail.CpuShare.create()
    assert share is not None and share.dirs[0].parent == tmp_path / "autograder"
    assert (share.dirs[0] / "cpu.weight").read_text() == str(jail.CPU_WEIGHT)
    nested, how = jail.Cgroup.create(300 << 20, 17, share=share)
    assert nested is not None and nested.dirs[0].parent == share.dirs[0], how
    (tmp_path / "cgroup.controllers").write_text("cpu\n")
    group, how = jail.Cgroup.create(300 << 20, 17)
    assert group is None and "without the memory and pids controllers" in how


def test_without_a_cgroup_grading_goes_on(monkeypatch):
    """No cgroup (no root, no controller): rlimits only, recorded, and the code still runs."""
    monkeypatch.setattr(jail.Cgroup, "create", classmethod(lambda cls, m, p: (None, "no controller (test)")))
    box, cell = _run("print(6 * 7)")
    assert box.isolation["memory_isolation"] == "rlimit only (no controller (test))"
    assert cell is not None and cell["stdout"] == "42\n"
