"""The course's Python and its upgrades: a new one built beside the running one (issue 38).

``build_course_python(base, srv)`` (called by ``hub/provision.py``, ``sudo make hub``) makes the
virtualenv that runs every student's server and the Formgrader, from ``requirements.txt``
(``DP_HUB_REQUIREMENTS``) and a base interpreter every account can run. Each build is a version:

- the first is built at ``base`` (``SRV/venv``, ``--venv``), as before;
- when requirements.txt or the interpreter change, the new version is built **beside** it, at
  ``<base>-py-<digest of its stamp>``; nothing that runs is deleted or changed under a running
  server (before, provisioning deleted ``SRV/venv`` and rebuilt it while every server ran from it);
- a version that matches the stamp is reused, not rebuilt: going back to an earlier
  requirements.txt (``git checkout``) and ``sudo make hub`` switches back to the earlier version
  in a second;
- the version in use is recorded in ``SRV/course-python.json`` (``current``, then the ``previous``
  ones, newest first); ``hub/jupyterhub_config.py`` reads it at every server start (each student's
  next start uses the new one; running servers keep theirs) and at the hub's start (the Formgrader);
- ``python hub/upgrade.py rollback [--srv SRV]`` makes the previous version current at once (until
  the next provisioning, which goes by requirements.txt again);
- versions other than the current and the previous one are deleted only when no process runs from
  them (their path in a process's command line).

hub/README.md, "Upgrades".
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RECORD = "course-python.json"
KEEP = 2            # the current version and the one before it (a rollback)


def requirements() -> Path:
    return Path(os.environ.get("DP_HUB_REQUIREMENTS", REPO / "requirements.txt"))


def stamp_for(folder: Path, base: str | None = None) -> str:
    """What a version built at ``folder`` records: requirements.txt, the base interpreter, the folder."""
    return hashlib.sha256(b"".join([requirements().read_bytes(), (base or base_python()).encode(),
                                    str(folder).encode()])).hexdigest()


def versions(base: Path) -> list[Path]:
    """``base`` and every version built beside it."""
    return [base, *sorted(base.parent.glob(f"{base.name}-py-*"))]


def current(srv: Path, default: Path) -> Path:
    """The course's Python that servers start from: the one recorded in ``srv``, else ``default``."""
    try:
        path = Path(json.loads((Path(srv) / RECORD).read_text(encoding="utf-8"))["current"])
    except (OSError, ValueError, KeyError, TypeError):
        return Path(default)
    return path if (path / "bin" / "python").exists() else Path(default)


def _record(srv: Path, folder: Path) -> str:
    """Make ``folder`` the current version in ``srv``'s record; a line to print when it changed."""
    path = Path(srv) / RECORD
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        record = {}
    was = record.get("current")
    if was == str(folder):
        return ""
    previous = [p for p in [was, *record.get("previous", [])] if p and p != str(folder)]
    _write(path, {"current": str(folder), "previous": previous})
    if was is None:
        return ""
    return (f"course Python: {folder} (was {was}): each student's next server start uses it, running servers "
            f"keep theirs, the Formgrader switches at the hub's next start; roll back with "
            f"`python hub/upgrade.py rollback --srv {srv}` (hub/README.md, \"Upgrades\")")


def _write(path: Path, record: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=1), encoding="utf-8")
    tmp.chmod(0o644)
    os.replace(tmp, path)


def in_use(folder: Path) -> bool:
    """Whether any process runs from ``folder`` (its path in the process's command line)."""
    needle = str(folder).encode() + b"/"
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and needle in (proc / "cmdline").read_bytes():
                return True
        except OSError:
            pass
    return False


def prune(srv: Path, base: Path) -> list[str]:
    """Delete the versions beside ``base`` that are neither current nor previous, and that nothing runs from."""
    try:
        record = json.loads((Path(srv) / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    keep = {record.get("current"), *record.get("previous", [])[:KEEP - 1]}
    done = []
    for folder in versions(base)[1:]:
        try:
            root_only(folder)           # never someone else's folder by that name
        except PermissionError:
            continue
        if str(folder) not in keep and not in_use(folder):
            shutil.rmtree(folder)
            done.append(f"course Python: removed the old version {folder}")
    return done


def rollback(srv: Path) -> str:
    """Make the previous version current (until the next provisioning); what was done."""
    path = Path(srv) / RECORD
    record = json.loads(path.read_text(encoding="utf-8"))
    previous = [p for p in record.get("previous", []) if (Path(p) / "bin" / "python").exists()]
    if not previous:
        raise SystemExit(f"{path}: no earlier course Python to go back to")
    _write(path, {"current": previous[0], "previous": [record["current"], *previous[1:]]})
    return (f"course Python: {previous[0]} again (was {record['current']}): each student's next server start "
            "uses it; restart the hub for the Formgrader. The next `sudo make hub` goes by requirements.txt "
            "again: check out the earlier one first (git checkout REV -- requirements.txt)")


def _world_reachable(path: Path) -> bool:
    """Every folder from / to ``path`` lets others traverse it, and ``path`` lets them read."""
    path = Path(os.path.realpath(path))
    return all(parent.stat().st_mode & 0o001 for parent in path.parents) and bool(path.stat().st_mode & 0o004)


def base_python() -> str:
    """An interpreter of this Python version that every account can run (not one under /root)."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    candidates = [os.path.join(sys.base_prefix, "bin", version), f"/usr/bin/{version}", f"/usr/local/bin/{version}"]
    for candidate in candidates:
        if os.path.exists(candidate) and _world_reachable(Path(candidate)) and \
                _world_reachable(Path(os.path.realpath(candidate)).parents[1] / "lib" / version / "os.py"):
            return candidate
    raise PermissionError(f"no {version} that every account can run (tried {', '.join(candidates)}): "
                          f"install one (Debian: apt-get install {version} {version}-venv) or run "
                          "provisioning with a Python outside /root")


APP_PARTS = ("pyproject.toml", "autograder", "helpers", "course/data", "nbgrader_templates")


def root_only(path: Path) -> None:
    """Raise ``PermissionError`` unless no account but root can replace ``path`` or what it holds.

    Every existing component from ``/`` down to ``path`` must be a real folder (no symlink) owned
    by root; one that others may write into (``/tmp``, ``/var/tmp``) only with the sticky bit, and
    ``path`` itself never. The course's Python and the course folders run as every student and as
    the course account: a student who had created ``path`` (or a symlink by its name) in a shared
    folder before provisioning would otherwise have provisioning adopt her folder (red team: a
    planted ``/var/tmp/dp-course-venv-*`` with matching stamps became the Formgrader's Python).
    """
    current = Path("/")
    for part in Path(os.path.abspath(path)).parts[1:]:
        current = current / part
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            return          # provisioning creates the rest, as root
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode) or st.st_uid != 0:
            what = "a symlink" if stat.S_ISLNK(st.st_mode) else "a folder" if stat.S_ISDIR(st.st_mode) else "a file"
            try:
                owner = pwd.getpwuid(st.st_uid).pw_name
            except KeyError:
                owner = f"uid {st.st_uid}"
            raise PermissionError(f"{current} is {what} owned by {owner}: refused (remove it, or choose a folder "
                                  "only root can write)")
        loose = st.st_mode & 0o022
        if loose and (current == Path(os.path.abspath(path)) or not st.st_mode & stat.S_ISVTX):
            raise PermissionError(f"{current} is writable by others (mode {stat.S_IMODE(st.st_mode):o}): "
                                  "refused (choose a folder only root can write)")


def _root_lock(path: str):
    """Open (create) the lock file ``path`` as root's own, never through a symlink or someone's file."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    if os.fstat(fd).st_uid != 0:
        os.close(fd)
        raise PermissionError(f"{path} is not root's own: refused (remove it)")
    return os.fdopen(fd, "w")


def _uv_install(python: Path) -> bool:
    """requirements.txt into ``python``'s virtualenv with uv, when the Python running this has it
    (``make install`` puts it into .venv): 6 s from uv's cache where pip took 42 s (a fresh clone's
    hub tests). Copied, not hard-linked to root's cache, and compiled to bytecode as pip does (the
    students' servers cannot write it). False when uv is missing or fails: pip installs then.
    """
    import importlib.util

    if importlib.util.find_spec("uv") is None:
        return False
    env = dict(os.environ)
    if env.get("PIP_INDEX_URL"):            # a mirror set for pip (README) serves uv too
        env.setdefault("UV_DEFAULT_INDEX", env["PIP_INDEX_URL"])
    done = subprocess.run([sys.executable, "-m", "uv", "pip", "install", "--quiet", "--compile-bytecode",
                           "--link-mode", "copy", "--python", str(python), "-r", str(requirements())],
                          capture_output=True, env=env)
    return done.returncode == 0


def build_course_python(base: Path, srv: Path | None = None) -> Path:
    """The course's virtualenv for this requirements.txt (module docstring), with the course package copied into
    ``<version>/app``; returns its python.

    The packages are installed only into a new version (a stamp file records what it was built from);
    the copy of the course package is refreshed on every run (installed editable, so a refreshed
    copy needs no reinstall unless pyproject.toml changed).
    """
    interpreter = base_python()
    root_only(base)
    base.parent.mkdir(parents=True, exist_ok=True)
    with _root_lock(f"{base}.lock") as lock:       # several provisionings may share one venv (tests)
        fcntl.flock(lock, fcntl.LOCK_EX)
        built = [f for f in versions(base) if (f / ".dp-course-requirements").exists() and (f / "bin" / "python").exists()]
        venv = next((f for f in built if (f / ".dp-course-requirements").read_text() == stamp_for(f, interpreter)), None)
        if venv is None:
            # never where something was built: a running server's Python stays as it is
            venv = Path(f"{base}-py-{stamp_for(base, interpreter)[:12]}") if base in built else base
        root_only(venv)
        python = venv / "bin" / "python"
        pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        stamp = venv / ".dp-course-requirements"
        if not (stamp.exists() and stamp.read_text() == stamp_for(venv, interpreter) and python.exists()):
            print(f"building the course's Python in {venv} (from {requirements()}; a few minutes)")
            shutil.rmtree(venv, ignore_errors=True)     # an unfinished build, never a built version
            venv.mkdir(mode=0o755)      # fails if someone created it meanwhile (never adopted)
            subprocess.run([interpreter, "-m", "venv", str(venv)], check=True)
            # a current pip first: venv's bundled one (23.2 with Python 3.11) resolves the
            # requirements in 30 s, pip 26 in 10 s; not fatal, the bundled pip installs them too
            subprocess.run([*pip, "--upgrade", "pip"], capture_output=True)
            if not _uv_install(python):
                subprocess.run([*pip, "-r", str(requirements())], check=True, capture_output=True)
            stamp.write_text(stamp_for(venv, interpreter))
        app = venv / "app"
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints")
        shutil.rmtree(app, ignore_errors=True)
        for part in APP_PARTS:
            src = REPO / part
            if src.is_dir():
                shutil.copytree(src, app / part, ignore=ignore)
            elif src.exists():
                (app / part).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, app / part)
        app_stamp = venv / ".dp-course-app"
        project = hashlib.sha256((REPO / "pyproject.toml").read_bytes() + b"compat").hexdigest()
        if not (app_stamp.exists() and app_stamp.read_text() == project):
            # compat: a path entry, so that a folder named autograder/ in the working directory
            # (grade.sh's output in the course root) cannot shadow the package as a namespace package
            result = subprocess.run([*pip, "--no-deps", "--config-settings", "editable_mode=compat", "-e", str(app)],
                                    capture_output=True, text=True)
            if result.returncode:
                raise RuntimeError(f"installing the course package into {venv} failed:\n{result.stderr[-3000:]}")
            app_stamp.write_text(project)
        for root, dirs, files in os.walk(app):
            os.chmod(root, 0o755)
            for f in files:
                os.chmod(os.path.join(root, f), 0o644)
        os.chmod(venv, 0o755)
    if srv is not None:
        for line in [_record(srv, venv), *prune(srv, base)]:
            if line:
                print(line)
    return python


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="the course's Python: go back to the previous version")
    parser.add_argument("action", choices=["rollback"])
    parser.add_argument("--srv", type=Path, default=Path(os.environ.get("DP_HUB_SRV", "/srv/dp-course")))
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        parser.error("run it as root (sudo)")
    print(rollback(args.srv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
