"""Trusted side of the sandbox: start the student's runner in bubblewrap and talk to it.

:func:`bwrap_command` builds the command line (see :mod:`autograder.sandbox.runner`
for what runs inside). As root, bubblewrap sets up the namespaces without a
user namespace (one would map the sandbox's uid to root, and the kernel does
not enforce ``RLIMIT_NPROC`` for root) and keeps only CAP_SETUID/CAP_SETGID,
with which the runner switches to a uid of its own (``UID_BASE`` + a slot no other live
sandbox holds) before it reads any student code; without root, bubblewrap uses an
unprivileged user namespace.

Limits of the sandbox as a whole, set up by this trusted side before anything starts: a
:class:`Cgroup` (v2 or v1, chosen at run time) caps the memory of all its processes together,
shared memory, memfds and its tmpfs included, without swap, and its number of tasks; the child
joins it before it executes bubblewrap and everything in it is killed at the end. A seccomp
filter (:func:`seccomp_filter`, libseccomp through ctypes, ``bwrap --seccomp``) refuses SysV shm,
memfds, keyrings, namespaces, ptrace and other syscalls no solution needs. Where no cgroup can be
made or libseccomp is missing, rlimits alone remain and :func:`isolation` says so.

Inside: own PID, network, IPC and UTS namespaces (no network at all; nothing
outlives pid 1, which dies with the grader: ``--die-with-parent``), a new
session, read-only binds of ``/usr``, the Python installation and the
site-packages folder minus the project's editable install (``helpers`` and
``autograder`` cannot be imported), the runner folder, and a private
size-capped tmpfs (``/home/student``, also the working folder; there is no
``/tmp``) as the only writable place; the root itself is read-only. The channel is two inherited
pipe fds; nothing else of the grader (files, sockets, pids) is visible.

:class:`Sandbox` is the client: every read has a deadline, every message is
validated by its caller, and any breach kills the sandbox.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import select
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from pathlib import Path

from autograder.sandbox import wire

RUNNER_DIR = Path(__file__).resolve().parent / "sandbox"
SANDBOX_UID = 65534
SITE_IN_SANDBOX = "/opt/site-packages"
RUNNER_IN_SANDBOX = "/opt/runner"
#: The Python installation inside (bound there, so that no host path shows in ``sys.executable``,
#: ``/proc/self/cmdline`` or ``sys.path``); libpython is found through LD_LIBRARY_PATH.
PYTHON_IN_SANDBOX = "/opt/python"
#: Seconds granted beyond the runner's own alarm before the sandbox is killed.
GRACE = 3.0
#: The only writable place inside (a size-capped tmpfs); there is no /tmp: no path inside looks
#: like a host folder (the grader's temporary folders, OUT) that a write could seem to reach.
HOME = "/home/student"
ENV = {"HOME": HOME, "TMPDIR": HOME, "LANG": "C.UTF-8", "PYTHONIOENCODING": "utf-8",
       "PYTHONDONTWRITEBYTECODE": "1", "MPLBACKEND": "Agg", "MPLCONFIGDIR": HOME + "/.matplotlib",
       "OPENBLAS_NUM_THREADS": "1",
       "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NBGRADER_EXECUTION": "autograde"}



def _limit_shown(seconds: float) -> float:
    """A step's limit as the student set it: the deadline minus the grace added to it (a step's
    remaining share of the submission's budget can be shorter than the grace itself)."""
    return seconds - GRACE if seconds > GRACE else seconds

class SandboxError(RuntimeError):
    """The student's sandbox is gone or broke the protocol (the call cannot be answered)."""


def _site_packages() -> Path:
    return Path(sysconfig.get_paths()["purelib"])


def _hidden_entries(site: Path) -> list[Path]:
    """Entries of site-packages that would make the project importable inside."""
    repo = str(Path(__file__).resolve().parents[1])
    hidden = []
    for entry in site.iterdir():
        name = entry.name
        if name in ("helpers", "autograder") or name.startswith(("__editable__", "dp_course")):
            hidden.append(entry)
        elif name.endswith(".pth"):
            try:
                text = entry.read_text(errors="replace")
            except OSError:
                continue
            if repo in text or "__editable__" in text:
                hidden.append(entry)
    return hidden


def bwrap_command(*, tmpfs_mb: int, uid: int, seccomp_fd: int | None = None) -> list[str]:
    """The bubblewrap command that runs the runner (arguments: see the runner).

    ``seccomp_fd``: a readable fd holding the BPF program of :func:`seccomp_filter`, which
    bubblewrap installs just before it executes the runner.
    """
    prefix = Path(sys.base_prefix).resolve()
    site = _site_packages()
    root = os.geteuid() == 0
    cmd = ["bwrap", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv",
           "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
           "--hostname", "sandbox"]
    if root:
        cmd += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        cmd += ["--unshare-user", "--uid", str(uid), "--gid", str(uid)]
    cmd += ["--ro-bind", "/usr", "/usr"]
    for top in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / top
        if path.is_symlink():
            cmd += ["--symlink", os.readlink(path), f"/{top}"]
        elif path.is_dir():
            cmd += ["--ro-bind", str(path), f"/{top}"]
    cmd += ["--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    cmd += ["--perms", "0755", "--dir", "/opt", "--ro-bind", str(prefix), PYTHON_IN_SANDBOX,
            "--ro-bind", str(site), SITE_IN_SANDBOX,
            "--ro-bind", str(RUNNER_DIR), RUNNER_IN_SANDBOX]
    for entry in _hidden_entries(site):
        target = f"{SITE_IN_SANDBOX}/{entry.name}"
        cmd += ["--tmpfs", target] if entry.is_dir() else ["--ro-bind", "/dev/null", target]
    cmd += ["--proc", "/proc", "--dev", "/dev", "--perms", "0755", "--dir", "/home",
            "--size", str(tmpfs_mb << 20), "--perms", "01777", "--tmpfs", HOME, "--remount-ro", "/",
            "--chdir", HOME]
    for key, value in dict(ENV, LD_LIBRARY_PATH=f"{PYTHON_IN_SANDBOX}/lib").items():
        cmd += ["--setenv", key, value]
    if seccomp_fd is not None:
        cmd += ["--seccomp", str(seccomp_fd)]
    return cmd


def sandbox_python() -> str:
    """The interpreter as the sandbox sees it (the base installation bound at :data:`PYTHON_IN_SANDBOX`)."""
    return f"{PYTHON_IN_SANDBOX}/bin/{Path(sys._base_executable).name}"  # noqa: SLF001


def args_through_fd(cmd: list[str], target: int | None = None) -> tuple[list[str], int | None]:
    """``cmd`` with bubblewrap's options passed through a pipe (``bwrap --args FD``), and the fd.

    Inside, ``/proc/1/cmdline`` is bubblewrap's argv: given on the command line, the options
    would show every host path bound into the sandbox (checkout, venv, Python installation).
    ``target``: the fd number to give the pipe (:func:`_at_fixed_fd`).
    """
    split = cmd.index(sandbox_python()) if sandbox_python() in cmd else len(cmd)
    options = b"".join(a.encode() + b"\0" for a in cmd[1:split])
    if len(options) > 60_000:  # more than a pipe holds without a reader: keep them visible
        return cmd, None
    fd, w = os.pipe()
    os.write(w, options)
    os.close(w)
    if target is not None:
        fd = _at_fixed_fd(fd, target)
    return [cmd[0], "--args", str(fd)] + cmd[split:], fd


#: The fd numbers the sandbox's inherited pipes get (channel in, channel out, seccomp program,
#: bubblewrap's options), whatever the grader has open: the visible and the hidden tests' sandboxes
#: of a submission start while different fds are open in the worker, and numbers that differed
#: (argv "7" vs "10", /proc/self/fd) told a submission which of the two it was.
CHILD_FDS = (200, 201, 202, 203)
#: Held while fds are moved to :data:`CHILD_FDS` and the sandbox is started (two threads starting
#: sandboxes would reuse the same numbers).
_FD_LOCK = threading.Lock()
_AT_FIXED: list[int] = []


@contextlib.contextmanager
def _child_fds():
    """Hold :data:`_FD_LOCK`; on the way out close what :func:`_at_fixed_fd` opened that is still
    open (the parent needs none of them once the sandbox started, and a failed start must not
    leave them taken)."""
    with _FD_LOCK:
        try:
            yield
        finally:
            while _AT_FIXED:
                try:
                    os.close(_AT_FIXED.pop())
                except OSError:
                    pass


def _at_fixed_fd(fd: int, target: int) -> int:
    """Move ``fd`` to the number ``target`` (which must be free in this process); return ``target``."""
    try:
        os.fstat(target)
    except OSError:
        pass
    else:
        os.close(fd)
        raise RuntimeError(f"fd {target} is already open in the grader; it is reserved for the sandbox's pipes")
    os.dup2(fd, target, inheritable=False)
    if _FD_LOCK.locked():
        _AT_FIXED.append(target)
    os.close(fd)
    return target


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL when the grading worker dies (prctl PR_SET_PDEATHSIG)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)
    except Exception:  # noqa: BLE001 - not Linux: the worker still kills it
        pass


# ---------------------------------------------------------------------------------------------
# Per-sandbox limits the kernel enforces for the whole sandbox (not per process): a cgroup for
# memory (shmem, tmpfs and kernel memory charged to it included) and process count, a seccomp
# filter, and a uid of its own. Each degrades to what is possible here and says so.

#: First uid of the per-sandbox uids (a slot each, held by an flock while the sandbox lives):
#: below systemd's dynamic users (61184-65519), above Debian's regular users (< 60000) and away
#: from /etc/subuid ranges (100000+), so no process of the machine shares a sandbox's uid.
UID_BASE = 60100
UID_SLOTS = 1000
#: One place for every grader on the machine (whatever its TMPDIR), writable by root only.
LOCK_DIR = Path("/run/autograder-uid-slots" if os.access("/run", os.W_OK)
                else Path(tempfile.gettempdir()) / "autograder-uid-slots")
#: Processes and threads per sandbox (cgroup pids.max and RLIMIT_NPROC of its own uid).
PIDS_MAX = 64


def _claim_uid() -> tuple[int, tuple[int, Path] | None]:
    """A uid no other live sandbox on this machine holds, and the lock (fd, path) that holds it.

    The lock file is removed when the slot is released (:func:`_release_uid`) or found stale
    (:func:`sweep_stale`), so a claim checks, once it holds the lock, that its file is still the
    one at the path (a file removed between ``open`` and ``flock`` would protect nothing).
    """
    import fcntl
    import pwd
    try:
        LOCK_DIR.mkdir(mode=0o700, exist_ok=True)
    except OSError:
        return SANDBOX_UID, None
    # Slots in a random order: the first free slot would give the second sandbox of a submission
    # (its hidden tests') a higher uid than the first, which a submission could read as "hidden".
    import random
    for slot in random.SystemRandom().sample(range(UID_SLOTS), UID_SLOTS):
        uid = UID_BASE + slot
        try:
            pwd.getpwuid(uid)
            continue  # a named account: not ours to use
        except KeyError:
            pass
        path = LOCK_DIR / str(slot)
        for _ in range(3):
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            except OSError:
                return SANDBOX_UID, None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                break  # held by a live sandbox: next slot
            try:
                same = os.stat(path).st_ino == os.fstat(fd).st_ino
            except OSError:
                same = False
            if same:
                os.write(fd, str(os.getpid()).encode())  # for a human reading the folder
                return uid, (fd, path)
            os.close(fd)  # removed meanwhile: claim the slot's new file
    return SANDBOX_UID, None


def _release_uid(lock: tuple[int, Path]) -> None:
    """Free a slot: its file is removed while the lock is still held, then closed."""
    fd, path = lock
    try:
        if os.stat(path).st_ino == os.fstat(fd).st_ino:
            os.unlink(path)
    except OSError:
        pass
    os.close(fd)


def _sweep_locks() -> list[str]:
    """Remove lock files of uid slots that no live sandbox holds (their grader was killed)."""
    import fcntl

    removed = []
    try:
        names = [n for n in os.listdir(LOCK_DIR) if n.isdigit()]
    except OSError:
        return removed
    for name in names:
        try:
            fd = os.open(LOCK_DIR / name, os.O_RDWR | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue  # held: a live sandbox
        _release_uid((fd, LOCK_DIR / name))
        removed.append(str(LOCK_DIR / name))
    return removed


def _mounts() -> list[tuple[str, str, set[str]]]:
    try:
        lines = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        parts = line.split()
        if len(parts) >= 4 and parts[2] in ("cgroup", "cgroup2"):
            found.append((parts[2], parts[1], set(parts[3].split(","))))
    return found


def _own_cgroup(controller: str) -> str:
    """This process's cgroup path in the hierarchy of ``controller`` ("" = cgroup v2)."""
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, names, path = line.split(":", 2)
            if controller in names.split(","):
                return path
    except (OSError, ValueError):
        pass
    return "/"


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


#: CPU weight of every sandbox (v1 ``cpu.shares``, v2 ``cpu.weight``; the kernels' defaults): all
#: sandboxes are siblings with equal weights, so a submission that runs 62 busy children gets one
#: sandbox's share of the CPU, not 62 processes' worth, and a classmate graded beside it keeps its own.
CPU_SHARES, CPU_WEIGHT = 1024, 100
#: CPU bandwidth of one submission (its :class:`CpuShare`, or its one sandbox's group): one core.
#: Weights share the CPU only among runnable groups; on a quiet machine a hog with 62 spinning
#: children would otherwise take every core the trusted workers and classmates leave idle for a
#: moment, and the honest submissions' own pipeline (worker, then sandbox) waits behind it.
CPU_PERIOD_US = 100_000
#: Name of every group this module makes: ``autograder-<pid of the grading process>-<ns>``; the pid
#: tells :func:`sweep_stale` whether its owner is gone.
GROUP_PREFIX = "autograder-"


class Cgroup:
    """A cgroup (v2, or v1 memory + pids + cpu + cpuacct) holding one sandbox.

    Memory without swap and pids are capped, the CPU is shared fairly between sandboxes (equal
    weights), and the CPU time of everything in the group is read back (:meth:`cpu_seconds`: the
    submission's time limits count its own CPU, not the time its neighbours take from it).
    v1 memory cgroups charge shmem/tmpfs pages to the group of the task that touches them and,
    on kernels >= 4.6 without ``cgroup.memory=nokmem``, kernel memory (inodes, dentries) to
    ``memory.usage_in_bytes`` too, so one limit covers heap, SysV shm, memfd, the tmpfs and
    its inodes. v1 groups are made inside the grader's own group (its limits keep applying);
    v2 ones under the root of the hierarchy (a v2 group with processes cannot delegate
    controllers to children). Without the cpu controller the group is made anyway (no fair
    share; :attr:`how` says so); without cpuacct, time limits fall back to wall-clock time.
    """

    def __init__(self, dirs: list[Path], version: int, where: dict[str, Path] | None = None):
        self.dirs, self.version = dirs, version
        #: controller -> its folder of this group (v2: the one folder).
        self.where = where or {"memory": dirs[0]}

    @classmethod
    def create(cls, memory_bytes: int, pids: int, share: "CpuShare | None" = None, *,
               prefix: str = GROUP_PREFIX.rstrip("-"), cpu_weight: int = CPU_WEIGHT) -> tuple["Cgroup | None", str]:
        """The cgroup, or ``None`` and why not (never raises).

        ``share``: the submission's :class:`CpuShare`; the group's CPU weight is then taken from
        the submission's (its two sandboxes split one sandbox's share, never take two).
        ``prefix`` names the group (``<prefix>-<pid>-<ns>``; the class server uses one per
        student); ``cpu_weight`` (1-10000, 100 = one ordinary group's share: v1 ``cpu.shares``
        = weight x 1024 / 100, v2 ``cpu.weight``) is the share of all its processes together.
        """
        name = f"{prefix}-{os.getpid()}-{time.monotonic_ns()}"
        cpu_weight = cpu_weight or CPU_WEIGHT
        mounts = _mounts()
        v1 = {c: m for kind, m, opts in mounts if kind == "cgroup" and "rw" in opts
              for c in ("memory", "pids", "cpu", "cpuacct") if c in opts}
        v2 = [m for kind, m, opts in mounts if kind == "cgroup2" and "rw" in opts]
        errors = []
        if "memory" in v1 and "pids" in v1:
            where = {c: Path(v1[c] + _own_cgroup(c).rstrip("/")) / name for c in v1}
            if share is not None and share.version == 1:
                for c in where:
                    if v1[c] == share.mount:  # the cpu hierarchy (and what is mounted with it)
                        where[c] = share.dirs[0] / name
            dirs = list(dict.fromkeys(where[c] for c in ("memory", "pids", "cpu", "cpuacct") if c in where))
            group = cls(dirs, 1, where)
            try:
                for d in dirs:
                    d.mkdir()
                mem = where["memory"]
                _write(mem / "memory.limit_in_bytes", str(memory_bytes))
                if (mem / "memory.memsw.limit_in_bytes").exists():  # no swap either
                    _write(mem / "memory.memsw.limit_in_bytes", str(memory_bytes))
                else:
                    _write(mem / "memory.swappiness", "0")
                _write(where["pids"] / "pids.max", str(pids))
                cpu = "no cpu controller: no fair share"
                if "cpu" in where:
                    _write(where["cpu"] / "cpu.shares", str(max(2, cpu_weight * CPU_SHARES // CPU_WEIGHT)))
                    cpu = "cpu.shares"
                    if share is None:
                        _one_core(where["cpu"], 1)
                return group, f"cgroup v1 (memory.limit_in_bytes, memory.memsw.limit_in_bytes, pids.max, {cpu})"
            except OSError as exc:
                group.remove()
                errors.append(f"cgroup v1: {exc.strerror or exc}")
        for mount in v2:
            root = Path(mount)
            try:
                available = set((root / "cgroup.controllers").read_text().split())
                if not {"memory", "pids"} <= available:
                    errors.append("cgroup v2 without the memory and pids controllers")
                    continue
                parent = root / prefix.split("-")[0]
                parent.mkdir(exist_ok=True)
                wanted = "+memory +pids" + (" +cpu" if "cpu" in available else "")
                for folder in (root, parent):
                    try:
                        _write(folder / "cgroup.subtree_control", wanted)
                    except OSError:  # e.g. cpu refused (real-time tasks in the root): without it
                        _write(folder / "cgroup.subtree_control", "+memory +pids")
            except OSError as exc:
                errors.append(f"cgroup v2: {exc.strerror or exc}")
                continue
            d = (share.dirs[0] if share is not None and share.version == 2 else parent) / name
            group = cls([d], 2, {c: d for c in ("memory", "pids", "cpu", "cpuacct")})
            try:
                d.mkdir()
                _write(d / "memory.max", str(memory_bytes))
                if (d / "memory.swap.max").exists():
                    _write(d / "memory.swap.max", "0")
                _write(d / "pids.max", str(pids))
                cpu = "no cpu controller: no fair share"
                try:
                    _write(d / "cpu.weight", str(cpu_weight))
                    cpu = "cpu.weight"
                    if share is None:
                        _one_core(d, 2)
                except OSError:
                    pass
                return group, f"cgroup v2 (memory.max, memory.swap.max = 0, pids.max, {cpu})"
            except OSError as exc:
                group.remove()
                errors.append(f"cgroup v2: {exc.strerror or exc}")
        return None, "; ".join(errors) or "no cgroup hierarchy with memory and pids controllers"

    def join(self) -> None:
        """Move the calling process in (run in the child before exec: nothing runs outside)."""
        for d in self.dirs:
            _write(d / "cgroup.procs", str(os.getpid()))

    def pids(self) -> list[int]:
        return _group_pids(self.dirs)

    def _stat(self, names: tuple[str, ...], key: str | None = None, controller: str = "memory") -> int | None:
        folder = self.where.get(controller)
        if folder is None:
            return None
        for n in names:
            try:
                text = (folder / n).read_text()
            except OSError:
                continue
            if key is None:
                return int(text.split()[0])
            for line in text.splitlines():
                parts = line.split()
                if len(parts) == 2 and parts[0] == key:
                    return int(parts[1])
        return None

    def peak(self) -> int | None:
        """Highest memory charged to the group, in bytes (``None`` when the kernel does not say)."""
        return self._stat(("memory.max_usage_in_bytes", "memory.peak"))

    def oom_kills(self) -> int:
        return self._stat(("memory.events",) if self.version == 2 else ("memory.oom_control",), "oom_kill") or 0

    def cpu_seconds(self) -> float | None:
        """CPU time (user + system) used so far by every process ever in the group; ``None`` if unknown."""
        if self.version == 2:
            usec = self._stat(("cpu.stat",), "usage_usec", "cpu")
            return None if usec is None else usec / 1e6
        ns = self._stat(("cpuacct.usage",), None, "cpuacct")
        return None if ns is None else ns / 1e9

    def remove(self) -> None:
        """Kill every process in the group, then remove it."""
        _remove_group(self.dirs)


class CpuShare:
    """One submission's CPU share: a cgroup (cpu controller) holding its sandboxes' groups.

    The visible tests' and the hidden tests' sandboxes of a submission live beside each other;
    as siblings they would get two shares, so a hog would take two classmates' worth of CPU.
    Nested in this group they split one (:data:`CPU_SHARES` / :data:`CPU_WEIGHT`).
    """

    def __init__(self, folder: Path, version: int, mount: str):
        self.dirs, self.version, self.mount = [folder], version, mount

    @classmethod
    def create(cls) -> "CpuShare | None":
        """The group, or ``None`` where the cpu controller cannot be used (sandboxes are then siblings)."""
        name = f"{GROUP_PREFIX}{os.getpid()}-{time.monotonic_ns()}"
        for kind, mount, opts in _mounts():
            if "rw" not in opts or not (kind == "cgroup2" or "cpu" in opts):
                continue
            share = None
            try:
                if kind == "cgroup":
                    folder = Path(mount + _own_cgroup("cpu").rstrip("/")) / name
                    folder.mkdir()
                    share = cls(folder, 1, mount)
                    _write(folder / "cpu.shares", str(CPU_SHARES))
                    _one_core(folder, 1)
                    _LIVE_SHARES.add(share)
                    return share
                root = Path(mount)
                if "cpu" not in (root / "cgroup.controllers").read_text().split():
                    continue
                (root / "autograder").mkdir(exist_ok=True)
                for parent in (root, root / "autograder"):
                    _write(parent / "cgroup.subtree_control", "+memory +pids +cpu")
                folder = root / "autograder" / name
                folder.mkdir()
                share = cls(folder, 2, mount)
                _write(folder / "cpu.weight", str(CPU_WEIGHT))
                _one_core(folder, 2)
                _write(folder / "cgroup.subtree_control", "+memory +pids +cpu")
                _LIVE_SHARES.add(share)
                return share
            except OSError:
                if share is not None:
                    share.remove()
                return None
        return None

    def remove(self) -> None:
        _remove_group(self.dirs)
        _LIVE_SHARES.discard(self)


def _one_core(folder: Path, version: int) -> None:
    """Cap the group at one core (:data:`CPU_PERIOD_US` of CPU per period); kernels without CFS
    bandwidth control keep the weight alone."""
    try:
        if version == 1:
            _write(folder / "cpu.cfs_period_us", str(CPU_PERIOD_US))
            _write(folder / "cpu.cfs_quota_us", str(CPU_PERIOD_US))
        else:
            _write(folder / "cpu.max", f"{CPU_PERIOD_US} {CPU_PERIOD_US}")
    except OSError:
        pass


#: CpuShares of this process not yet removed (:func:`stop_all`).
_LIVE_SHARES: set = set()


def _group_pids(dirs) -> list[int]:
    found = set()
    for d in dirs:
        try:
            found.update(int(p) for p in (d / "cgroup.procs").read_text().split())
        except (OSError, ValueError):
            pass
    return sorted(found)


def _remove_group(dirs: list[Path]) -> None:
    for d in dirs:  # a submission's CpuShare holds its sandboxes' groups: those first
        try:
            inner = [d / e.name for e in os.scandir(d) if e.is_dir(follow_symlinks=False)]
        except OSError:
            inner = []
        for sub in inner:
            _remove_group([sub])
    kill_file = dirs[0] / "cgroup.kill"
    for attempt in range(200):
        pids = _group_pids(dirs)
        if not pids:
            break
        if kill_file.exists():
            try:
                _write(kill_file, "1")
            except OSError:
                pass
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.005 if attempt < 20 else 0.05)
    for d in dirs:
        for attempt in range(100):
            try:
                d.rmdir()
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.01)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: someone else's live process
        return True
    return True


def sweep_stale() -> list[str]:
    """Remove what graders killed by SIGKILL left behind; the paths removed.

    Groups named ``autograder-<pid>-...`` whose pid is gone (their processes are killed first),
    searched in every cgroup hierarchy down to a few levels (a grader's own group may be a
    session scope), and uid-slot lock files no live sandbox holds. A live grader's groups and
    slots are never touched: their owner pid exists, their lock is held.
    """
    import re

    removed = []
    pattern = re.compile(re.escape(GROUP_PREFIX) + r"(\d+)-\d+$")
    stale: dict[str, list[Path]] = {}
    for _, mount, opts in _mounts():
        if "rw" not in opts:
            continue
        for folder, subdirs, _ in _walk(Path(mount), depth=5):
            for d in subdirs:
                m = pattern.match(d)
                if m and not _pid_alive(int(m.group(1))):
                    stale.setdefault(d, []).append(folder / d)
    for dirs in stale.values():
        _remove_group(dirs)
        removed += [str(d) for d in dirs if not d.exists()]
    removed += _sweep_locks()
    return removed


def remove_left_by(pid: int) -> list[str]:
    """Remove the groups and uid slots a grading worker ``pid`` left when it was killed; the paths.

    The parent calls this after reaping a worker that did not finish its own cleanup in time
    (SIGKILL after the SIGTERM grace on a loaded machine), so nothing waits for the next start's
    :func:`sweep_stale`. Only a reaped pid is cleaned: a live worker's groups are never touched.
    """
    if _pid_alive(pid):
        return []
    by_name: dict[str, list[Path]] = {}
    for group in owned_by([pid])[0]:
        by_name.setdefault(Path(group).name, []).append(Path(group))
    removed = []
    for dirs in by_name.values():
        _remove_group(dirs)
        removed += [str(d) for d in dirs if not d.exists()]
    return removed + _sweep_locks()


def owned_by(pids) -> tuple[list[str], list[str]]:
    """``(cgroup folders, uid-slot lock files)`` made by one of the grading processes ``pids``."""
    names = tuple(f"{GROUP_PREFIX}{pid}-" for pid in pids)
    groups = []
    for _, mount, _ in _mounts():
        for folder, subdirs, _ in _walk(Path(mount), depth=6):
            groups += [str(folder / d) for d in subdirs if d.startswith(names)]
    locks = []
    for path in LOCK_DIR.glob("[0-9]*"):
        try:
            if int(path.read_text() or 0) in set(pids):
                locks.append(str(path))
        except (OSError, ValueError):
            pass
    return groups, locks


def _walk(root: Path, depth: int):
    stack = [(root, 0)]
    while stack:
        folder, level = stack.pop()
        try:
            subdirs = [e.name for e in os.scandir(folder) if e.is_dir(follow_symlinks=False)]
        except OSError:
            continue
        yield folder, subdirs, level
        if level < depth:
            stack += [(folder / d, level + 1) for d in subdirs if not d.startswith(GROUP_PREFIX)]


# Syscalls no honest solution needs; most reach memory or state outside the sandbox's limits
# (SysV shm, memfd), state shared between sandboxes (keyrings), or kernel attack surface.
DENIED_SYSCALLS = (
    "shmget", "shmat", "shmctl", "shmdt", "memfd_create", "memfd_secret",
    "add_key", "keyctl", "request_key",
    "ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "pidfd_getfd",
    "perf_event_open", "bpf", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "mount", "umount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig",
    "fsmount", "fspick", "mount_setattr", "unshare", "setns", "kexec_load", "kexec_file_load",
    "init_module", "finit_module", "delete_module", "reboot", "swapon", "swapoff", "acct", "quotactl",
    "syslog", "lookup_dcookie", "name_to_handle_at", "open_by_handle_at", "fanotify_init",
    "keyctl", "personality", "vhangup", "iopl", "ioperm", "settimeofday", "clock_settime", "adjtimex",
    "clock_adjtime", "sethostname", "setdomainname", "mbind", "migrate_pages", "move_pages",
    "set_mempolicy", "set_mempolicy_home_node",
    # Channels between sandboxes running at once (a submission's visible and hidden sandboxes, or
    # classmates'): locks and inotify on the files every sandbox sees read-only (red team, issue 17).
    "flock", "inotify_init", "inotify_init1", "inotify_add_watch", "fanotify_mark")
#: fcntl(2) commands refused for the same reason: record locks (classic and open-file-description),
#: leases and directory notification on shared files.
_FCNTL_DENIED = (5, 6, 7, 36, 37, 38, 1024, 1025, 1026)  # F_GETLK F_SETLK F_SETLKW F_OFD_* F_SETLEASE F_GETLEASE F_NOTIFY
#: Namespace flags refused in clone(2); clone3 passes its flags in memory a filter cannot read,
#: so it gets ENOSYS (libc then falls back to clone).
_CLONE_NAMESPACES = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000,
                     0x40000000, 0x00000080)  # NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWTIME
_SECCOMP_CACHE: list = []


class _ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64),
                ("datum_b", ctypes.c_uint64)]


def seccomp_filter() -> tuple[bytes | None, str]:
    """The BPF program (``bwrap --seccomp``) denying :data:`DENIED_SYSCALLS` with EPERM.

    Built with libseccomp (ctypes); ``None`` and why when it is not installed. Syscalls of other
    ABIs (i386, x32) kill the process (libseccomp's default for a foreign architecture).
    """
    if _SECCOMP_CACHE:
        return _SECCOMP_CACHE[0]
    result = _build_seccomp()
    _SECCOMP_CACHE.append(result)
    return result


def _build_seccomp() -> tuple[bytes | None, str]:
    import ctypes.util
    name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    try:
        lib = ctypes.CDLL(name, use_errno=True)
    except OSError:
        return None, "libseccomp is not installed (apt-get install libseccomp2)"
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                           ctypes.POINTER(_ArgCmp)]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    allow, eperm, enosys = 0x7FFF0000, 0x00050000 | 1, 0x00050000 | 38
    ctx = lib.seccomp_init(allow)
    if not ctx:
        return None, "seccomp_init failed"
    try:
        denied = []
        for syscall in dict.fromkeys(DENIED_SYSCALLS):
            nr = lib.seccomp_syscall_resolve_name(syscall.encode())
            if nr == -1:  # unknown to this libseccomp: nothing to deny
                continue
            if lib.seccomp_rule_add_array(ctx, eperm, nr, 0, None) == 0:
                denied.append(syscall)
        clone = lib.seccomp_syscall_resolve_name(b"clone")
        for flag in _CLONE_NAMESPACES:
            cmp = _ArgCmp(0, 7, flag, flag)  # SCMP_CMP_MASKED_EQ: (flags & flag) == flag
            if lib.seccomp_rule_add_array(ctx, eperm, clone, 1, ctypes.byref(cmp)) != 0:
                return None, "seccomp: cannot filter clone flags"
        fcntl = lib.seccomp_syscall_resolve_name(b"fcntl")
        for command in _FCNTL_DENIED:
            cmp = _ArgCmp(1, 4, command, 0)  # SCMP_CMP_EQ on the command argument
            if lib.seccomp_rule_add_array(ctx, eperm, fcntl, 1, ctypes.byref(cmp)) != 0:
                return None, "seccomp: cannot filter fcntl commands"
        clone3 = lib.seccomp_syscall_resolve_name(b"clone3")
        if clone3 != -1:
            lib.seccomp_rule_add_array(ctx, enosys, clone3, 0, None)
        with tempfile.TemporaryFile() as f:
            if lib.seccomp_export_bpf(ctx, f.fileno()) != 0:
                return None, "seccomp_export_bpf failed"
            f.seek(0)
            program = f.read()
    finally:
        lib.seccomp_release(ctx)
    return program, f"seccomp: {len(denied)} syscalls denied, namespace flags of clone and lock/lease commands of fcntl refused"


def isolation() -> dict:
    """What this machine enforces per sandbox (for report.json), probed without starting one."""
    group, how = Cgroup.create(64 << 20, PIDS_MAX)
    if group is not None:
        group.remove()
    program, seccomp = seccomp_filter()
    root = os.geteuid() == 0
    return {"memory_isolation": how if group else f"rlimit only ({how})",
            "seccomp": seccomp if program else f"none ({seccomp})",
            "uid": (f"one per sandbox ({UID_BASE}+slot)" if root
                    else "the grader's uid, in an unprivileged user namespace")}


def probe(tmpfs_mb: int = 16) -> str | None:
    """``None`` when bubblewrap can start a sandboxed Python here, else why not."""
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed"
    cmd, fd = args_through_fd(bwrap_command(tmpfs_mb=tmpfs_mb, uid=SANDBOX_UID)
                              + [sandbox_python(), "-I", "-S", "-c", "pass"])
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=30,
                              pass_fds=[fd] if fd is not None else [])
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap could not start ({exc})"
    finally:
        if fd is not None:
            os.close(fd)
    if proc.returncode != 0:
        return f"bubblewrap could not start a sandbox: {proc.stderr.strip()[:300]}"
    return None


#: Sandboxes of this process not yet killed (:func:`stop_all` on exit or SIGTERM).
_LIVE: set = set()
#: A step's wall-clock backstop is WALL_FACTOR x its CPU limit + WALL_SLACK seconds: generous, since
#: the CPU limit is the real one and a loaded machine (2 cores, other jobs) stretches wall time.
WALL_FACTOR, WALL_SLACK = 3.0, 10.0
#: Seconds between two readings of a waiting sandbox's CPU time.
CPU_POLL = 0.25


def stop_all() -> None:
    """Kill every live sandbox of this process: its processes, cgroup and uid slot go with it."""
    for item in list(_LIVE) + list(_LIVE_SHARES):
        try:
            item.kill("stopped") if isinstance(item, Sandbox) else item.remove()
        except Exception:  # noqa: BLE001 - best effort on the way out
            pass


atexit.register(stop_all)


def _runnable_seconds(pids: list[int]) -> float | None:
    """Seconds the threads of ``pids`` ran or waited for a CPU (``/proc/<pid>/task/*/schedstat``:
    run time + run-queue delay), ``None`` when nothing could be read."""
    total, seen = 0, False
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as f:
                    run, wait = f.read().split()[:2]
                total += int(run) + int(wait)
                seen = True
            except (OSError, ValueError):
                continue
    return total / 1e9 if seen else None


class Step:
    """The limits of one cell or call of student code, across every exchange it makes.

    CPU: ``seconds`` of the sandbox's own CPU time (its cgroup) from the step's start, however
    much the machine's load stretches it in wall time. Wall clock: only the time in which the judge
    waited for the sandbox while the sandbox's processes neither ran nor waited for a CPU (they
    slept or blocked) counts (:attr:`asleep`), up to :data:`WALL_FACTOR` x ``seconds`` +
    :data:`WALL_SLACK`; the time the judge spends answering the step's draws is not counted either.
    A busy machine therefore never ends a step that computes; a sleeping one ends as before.
    Without a cgroup (no CPU accounting) the step is ``WALL_FACTOR`` x ``seconds`` of wall time.
    """

    def __init__(self, sandbox: "Sandbox", seconds: float):
        self.sandbox, self.seconds = sandbox, float(seconds)
        self.cpu0 = sandbox.cpu_seconds()
        self.sleep_limit = WALL_FACTOR * self.seconds + WALL_SLACK
        self.wall_deadline = time.monotonic() + (self.seconds if self.cpu0 is None else self.sleep_limit)
        self.asleep, self.cpu_used = 0.0, None
        self._wall, self._run = time.monotonic(), None

    def resume(self) -> None:
        """The judge waits for the sandbox again (its own time since the last wait is not counted)."""
        self._wall = time.monotonic()

    def poll(self) -> None:
        """Count the wall time since the last look in which the sandbox neither ran nor was runnable."""
        now, run = time.monotonic(), self.sandbox.runnable_seconds()
        if run is None or self._run is None:  # first look (or no schedstat): the interval is not judged
            busy = now - self._wall if run is not None else 0.0
        else:
            busy = run - self._run
        self.asleep += max(0.0, (now - self._wall) - max(0.0, busy))
        self._wall, self._run = now, run if run is not None else self._run

    def used(self) -> float | None:
        """CPU seconds the sandbox used since the step began (``None`` without a cgroup)."""
        now = self.sandbox.cpu_seconds()
        return None if now is None or self.cpu0 is None else now - self.cpu0


class Sandbox:
    """One student's runner, in bubblewrap (or, with ``sandboxed=False``, a plain process).

    ``deadline`` (``time.monotonic()``) is the wall-clock backstop of the whole
    submission: past it the sandbox is killed, whatever it is doing. ``cpu_budget``
    (seconds) is the submission's real limit, counted in the CPU time of its own
    cgroup (every process in it), so that a busy neighbour does not use it up; each
    :meth:`recv` also counts its ``seconds`` in that CPU time, with a wall-clock
    backstop of :data:`WALL_FACTOR` times as long. Without a cgroup both count wall time.
    """

    def __init__(self, *, sandboxed: bool, deadline: float, memory_mb: int | None,
                 cpu_seconds: int, tmpfs_mb: int = 256, uid: int | None = None,
                 cpu_budget: float | None = None, share: CpuShare | None = None):
        self.deadline, self.problem, self.cpu_budget = deadline, None, cpu_budget
        self.cgroup, self.uid_lock, self.memory_peak, self.cpu_used = None, None, None, None
        self.proc, self.tmp, self.memory_mb = None, None, memory_mb
        _LIVE.add(self)  # before anything is claimed: an interruption from here on is cleaned up
        self.memory_mb = memory_mb
        with _child_fds():  # CHILD_FDS are free only between two starts
            to_child_r, self.to_child = os.pipe()
            self.from_child, from_child_w = os.pipe()
            to_child_r, from_child_w = _at_fixed_fd(to_child_r, CHILD_FDS[0]), _at_fixed_fd(from_child_w, CHILD_FDS[1])
            limits = {"cpu": cpu_seconds, "nproc": PIDS_MAX, "fsize": 64 << 20, "nofile": 64, "core": 0}
            if memory_mb:
                limits["as"] = int(memory_mb) << 20
            self.limits = limits
            self.tmp = None
            #: What the kernel enforces for this sandbox as a whole (report.json, tests).
            self.isolation = {"memory_isolation": "rlimit only (no sandbox)", "seccomp": "none (no sandbox)",
                              "uid": "the grader's (no sandbox)"}
            pass_fds = [to_child_r, from_child_w]
            if sandboxed:
                if uid is None:
                    uid, self.uid_lock = _claim_uid() if os.geteuid() == 0 else (SANDBOX_UID, None)
                self.uid = uid
                program, seccomp = seccomp_filter()
                seccomp_fd = None
                if program is not None:
                    seccomp_fd, w = os.pipe()
                    os.write(w, program)  # a few hundred bytes: fits the pipe's buffer
                    os.close(w)
                    seccomp_fd = _at_fixed_fd(seccomp_fd, CHILD_FDS[2])
                    pass_fds.append(seccomp_fd)
                if memory_mb:
                    # The tmpfs lives in the group's memory: the cap covers it, so the group gets both.
                    self.cgroup, how = Cgroup.create(int(memory_mb) << 20, PIDS_MAX,
                                                     **({"share": share} if share is not None else {}))
                else:
                    how = "no --memory-mb"
                self.isolation = {"memory_isolation": how if self.cgroup else f"rlimit only ({how})",
                                  "seccomp": seccomp if program is not None else f"none ({seccomp})",
                                  "uid": str(uid)}
                cmd, args_fd = args_through_fd(bwrap_command(tmpfs_mb=tmpfs_mb, uid=uid, seccomp_fd=seccomp_fd) + [
                    sandbox_python(), "-I", "-S", f"{RUNNER_IN_SANDBOX}/runner.py", str(to_child_r),
                    str(from_child_w), str(uid), SITE_IN_SANDBOX], target=CHILD_FDS[3])
                if args_fd is not None:
                    pass_fds.append(args_fd)
                cwd, env = "/", {}
            else:  # --no-sandbox: same runner and limits, none of the isolation
                self.uid = os.getuid()
                self.tmp = tempfile.mkdtemp(prefix="autograder-nosandbox-")
                python = str(Path(sys.base_prefix).resolve() / "bin" / Path(sys._base_executable).name)  # noqa: SLF001
                cmd = [python, "-I", "-S", str(RUNNER_DIR / "runner.py"), str(to_child_r), str(from_child_w),
                       "0", str(_site_packages())]
                cwd, env = self.tmp, dict(ENV, HOME=self.tmp, TMPDIR=self.tmp, MPLCONFIGDIR=self.tmp)
            # The runner captures the student's output itself; AUTOGRADER_SANDBOX_DEBUG shows the rest.
            quiet = None if os.environ.get("AUTOGRADER_SANDBOX_DEBUG") else subprocess.DEVNULL
            group = self.cgroup

            def pre_exec() -> None:
                # In the forked child, before bubblewrap is executed: everything it starts (hence
                # every line of student code) is in the group from its first instruction.
                _die_with_parent()
                if group is not None:
                    group.join()

            try:
                try:
                    self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=quiet, stderr=quiet,
                                                 pass_fds=pass_fds, cwd=cwd, env=env, start_new_session=True,
                                                 preexec_fn=pre_exec)
                except subprocess.SubprocessError as exc:  # joining the group failed: rlimits only
                    if group is None:
                        raise
                    self.cgroup = None
                    group.remove()
                    self.isolation["memory_isolation"] = f"rlimit only (cannot join the cgroup: {exc})"
                    # The child failed before executing bubblewrap: the seccomp and --args pipes are unread.
                    self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=quiet, stderr=quiet,
                                                 pass_fds=pass_fds, cwd=cwd, env=env, start_new_session=True,
                                                 preexec_fn=_die_with_parent)
            finally:
                for fd in pass_fds:
                    os.close(fd)
                    if fd in _AT_FIXED:
                        _AT_FIXED.remove(fd)

    @property
    def alive(self) -> bool:
        return self.problem is None

    def send(self, header: dict, payload: bytes = b"") -> None:
        if self.problem:
            raise SandboxError(self.problem)
        try:
            wire.send(self.to_child, header, payload)
        except OSError:
            self.kill("the student's process ended")
            raise SandboxError(self.problem) from None

    def cpu_seconds(self) -> float | None:
        """CPU time of everything in the sandbox so far (its cgroup), ``None`` without one."""
        return self.cgroup.cpu_seconds() if self.cgroup is not None else None

    def runnable_seconds(self) -> float | None:
        """Seconds the sandbox's processes ran or waited for a CPU (``None`` without a cgroup)."""
        return _runnable_seconds(self.cgroup.pids()) if self.cgroup is not None else None

    def step(self, seconds: float) -> "Step":
        """The limits of one cell or call starting now (see :class:`Step`); pass it to every :meth:`recv`
        of that cell or call."""
        return Step(self, seconds)

    def recv(self, seconds: float, what: str, step: "Step | None" = None) -> tuple[dict, bytes]:
        """The next message within the limits of ``step`` (default: a step of ``seconds`` starting now).

        With a cgroup: ``step.seconds`` of the sandbox's CPU time from the step's start, whatever
        the machine's load, and a wall-clock backstop that counts only the time the sandbox slept
        or blocked while the judge waited for it (:class:`Step`); otherwise wall time. The whole
        submission: :attr:`cpu_budget` of CPU, :attr:`deadline`.
        """
        if self.problem:
            raise SandboxError(self.problem)
        step = step if step is not None else Step(self, seconds)
        start_cpu = step.cpu0
        deadline = self.deadline if start_cpu is not None else min(step.wall_deadline, self.deadline)
        try:
            used = self.cpu_seconds() if start_cpu is not None else None
            step.resume()
            while start_cpu is not None:
                if used is not None and used - start_cpu > step.seconds:
                    step.cpu_used = used - start_cpu
                    self.kill(f"timeout: {what} used {used - start_cpu:.3g} s of CPU time "
                              f"(limit {_limit_shown(step.seconds):.3g} s)")
                    raise SandboxError(self.problem)
                if used is not None and self.cpu_budget is not None and used > self.cpu_budget:
                    self.kill(f"timeout: the submission used {used:.3g} s of CPU time "
                              f"(limit {self.cpu_budget:.3g} s)")
                    raise SandboxError(self.problem)
                if step.asleep > step.sleep_limit:
                    self.kill(f"timeout: {what} slept or blocked for more than {step.sleep_limit:.3g} s "
                              f"of wall-clock time (it used {used - start_cpu:.3g} s of CPU time)")
                    raise SandboxError(self.problem)
                wait = deadline - time.monotonic()
                if wait <= 0:
                    raise TimeoutError
                if select.select([self.from_child], [], [], min(wait, CPU_POLL))[0]:
                    break
                step.poll()
                used = self.cpu_seconds()
            return wire.recv(self.from_child, deadline)
        except TimeoutError:
            if deadline >= self.deadline:
                self.kill("timeout: the submission exceeded its time limit")
            else:
                self.kill(f"timeout: {what} exceeded {_limit_shown(seconds):.3g} s")
        except EOFError:
            code = self.proc.poll()
            self.kill("the student's process ended" + (f" (exit status {code})" if code is not None else "")
                      + f" during {what}")
        except (wire.WireError, ValueError, OSError) as exc:
            self.kill(f"malformed message from the sandbox during {what}: {str(exc)[:100]}")
        raise SandboxError(self.problem)

    def kill(self, reason: str | None = None) -> None:
        if self.problem is None:
            self.problem = reason or "stopped"
            if self.cgroup is not None and self.cgroup.oom_kills() and "ended" in self.problem:
                self.problem = (f"memory limit: the sandbox exceeded {self.memory_mb} MiB and was killed "
                                f"({self.problem})")
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
        if self.proc is not None:
            self.proc.wait()
        if self.cgroup is not None:  # whatever escaped the session or the PID namespace's end
            self.memory_peak = self.cgroup.peak()
            self.cpu_used = self.cgroup.cpu_seconds()
            self.cgroup.remove()
            self.cgroup = None
        if self.uid_lock is not None:  # nothing of this uid runs any more: the slot is free
            _release_uid(self.uid_lock)
            self.uid_lock = None
        for fd in (getattr(self, "to_child", -1), getattr(self, "from_child", -1)):
            try:
                os.close(fd)
            except OSError:
                pass
        self.to_child = self.from_child = -1
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None
        _LIVE.discard(self)

    def close(self) -> None:
        """Ask the runner to quit, then make sure everything is gone."""
        if self.problem is None:
            try:
                wire.send(self.to_child, {"quit": True})
            except OSError:
                pass
        was = self.problem
        self.kill("stopped")
        self.problem = was or "stopped"
