"""Create the class on this machine from the roster (run as root; idempotent).

    .venv/bin/python hub/provision.py [--roster hub/roster.csv] [--srv /srv/dp-course]
                                      [--demo-passwords] [--reset]

For every row of the roster (``id,name,role``; role ``instructor`` or ``student``):
an OS account ``id`` with a private home (0700), the lecture notebooks of the
student bundle in ``~/course`` (copied once; never ``source/``), and with
``--demo-passwords`` the password ``demo-<id>`` (demo only: the README says so).

Then the course itself, as nbgrader's "Using nbgrader with JupyterHub" docs lay it out:

- the grader account ``grader-dp-course`` (no password, no login shell) that runs the
  Formgrader as a hub service;
- ``SRV/course/``: the course root, owned by that account, mode 0700: a copy of
  ``source/``, ``release/`` and ``nbgrader_config.py``, and ``gradebook.db`` whose
  student roster is filled from the same roster file (first and last names, so the
  Formgrader shows names, not "None, None");
- ``SRV/exchange/``: nbgrader's exchange, mode 0777 as nbgrader requires (each
  course folder in it is created by ``release_assignment`` with the right modes);
- ``SRV/bundle/``: the student bundle (``python -m autograder bundle``), root-owned,
  world-readable: it has been checked for solutions and hidden tests.

The checkout is made unreadable for students where it holds answers: ``source/``,
``tests/`` (the corpus has correct solutions), ``.git`` and ``hub/state`` become
0700; the checkout root becomes 0711 (traversable, not listable), so the students'
servers can still run ``.venv`` and import ``helpers``; every ancestor folder gets
``o+x`` if it lacked it (printed).

``--reset`` (demo and tests only) first deletes ``SRV/course``, ``SRV/exchange``,
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
import stat
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COURSE_ID = "dp-course"
GRADER = f"grader-{COURSE_ID}"
ROLES = ("instructor", "student")
ID_PATTERN = re.compile(r"^[a-z_][a-z0-9_-]{0,31}$")
DEFAULT_SRV = Path(os.environ.get("DP_HUB_SRV", "/srv/dp-course"))


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


def set_password(name: str, password: str) -> None:
    subprocess.run(["chpasswd"], input=f"{name}:{password}\n", text=True, check=True)


def fill_gradebook(course: Path, roster: list[dict], grader: pwd.struct_passwd) -> None:
    """Add or update every student of the roster in ``course/gradebook.db``."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", course_id=COURSE_ID) as gb:
        for person in roster:
            if person["role"] == "student":
                gb.update_or_create_student(person["id"], first_name=person["first_name"],
                                            last_name=person["last_name"])
    for path in course.glob("gradebook.db*"):
        os.chown(path, grader.pw_uid, grader.pw_gid)


def restrict_checkout(repo: Path = REPO) -> list[str]:
    """Hide answers in the checkout from other OS users; keep .venv and helpers usable."""
    changes = []
    for secret in ("source", "tests", ".git", "hub/state"):
        path = repo / secret
        if path.exists() and path.stat().st_mode & 0o077:
            path.chmod(0o700 if path.is_dir() else 0o600)
            changes.append(f"{path}: 0700")
    mode = stat.S_IMODE(repo.stat().st_mode)
    if mode & 0o066 or not mode & 0o001:
        repo.chmod(0o711)
        changes.append(f"{repo}: 0711 (traversable, not listable)")
    # the venv's python is a symlink to the base interpreter (e.g. pyenv under /root)
    interpreter = Path(os.path.realpath(sys.executable))
    for path, why in ((repo, repo / ".venv"), (interpreter, interpreter), (Path(sys.base_prefix), sys.base_prefix)):
        for parent in path.parents:
            mode = stat.S_IMODE(parent.stat().st_mode)
            if not mode & 0o001:
                parent.chmod(mode | 0o001)
                changes.append(f"{parent}: o+x (so the students' servers can reach {why})")
    return changes


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


def provision(roster_path: Path, srv: Path, *, demo_passwords: bool = False, reset: bool = False) -> dict:
    """Create users, course account, course folder, exchange and gradebook roster."""
    if os.geteuid() != 0:
        raise PermissionError("provisioning creates OS users: run it as root (sudo)")
    # nbgrader runs the `alembic` executable of the venv
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    roster = read_roster(roster_path)
    srv = Path(srv)
    if reset:
        for sub in ("course", "exchange", "bundle", "homes"):   # homes: hub/spawner.py's home images
            shutil.rmtree(srv / sub, ignore_errors=True)
    srv.mkdir(parents=True, exist_ok=True)
    srv.chmod(0o755)

    grader = ensure_user(GRADER, f"{COURSE_ID} grader (Formgrader service)", login=False)
    if reset:
        shutil.rmtree(Path(grader.pw_dir) / ".jupyter" / "lab" / "workspaces", ignore_errors=True)
    subprocess.run(["passwd", "--lock", GRADER], check=True, capture_output=True)

    exchange = srv / "exchange"
    exchange.mkdir(exist_ok=True)
    exchange.chmod(0o777)

    course = srv / "course"
    if not course.is_dir():
        course.mkdir()
        for name in ("source", "release"):
            shutil.copytree(REPO / name, course / name,
                            ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
        shutil.copy2(REPO / "nbgrader_config.py", course / "nbgrader_config.py")
        print(f"created course root {course}")
    chown_tree(course, grader)
    course.chmod(0o700)
    fill_gradebook(course, roster, grader)

    bundle = build_bundle(srv)
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
    changes = restrict_checkout()
    for change in changes:
        print(f"permissions: {change}")
    return {"roster": roster, "course": course, "exchange": exchange, "bundle": bundle,
            "grader": GRADER, "permission_changes": changes}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--roster", type=Path, default=REPO / "hub" / "roster.csv")
    parser.add_argument("--srv", type=Path, default=DEFAULT_SRV,
                        help="folder for the course root, exchange and bundle (default %(default)s)")
    parser.add_argument("--demo-passwords", action="store_true",
                        help="set the password demo-<id> for every roster member (demo only)")
    parser.add_argument("--reset", action="store_true",
                        help="delete the course, exchange and the members' course folders first (demo/tests)")
    args = parser.parse_args(argv)
    try:
        result = provision(args.roster, args.srv, demo_passwords=args.demo_passwords, reset=args.reset)
    except (ValueError, PermissionError) as exc:
        parser.error(str(exc))
    people = ", ".join(f"{p['id']} ({p['role']})" for p in result["roster"])
    print(f"class ready: {people}; course root {result['course']}, exchange {result['exchange']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
