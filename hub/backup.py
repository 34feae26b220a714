"""Back up and restore what a class cannot lose: the gradebook, the course root, the exchange, the homes.

    sudo .venv/bin/python hub/backup.py backup  DEST [--keep N] [--srv SRV] [--roster ROSTER]
    sudo .venv/bin/python hub/backup.py restore SRC  [--srv SRV] [--roster ROSTER]

``backup`` may run while the class works (a nightly cron job): ``gradebook.db`` is copied with
SQLite's online backup (a consistent copy even while the Formgrader writes), the course root
(``source/``, ``release/``, ``submitted/``, ``autograded/``, ``feedback/``, the grader's output)
and the exchange (``outbound/``, ``feedback/``, every student's inbound space) as tar files with
numeric owners and modes (ownership is the identity of a submission), and each roster member's home
(from the home image: mounted read-only beside a running server, so the copy is what was on disk
at that moment). Into ``DEST/<UTC time>/`` (0700, every archive 0600: they hold the solutions and
every student's home); then only the newest ``--keep`` backups in ``DEST`` are kept (default 14,
a fortnight of nightly runs; 0 keeps all). Copy ``DEST`` off the machine too (hub/README.md).
A file's holes stay holes (``tar --sparse``), so a student's archive is at most what her home image
holds on disk (``DP_HUB_HOME_LIMIT``); a backup that fails leaves no folder behind and prunes nothing.

``restore`` puts such a backup back, with the hub stopped (``provision.py --stop`` first if servers
still run): it mounts the exchange and the students' inbound spaces as provisioning does, then
extracts the course root, the gradebook, the exchange and the homes over what is there (files that
are newer than the backup and not in it stay). Then ``sudo make hub``.

Tested: ``tests/hub/test_exchange_attacks.py::test_reboot_and_restore_lose_nothing`` backs up the
class the hub tests share, loses its gradebook, graded work, exchange, a student's inbound space and a
file of her home, restores and finds them again (her home there is a folder: the path that reads a
home image is not exercised by a test).
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import provision  # noqa: E402  (hub/provision.py)


def _tar(args: list[str]) -> None:
    # --sparse: a file's holes stay holes. Without it a student's 4 GiB file of 0 blocks (truncate) became
    # 4 GiB of zeros in her archive, each such file again, until the backup's disk was full (red team, session 15)
    done = subprocess.run(["tar", "--numeric-owner", "--sparse", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"tar {' '.join(args)}: {done.stderr[-1000:]}")


def _home_source(person: str, srv: Path, scratch: Path):
    """(folder holding ``person``'s home files, cleanup) — the mounted home, or the image mounted read-only."""
    import pwd

    home = Path(pwd.getpwnam(person).pw_dir)
    image = srv / "homes" / f"{person}.img"
    if os.path.ismount(home) or not image.exists():
        return home, lambda: None
    where = scratch / person
    where.mkdir()
    error = provision.run_tool(["mount", "-o", "loop,ro,noload", str(image), str(where)])
    if error:
        raise RuntimeError(f"mount {image}: {error}")
    return where, lambda: provision.run_tool(["umount", str(where)])


#: A backup folder's name: its UTC time (``backup``), so names sort as times do.
NAME = re.compile(r"\d{8}T\d{6}\.\d{6}Z")


def prune(dest: Path, keep: int) -> list[Path]:
    """Delete all but the newest ``keep`` backups in ``dest`` (0: keep all); returns those deleted.

    Only folders named as ``backup`` names them are touched: anything else in ``dest`` stays.
    """
    if keep <= 0:
        return []
    ours = sorted(p for p in dest.iterdir() if p.is_dir() and not p.is_symlink() and NAME.fullmatch(p.name))
    gone = ours[:-keep]
    for old in gone:
        shutil.rmtree(old)
    return gone


def backup(srv: Path, roster: list[dict], dest: Path, keep: int = 14) -> Path:
    """A backup of the class into a new ``dest/<UTC time>/``; returns that folder.

    Every file in it is 0600 and the folder 0700 (root's); older backups beyond ``keep`` go.
    """
    out = dest / datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
    old_umask = os.umask(0o077)
    try:
        _backup_into(srv, roster, out)
    except BaseException:
        # a partial backup is no backup, and would count as one for --keep: the older ones stay instead
        shutil.rmtree(out, ignore_errors=True)
        raise
    finally:
        os.umask(old_umask)
    for path in out.iterdir():
        os.chmod(path, 0o600)
    prune(dest, keep)
    return out


def _backup_into(srv: Path, roster: list[dict], out: Path) -> None:
    out.mkdir(parents=True, mode=0o700)
    course = srv / "course"
    with sqlite3.connect(course / "gradebook.db") as source, sqlite3.connect(out / "gradebook.db") as copy:
        source.backup(copy)
    _tar(["-cpf", str(out / "course.tar"), "--exclude=./gradebook.db*", "-C", str(course), "."])
    _tar(["-cpf", str(out / "exchange.tar"), "-C", str(srv / "exchange"), "."])
    with tempfile.TemporaryDirectory(dir=out) as scratch:
        for person in roster:
            folder, done = _home_source(person["id"], srv, Path(scratch))
            try:
                _tar(["-cpf", str(out / f"home-{person['id']}.tar"), "-C", str(folder), "."])
            finally:
                done()


def restore(srv: Path, roster: list[dict], src: Path) -> None:
    """Put the backup ``src`` back into the class at ``srv`` (the hub stopped)."""
    import pwd

    if (srv / "hub" / "jupyterhub.pid").exists():
        pid = int((srv / "hub" / "jupyterhub.pid").read_text().strip() or 0)
        try:
            os.kill(pid, 0)
            raise RuntimeError(f"the hub runs (pid {pid}): stop it first")
        except ProcessLookupError:
            pass
    why_not = provision.mount_exchange(srv, provision.size_bytes(provision.EXCHANGE_LIMIT))
    if why_not:
        print(f"warning: the exchange is a plain folder ({why_not})")
    grader = pwd.getpwnam(provision.GRADER)
    provision.prepare_exchange(srv, grader)         # an exchange image made anew is empty: its layout first
    if os.path.ismount(srv / "exchange"):
        provision.mount_inbound_spaces(srv, roster, grader, provision.size_bytes(provision.INBOUND_LIMIT))
    (srv / "course").mkdir(exist_ok=True)
    _tar(["-xpf", str(src / "course.tar"), "-C", str(srv / "course")])
    with sqlite3.connect(src / "gradebook.db") as source, sqlite3.connect(srv / "course" / "gradebook.db") as copy:
        source.backup(copy)
    os.chown(srv / "course" / "gradebook.db", grader.pw_uid, grader.pw_gid)
    _tar(["-xpf", str(src / "exchange.tar"), "-C", str(srv / "exchange")])
    with tempfile.TemporaryDirectory(dir=src) as scratch:
        for person in roster:
            archive = src / f"home-{person['id']}.tar"
            if not archive.exists():
                continue
            home = Path(pwd.getpwnam(person["id"]).pw_dir)
            image = srv / "homes" / f"{person['id']}.img"
            where, done = home, (lambda: None)
            if image.exists() and not os.path.ismount(home):
                where = Path(scratch) / person["id"]
                where.mkdir()
                error = provision.run_tool(["mount", "-o", "loop", str(image), str(where)])
                if error:
                    raise RuntimeError(f"mount {image}: {error}")
                done = (lambda w=where: provision.run_tool(["umount", str(w)]))
            try:
                _tar(["-xpf", str(archive), "-C", str(where)])
            finally:
                done()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=("backup", "restore"))
    parser.add_argument("folder", type=Path, help="backup: where to put it; restore: the backup's folder")
    parser.add_argument("--srv", type=Path, default=provision.DEFAULT_SRV)
    parser.add_argument("--roster", type=Path, default=Path(os.environ.get("DP_HUB_ROSTER",
                                                                          provision.REPO / "hub" / "roster.csv")))
    parser.add_argument("--keep", type=int, default=14,
                        help="backup: keep only the newest N backups in the folder (default 14; 0 keeps all)")
    args = parser.parse_args(argv)
    if args.keep < 0:
        parser.error("--keep must be 0 (keep all) or more")
    if os.geteuid() != 0:
        parser.error("run as root (the files keep their owners)")
    roster = provision.read_roster(args.roster)
    if args.action == "backup":
        print(backup(args.srv, roster, args.folder, keep=args.keep))
    else:
        restore(args.srv, roster, args.folder)
        print(f"restored {args.folder} into {args.srv}; now `sudo make hub`")
    return 0


if __name__ == "__main__":
    sys.exit(main())
