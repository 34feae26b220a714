"""Per-sandbox uids: a slot each, held by an flock while the sandbox lives."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

#: The uid of a sandbox when no slot of its own can be had (not root, or no lock folder).
SANDBOX_UID = 65534
#: First uid of the per-sandbox uids (a slot each, held by an flock while the sandbox lives):
#: below systemd's dynamic users (61184-65519), above Debian's regular users (< 60000) and away
#: from /etc/subuid ranges (100000+), so no process of the machine shares a sandbox's uid.
UID_BASE = 60100
UID_SLOTS = 1000
#: One place for every grader on the machine (whatever its TMPDIR), writable by root only.
LOCK_DIR = Path("/run/autograder-uid-slots" if os.access("/run", os.W_OK)
                else Path(tempfile.gettempdir()) / "autograder-uid-slots")


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
                # A stale file (its grader was killed) keeps its old pid: a shorter pid written over
                # it would leave digits of the old one behind.
                os.ftruncate(fd, 0)
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
