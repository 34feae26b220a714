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

import ctypes
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from autograder.sandbox import wire

RUNNER_DIR = Path(__file__).resolve().parent / "sandbox"
SANDBOX_UID = 65534
SITE_IN_SANDBOX = "/opt/site-packages"
RUNNER_IN_SANDBOX = "/opt/runner"
#: Seconds granted beyond the runner's own alarm before the sandbox is killed.
GRACE = 3.0
#: The only writable place inside (a size-capped tmpfs); there is no /tmp: no path inside looks
#: like a host folder (the grader's temporary folders, OUT) that a write could seem to reach.
HOME = "/home/student"
ENV = {"HOME": HOME, "TMPDIR": HOME, "LANG": "C.UTF-8", "PYTHONIOENCODING": "utf-8",
       "PYTHONDONTWRITEBYTECODE": "1", "MPLBACKEND": "Agg", "MPLCONFIGDIR": HOME + "/.matplotlib",
       "OPENBLAS_NUM_THREADS": "1",
       "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NBGRADER_EXECUTION": "autograde"}


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
    for parent in reversed(prefix.parents):
        if str(parent) != "/" and not str(parent).startswith("/usr"):
            cmd += ["--perms", "0755", "--dir", str(parent)]
    if not str(prefix).startswith("/usr/"):
        cmd += ["--ro-bind", str(prefix), str(prefix)]
    cmd += ["--perms", "0755", "--dir", "/opt",
            "--ro-bind", str(site), SITE_IN_SANDBOX,
            "--ro-bind", str(RUNNER_DIR), RUNNER_IN_SANDBOX]
    for entry in _hidden_entries(site):
        target = f"{SITE_IN_SANDBOX}/{entry.name}"
        cmd += ["--tmpfs", target] if entry.is_dir() else ["--ro-bind", "/dev/null", target]
    cmd += ["--proc", "/proc", "--dev", "/dev", "--perms", "0755", "--dir", "/home",
            "--size", str(tmpfs_mb << 20), "--perms", "01777", "--tmpfs", HOME, "--remount-ro", "/",
            "--chdir", HOME]
    for key, value in ENV.items():
        cmd += ["--setenv", key, value]
    if seccomp_fd is not None:
        cmd += ["--seccomp", str(seccomp_fd)]
    return cmd


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


def _claim_uid() -> tuple[int, int | None]:
    """A uid no other live sandbox on this machine holds, and the lock fd that holds it."""
    import fcntl
    import pwd
    try:
        LOCK_DIR.mkdir(mode=0o700, exist_ok=True)
    except OSError:
        return SANDBOX_UID, None
    for slot in range(UID_SLOTS):
        uid = UID_BASE + slot
        try:
            pwd.getpwuid(uid)
            continue  # a named account: not ours to use
        except KeyError:
            pass
        try:
            fd = os.open(LOCK_DIR / str(slot), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError:
            return SANDBOX_UID, None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return uid, fd
        except OSError:
            os.close(fd)
    return SANDBOX_UID, None


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


class Cgroup:
    """A cgroup (v2, or v1 memory + pids) holding one sandbox: memory without swap and pids capped.

    v1 memory cgroups charge shmem/tmpfs pages to the group of the task that touches them and,
    on kernels >= 4.6 without ``cgroup.memory=nokmem``, kernel memory (inodes, dentries) to
    ``memory.usage_in_bytes`` too, so one limit covers heap, SysV shm, memfd, the tmpfs and
    its inodes. v1 groups are made inside the grader's own group (its limits keep applying);
    v2 ones under the root of the hierarchy (a v2 group with processes cannot delegate
    controllers to children).
    """

    def __init__(self, dirs: list[Path], version: int):
        self.dirs, self.version = dirs, version

    @classmethod
    def create(cls, memory_bytes: int, pids: int, *, prefix: str = "autograder",
               cpu_weight: int | None = None) -> tuple["Cgroup | None", str]:
        """The cgroup, or ``None`` and why not (never raises).

        ``cpu_weight`` (1-10000, 100 = the default share of a group) also puts the group in
        the cpu controller (v1 ``cpu.shares`` = weight x 1024 / 100, v2 ``cpu.weight``), so
        its processes together get one group's share of the CPU however many they are.
        """
        name = f"{prefix}-{os.getpid()}-{time.monotonic_ns()}"
        mounts = _mounts()
        wanted = ("memory", "pids") + (("cpu",) if cpu_weight else ())
        v1 = {c: m for kind, m, opts in mounts if kind == "cgroup" and "rw" in opts
              for c in wanted if c in opts}
        v2 = [m for kind, m, opts in mounts if kind == "cgroup2" and "rw" in opts]
        errors = []
        if "memory" in v1 and "pids" in v1:
            controllers = [c for c in wanted if c in v1]
            dirs = [Path(v1[c] + _own_cgroup(c).rstrip("/")) / name for c in controllers]
            group = cls(dirs, 1)
            try:
                for d in dirs:
                    d.mkdir()
                mem = dirs[0]
                _write(mem / "memory.limit_in_bytes", str(memory_bytes))
                if (mem / "memory.memsw.limit_in_bytes").exists():  # no swap either
                    _write(mem / "memory.memsw.limit_in_bytes", str(memory_bytes))
                else:
                    _write(mem / "memory.swappiness", "0")
                _write(dirs[1] / "pids.max", str(pids))
                how = "cgroup v1 (memory.limit_in_bytes, memory.memsw.limit_in_bytes, pids.max"
                if "cpu" in controllers:
                    _write(dirs[2] / "cpu.shares", str(max(2, cpu_weight * 1024 // 100)))
                    how += ", cpu.shares"
                elif cpu_weight:
                    how += "; no cpu controller: no CPU share"
                return group, how + ")"
            except OSError as exc:
                group.remove()
                errors.append(f"cgroup v1: {exc.strerror or exc}")
        for mount in v2:
            root = Path(mount)
            try:
                if not {"memory", "pids"} <= set((root / "cgroup.controllers").read_text().split()):
                    errors.append("cgroup v2 without the memory and pids controllers")
                    continue
                parent = root / prefix.split("-")[0]
                parent.mkdir(exist_ok=True)
                enable = " ".join(f"+{c}" for c in wanted)
                _write(root / "cgroup.subtree_control", enable)
                _write(parent / "cgroup.subtree_control", enable)
            except OSError as exc:
                errors.append(f"cgroup v2: {exc.strerror or exc}")
                continue
            group = cls([parent / name], 2)
            try:
                group.dirs[0].mkdir()
                _write(group.dirs[0] / "memory.max", str(memory_bytes))
                if (group.dirs[0] / "memory.swap.max").exists():
                    _write(group.dirs[0] / "memory.swap.max", "0")
                _write(group.dirs[0] / "pids.max", str(pids))
                if cpu_weight:
                    _write(group.dirs[0] / "cpu.weight", str(cpu_weight))
                return group, "cgroup v2 (memory.max, memory.swap.max = 0, pids.max" + (
                    ", cpu.weight)" if cpu_weight else ")")
            except OSError as exc:
                group.remove()
                errors.append(f"cgroup v2: {exc.strerror or exc}")
        return None, "; ".join(errors) or "no cgroup hierarchy with memory and pids controllers"

    def join(self) -> None:
        """Move the calling process in (run in the child before exec: nothing runs outside)."""
        for d in self.dirs:
            _write(d / "cgroup.procs", str(os.getpid()))

    def pids(self) -> list[int]:
        found = set()
        for d in self.dirs:
            try:
                found.update(int(p) for p in (d / "cgroup.procs").read_text().split())
            except (OSError, ValueError):
                pass
        return sorted(found)

    def _stat(self, names: tuple[str, ...], key: str | None = None) -> int | None:
        for n in names:
            try:
                text = (self.dirs[0] / n).read_text()
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

    def remove(self) -> None:
        """Kill every process in the group, then remove it."""
        kill_file = self.dirs[0] / "cgroup.kill"
        for attempt in range(200):
            pids = self.pids()
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
        for d in self.dirs:
            for attempt in range(100):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)


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
    "set_mempolicy", "set_mempolicy_home_node")
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
    return program, f"seccomp: {len(denied)} syscalls denied, namespace flags of clone refused"


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
    python = str(Path(sys.base_prefix).resolve() / "bin" / Path(sys._base_executable).name)  # noqa: SLF001
    cmd = bwrap_command(tmpfs_mb=tmpfs_mb, uid=SANDBOX_UID) + [python, "-I", "-S", "-c", "pass"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap could not start ({exc})"
    if proc.returncode != 0:
        return f"bubblewrap could not start a sandbox: {proc.stderr.strip()[:300]}"
    return None


class Sandbox:
    """One student's runner, in bubblewrap (or, with ``sandboxed=False``, a plain process).

    ``deadline`` (``time.monotonic()``) is the wall-clock limit of the whole
    submission: past it the sandbox is killed, whatever it is doing.
    """

    def __init__(self, *, sandboxed: bool, deadline: float, memory_mb: int | None,
                 cpu_seconds: int, tmpfs_mb: int = 256, uid: int | None = None):
        self.deadline, self.problem = deadline, None
        self.cgroup, self.uid_lock, self.memory_peak = None, None, None
        self.memory_mb = memory_mb
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()
        limits = {"cpu": cpu_seconds, "nproc": PIDS_MAX, "fsize": 64 << 20, "nofile": 64, "core": 0}
        if memory_mb:
            limits["as"] = int(memory_mb) << 20
        self.limits = limits
        python = str(Path(sys.base_prefix).resolve() / "bin" / Path(sys._base_executable).name)  # noqa: SLF001
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
                pass_fds.append(seccomp_fd)
            if memory_mb:
                # The tmpfs lives in the group's memory: the cap covers it, so the group gets both.
                self.cgroup, how = Cgroup.create(int(memory_mb) << 20, PIDS_MAX)
            else:
                how = "no --memory-mb"
            self.isolation = {"memory_isolation": how if self.cgroup else f"rlimit only ({how})",
                              "seccomp": seccomp if program is not None else f"none ({seccomp})",
                              "uid": str(uid)}
            cmd = bwrap_command(tmpfs_mb=tmpfs_mb, uid=uid, seccomp_fd=seccomp_fd) + [
                python, "-I", "-S", f"{RUNNER_IN_SANDBOX}/runner.py", str(to_child_r), str(from_child_w),
                str(uid), SITE_IN_SANDBOX]
            cwd, env = "/", {}
        else:  # --no-sandbox: same runner and limits, none of the isolation
            self.uid = os.getuid()
            self.tmp = tempfile.mkdtemp(prefix="autograder-nosandbox-")
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
                if seccomp_fd is not None:  # the pipe was read by nobody: refill it
                    os.close(pass_fds.pop())
                    seccomp_fd, w = os.pipe()
                    os.write(w, program)
                    os.close(w)
                    pass_fds.append(seccomp_fd)
                    cmd[cmd.index("--seccomp") + 1] = str(seccomp_fd)
                self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=quiet, stderr=quiet,
                                             pass_fds=pass_fds, cwd=cwd, env=env, start_new_session=True,
                                             preexec_fn=_die_with_parent)
        finally:
            for fd in pass_fds:
                os.close(fd)

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

    def recv(self, seconds: float, what: str) -> tuple[dict, bytes]:
        """The next message within ``seconds`` (and the submission's deadline)."""
        if self.problem:
            raise SandboxError(self.problem)
        deadline = min(time.monotonic() + seconds, self.deadline)
        try:
            return wire.recv(self.from_child, deadline)
        except TimeoutError:
            if deadline >= self.deadline:
                self.kill("timeout: the submission exceeded its time limit")
            else:
                self.kill(f"timeout: {what} exceeded {seconds - GRACE:.3g} s")
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
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
        self.proc.wait()
        if self.cgroup is not None:  # whatever escaped the session or the PID namespace's end
            self.memory_peak = self.cgroup.peak()
            self.cgroup.remove()
            self.cgroup = None
        if self.uid_lock is not None:  # nothing of this uid runs any more: the slot is free
            os.close(self.uid_lock)
            self.uid_lock = None
        for fd in (self.to_child, self.from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        self.to_child = self.from_child = -1
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None

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
