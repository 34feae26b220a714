"""Trusted side of the sandbox: start the student's runner in bubblewrap and talk to it.

:func:`bwrap_command` builds the command line (see :mod:`autograder.sandbox.runner`
for what runs inside). As root, bubblewrap sets up the namespaces without a
user namespace (one would map the sandbox's uid to root, and the kernel does
not enforce ``RLIMIT_NPROC`` for root) and keeps only CAP_SETUID/CAP_SETGID,
with which the runner switches to ``nobody`` (65534) before it reads any student
code; without root, bubblewrap uses an unprivileged user namespace.

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


def bwrap_command(*, tmpfs_mb: int, uid: int) -> list[str]:
    """The bubblewrap command that runs the runner (arguments: see the runner)."""
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
    return cmd


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL when the grading worker dies (prctl PR_SET_PDEATHSIG)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)
    except Exception:  # noqa: BLE001 - not Linux: the worker still kills it
        pass


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
                 cpu_seconds: int, tmpfs_mb: int = 256, uid: int = SANDBOX_UID):
        self.deadline, self.problem = deadline, None
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()
        limits = {"cpu": cpu_seconds, "nproc": 64, "fsize": 64 << 20, "nofile": 64, "core": 0}
        if memory_mb:
            limits["as"] = int(memory_mb) << 20
        self.limits = limits
        python = str(Path(sys.base_prefix).resolve() / "bin" / Path(sys._base_executable).name)  # noqa: SLF001
        self.tmp = None
        if sandboxed:
            cmd = bwrap_command(tmpfs_mb=tmpfs_mb, uid=uid) + [
                python, "-I", "-S", f"{RUNNER_IN_SANDBOX}/runner.py", str(to_child_r), str(from_child_w),
                str(uid), SITE_IN_SANDBOX]
            cwd, env = "/", {}
        else:  # --no-sandbox: same runner and limits, none of the isolation
            self.tmp = tempfile.mkdtemp(prefix="autograder-nosandbox-")
            cmd = [python, "-I", "-S", str(RUNNER_DIR / "runner.py"), str(to_child_r), str(from_child_w),
                   "0", str(_site_packages())]
            cwd, env = self.tmp, dict(ENV, HOME=self.tmp, TMPDIR=self.tmp, MPLCONFIGDIR=self.tmp)
        # The runner captures the student's output itself; AUTOGRADER_SANDBOX_DEBUG shows the rest.
        quiet = None if os.environ.get("AUTOGRADER_SANDBOX_DEBUG") else subprocess.DEVNULL
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=quiet, stderr=quiet, pass_fds=(to_child_r, from_child_w),
                                     cwd=cwd, env=env, start_new_session=True,
                                     preexec_fn=_die_with_parent)
        os.close(to_child_r)
        os.close(from_child_w)

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
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
        self.proc.wait()
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
