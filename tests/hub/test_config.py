"""The class server's configuration, checked without starting anything (issue 11).

- ``hub/jupyterhub_config.py`` loads under JupyterHub's own config loader (PAM and LTI 1.3)
  and sets what nbgrader's JupyterHub docs require: the Formgrader service named after
  the course, running as the grader account; its access scope only for the
  instructors' group; students in no such group; the idle culler with its scopes;
  every config key is a real trait of the class it configures;
- students' Jupyter configuration disables the Formgrader and create-assignment
  (server and lab extensions); the grader's enables the Formgrader;
- the roster parser rejects bad rows with a message naming the row;
- ``hub/z2jh/values.yaml`` loads and uses only keys the Zero to JupyterHub chart's schema
  allows (``hub/z2jh/schema_keys.json``), and the checker catches a misspelt key.
"""

from __future__ import annotations

import importlib.util
import json
import stat
from pathlib import Path

import pytest
import yaml
from traitlets.config import PyFileConfigLoader

ROOT = Path(__file__).resolve().parents[2]
HUB = ROOT / "hub"


def _module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _load(tmp_path, monkeypatch, auth: str = "pam"):
    monkeypatch.setenv("DP_HUB_SRV", str(tmp_path / "srv"))
    monkeypatch.setenv("DP_HUB_STATE", str(tmp_path / "state"))
    monkeypatch.setenv("DP_HUB_AUTH", auth)
    # no network namespaces: loading the config would put the hub's address on this machine's lo
    monkeypatch.setenv("DP_HUB_NETNS_SUBNET", "")
    return PyFileConfigLoader("jupyterhub_config.py", path=str(HUB)).load_config()


def _traits_exist(config) -> list[str]:
    """Config sections/keys that are not configurable traits of a JupyterHub class."""
    from jupyterhub.app import JupyterHub
    from jupyterhub.auth import PAMAuthenticator
    from jupyterhub.proxy import ConfigurableHTTPProxy
    from jupyterhub.spawner import LocalProcessSpawner
    from ltiauthenticator.lti13.auth import LTI13Authenticator

    course_spawner = _module(HUB / "spawner.py", "spawner").CourseSpawner
    course_pam = _module(HUB / "pam_nodelay.py", "pam_nodelay").CoursePAMAuthenticator
    classes = {cls.__name__: cls for cls in (JupyterHub, PAMAuthenticator, ConfigurableHTTPProxy,
                                             LocalProcessSpawner, LTI13Authenticator, course_spawner, course_pam)}
    classes.update(Authenticator=PAMAuthenticator, Spawner=LocalProcessSpawner)
    problems = []
    for section, values in config.items():
        cls = classes.get(section)
        if cls is None:
            problems.append(section)
            continue
        names = set(cls.class_trait_names(config=True))
        problems += [f"{section}.{key}" for key in values if key not in names]
    return problems


def test_hub_config_follows_nbgrader_docs(tmp_path, monkeypatch):
    config = _load(tmp_path, monkeypatch)
    assert _traits_exist(config) == []
    roster = _module(HUB / "provision.py", "provision").read_roster(HUB / "roster.csv")
    instructors = [r["id"] for r in roster if r["role"] == "instructor"]
    students = [r["id"] for r in roster if r["role"] == "student"]
    assert instructors == ["teacher"] and len(students) == 3

    hub = config.JupyterHub
    services = {s["name"]: s for s in hub.services}
    formgrader = services["dp-course"]
    assert formgrader["user"] == "grader-dp-course"
    # provisioning's copy outside the checkout, run by the course's Python outside it too
    assert formgrader["environment"]["JUPYTER_CONFIG_PATH"].endswith("srv/jupyter/grader")
    assert any(part.endswith("srv/venv/bin/jupyterhub-singleuser") for part in formgrader["command"])
    assert "jupyterhub_idle_culler" in services["idle-culler"]["command"]
    # logs in files under SRV/logs (issue 38): the hub's rotates, each server and service has its own
    logs = tmp_path / "srv" / "logs"
    assert str(logs / "formgrader" / "formgrader.log") in formgrader["command"]
    assert str(logs / "idle-culler.log") in services["idle-culler"]["command"]
    handler = hub.logging_config["handlers"]["file"]
    assert handler["filename"] == str(logs / "jupyterhub.log") and handler["backupCount"] >= 1
    assert "file" in hub.logging_config["loggers"]["JupyterHub"]["handlers"]
    # logs name failed logins (a password typed as a name): root's and the course account's only (session 15)
    assert handler["()"].__name__ == "PrivateRotatingFileHandler" and "644" not in " ".join(services["idle-culler"]["command"])
    assert stat.S_IMODE(logs.stat().st_mode) & 0o007 == 0
    # one address's connections and one person's OAuth tokens per client, capped (hub/limits.py, session 15)
    import tornado.httpserver
    from jupyterhub.oauth.provider import JupyterHubRequestValidator

    assert tornado.httpserver.HTTPServer.dp_course_per_peer == 32
    assert tornado.httpserver.HTTPServer._save_configuration()[1]["idle_connection_timeout"] == 60
    assert JupyterHubRequestValidator.dp_course_per_client == 20
    assert config.CourseSpawner.log_dir == str(logs / "servers")

    roles = {r["name"]: r for r in hub.load_roles}
    access = "access:services!service=dp-course"
    assert access in roles["formgrade-dp-course"]["scopes"]
    assert roles["formgrade-dp-course"]["groups"] == ["formgrade-dp-course"]
    assert hub.load_groups["formgrade-dp-course"]["users"] == instructors
    # no role gives students (or everyone) the Formgrader
    for role in roles.values():
        if access in role["scopes"]:
            assert set(role.get("users", [])) | set(role.get("groups", [])) <= {"formgrade-dp-course"}
    # instructors cannot open students' servers (what such a server serves would run with their cookies)
    assert not [role["name"] for role in roles.values() if any(s.startswith("access:servers") for s in role["scopes"])]
    assert set(roles["idle-culler"]["scopes"]) >= {"list:users", "read:users:activity", "delete:servers"}
    assert config.Authenticator.allowed_users == set(instructors + students)
    assert config.JupyterHub.authenticator_class.__name__ == "CoursePAMAuthenticator"
    assert config.CoursePAMAuthenticator.exempt_accounts == set(instructors)     # never locked out by a student
    assert not config.Authenticator.admin_users

    env = config.Spawner.environment
    assert env["JUPYTER_CONFIG_PATH"].endswith("srv/jupyter/student")
    assert config.Spawner.cmd[0].endswith("srv/venv/bin/jupyterhub-singleuser")
    assert config.Spawner.notebook_dir == "~" and "source" not in config.Spawner.default_url
    assert config.Spawner.mem_limit == 2 * 2**30
    assert hub.bind_url.startswith("http://127.0.0.1:")
    # one origin per person: users' servers and the Formgrader on subdomains of the hub
    assert hub.subdomain_host == "http://hub.localhost:8000"
    # ... but the students' servers on a registrable domain of their own (cookies: issue 26)
    assert hub.subdomain_hook("alice", "hub.localhost", "user") == "alice.users.localhost"
    assert hub.subdomain_hook("dp-course", "hub.localhost", "service") == "dp-course--service.hub.localhost"
    assert "netns_subnet" not in config.CourseSpawner     # DP_HUB_NETNS_SUBNET="": the host's namespace
    limits = config.CourseSpawner
    assert limits.shm_limit == 256 * 2**20 and limits.home_limit == 2 * 2**30
    # a private /tmp would hide course folders that live under /tmp (as this test's do)
    under_tmp = (tmp_path / "srv").resolve().is_relative_to("/tmp")
    assert limits.tmp_limit == (0 if under_tmp else 512 * 2**20)
    # JupyterLab in Chinese for everyone; instructors get a menu that opens the Formgrader's origin
    lab = Path(tmp_path / "srv" / "lab-settings")
    student_lab = json.loads((lab / "student" / "settings" / "overrides.json").read_text())
    teacher_lab = json.loads((lab / "instructor" / "settings" / "overrides.json").read_text())
    assert student_lab["@jupyterlab/translation-extension:plugin"]["locale"] == "zh_CN"
    assert all(lab_["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false" for lab_ in (student_lab, teacher_lab))
    assert "@jupyterlab/mainmenu-extension:plugin" not in student_lab
    item = teacher_lab["@jupyterlab/mainmenu-extension:plugin"]["menus"][0]["items"][0]
    assert item["args"]["url"] == "http://dp-course--service.hub.localhost:8000/services/dp-course/formgrader"


def test_user_domain_must_be_its_own(tmp_path, monkeypatch):
    """A user domain under the hub's host (or holding it) would share cookies with the hub: refused."""
    for domain in ("users.hub.example.edu", "example.edu"):
        monkeypatch.setenv("DP_HUB_URL", "https://hub.example.edu")
        monkeypatch.setenv("DP_HUB_USER_DOMAIN", domain)
        with pytest.raises(SystemExit, match="registrable domain of its own"):
            _load(tmp_path, monkeypatch)
    monkeypatch.setenv("DP_HUB_USER_DOMAIN", "dpcourse-users.net")
    hook = _load(tmp_path, monkeypatch).JupyterHub.subdomain_hook
    assert hook("alice", "hub.example.edu", "user") == "alice.dpcourse-users.net"


def test_hub_config_lti13(tmp_path, monkeypatch):
    config = _load(tmp_path, monkeypatch, auth="lti13")
    assert config.JupyterHub.authenticator_class == "ltiauthenticator.lti13.auth.LTI13Authenticator"
    assert config.LTI13Authenticator.username_key == "custom_uname"
    assert _traits_exist(config) == []


def test_student_and_grader_jupyter_config():
    student = json.loads((HUB / "jupyter/student/jupyter_server_config.json").read_text())
    extensions = student["ServerApp"]["jpserver_extensions"]
    assert extensions["nbgrader.server_extensions.formgrader"] is False
    assert extensions["nbgrader.server_extensions.assignment_list"] is True
    disabled = json.loads((HUB / "jupyter/student/labconfig/page_config.json").read_text())["disabledExtensions"]
    assert disabled["@jupyter/nbgrader:formgrader"] and disabled["@jupyter/nbgrader:create-assignment"]
    grader = json.loads((HUB / "jupyter/grader/jupyter_server_config.json").read_text())
    assert grader["ServerApp"]["jpserver_extensions"]["nbgrader.server_extensions.formgrader"] is True


@pytest.mark.parametrize("row, message", [
    ("Alice,Alice Chen,student", "not a valid Unix user name"),
    ("alice,Alice Chen,teacher", "role 'teacher'"),
    ("grader-dp-course,X,student", "reserved"),
])
def test_roster_errors_name_the_row(tmp_path, row, message):
    provision = _module(HUB / "provision.py", "provision")
    roster = tmp_path / "roster.csv"
    roster.write_text(f"id,name,role\n{row}\n", encoding="utf-8")
    with pytest.raises(ValueError, match=message) as info:
        provision.read_roster(roster)
    assert ":2:" in str(info.value)


def test_roster_names_split_for_the_gradebook():
    provision = _module(HUB / "provision.py", "provision")
    rows = {r["id"]: r for r in provision.read_roster(HUB / "roster.csv")}
    assert (rows["alice"]["first_name"], rows["alice"]["last_name"]) == ("Alice", "Chen")


def test_z2jh_values_match_the_chart_schema():
    keys = _module(HUB / "z2jh" / "schema_keys.py", "schema_keys")
    tree = json.loads(keys.KEYS.read_text(encoding="utf-8"))
    values = yaml.safe_load((HUB / "z2jh" / "values.yaml").read_text(encoding="utf-8"))
    assert keys.unknown_keys(values, tree) == []
    assert values["hub"]["services"]["dp-course"]["url"]
    assert values["cull"]["enabled"] and values["singleuser"]["memory"]["limit"]
    # the checker is not vacuous: a misspelt or misplaced key is caught
    values["singleuser"]["memmory"] = {"limit": "1G"}
    values["hub"]["loadGroups"] = {}
    assert keys.unknown_keys(values, tree) == ["hub.loadGroups", "singleuser.memmory"]
    manifests = list(yaml.safe_load_all((HUB / "z2jh" / "formgrader.yaml").read_text(encoding="utf-8")))
    assert {m["kind"] for m in manifests} == {"PersistentVolumeClaim", "Service", "Deployment"}


def test_z2jh_students_get_the_uids_the_exchange_checks():
    """On Kubernetes the exchange's identity is the pod's uid: values.yaml's extraConfig
    spawns each student with autograder.nbgrader.exchange.uid_for, the Formgrader's Collect expects
    the same (DP_EXCHANGE_UID_BASE), and a colliding uid refuses the spawn."""
    from types import SimpleNamespace

    from traitlets.config import Config

    from autograder.nbgrader.exchange import uid_for

    values = yaml.safe_load((HUB / "z2jh" / "values.yaml").read_text(encoding="utf-8"))
    c = Config()
    namespace = {"c": c}
    exec(values["hub"]["extraConfig"]["dp-course-uids"], namespace)   # noqa: S102  (our own file)
    spawn_uid = c.KubeSpawner.uid
    manifests = list(yaml.safe_load_all((HUB / "z2jh" / "formgrader.yaml").read_text(encoding="utf-8")))
    pod = next(m for m in manifests if m["kind"] == "Deployment")["spec"]["template"]["spec"]
    env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
    base = int(env["DP_EXCHANGE_UID_BASE"])
    assert base == namespace["DP_UID_BASE"]
    assert pod["securityContext"]["runAsUser"] < base        # the course account is no student

    class Query:
        def __init__(self, names):
            self.names = names

        def __call__(self, _model):
            return [SimpleNamespace(name=n) for n in self.names]

    names = ["alice", "bob", "carol", "王小明"]
    uids = {spawn_uid(SimpleNamespace(user=SimpleNamespace(name=n), db=SimpleNamespace(query=Query(names))))
            for n in names}
    assert uids == {uid_for(n, base) for n in names} and len(uids) == len(names)
    clash = SimpleNamespace(user=SimpleNamespace(name="alice"), db=SimpleNamespace(query=Query(["alice", "x"])))
    namespace["dp_uid"] = lambda name: base     # every name maps to one uid: the spawn is refused
    with pytest.raises(RuntimeError, match="collides"):
        spawn_uid(clash)
    layout = " ".join(pod["initContainers"][0]["command"])
    assert "chmod 1777" in layout and "chmod 3733 $x/dp-course/inbound" in layout


def test_failed_logins_hold_no_pam_thread():
    """A failed PAM login waits asynchronously, not in one of the hub's 4 PAM threads (red team: a
    student's failed logins kept the instructor's login waiting 79 s). 12 failed logins at once with a
    2 s delay: 2 s in all, where PAM's own delay in the threads took 3 x 3.5 s."""
    import asyncio
    import os
    import sys
    import time

    if os.geteuid() != 0:
        pytest.skip("PAM checks another account's password only as root")
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "hub"))
    from pam_nodelay import NoDelayPAMAuthenticator

    auth = NoDelayPAMAuthenticator(fail_delay=2.0)
    assert auth.executor_threads == 4

    async def twelve():
        return await asyncio.gather(*(auth.authenticate(None, {"username": "nobody", "password": "wrong"})
                                      for _ in range(12)))

    start = time.monotonic()
    assert asyncio.run(twelve()) == [None] * 12         # still refused
    took = time.monotonic() - start
    assert 2.0 <= took < 4.0, f"12 failed logins took {took:.1f} s"


def _request(peer: str, **headers):
    """A stand-in for the login handler: what ``source_of`` reads (the socket's peer, the headers)."""
    from types import SimpleNamespace

    from tornado.httputil import HTTPHeaders

    sent = HTTPHeaders()
    for name, value in headers.items():
        sent.add(name.replace("_", "-"), value)
    return SimpleNamespace(request=SimpleNamespace(headers=sent, connection=SimpleNamespace(
        context=SimpleNamespace(address=(peer, 40000)))))


def test_login_source_cannot_be_named_by_the_client():
    """A student's server reaches the hub's port directly: her X-Forwarded-For and X-Real-Ip name nothing.
    Through the hub's proxy (a loopback peer), the address it appended is the source."""
    from pam_nodelay import source_of

    spoof = {"X_Forwarded_For": "10.9.9.9", "X_Real_Ip": "10.8.8.8"}
    assert source_of(_request("169.254.64.6", **spoof)) == "169.254.64.6"
    assert source_of(_request("127.0.0.1", X_Forwarded_For="10.9.9.9, 192.0.2.7", X_Real_Ip="10.8.8.8")) == "192.0.2.7"
    # a TLS front on this machine, then the proxy: loopback hops are passed over
    assert source_of(_request("::ffff:127.0.0.1", X_Forwarded_For="10.9.9.9,192.0.2.7,::ffff:127.0.0.1")) == "192.0.2.7"
    assert source_of(_request("127.0.0.1")) == "127.0.0.1"
    assert source_of(None) == "unknown"


def test_failed_logins_are_capped_per_source_and_account(monkeypatch):
    """A flood from one address: its first ``source_burst`` attempts reach PAM, the rest are refused at once
    (429, Chinese and English); another address still logs in, the instructor too (no per-account cap),
    a student's account stops after ``account_burst`` failures; a success gives its token back.
    PAM is replaced by a password check here (the class server test uses the real one)."""
    import asyncio

    import pam_nodelay
    from pam_nodelay import CoursePAMAuthenticator, NoDelayPAMAuthenticator, TooManyFailures

    calls = []

    async def pam(self, handler, data):
        calls.append(data["username"])
        return data["username"] if data["password"] == "right" else None

    monkeypatch.setattr(NoDelayPAMAuthenticator, "authenticate", pam)
    clock = [1000.0]
    monkeypatch.setattr(pam_nodelay.time, "monotonic", lambda: clock[0])
    auth = CoursePAMAuthenticator(source_burst=5, source_refill=10.0, account_burst=3, account_refill=60.0,
                                  allowed_users={"teacher", "alice", "bob"}, exempt_accounts={"teacher"})
    flood, other = _request("169.254.64.6"), _request("169.254.64.10")

    async def attempts(handler, name, password, n):
        return await asyncio.gather(*(auth.authenticate(handler, {"username": name, "password": password})
                                      for _ in range(n)), return_exceptions=True)

    done = asyncio.run(attempts(flood, "teacher", "wrong", 12))
    refused = [r for r in done if isinstance(r, TooManyFailures)]
    assert done.count(None) == 5 and len(refused) == 7 and len(calls) == 5
    assert refused[0].status_code == 429 and "秒后再试" in refused[0].jupyterhub_message \
        and "Too many failed logins from your address: try again in 10 s." in refused[0].jupyterhub_message
    # the right password from the flooding address is refused too, without PAM: the address waits
    assert isinstance(asyncio.run(attempts(flood, "alice", "right", 1))[0], TooManyFailures) and len(calls) == 5
    # the instructor, whose name the flood used, from another address: at once
    assert asyncio.run(attempts(other, "teacher", "right", 1)) == ["teacher"]
    # a student's account: 3 failures, then refused at any address it never logged in from (its own message)
    assert asyncio.run(attempts(_request("192.0.2.9"), "bob", "right", 1)) == ["bob"]     # bob's own address
    assert asyncio.run(attempts(other, "bob", "wrong", 4))[:3] == [None] * 3
    locked = asyncio.run(attempts(_request("192.0.2.1"), "bob", "right", 1))[0]
    assert isinstance(locked, TooManyFailures) and "this account" in locked.jupyterhub_message
    # ... but not at an address bob logged in from before: whoever exhausted his account did not lock him out
    assert asyncio.run(attempts(_request("192.0.2.9"), "bob", "right", 1)) == ["bob"]
    # successes give their token back: a student logging in often never runs out
    assert asyncio.run(attempts(_request("192.0.2.2"), "alice", "right", 20)) == ["alice"] * 20
    assert auth._known["alice"] == ["192.0.2.2"]        # where she logged in from, once
    # time refills: 10 s later the flooding address has one attempt again, then is refused
    clock[0] += 10.0
    assert asyncio.run(attempts(flood, "alice", "right", 1)) == ["alice"]
    assert asyncio.run(attempts(flood, "alice", "wrong", 2))[0] is None
    assert isinstance(asyncio.run(attempts(flood, "alice", "wrong", 1))[0], TooManyFailures)


def test_reprovisioning_updates_the_course_config_and_keeps_local_lines(tmp_path, monkeypatch):
    """The course root's nbgrader_config.py follows the checkout's (a class provisioned before a module
    move kept a config that no longer imported, issue 37): a version provisioning wrote is replaced, the
    instructor's lines below the marker stay; a file edited above the marker is refused with a diff."""
    import subprocess

    import provision

    course, srv = tmp_path / "course", tmp_path / "srv"
    course.mkdir()
    srv.mkdir()
    target = course / "nbgrader_config.py"
    # a course root of an earlier version: its config is an earlier commit's, without the marker
    first = subprocess.run(["git", "-c", "safe.directory=*", "-C", str(ROOT), "rev-list", "HEAD", "--",
                            "nbgrader_config.py"], capture_output=True, text=True).stdout.split()
    if not first:
        pytest.skip("no git history of nbgrader_config.py in this checkout")
    old = subprocess.run(["git", "-c", "safe.directory=*", "-C", str(ROOT), "show", f"{first[-1]}:nbgrader_config.py"],
                         capture_output=True, text=True, check=True).stdout
    current = (ROOT / "nbgrader_config.py").read_text(encoding="utf-8")
    assert old != current
    target.write_text(old, encoding="utf-8")
    said = provision.sync_course_config(course, srv)
    assert "updated from the checkout" in said
    assert target.read_text(encoding="utf-8") == current + provision.CONFIG_MARK + "\n"
    assert [p.read_text(encoding="utf-8") for p in course.glob("nbgrader_config.py.before-*")] == [old]
    assert provision.sync_course_config(course, srv) == ""          # idempotent
    # the instructor's own lines below the marker; then the checkout changes
    with open(target, "a", encoding="utf-8") as handle:
        handle.write("c.ExecutePreprocessor.timeout = 99  # ours\n")
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "nbgrader_config.py").write_text(current + "c.CourseDirectory.db_url = 'sqlite:///x.db'\n",
                                                 encoding="utf-8")
    monkeypatch.setattr(provision, "REPO", checkout)        # (a checkout without history: the record says)
    assert "your lines below the marker kept" in provision.sync_course_config(course, srv)
    assert target.read_text(encoding="utf-8") == (checkout / "nbgrader_config.py").read_text(encoding="utf-8") \
        + provision.CONFIG_MARK + "\nc.ExecutePreprocessor.timeout = 99  # ours\n"
    # edited above the marker: refused, with the difference, nothing written
    edited = target.read_text(encoding="utf-8").replace("c.Execute.timeout = 60", "c.Execute.timeout = 600")
    target.write_text(edited, encoding="utf-8")
    with pytest.raises(ValueError, match="未覆盖") as refused:
        provision.sync_course_config(course, srv)
    assert "-c.Execute.timeout = 600" in str(refused.value) and "+c.Execute.timeout = 60" in str(refused.value)
    assert target.read_text(encoding="utf-8") == edited


def test_provisioning_again_writes_the_gradebook_only_for_a_changed_roster(tmp_path, monkeypatch):
    """``fill_gradebook``: a new student and a changed name go into gradebook.db; a gradebook that already
    says what the roster says is left alone without nbgrader (whose import was 10 s of a 12 s `sudo make
    hub` on a loaded machine, and the hub tests provision about ten times)."""
    import os
    import pwd
    import sqlite3
    import sys

    import provision

    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")    # alembic
    me = pwd.getpwuid(os.getuid())

    def names() -> dict:
        with sqlite3.connect(tmp_path / "gradebook.db") as db:
            return {row[0]: (row[1], row[2]) for row in db.execute("SELECT id, first_name, last_name FROM student")}

    roster = [{"id": "ann", "role": "student", "first_name": "Ann", "last_name": "Lee"},
              {"id": "tess", "role": "instructor", "first_name": "Tess", "last_name": "T"}]
    provision.fill_gradebook(tmp_path, roster, me)
    assert names() == {"ann": ("Ann", "Lee")}
    roster[0] = {**roster[0], "last_name": "Li"}
    roster.append({"id": "bo", "role": "student", "first_name": "Bo", "last_name": "Wu"})
    provision.fill_gradebook(tmp_path, roster, me)
    assert names() == {"ann": ("Ann", "Li"), "bo": ("Bo", "Wu")}
    monkeypatch.setitem(sys.modules, "nbgrader.api", None)     # importing it now raises ImportError
    provision.fill_gradebook(tmp_path, roster, me)             # nothing to change: nbgrader not needed
    assert names() == {"ann": ("Ann", "Li"), "bo": ("Bo", "Wu")}
    roster[2] = {**roster[2], "first_name": "Bob"}
    with pytest.raises(ImportError):                           # a change still goes through nbgrader
        provision.fill_gradebook(tmp_path, roster, me)
