"""The :class:`Sandbox` client: start the runner in its jail, talk to it, kill it."""

from __future__ import annotations

import atexit
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograder.jail.bwrap import (_AT_FIXED, CHILD_FDS, ENV, RUNNER_DIR, RUNNER_IN_SANDBOX, SITE_IN_SANDBOX,
                                   _at_fixed_fd, _child_fds, _die_with_parent, _site_packages, args_through_fd,
                                   bwrap_command, sandbox_python)
from autograder.jail.cgroup import _LIVE_SHARES, Cgroup, CpuShare
from autograder.jail.limits import PIDS_MAX, WALL_FACTOR, WALL_SLACK, _limit_shown
from autograder.jail.seccomp import seccomp_filter
from autograder.jail.uids import SANDBOX_UID, UID_BASE, _claim_uid, _release_uid
from autograder.sandbox import wire



class SandboxError(RuntimeError):
    """The student's sandbox is gone or broke the protocol (the call cannot be answered)."""



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


class SleepBudget:
    """The wall-clock seconds all the sandboxes of one submission may sleep or block in total.

    Each step's own backstop (:class:`Step`) lets a sleeping call go on for 3 x its limit; a loop of
    sleeping calls then held its worker until the submission's wall deadline, about 430 s at the
    defaults at no CPU cost (red team s6). Honest code computes: it sleeps only while the page cache
    or the machine's memory makes it wait. Counted like :attr:`Step.asleep` (only with a cgroup).
    """

    def __init__(self, seconds: float):
        self.seconds, self.spent = float(seconds), 0.0


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

    def __init__(self, sandbox: "Sandbox", seconds: float, cpu0: float | None = None):
        self.sandbox, self.seconds = sandbox, float(seconds)
        # The caller's reading of the CPU time serves as the step's start and as its first recv's
        # (one cgroup read per call: 53,000 calls of a privacy_budget submission).
        self.cpu0 = sandbox.cpu_seconds() if cpu0 is None else cpu0
        self.fresh = self.cpu0
        self.sleep_limit = WALL_FACTOR * self.seconds + WALL_SLACK
        self.wall_deadline = time.monotonic() + (self.seconds if self.cpu0 is None else self.sleep_limit)
        self.asleep, self.cpu_used = 0.0, None
        self.judged = 0.0
        self._wall, self._run = time.monotonic(), None

    def charge(self, seconds: float) -> None:
        """The judge's CPU ``seconds`` spent answering the step's draw requests: counted in the step's
        and the submission's CPU limits as the sandbox's own (red team s10: ``rng.random(0)`` in a loop
        made the judge work as long as the sandbox, outside every limit)."""
        self.judged += max(0.0, seconds)
        if hasattr(self.sandbox, "judged"):
            self.sandbox.judged += max(0.0, seconds)

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
        slept = max(0.0, (now - self._wall) - max(0.0, busy))
        self.asleep += slept
        budget = getattr(self.sandbox, "sleep", None)
        if budget is not None:
            budget.spent += slept
        self._wall, self._run = now, run if run is not None else self._run

    def used(self) -> float | None:
        """CPU seconds the sandbox used since the step began, the judge's answers charged to it
        included (``None`` without a cgroup)."""
        now = self.sandbox.cpu_seconds()
        return None if now is None or self.cpu0 is None else now - self.cpu0 + self.judged


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
                 cpu_budget: float | None = None, share: CpuShare | None = None,
                 sleep: SleepBudget | None = None):
        self.deadline, self.problem, self.cpu_budget, self.sleep = deadline, None, cpu_budget, sleep
        self.judged = 0.0  # the judge's CPU seconds answering this sandbox's draws (Step.charge)
        self.cgroup, self.uid_lock, self.memory_peak, self.cpu_used = None, None, None, None
        self.proc, self.tmp, self.memory_mb = None, None, memory_mb
        _LIVE.add(self)  # before anything is claimed: an interruption from here on is cleaned up
        self.memory_mb = memory_mb
        with _child_fds():  # CHILD_FDS are free only between two starts
            to_child_r, self.to_child = os.pipe()
            self.from_child, from_child_w = os.pipe()
            to_child_r, from_child_w = _at_fixed_fd(to_child_r, CHILD_FDS[0]), _at_fixed_fd(from_child_w, CHILD_FDS[1])
            # Our end only: a write the student's code never reads must not block the judge (send).
            os.set_blocking(self.to_child, False)
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

    def send(self, header: dict, payload: bytes = b"", step: "Step | None" = None, *,
             seconds: float = 30.0, what: str = "a message to the student's code") -> None:
        """Write one message within the limits of ``step`` (default: a step of ``seconds`` from now).

        A process that stops reading (it asked for 8 MB of draws and sleeps) fills the pipe; the
        write then waits as :meth:`recv` does, the sandbox's sleep counted, instead of blocking the
        worker until its task's deadline (145 s at ``--timeout 5``, red team s10).
        """
        if self.problem:
            raise SandboxError(self.problem)
        view = memoryview(wire.frame(header, payload))
        step = step if step is not None else Step(self, seconds)
        deadline = self._deadline(step)
        try:
            while view:
                try:
                    view = view[os.write(self.to_child, view):]
                except BlockingIOError:
                    self._await(step, f"{what}, which the student's code did not read", self.to_child, write=True)
            return
        except TimeoutError:
            self._timed_out(deadline, what, step.seconds)
        except OSError:
            self.kill("the student's process ended")
        raise SandboxError(self.problem)

    def cpu_seconds(self) -> float | None:
        """CPU time of everything in the sandbox so far (its cgroup), ``None`` without one."""
        return self.cgroup.cpu_seconds() if self.cgroup is not None else None

    def runnable_seconds(self) -> float | None:
        """Seconds the sandbox's processes ran or waited for a CPU (``None`` without a cgroup)."""
        return _runnable_seconds(self.cgroup.pids()) if self.cgroup is not None else None

    def step(self, seconds: float, cpu0: float | None = None) -> "Step":
        """The limits of one cell or call starting now (see :class:`Step`; ``cpu0``: the sandbox's CPU
        time just read, if the caller has it); pass it to every :meth:`recv` of that cell or call."""
        return Step(self, seconds, cpu0)

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
        deadline = self._deadline(step)
        try:
            self._await(step, what, self.from_child)
            return wire.recv(self.from_child, deadline)
        except TimeoutError:
            self._timed_out(deadline, what, seconds)
        except EOFError:
            code = self.proc.poll()
            self.kill("the student's process ended" + (f" (exit status {code})" if code is not None else "")
                      + f" during {what}")
        except (wire.WireError, ValueError, OSError) as exc:
            self.kill(f"malformed message from the sandbox during {what}: {str(exc)[:100]}")
        raise SandboxError(self.problem)

    def _deadline(self, step: "Step") -> float:
        return self.deadline if step.cpu0 is not None else min(step.wall_deadline, self.deadline)

    def _timed_out(self, deadline: float, what: str, seconds: float) -> None:
        if deadline >= self.deadline:
            self.kill("timeout: the submission exceeded its time limit")
        else:
            self.kill(f"timeout: {what} exceeded {_limit_shown(seconds):.3g} s")

    def _await(self, step: "Step", what: str, fd: int, write: bool = False) -> None:
        """Return once ``fd`` is readable (``write``: writable) within the limits of ``step`` and of
        the submission; else kill the sandbox and raise :class:`SandboxError` (``TimeoutError`` past
        the wall deadline)."""
        start_cpu = step.cpu0
        deadline = self._deadline(step)
        used, step.fresh = (step.fresh if step.fresh is not None else self.cpu_seconds(), None) \
            if start_cpu is not None else (None, None)
        step.resume()
        while True:
            if start_cpu is not None:
                judge = f" (the judge's answers to its draws: {step.judged:.3g} s)" if step.judged >= 0.5 else ""
                if used is not None and used - start_cpu + step.judged > step.seconds:
                    step.cpu_used = used - start_cpu + step.judged
                    self.kill(f"timeout: {what} used {used - start_cpu + step.judged:.3g} s of CPU time{judge} "
                              f"(limit {_limit_shown(step.seconds):.3g} s)")
                    raise SandboxError(self.problem)
                if used is not None and self.cpu_budget is not None and used + self.judged > self.cpu_budget:
                    self.kill(f"timeout: the submission used {used + self.judged:.3g} s of CPU time{judge} "
                              f"(limit {self.cpu_budget:.3g} s)")
                    raise SandboxError(self.problem)
                if step.asleep > step.sleep_limit:
                    self.kill(f"timeout: {what} slept or blocked for more than {step.sleep_limit:.3g} s "
                              f"of wall-clock time (it used {used - start_cpu:.3g} s of CPU time)")
                    raise SandboxError(self.problem)
                if self.sleep is not None and self.sleep.spent > self.sleep.seconds:
                    self.kill(f"timeout: the submission slept or blocked for more than {self.sleep.seconds:.3g} s "
                              f"of wall-clock time in all, the last time during {what} (--sleep-limit)")
                    raise SandboxError(self.problem)
            wait = deadline - time.monotonic()
            if wait <= 0:
                raise TimeoutError
            watched = [fd]
            ready = select.select([] if write else watched, watched if write else [], [],
                                  min(wait, CPU_POLL) if start_cpu is not None else wait)
            if ready[0] or ready[1]:
                return
            if start_cpu is not None:
                step.poll()
                used = self.cpu_seconds()

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
