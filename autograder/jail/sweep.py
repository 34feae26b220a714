"""Cleaning up after graders killed by SIGKILL: their cgroups and uid-slot lock files."""

from __future__ import annotations

import os
from pathlib import Path

from autograder.jail.cgroup import GROUP_PREFIX, WORKER_SUFFIX, _mounts, _remove_group
from autograder.jail.uids import LOCK_DIR, _sweep_locks


#: Held (``flock``) by the grader that sweeps; a file beside the slots' (``_sweep_locks`` takes digits only).
SWEEP_LOCK = LOCK_DIR / "sweep"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: someone else's live process
        return True
    return True


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


def sweep_stale() -> list[str]:
    """Remove what graders killed by SIGKILL left behind; the paths removed.

    Groups named ``autograder-<pid>-...`` (a sandbox's, a submission's CPU share, a grading worker's)
    whose pid is gone (their processes are killed first),
    searched in every cgroup hierarchy down to a few levels (a grader's own group may be a
    session scope), and uid-slot lock files no live sandbox holds. A live grader's groups and
    slots are never touched: their owner pid exists, their lock is held.
    """
    import fcntl
    import re

    # One sweep at a time; while a sweep runs, or someone holds the lock (tests/autograder/test_cleanup.py
    # while it looks at what a SIGKILL left), a grader starting beside it sweeps nothing.
    try:
        LOCK_DIR.mkdir(mode=0o700, exist_ok=True)
        lock = os.open(SWEEP_LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        lock = None
    try:
        if lock is not None:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return []
        return _sweep()
    finally:
        if lock is not None:
            os.close(lock)


def _sweep() -> list[str]:
    import re

    removed = []
    pattern = re.compile(re.escape(GROUP_PREFIX) + r"(\d+)-\d+(?:" + re.escape(WORKER_SUFFIX) + ")?$")
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
