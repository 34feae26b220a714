"""Trusted side of the sandbox: start the student's runner in bubblewrap and talk to it.

One module per concern: :mod:`~autograder.jail.bwrap` (the command line and the fds it inherits),
:mod:`~autograder.jail.uids` (a uid slot per sandbox), :mod:`~autograder.jail.cgroup` (memory, tasks
and CPU of a sandbox; the class server's spawner uses it too), :mod:`~autograder.jail.seccomp`,
:mod:`~autograder.jail.limits` (the time limits every part shares), :mod:`~autograder.jail.sweep`
(what a killed grader left behind) and :mod:`~autograder.jail.client` (:class:`Sandbox`).

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

from autograder.jail.bwrap import bwrap_command, sandbox_python
from autograder.jail.cgroup import CPU_PERIOD_US, CPU_SHARES, CPU_WEIGHT, Cgroup, CpuShare, worker_group
from autograder.jail.client import Sandbox, SandboxError, SleepBudget, isolation, probe, stop_all
from autograder.jail.limits import GRACE, PIDS_MAX, SLEEP_LIMIT, WALL_FACTOR, WALL_SLACK
from autograder.jail.seccomp import DENIED_SYSCALLS, seccomp_filter
from autograder.jail.sweep import owned_by, remove_left_by, sweep_stale
from autograder.jail.uids import LOCK_DIR, SANDBOX_UID, UID_BASE, UID_SLOTS

__all__ = ["CPU_PERIOD_US", "CPU_SHARES", "CPU_WEIGHT", "DENIED_SYSCALLS", "GRACE", "LOCK_DIR", "PIDS_MAX",
           "SANDBOX_UID", "SLEEP_LIMIT", "UID_BASE", "UID_SLOTS", "WALL_FACTOR", "WALL_SLACK", "Cgroup", "CpuShare", "Sandbox",
           "SandboxError", "SleepBudget", "bwrap_command", "isolation", "owned_by", "probe", "remove_left_by", "sandbox_python",
           "seccomp_filter", "stop_all", "sweep_stale", "worker_group"]
