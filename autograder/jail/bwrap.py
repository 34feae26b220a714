"""The bubblewrap command line of a sandbox, and the fixed fds its pipes get."""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
import sys
import sysconfig
import threading
from pathlib import Path

RUNNER_DIR = Path(__file__).resolve().parents[1] / "sandbox"
SITE_IN_SANDBOX = "/opt/site-packages"
RUNNER_IN_SANDBOX = "/opt/runner"
#: ``/proc/self/cmdline`` or ``sys.path``); libpython is found through LD_LIBRARY_PATH.
PYTHON_IN_SANDBOX = "/opt/python"
#: The only writable place inside (a size-capped tmpfs); there is no /tmp: no path inside looks
#: like a host folder (the grader's temporary folders, OUT) that a write could seem to reach.
HOME = "/home/student"
ENV = {"HOME": HOME, "TMPDIR": HOME, "LANG": "C.UTF-8", "PYTHONIOENCODING": "utf-8",
       "PYTHONDONTWRITEBYTECODE": "1", "MPLBACKEND": "Agg", "MPLCONFIGDIR": HOME + "/.matplotlib",
       "OPENBLAS_NUM_THREADS": "1",
       "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NBGRADER_EXECUTION": "autograde"}


def _site_packages() -> Path:
    return Path(sysconfig.get_paths()["purelib"])


def _hidden_entries(site: Path) -> list[Path]:
    """Entries of site-packages that would make the project importable inside."""
    repo = str(Path(__file__).resolve().parents[2])
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
    """In the child before exec: SIGKILL when the grading worker dies (prctl PR_SET_PDEATHSIG), and
    the trusted worker's own soft limits of memory and CPU (``worker.limit_self``) lifted: the
    sandbox gets its own (the runner's rlimits, the cgroup), not what is left of the worker's."""
    for which in (resource.RLIMIT_AS, resource.RLIMIT_CPU):
        try:
            resource.setrlimit(which, (resource.getrlimit(which)[1],) * 2)
        except (OSError, ValueError):
            pass
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)
    except Exception:  # noqa: BLE001 - not Linux: the worker still kills it
        pass
