"""Time limits of a sandbox's steps and its number of tasks: the numbers every part of the jail shares."""

from __future__ import annotations

#: Seconds granted beyond the runner's own alarm before the sandbox is killed.
GRACE = 3.0
#: A step's wall-clock backstop is WALL_FACTOR x its CPU limit + WALL_SLACK seconds: generous, since
#: the CPU limit is the real one and a loaded machine (2 cores, other jobs) stretches wall time.
WALL_FACTOR, WALL_SLACK = 3.0, 10.0
#: Default wall-clock seconds the sandboxes of one submission may spend asleep or blocked in all
#: (``--sleep-limit``; :class:`autograder.jail.client.SleepBudget`). Honest code computes: the
#: reference solutions sleep well under a second (reading files at the start).
SLEEP_LIMIT = 30
#: Processes and threads per sandbox (cgroup pids.max and RLIMIT_NPROC of its own uid).
PIDS_MAX = 64


def _limit_shown(seconds: float) -> float:
    """A step's limit as the student set it: the deadline minus the grace added to it (a step's
    remaining share of the submission's budget can be shorter than the grace itself)."""
    return seconds - GRACE if seconds > GRACE else seconds
