"""Issue 38: a term's operations on the class server while the class works.

The class is the session's (``tests/support/hubserver.py``), provisioned as ``sudo make hub`` does;
every step here is what a department's IT does by hand: edit the roster and provision again
(``provision.py`` without ``--reset``: ``sudo make hub``), with the hub running or stopped, switch
from the demo's passwords to real ones, build a new course Python. Throughout, classmates keep
working: their server's process and a variable in their kernel must survive each step.

- A student added (``dpt-dora``) logs in and works without a restart of the hub; removed again, with
  the hub running: her login is refused, her old API token fails, her server's processes, cgroup,
  network namespace and home mount are gone, her OS account is locked and expired (her files kept),
  and Collect skips her folder with a log line.
- Demo to real passwords with servers running (the hub stopped, provisioned without
  ``--demo-passwords``, a real password set, the hub started): the hub's database is kept, every
  running server is known to the hub (none orphaned, no student with two servers), every token the
  demo made fails, and alice logs in with her real password and reaches the same server, her kernel's
  variable intact. A student removed meanwhile (``dpt-eve``, the hub stopped) is gone from the hub's
  database, her server stopped and her token void.

Needs root; skipped with the reason otherwise (CI runs as root).
"""

from __future__ import annotations

import json
import os
import pwd
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.hubserver import LEDGER, ROOT, Student, course_venv

pytestmark = [pytest.mark.timeout(900), pytest.mark.xdist_group("hub")]

ALICE, BOB = "alice", "bob"                 # the demo roster's students (passwords demo-<id>)
DORA, EVE = "dpt-dora", "dpt-eve"           # students this module adds and removes


def _servers(name: str) -> list[int]:
    """Pids of ``name``'s jupyterhub-singleuser processes (her servers)."""
    uid, found = pwd.getpwnam(name).pw_uid, []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and proc.stat().st_uid == uid and \
                    b"jupyterhub-singleuser" in (proc / "cmdline").read_bytes():
                found.append(int(proc.name))
        except OSError:
            pass
    return found


def _processes(name: str) -> list[int]:
    uid, found = pwd.getpwnam(name).pw_uid, []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and proc.stat().st_uid == uid:
                found.append(int(proc.name))
        except OSError:
            pass
    return found


def _traces(name: str) -> list[str]:
    """What is left of ``name``'s server on the host: cgroups, network namespace, home mount."""
    left = []
    with open("/proc/self/mounts", encoding="utf-8") as handle:
        mounts = [line.split() for line in handle]
    for top in (m[1] for m in mounts if m[2] in ("cgroup", "cgroup2")):
        for root, dirs, _ in os.walk(top):
            left += [os.path.join(root, d) for d in dirs if d.startswith(f"dphub-{name}-")]
            dirs[:] = [d for d in dirs if not d.startswith("dphub-")]
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
    left += [f"netns {n}" for n in netns if n == f"dphub-{name}"]
    home = os.path.realpath(pwd.getpwnam(name).pw_dir)
    left += [f"mount {m[1]}" for m in mounts if m[1] == home]
    return left


def _exists(name: str) -> bool:
    try:
        return bool(pwd.getpwnam(name))
    except KeyError:
        return False


def _shadow(name: str) -> list[str]:
    return subprocess.run(["getent", "shadow", name], capture_output=True, text=True, check=True).stdout.split(":")


class Term:
    """The session's class, its roster file, and `sudo make hub`'s provisioning of it."""

    def __init__(self, class_server):
        self.server = class_server
        self.original = class_server.roster.read_text(encoding="utf-8")

    def roster(self, *extra: str) -> None:
        rows = "".join(f"{name},{name.split('-')[-1].title()} T,student\n" for name in extra)
        self.server.roster.write_text(self.original.rstrip("\n") + "\n" + rows, encoding="utf-8")

    def provision(self, *, demo: bool = True) -> str:
        cmd = [a for a in self.server.provision if a != "--reset"] + (["--demo-passwords"] if demo else [])
        done = subprocess.run(cmd, env=self.server.env, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    def admin(self, hub: dict, method: str, path: str):
        """The hub's API with provisioning's own token (hub/jupyterhub_config.py)."""
        import requests

        token = (self.server.srv / "hub" / "provision-api-token").read_text().strip()
        return requests.request(method, f"{hub['local']}/hub/api{path}", timeout=30,
                                headers={**hub["headers"], "Authorization": f"token {token}"})

    def collect_as_course(self, student: str) -> subprocess.CompletedProcess:
        """nbgrader collect (the Formgrader's Collect) for one student, as the course account."""
        import upgrade

        srv = self.server.srv
        venv = upgrade.current(srv, course_venv())          # the course Python the class runs now
        env = {"HOME": pwd.getpwnam("grader-dp-course").pw_dir, "LANG": "C.UTF-8", "MPLBACKEND": "Agg",
               "PATH": f"{venv / 'bin'}:/usr/bin:/bin", "NBGRADER_EXCHANGE": str(srv / "exchange"),
               "JUPYTER_CONFIG_PATH": str(srv / "jupyter" / "grader")}
        return subprocess.run(["runuser", "-u", "grader-dp-course", "--", "env", "-i",
                               *(f"{k}={v}" for k, v in env.items()), str(venv / "bin" / "nbgrader"), "collect",
                               f"--student={student}", "laplace"], cwd=srv / "course", capture_output=True, text=True)


@pytest.fixture(scope="module")
def term(class_server, _running_hub):
    """The class with its hub running and the demo's passwords (an earlier module may have stopped it)."""
    t = Term(class_server)
    ledger = json.loads((class_server.srv / LEDGER).read_text())     # the session's teardown removes them
    ledger["accounts"] = sorted(set(ledger["accounts"]) | {n for n in (DORA, EVE) if not _exists(n)})
    (class_server.srv / LEDGER).write_text(json.dumps(ledger))
    if class_server.proc is None:
        t.provision()
        class_server.start_hub()
    yield t
    class_server.roster.write_text(t.original, encoding="utf-8")
    if class_server.proc is None:
        t.provision()
        class_server.start_hub()
    else:
        t.provision()       # the demo's passwords back for the modules after this one


def test_a_student_added_and_removed_while_classmates_work(hub, term):
    alice = Student(hub, ALICE)
    alice.start()
    alice.run("kept = 41")
    before = _servers(ALICE)
    hub_pid = term.server.proc.pid

    term.roster(DORA)                               # added: `sudo make hub` while the hub runs
    said = term.provision()
    assert f"added to the class: {DORA}" in said, said
    dora = Student(hub, DORA)                       # no restart of the hub: she logs in and works
    dora.start()
    assert dora.run("print(6 * 7)").strip() == "42"
    logs = term.server.srv / "logs"                 # her server's log and the Formgrader's in files (issue 38)
    assert (logs / "servers" / f"{DORA}.log").stat().st_size > 0
    assert (logs / "formgrader" / "formgrader.log").stat().st_size > 0
    space = term.server.exchange / "dp-course" / "inbound" / DORA
    planted = subprocess.run(["runuser", "-u", DORA, "--", "bash", "-c",
                              f'd="{space}/{DORA}+laplace+2026-11-29 06:00:00.000000 UTC+abcd"; mkdir "$d" && '
                              f'echo "{{}}" > "$d/laplace.ipynb" && echo secret > "$d/submission_secret.txt"'],
                             capture_output=True, text=True)
    assert planted.returncode == 0, planted.stderr
    assert alice.run("print(kept)").strip() == "41" and _servers(ALICE) == before

    term.roster()                                   # removed, the hub still running
    said = term.provision()
    assert f"removed from the class: {DORA}: hub user deleted" in said, said
    assert f"removed from the class: {DORA}: OS account locked" in said, said
    assert term.server.proc.pid == hub_pid and term.server.proc.poll() is None, "the hub was restarted"
    assert dora.hub_api("GET", "/user").status_code in (401, 403), "her old API token still works"
    with pytest.raises(AssertionError):
        Student(hub, DORA)                          # her login refused
    assert term.admin(hub, "GET", f"/users/{DORA}").status_code == 404
    assert _processes(DORA) == [], "processes of the removed student still run"
    assert _traces(DORA) == [], "her server left cgroups, a network namespace or a home mount"
    shadow = _shadow(DORA)
    assert shadow[1].startswith("!") and shadow[7] == "1", f"her account is not locked and expired: {shadow[1:8]}"
    assert (Path(pwd.getpwnam(DORA).pw_dir) / "course").is_dir(), "her files were not kept"
    collected = term.collect_as_course(DORA)
    assert collected.returncode == 0, collected.stdout + collected.stderr
    assert f"{DORA} is not on the class's roster" in collected.stdout + collected.stderr
    assert not (term.server.course / "submitted" / DORA).exists(), "Collect took the removed student's folder"
    assert alice.run("print(kept)").strip() == "41" and _servers(ALICE) == before, "a classmate's server was disturbed"


def test_demo_to_real_passwords_keeps_every_server(hub, term):
    """`sudo make hub` without DEMO=1 while servers run (and a student removed, the hub stopped)."""
    alice, bob = Student(hub, ALICE), Student(hub, BOB)
    for student in (alice, bob):
        student.start()
    alice.run("kept = 'alice'")
    term.roster(EVE)
    term.provision()
    eve = Student(hub, EVE)
    eve.start()
    servers = {name: _servers(name) for name in (ALICE, BOB)}
    assert all(len(pids) == 1 for pids in servers.values()), servers

    term.server.stop_hub()                          # Ctrl-C; then `sudo make hub` without DEMO=1
    term.roster()
    said = term.provision(demo=False)
    assert "removed the demo passwords" in said and "the hub's database kept" in said, said
    assert f"removed from the class: {EVE}: deleted from the hub's database" in said, said
    real = secrets.token_urlsafe(12)
    subprocess.run(["chpasswd"], input=f"{ALICE}:{real}\n", text=True, check=True)
    term.server.start_hub()

    for student in (alice, bob, eve):               # every token the demo made is void
        assert student.hub_api("GET", "/user").status_code in (401, 403), f"{student.name}'s demo token still works"
    users = {u["name"]: u for u in term.admin(hub, "GET", "/users").json()}
    for name in (ALICE, BOB):
        assert _servers(name) == servers[name], f"{name}'s server was stopped or doubled"
        assert users[name]["servers"].get("", {}).get("ready"), f"the hub does not know {name}'s running server"
    assert EVE not in users and _servers(EVE) == [] and _traces(EVE) == []
    again = Student(hub, ALICE, password=real)      # her real password, her same server and kernel
    again.kernel = alice.kernel
    assert again.run("print(kept)").strip() == "alice"
    assert _servers(ALICE) == servers[ALICE]
    with pytest.raises(AssertionError):
        Student(hub, BOB)                           # his demo password is gone


def _stop_server(student: Student) -> None:
    student.hub_api("DELETE", f"/users/{student.name}/server")
    deadline = time.monotonic() + 120
    while student.hub_api("GET", f"/users/{student.name}").json().get("servers", {}).get(""):
        assert time.monotonic() < deadline, f"{student.name}'s server did not stop"
        time.sleep(0.5)


def test_an_upgrade_keeps_running_servers_and_rolls_back(hub, term, tmp_path):
    """A changed requirements.txt: the new course Python beside the running one, used from the next start.

    The new version is a hard-linked copy of the current one stamped for the changed requirements
    (what a build would leave; a real build takes minutes), so provisioning finds it built and switches
    to it: what is checked is that nothing of the running version changes, that running servers keep
    running from it, that a new start uses the new one, and that the rollback brings the old one back.
    """
    import provision
    import upgrade

    if not provision.has_demo_password(ALICE):      # after the switch to real passwords: the demo's again
        term.provision()
    base = course_venv()
    running_python = upgrade.current(term.server.srv, base)     # base, unless an earlier upgrade left another
    alice, bob = Student(hub, ALICE), Student(hub, BOB)
    alice.start()
    alice.run("kept = 'upgrade'")
    running = _servers(ALICE)
    stamp = running_python / ".dp-course-requirements"
    before = (stamp.read_text(), (running_python / "bin" / "python").lstat().st_ino, stamp.stat().st_ino)
    changed = tmp_path / "requirements.txt"
    changed.write_text(f"-r {ROOT / 'requirements.txt'}\n# an upgrade (tests/hub/test_class_term.py)\n")
    os.environ["DP_HUB_REQUIREMENTS"] = str(changed)
    new = Path(f"{base}-py-{upgrade.stamp_for(base)[:12]}")
    try:
        subprocess.run(["cp", "-al", str(base), str(new)], check=True)
        (new / ".dp-course-requirements").unlink()
        (new / ".dp-course-requirements").write_text(upgrade.stamp_for(new))
        term.server.env["DP_HUB_REQUIREMENTS"] = str(changed)
        said = term.provision()
        assert f"course Python: {new} (was {running_python})" in said, said
        after = (stamp.read_text(), (running_python / "bin" / "python").lstat().st_ino, stamp.stat().st_ino)
        assert after == before, "the running course Python was rebuilt under the running servers"
        assert alice.run("print(kept)").strip() == "upgrade" and _servers(ALICE) == running
        _stop_server(bob)
        bob.start()                                         # his next start: the new version
        cmdline = (Path("/proc") / str(_servers(BOB)[0]) / "cmdline").read_bytes()
        assert f"{new}/bin/".encode() in cmdline, cmdline
        rolled = subprocess.run([sys.executable, str(ROOT / "hub" / "upgrade.py"), "rollback", "--srv",
                                 str(term.server.srv)], capture_output=True, text=True)
        assert rolled.returncode == 0 and f"course Python: {running_python} again" in rolled.stdout, \
            rolled.stdout + rolled.stderr
        _stop_server(bob)
        bob.start()                                         # after the rollback: the earlier version
        cmdline = (Path("/proc") / str(_servers(BOB)[0]) / "cmdline").read_bytes()
        assert f"{running_python}/bin/".encode() in cmdline and f"{new}/".encode() not in cmdline, cmdline
        assert alice.run("print(kept)").strip() == "upgrade" and _servers(ALICE) == running
    finally:
        os.environ.pop("DP_HUB_REQUIREMENTS", None)
        term.server.env.pop("DP_HUB_REQUIREMENTS", None)
        term.provision()                                    # back to the checkout's requirements.txt
        _stop_server(bob)
        shutil.rmtree(new, ignore_errors=True)
