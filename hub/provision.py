"""Create the class on this machine from the roster (run as root; idempotent).

    .venv/bin/python hub/provision.py [--roster hub/roster.csv] [--srv /srv/dp-course]
                                      [--venv SRV/venv] [--demo-passwords] [--reset]

For every row of the roster (``id,name,role``; role ``instructor`` or ``student``):
an OS account ``id`` with a private home (0700) and the lecture notebooks of the
student bundle in ``~/course`` (copied once; never ``source/``). Passwords: with
``--demo-passwords`` (demo and tests only) ``demo-<id>``; without it, a password that is
still ``demo-<id>`` from an earlier demo run is removed (the account is locked until the
instructor sets one with ``passwd``/``chpasswd``), and the accounts without a password
are listed.

Then the course itself, as nbgrader's "Using nbgrader with JupyterHub" docs lay it out:

- the grader account ``grader-dp-course`` (no password, no login shell) that runs the
  Formgrader as a hub service;
- ``SRV/course/``: the course root, owned by that account, mode 0700: a copy of
  ``source/``, ``release/`` and ``nbgrader_config.py`` (updated when the checkout's changes,
  the instructor's lines below its marker kept: ``sync_course_config``), and ``gradebook.db`` whose
  student roster is filled from the same roster file (first and last names, so the
  Formgrader shows names, not "None, None");
- ``SRV/exchange/``: nbgrader's exchange for ``autograder.nbgrader.exchange`` (hub/README.md,
  "The exchange"), on its own file system: an ext4 image ``SRV/exchange.img`` of
  ``$DP_HUB_EXCHANGE_LIMIT`` bytes (default 2G; sparse), loop-mounted ``nosuid,nodev,noexec``
  (again by every run, e.g. after a reboot), so that what students write into ``inbound/``
  can fill only the exchange, never the host's disk or the home images; an exchange of an
  earlier version (a plain folder) is moved into the image. Where loop devices are missing
  (an unprivileged container) it stays a plain folder and a warning says so. The root
  root-owned 1777 (sticky: no one renames or replaces another's
  folder); ``dp-course/`` with ``outbound/`` (0755), ``inbound/`` (3733: students can
  create their own submission folder but not list, rename or delete others') and
  ``feedback/`` (0711) pre-created and owned by the course account. A course folder
  found there owned by anyone else, or a symlink, is moved aside (printed);
- ``SRV/bundle/``: the student bundle (``python -m autograder bundle``), root-owned,
  world-readable: it has been checked for solutions and hidden tests;
- the course's Python, which runs every student's server and the Formgrader: the
  virtualenv ``SRV/venv`` (``--venv``), built from ``requirements.txt`` with a base
  interpreter every account can run (a new version beside it when requirements.txt or the
  interpreter change, running servers keep theirs: hub/upgrade.py, hub/README.md "Upgrades"),
  with ``VENV/app/`` (a root-owned copy of the course package:
  ``autograder/``, ``helpers/``, ``course/data/``, ``nbgrader_templates/``,
  ``pyproject.toml``, refreshed on every run) installed editable;
  ``SRV/jupyter/{student,grader}`` (copies of hub/jupyter/) and ``SRV/grade.sh``.

Roster changes (``hub/roster_ops.py``): someone added gets all of the above, someone no longer on the
roster is removed (her hub user, server and tokens; a student's OS account locked, her files and grades
kept), printed; ``SRV/roster.json`` records the roster applied. After a demo, its logins and tokens are
voided, the hub's database kept (hub/README.md, "Roster changes", "Demo to real passwords").

Outside the course's own folders: the students' accounts become hub-only (``hub/oslock.py``:
no ssh, cron, at or su for them, no login shell; printed, and undone by ``--stop``), and the
checkout root becomes 0700 (and ``source/``, ``tests/``, ``.git``, ``hub/state`` too, should the
root be loosened again): the students' servers need nothing from it. No folder above it is
touched (earlier versions added ``o+x`` to ``/root`` and the folders above it; hub/README.md).

``--reset`` (demo and tests only) first deletes ``SRV/course``, ``SRV/exchange`` (and its image),
``SRV/bundle``, ``SRV/homes`` (the home images of hub/spawner.py) and, in each roster member's home, ``~/course``, nbgrader's submission cache, the saved JupyterLab
workspaces and the fetched
assignment folders (``~/<assignment>`` for every assignment of ``source/``).
"""

from __future__ import annotations

import argparse
import csv
import os
import pwd
import re
import shutil
import sqlite3
import stat
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import oslock
import roster_ops
from upgrade import APP_PARTS, base_python, build_course_python, root_only  # noqa: F401  (provision.*)
from oslock import has_demo_password, password_set, restrict_checkout, set_password  # noqa: F401  (provision.*)

REPO = Path(__file__).resolve().parents[1]
COURSE_ID = "dp-course"
GRADER = f"grader-{COURSE_ID}"
ROLES = ("instructor", "student")
ID_PATTERN = re.compile(r"^[a-z_][a-z0-9_-]{0,31}$")
DEFAULT_SRV = Path(os.environ.get("DP_HUB_SRV", "/srv/dp-course"))
EXCHANGE_LIMIT = os.environ.get("DP_HUB_EXCHANGE_LIMIT", "2G")
INBOUND_LIMIT = os.environ.get("DP_HUB_INBOUND_LIMIT", "256M")


def size_bytes(spec: str) -> int:
    """Bytes of a size such as ``512M`` or ``2G`` (binary units), or a plain number of bytes."""
    units = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
    return int(float(spec[:-1]) * units[spec[-1].upper()]) if spec[-1].upper() in units else int(spec)


def read_roster(path: Path) -> list[dict]:
    """Rows ``{id, name, role, first_name, last_name}`` of the roster CSV.

    Raises ``ValueError`` naming the row when an id is not a valid Unix user
    name, a role is not instructor/student, or an id repeats.
    """
    rows, seen = [], set()
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames is None or not {"id", "name", "role"} <= set(reader.fieldnames):
            raise ValueError(f"{path}: expected the header id,name,role, got {reader.fieldnames}")
        for number, row in enumerate(reader, start=2):
            uid, name, role = row["id"].strip(), row["name"].strip(), row["role"].strip().lower()
            if not ID_PATTERN.match(uid):
                raise ValueError(f"{path}:{number}: id {uid!r} is not a valid Unix user name "
                                 "(lower-case letters, digits, '-', '_'; at most 32 characters)")
            if role not in ROLES:
                raise ValueError(f"{path}:{number}: role {role!r}; expected one of {ROLES}")
            if uid in seen or uid == GRADER:
                raise ValueError(f"{path}:{number}: id {uid!r} appears twice or is reserved")
            seen.add(uid)
            first, _, last = name.rpartition(" ")
            rows.append({"id": uid, "name": name, "role": role,
                         "first_name": first or name, "last_name": last if first else ""})
    return rows


def assignments(course: Path = REPO) -> list[str]:
    return sorted(p.name for p in (course / "source").iterdir() if p.is_dir())


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def ensure_user(name: str, comment: str, *, login: bool = True) -> pwd.struct_passwd:
    """The OS account ``name`` with a private home, created if missing."""
    if not _user_exists(name):
        shell = "/bin/bash" if login else "/usr/sbin/nologin"
        subprocess.run(["useradd", "--create-home", "--shell", shell, "--comment", comment, name],
                       check=True)
        print(f"created user {name}")
    user = pwd.getpwnam(name)
    home = Path(user.pw_dir)
    home.mkdir(parents=True, exist_ok=True)
    os.chown(home, user.pw_uid, user.pw_gid)
    home.chmod(0o700)
    return user


def chown_tree(path: Path, user: pwd.struct_passwd) -> None:
    for root, dirs, files in os.walk(path):
        os.chown(root, user.pw_uid, user.pw_gid)
        for f in files:
            os.lchown(os.path.join(root, f), user.pw_uid, user.pw_gid)


def _gradebook_holds(db: Path, students: list[dict]) -> bool:
    """Whether ``db`` already has the course and each of ``students`` under the same names (read only)."""
    if not db.is_file():
        return False
    try:
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
            if con.execute("SELECT 1 FROM course WHERE id = ?", (COURSE_ID,)).fetchone() is None:
                return False
            names = {row[0]: (row[1], row[2]) for row in con.execute("SELECT id, first_name, last_name FROM student")}
    except sqlite3.Error:
        return False
    return all(names.get(p["id"]) == (p["first_name"], p["last_name"]) for p in students)


def fill_gradebook(course: Path, roster: list[dict], grader: pwd.struct_passwd) -> None:
    """Add or update every student of the roster in ``course/gradebook.db``."""
    students = [person for person in roster if person["role"] == "student"]
    # Every run of `sudo make hub` comes here; when the gradebook already says what the roster says, it
    # is left as it is without importing nbgrader (its package imports its server extensions, nbconvert
    # and jupyter_server: 10 s of a 12 s provisioning on a loaded machine; the first one also ran alembic)
    if not _gradebook_holds(course / "gradebook.db", students):
        from nbgrader.api import Gradebook

        with Gradebook(f"sqlite:///{course / 'gradebook.db'}", course_id=COURSE_ID) as gb:
            for person in students:
                gb.update_or_create_student(person["id"], first_name=person["first_name"],
                                            last_name=person["last_name"])
    for path in course.glob("gradebook.db*"):
        os.chown(path, grader.pw_uid, grader.pw_gid)


def install_configs(srv: Path) -> None:
    """``SRV/jupyter/{student,grader}`` and ``SRV/grade.sh``: what the servers read, outside the checkout."""
    for kind in ("student", "grader"):
        target = srv / "jupyter" / kind
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(REPO / "hub" / "jupyter" / kind, target, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(REPO / "hub" / "grade.sh", srv / "grade.sh")
    for root, dirs, files in os.walk(srv / "jupyter"):
        os.chmod(root, 0o755)
        for f in files:
            os.chmod(os.path.join(root, f), 0o644)
    (srv / "grade.sh").chmod(0o755)


def run_tool(cmd: list[str]) -> str:
    """Run a root tool; ``""`` on success, else its error output."""
    done = subprocess.run(cmd, capture_output=True, text=True)
    return "" if done.returncode == 0 else (done.stderr or done.stdout).strip()[-500:] or f"exit {done.returncode}"


def unmount_exchange(srv: Path) -> None:
    inside = str((srv / "exchange").resolve()) + "/"
    for target in sorted((t for t in _mount_targets() if t.startswith(inside)), key=len, reverse=True):
        if run_tool(["umount", target]):        # the students' own inbound spaces first
            run_tool(["umount", "--lazy", target])
    if os.path.ismount(srv / "exchange") and run_tool(["umount", str(srv / "exchange")]):
        run_tool(["umount", "--lazy", str(srv / "exchange")])     # busy: detach now, freed when closed


def mount_exchange(srv: Path, size: int) -> str:
    """``SRV/exchange`` on its own ext4 image of ``size`` bytes; ``""``, or why it stays a plain folder.

    No quota here: the kernel of this kind of machine has no ``CONFIG_QUOTA``, so one student
    can fill the exchange (and block the class's submissions until root removes the folder
    that Collect reports), but not the host's disk, the home images or the course root.
    """
    exchange, image = srv / "exchange", srv / "exchange.img"
    if os.path.ismount(exchange):
        return ""
    if exchange.is_symlink() or (exchange.exists() and not exchange.is_dir()):
        exchange.unlink()
    exchange.mkdir(exist_ok=True)
    if image.exists():
        error = run_tool(["mount", "-o", "loop,nosuid,nodev,noexec", str(image), str(exchange)])
        return f"mount -o loop: {error}" if error else ""
    # an exchange of an earlier version (a plain folder) moves into the image as it is (mkfs -d)
    earlier = srv / "exchange-moving-into-image"
    exchange.rename(earlier)
    exchange.mkdir()
    partial = image.with_suffix(".new")
    with open(partial, "wb") as handle:
        handle.truncate(size)                   # sparse: costs what is written
    partial.chmod(0o600)
    error = run_tool(["mkfs.ext4", "-q", "-F", "-m", "0", "-d", str(earlier), str(partial)])
    if not error:
        partial.rename(image)
        error = run_tool(["mount", "-o", "loop,nosuid,nodev,noexec", str(image), str(exchange)])
    if error:       # stays the plain folder it was
        partial.unlink(missing_ok=True)
        image.unlink(missing_ok=True)
        exchange.rmdir()
        earlier.rename(exchange)
        return error
    shutil.rmtree(earlier)
    return ""


def prepare_exchange(srv: Path, grader: pwd.struct_passwd) -> Path:
    """The exchange root (1777) and the course's folders in it, owned by the course account."""
    exchange = srv / "exchange"
    if exchange.is_symlink() or (exchange.exists() and not exchange.is_dir()):
        exchange.unlink()
    exchange.mkdir(exist_ok=True)
    os.chown(exchange, 0, 0)
    exchange.chmod(0o1777)
    course = exchange / COURSE_ID
    layout = {"outbound": 0o755, "inbound": 0o3733, "feedback": 0o711}

    def trusted(path: Path) -> bool:
        # inbound/ is meant to be writable by students (its sticky bit keeps them apart)
        st = os.lstat(path)
        loose = st.st_mode & 0o022 and path.name != "inbound"
        return stat.S_ISDIR(st.st_mode) and st.st_uid == grader.pw_uid and not loose

    if course.exists() or course.is_symlink():
        planted = not trusted(course) or any((course / sub).is_symlink() or ((course / sub).exists() and
                                             not trusted(course / sub)) for sub in layout)
        outbound = course / "outbound"
        if not planted and outbound.is_dir():
            for root, dirs, files in os.walk(outbound):
                for name in [root, *(os.path.join(root, n) for n in dirs + files)]:
                    st = os.lstat(name)
                    planted |= st.st_uid != grader.pw_uid or bool(st.st_mode & 0o022) or stat.S_ISLNK(st.st_mode)
        if planted:
            aside = srv / f"exchange-untrusted-{int(os.path.getmtime(course))}"
            shutil.move(str(course), str(aside))
            os.chown(aside, 0, 0)
            aside.chmod(0o700)
            print(f"exchange: {course} was not the course account's own (planted?): moved to {aside}")
    course.mkdir(exist_ok=True)
    os.chown(course, grader.pw_uid, grader.pw_gid)
    course.chmod(0o755)
    for sub, mode in layout.items():
        (course / sub).mkdir(exist_ok=True)
        os.chown(course / sub, grader.pw_uid, grader.pw_gid)
        (course / sub).chmod(mode)
    return exchange


def _mount_targets() -> list[str]:
    with open("/proc/self/mounts", encoding="utf-8") as handle:
        return [line.split()[1].replace("\\040", " ") for line in handle]


def stop_class(srv: Path, roster: list[dict], *, exchange: bool = True) -> list[str]:
    """Stop what runs of the roster's class as a reboot would, with the hub already stopped; what it did.

    Every roster member's server and what it left (the processes of each ``dphub-*`` cgroup of
    hub/spawner.py, killed), their network namespaces (``dphub-*``), the home images mounted
    over the roster's homes, and the exchange image. Their files stay: ``sudo make hub`` mounts the
    exchange again and each server's start its home (hub/README.md, "Restarts"). Used by the
    tests to leave the machine as they found it, and by ``--stop``.
    """
    sys.path.insert(0, str(REPO / "hub"))
    from spawner import NETNS_PREFIX, remove_netns

    from autograder.jail.cgroup import Cgroup

    done = []
    ids = {person["id"] for person in roster}
    groups: dict[str, tuple[int, list[Path]]] = {}
    with open("/proc/self/mounts", encoding="utf-8") as handle:
        hierarchies = [(line.split()[1], line.split()[2]) for line in handle if line.split()[2] in ("cgroup", "cgroup2")]
    for top, kind in hierarchies:
        for root, dirs, _ in os.walk(top):
            # the spawner's groups are dphub-<id>-<pid>-<ns>: only this class's students'
            for name in [d for d in dirs if d.startswith(NETNS_PREFIX) and d[len(NETNS_PREFIX):].rsplit("-", 2)[0] in ids]:
                groups.setdefault(name, (2 if kind == "cgroup2" else 1, []))[1].append(Path(root) / name)
                dirs.remove(name)
    for name, (version, dirs) in groups.items():
        Cgroup(dirs, version).remove()          # kills every process in it first
        done.append(f"stopped {name}")
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout if shutil.which("ip") else ""
    for line in listed.splitlines():
        name = line.split()[0] if line.split() else ""
        if name.startswith(NETNS_PREFIX) and name[len(NETNS_PREFIX):] in ids:
            remove_netns(name)
            done.append(f"removed network namespace {name}")
    homes = set()
    for person in roster:
        try:
            homes.add(os.path.realpath(pwd.getpwnam(person["id"]).pw_dir))
        except KeyError:
            pass
    for target in _mount_targets():
        if target in homes:
            if run_tool(["umount", target]):
                run_tool(["umount", "--lazy", target])
            done.append(f"unmounted {target}")
    if exchange and os.path.ismount(srv / "exchange"):
        unmount_exchange(srv)
        done.append(f"unmounted {srv / 'exchange'}")
    return done


def mount_inbound_spaces(srv: Path, roster: list[dict], grader: pwd.struct_passwd, size: int) -> str:
    """Each student's own inbound space; ``""``, or why the class shares ``inbound/`` (as before).

    ``SRV/inbound/<id>.img`` (ext4, sparse, ``size`` bytes, its own inodes), loop-mounted
    ``nosuid,nodev,noexec`` on ``exchange/dp-course/inbound/<id>``: owned by the student, readable
    by the course account's group, by no one else (0750). Submit writes there (autograder.nbgrader.exchange),
    Collect reads every space. A student who fills hers (blocks or inodes) stops only her own
    submissions; ``inbound/`` itself becomes 1711: no one else writes into the exchange's own file
    system, so classmates' submissions, releases and feedback keep their room.
    """
    inbound = srv / "exchange" / COURSE_ID / "inbound"
    images = srv / "inbound"
    images.mkdir(mode=0o700, exist_ok=True)
    os.chown(images, 0, 0)
    images.chmod(0o700)
    for person in (p for p in roster if p["role"] == "student"):
        user = pwd.getpwnam(person["id"])
        space, image = inbound / person["id"], images / f"{person['id']}.img"
        if os.path.ismount(space):
            continue
        if space.is_symlink() or (space.exists() and (not space.is_dir() or os.lstat(space).st_uid != 0)):
            # made by someone while inbound/ was open to all (an earlier version): not the student's space
            aside = srv / f"exchange-untrusted-{person['id']}-{int(os.lstat(space).st_mtime)}"
            shutil.move(str(space), str(aside))
            print(f"exchange: {space} was not made by provisioning: moved to {aside}")
        space.mkdir(exist_ok=True)
        os.chown(space, 0, 0)
        space.chmod(0o755)
        if not image.exists():
            partial = image.with_suffix(".new")
            with open(partial, "wb") as handle:
                handle.truncate(size)
            partial.chmod(0o600)
            error = run_tool(["mkfs.ext4", "-q", "-F", "-m", "0", "-E",
                              f"root_owner={user.pw_uid}:{grader.pw_gid}", str(partial)])
            if error:
                partial.unlink(missing_ok=True)
                return f"mkfs.ext4: {error}"
            partial.rename(image)
        error = run_tool(["mount", "-o", "loop,nosuid,nodev,noexec", str(image), str(space)])
        if error:
            return f"mount -o loop: {error}"
        os.chown(space, user.pw_uid, grader.pw_gid)
        space.chmod(0o750)
    inbound.chmod(0o1711)
    return ""


CONFIG_MARK = ("# ---- 本课程自己的设置写在此行之下，重新部署时保留 / "
               "local settings go below this line: hub/provision.py keeps them ----")


def _earlier_configs() -> set[str]:
    """Every ``nbgrader_config.py`` of the checkout's history: what an earlier provisioning may have copied."""
    git = ["git", "-c", "safe.directory=*", "-C", str(REPO)]
    revs = subprocess.run([*git, "rev-list", "HEAD", "--", "nbgrader_config.py"], capture_output=True, text=True)
    shown = (subprocess.run([*git, "show", f"{rev}:nbgrader_config.py"], capture_output=True, text=True)
             for rev in revs.stdout.split())
    return {done.stdout for done in shown if done.returncode == 0}


def sync_course_config(course: Path, srv: Path) -> str:
    """The course root's ``nbgrader_config.py`` is the checkout's, then the marker, then the instructor's own lines.

    Re-provisioning after an update replaces the part above ``CONFIG_MARK`` when it is a version
    provisioning wrote (the last one, recorded in ``SRV/.nbgrader_config.provisioned``, or any of the
    checkout's history): a config left from before a module move would no longer import. What is below
    the marker stays; the previous file is kept next to it. A part above the marker that someone
    edited is refused with a diff (``ValueError``): nothing is overwritten. Returns what it did, or "".
    """
    import difflib

    target, record = course / "nbgrader_config.py", srv / ".nbgrader_config.provisioned"
    want = (REPO / "nbgrader_config.py").read_text(encoding="utf-8")
    have = target.read_text(encoding="utf-8") if target.exists() else None
    head, local = have, ""
    if have is not None and CONFIG_MARK in have:
        head, local = have.split(CONFIG_MARK, 1)
        local = local[1:] if local.startswith("\n") else local
    if have is not None and head == want and CONFIG_MARK in have:
        return ""
    if have is not None and head != want and head not in {record.read_text(encoding="utf-8") if record.exists()
                                                           else None} and head not in _earlier_configs():
        diff = "".join(difflib.unified_diff(head.splitlines(keepends=True), want.splitlines(keepends=True),
                                            f"{target} (above the marker)", f"{REPO / 'nbgrader_config.py'}"))
        raise ValueError(
            f"{target} 在标记行之上被改过，与任何一版部署写入的都不同：未覆盖。请把你自己的设置移到文件末尾的标记行"
            f"之下（没有标记行就加上这一行），或用仓库里的 nbgrader_config.py 覆盖它，再重新部署。\n"
            f"{target} was edited above the marker line and is no version provisioning wrote: refused, nothing "
            f"overwritten. Move your own settings below the marker line at its end (add the line if it is "
            f"missing), or copy the checkout's nbgrader_config.py over it; then provision again.\n"
            f"marker line:\n{CONFIG_MARK}\n{diff}")
    if have is not None and head != want:
        kept = target.with_name(f"nbgrader_config.py.before-{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}")
        shutil.copy2(target, kept)
        kept.chmod(0o600)
    target.write_text(f"{want}{CONFIG_MARK}\n{local}", encoding="utf-8")
    record.write_text(want, encoding="utf-8")
    record.chmod(0o600)
    if have is None:
        return ""
    if head == want:
        return f"{target}: marker line added (settings of your own go below it)"
    return f"{target}: updated from the checkout; your lines below the marker kept; the previous file is {kept}"


def build_bundle(srv: Path) -> Path:
    bundle = srv / "bundle"
    if not (bundle / "course").is_dir():
        subprocess.run([sys.executable, "-m", "autograder", "bundle", "--out", str(bundle)],
                       check=True, cwd=REPO)
        for root, dirs, files in os.walk(bundle):
            os.chmod(root, 0o755)
            for f in files:
                os.chmod(os.path.join(root, f), 0o644)
    return bundle


def provision(roster_path: Path, srv: Path, *, demo_passwords: bool = False, reset: bool = False,
              venv: Path | None = None) -> dict:
    """Create users, course account, course folder, exchange and gradebook roster."""
    if os.geteuid() != 0:
        raise PermissionError("provisioning creates OS users: run it as root (sudo)")
    # nbgrader runs the `alembic` executable of the venv
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    roster = read_roster(roster_path)
    srv = Path(srv)
    for folder in (srv, Path(venv) if venv else srv / "venv"):     # before anything changes
        root_only(folder)
    if reset:
        unmount_exchange(srv)
        (srv / "exchange.img").unlink(missing_ok=True)
        for sub in ("course", "exchange", "bundle", "homes", "inbound"):   # homes, inbound: the images
            shutil.rmtree(srv / sub, ignore_errors=True)
    srv.mkdir(parents=True, exist_ok=True)
    root_only(srv)      # again: someone may have created it between the first check and mkdir (red team)
    srv.chmod(0o755)
    why_not = mount_exchange(srv, size_bytes(EXCHANGE_LIMIT))
    if why_not:
        print(f"warning: the exchange is not size-capped ({why_not}): what students write into its "
              "inbound/ can fill the host's disk")

    grader = ensure_user(GRADER, f"{COURSE_ID} grader (Formgrader service)", login=False)
    if reset:
        shutil.rmtree(Path(grader.pw_dir) / ".jupyter" / "lab" / "workspaces", ignore_errors=True)
    subprocess.run(["passwd", "--lock", GRADER], check=True, capture_output=True)

    exchange = prepare_exchange(srv, grader)

    course = srv / "course"
    if not course.is_dir():
        course.mkdir()
        for name in ("source", "release"):
            shutil.copytree(REPO / name, course / name,
                            ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
        print(f"created course root {course}")
    updated = sync_course_config(course, srv)
    if updated:
        print(updated)
    if not (course / "nbgrader_templates").exists():   # offline MathJax (nbgrader_config.py)
        shutil.copytree(REPO / "nbgrader_templates", course / "nbgrader_templates")
    chown_tree(course, grader)
    course.chmod(0o700)
    fill_gradebook(course, roster, grader)

    bundle = build_bundle(srv)
    python = build_course_python(Path(venv) if venv else srv / "venv", srv)     # hub/upgrade.py
    install_configs(srv)
    locked, without = [], []
    for person in roster:
        user = ensure_user(person["id"], person["name"])
        home = Path(user.pw_dir)
        if reset:
            for name in ["course", ".jupyter/lab/workspaces", ".local/share/jupyter/nbgrader_cache", *assignments()]:
                shutil.rmtree(home / name, ignore_errors=True)
        if not (home / "course").exists():
            shutil.copytree(bundle / "course", home / "course")
            chown_tree(home / "course", user)
        if demo_passwords:
            set_password(person["id"], f"demo-{person['id']}")
        elif has_demo_password(person["id"]):
            # a demo run left a guessable password: remove it (the account stays, locked)
            subprocess.run(["usermod", "--password", "!", person["id"]], check=True)
            locked.append(person["id"])
        if not demo_passwords and not password_set(person["id"]):
            without.append(person["id"])
    if os.path.ismount(exchange):       # where loop devices work: a space of their own for each student
        why_not = mount_inbound_spaces(srv, roster, grader, size_bytes(INBOUND_LIMIT))
        if why_not:
            print(f"warning: students share the exchange's inbound/ ({why_not}): one can fill it for all")
    state = Path(os.environ.get("DP_HUB_STATE", srv / "hub"))
    # against the roster provisioning last applied: who left (server stopped, tokens revoked, account locked)
    removed = roster_ops.apply(srv, state, roster, stop_class)
    if locked:
        print(f"removed the demo passwords of: {', '.join(locked)}")
        # Whoever logged in with a demo password keeps cookies and API tokens (red team: a token made
        # during the demo still answered): void them, keep the servers' records (hub/roster_ops.py).
        for line in roster_ops.void_demo_sessions(state):
            print(line)
    if without:
        print(f"no password yet (cannot log in): {', '.join(without)}; set them with "
              "`sudo passwd ID` or `sudo chpasswd < FILE` (lines ID:PASSWORD), "
              "or use LTI 1.3 (hub/README.md)")
    gone = [i for i, role in removed.items() if role == "student" and _user_exists(i)]     # doors stay closed
    for line in oslock.lock(srv, [p["id"] for p in roster if p["role"] == "student"] + gone):
        print(line)
    changes = restrict_checkout(REPO)
    for change in changes:
        print(f"permissions: {change}")
    return {"roster": roster, "course": course, "exchange": exchange, "bundle": bundle, "python": python,
            "grader": GRADER, "permission_changes": changes, "demo_passwords_removed": locked,
            "without_password": without}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--roster", type=Path, default=Path(os.environ.get("DP_HUB_ROSTER", REPO / "hub" / "roster.csv")),
                        help="the class list (default: $DP_HUB_ROSTER, as jupyterhub_config.py reads it, else hub/roster.csv)")
    parser.add_argument("--srv", type=Path, default=DEFAULT_SRV,
                        help="folder for the course root, exchange and bundle (default %(default)s)")
    parser.add_argument("--venv", type=Path, default=None,
                        help="the course's virtualenv for the servers (default SRV/venv)")
    parser.add_argument("--demo-passwords", action="store_true",
                        help="set the guessable password demo-<id> for every roster member (demo and tests "
                             "only); without it, earlier demo passwords are removed")
    parser.add_argument("--reset", action="store_true",
                        help="delete the course, exchange and the members' course folders first (demo/tests)")
    parser.add_argument("--stop", action="store_true",
                        help="with the hub stopped: stop every student's server, unmount the homes and the "
                             "exchange (what a reboot does; files stay), undo the hub-only accounts, then exit")
    args = parser.parse_args(argv)
    if args.stop:
        if os.geteuid() != 0:
            parser.error("--stop needs root")
        for line in stop_class(args.srv, read_roster(args.roster)) + oslock.unlock(args.srv):
            print(line)
        return 0
    try:
        result = provision(args.roster, args.srv, demo_passwords=args.demo_passwords, reset=args.reset,
                           venv=args.venv)
    except (ValueError, PermissionError) as exc:
        parser.error(str(exc))
    people = ", ".join(f"{p['id']} ({p['role']})" for p in result["roster"])
    print(f"class ready: {people}; course root {result['course']}, exchange {result['exchange']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
