"""The class server that every hub test shares: provisioned once, one JupyterHub per session.

``class_server`` runs ``hub/provision.py --reset --demo-passwords`` once (OS accounts, the
course account, course root, exchange, the course's Python in /var/tmp) into a temporary
``--srv`` folder in /var/tmp (not /tmp: the students' servers get a private /tmp that would
hide it), for a roster of the demo class (``hub/roster.csv``: teacher, alice, bob, carol) plus
the attack tests' own class (``dpx-*``), whose submissions stay apart from the demo's.
``hub`` starts ``jupyterhub -f hub/jupyterhub_config.py`` on it on a free port, with per-student
sizes smaller than the defaults (``SIZES``) so that filling them is quick; it is stopped with
Ctrl-C (SIGINT to its process group), which must end it without a traceback.

The modules use it in collection order on one xdist worker (``xdist_group("hub")``):
``tests/browser/test_hub_e2e.py`` (Collect must still succeed: it runs before the attacks plant
refused folders in the inbound), ``tests/browser/test_hub_isolation.py``,
``tests/hub/test_class_term.py`` (restarts the hub, adds and removes students; leaves the hub running with
the demo's passwords), ``tests/hub/test_exchange_attacks.py`` (its last hub test stops the hub and provisions again).

The session leaves the machine as it found it (issue 26): at its end, also after a failure or
Ctrl-C (pytest runs the finalizer; SIGTERM is turned into Ctrl-C), ``teardown`` stops the hub,
then every server, namespace and mount of the class (``provision.stop_class``), undoes the hub-only
accounts (``oslock.unlock``: the sshd drop-in, the cron/at/su lines, shells, the students' group), deletes the OS
accounts that provisioning created (recorded in ``SRV/.dp-hub-test.json`` before provisioning),
the hub's address on ``lo`` if the hub added it, and the folders. A session killed outright
(SIGKILL, a lost machine) leaves its ledger behind: the next session's ``sweep`` tears such a class
down first. Kept on purpose: the course's Python in /var/tmp (``course_venv``, minutes to build;
one per checkout).

Before provisioning, ``tests/hub/ensure_services.sh`` installs Debian's openssh-server, cron and at
when missing (as root), so that provisioning denies them as on a department's machine
(``tests/hub/test_accounts.py``).

Needs root (useradd, PAM, setuid spawning, cgroups, mounts); the fixtures skip with the reason
otherwise (CI runs as root).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from tests.support.servers import free_port, stop

ROOT = Path(__file__).resolve().parents[2]
HUB = ROOT / "hub"
CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = ROOT / "artifacts"
BROWSER_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync"]
#: per-student sizes (``DP_HUB_*`` of hub/jupyterhub_config.py) and the exchange's (hub/provision.py),
#: smaller than the defaults so that filling them is quick (60 tokens: each test's login makes one)
SIZES = {"DP_HUB_MEM_LIMIT": "2G", "DP_HUB_TMP_LIMIT": "64M", "DP_HUB_SHM_LIMIT": "32M", "DP_HUB_LOCK_LIMIT": "8M",
         "DP_HUB_HOME_LIMIT": "256M", "DP_HUB_EXCHANGE_LIMIT": "256M", "DP_HUB_INBOUND_LIMIT": "160M",
         "DP_HUB_TOKENS_PER_USER": "60"}
#: the attack tests' class, next to the demo roster (their own accounts: nothing of the demo's)
ATTACK_ROSTER = ("dpx-teacher,Tess Teacher,instructor\ndpx-alice,Alice A,student\n"
                 "dpx-bob,Bob B,student\ndpx-carol,Carol C,student\n")


def course_venv() -> Path:
    """The course's Python for hub tests: one per checkout, reused across runs (provision.py locks it)."""
    # /var/tmp: the servers get a private /tmp, which would hide a venv kept there
    return Path("/var/tmp") / f"dp-course-venv-{hashlib.sha256(str(ROOT).encode()).hexdigest()[:10]}"


def skip_reason(*tools: str) -> str | None:
    """Why the class server cannot run here (not root, a tool missing), or None."""
    if sys.platform != "linux" or os.geteuid() != 0:
        return "needs root: the class server creates OS users, cgroups and mounts, spawns servers as them (CI runs as root)"
    for tool in tools:
        if not (Path(tool).exists() if tool.startswith("/") else shutil.which(tool)):
            return f"{tool} not found" + (": run tests/browser/ensure_chromium.sh" if tool == CHROMIUM else "")
    return None


#: where the students' servers are (hub/jupyterhub_config.py's default DP_HUB_USER_DOMAIN for a hub on
#: *.localhost): another registrable domain than the hub's and the Formgrader's
USER_DOMAIN = "users.localhost"
LEDGER = ".dp-hub-test.json"
#: the class server's hub address (hub/jupyterhub_config.py's default DP_HUB_NETNS_SUBNET)
HUB_ADDRESS = "169.254.64.1"


def _accounts(names) -> set[str]:
    import pwd

    found = set()
    for name in names:
        try:
            pwd.getpwnam(name)
            found.add(name)
        except KeyError:
            pass
    return found


def _on_lo(address: str) -> bool:
    shown = subprocess.run(["ip", "-o", "-4", "addr", "show", "dev", "lo"], capture_output=True, text=True).stdout
    return f" {address}/" in shown


def teardown(srv: Path, roster: Path) -> list[str]:
    """Remove what the session with this ``srv`` made (its ledger says what); what was removed."""
    sys.path.insert(0, str(HUB))
    import provision

    ledger = json.loads((srv / LEDGER).read_text()) if (srv / LEDGER).exists() else {}
    people = provision.read_roster(roster) if roster.exists() else [{"id": a} for a in ledger.get("accounts", [])]
    done = provision.stop_class(srv, people) + provision.oslock.unlock(srv)    # a reboot, then --stop's undo
    for account in ledger.get("accounts", []):
        if _accounts([account]):
            # processes of the account outside the servers (a test's runuser) are the session's too
            for proc in Path("/proc").iterdir():
                try:
                    if proc.name.isdigit() and proc.stat().st_uid == pwd_uid(account):
                        os.kill(int(proc.name), signal.SIGKILL)
                except OSError:
                    pass
            subprocess.run(["userdel", "--remove", "--force", account], capture_output=True)
            done.append(f"removed account {account}")
    if not ledger.get("hub_address_was_there", True) and _on_lo(HUB_ADDRESS):
        subprocess.run(["ip", "addr", "del", f"{HUB_ADDRESS}/32", "dev", "lo"], capture_output=True)
        done.append(f"removed {HUB_ADDRESS} from lo")
    if os.path.ismount(srv / "exchange"):
        subprocess.run(["umount", "--lazy", str(srv / "exchange")], check=False)
    shutil.rmtree(srv, ignore_errors=True)
    roster.unlink(missing_ok=True)
    return done


def pwd_uid(name: str) -> int:
    import pwd

    return pwd.getpwnam(name).pw_uid


def sweep() -> list[str]:
    """Tear down the classes of earlier sessions that did not (killed): their ledger's pid is gone."""
    done = []
    for srv in Path("/var/tmp").glob("dp-hub-*"):
        if not (srv / LEDGER).is_file():
            continue
        pid = json.loads((srv / LEDGER).read_text()).get("pid", 0)
        try:
            os.kill(pid, 0)
            continue            # a live session's (another worker's or checkout's) class
        except ProcessLookupError:
            pass
        except PermissionError:
            continue
        done += teardown(srv, srv.parent / f"{srv.name}-roster.csv")
    return done


def course_record(course: Path) -> dict:
    """What grading has kept in a course root: gradebook rows (submissions, grades, comments), feedback files."""
    import sqlite3

    with sqlite3.connect(course / "gradebook.db") as db:
        rows = {table: db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                for table in ("submitted_assignment", "grade", "comment")}
    feedback = sorted(str(p.relative_to(course)) for p in (course / "feedback").rglob("*") if p.is_file())
    return {"rows": rows, "feedback": feedback}


def released(course: Path, exchange: Path, assignment: str = "laplace") -> bool:
    """Whether the class already offers ``assignment``: generated in the course root and released, the
    exchange's copy the generated one. The first hub test to need it generates and releases it (the
    instructor's Formgrader in tests/browser/test_hub_e2e.py, else the next one); the later ones start
    from it instead of running the two nbgrader commands again (8-30 s a pair under load)."""
    generated = course / "release" / assignment / f"{assignment}.ipynb"
    offered = exchange / "dp-course" / "outbound" / assignment / f"{assignment}.ipynb"
    return generated.is_file() and offered.is_file() and generated.read_bytes() == offered.read_bytes()


def modes_above(path: Path) -> dict[str, int]:
    return {str(p): stat.S_IMODE(p.stat().st_mode) for p in Path(os.path.realpath(path)).parents}


class ClassServer:
    """The provisioned class (``srv``) and, once started, its JupyterHub."""

    def __init__(self, srv: Path, roster: Path):
        self.srv, self.roster, self.course, self.exchange = srv, roster, srv / "course", srv / "exchange"
        self.port = free_port()
        self.env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}",
                        DP_HUB_SRV=str(srv), DP_HUB_STATE=str(srv / "hub"), DP_HUB_PORT=str(self.port),
                        DP_HUB_VENV=str(course_venv()), DP_HUB_ROSTER=str(roster), **SIZES)
        for name in ("DP_HUB_URL", "DP_HUB_USER_DOMAIN", "DP_HUB_NETNS_SUBNET"):     # the demo's defaults
            self.env.pop(name, None)
        #: `sudo make hub`'s provisioning of this class (``--demo-passwords`` added the first time)
        self.provision = [sys.executable, str(HUB / "provision.py"), "--srv", str(srv), "--roster", str(roster),
                          "--venv", str(course_venv()), "--reset"]
        self.proc: subprocess.Popen | None = None
        self.hub_ran = False

    def start_hub(self) -> None:
        self.log = open(self.srv / "hub.log", "a")      # a restart (tests) adds to it
        self.proc = subprocess.Popen([sys.executable, "-m", "jupyterhub", "-f", str(HUB / "jupyterhub_config.py")],
                                     cwd=self.srv, env=self.env, stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        self.hub_ran = True
        import requests

        headers = {"Host": f"hub.localhost:{self.port}"}
        deadline = time.monotonic() + 240   # the Formgrader service starts first (slow on a loaded machine)
        while True:
            try:
                if requests.get(f"http://127.0.0.1:{self.port}/hub/api/", headers=headers, timeout=2).ok:
                    return
                raise OSError("not yet")        # the proxy answers 503 until the hub's route is in
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop_hub(check=False)
                    pytest.fail("JupyterHub did not start:\n" + (self.srv / "hub.log").read_text()[-4000:])
                time.sleep(0.5)

    def stop_hub(self, check: bool = True) -> None:
        """Ctrl-C, as in `make hub` (students' servers keep running: `teardown` stops them); no traceback."""
        if self.proc is None:
            return
        proc, self.proc = self.proc, None
        stop(proc, signal.SIGINT, timeout=90)
        self.log.close()
        if ARTIFACTS.is_dir():
            shutil.copy(self.srv / "hub.log", ARTIFACTS / "hub.log")
        stopping = (self.srv / "hub.log").read_text(errors="replace").split("Received signal SIGINT")[-1]
        if check:
            assert "Traceback" not in stopping, "Ctrl-C stopped the hub with a traceback:\n" + stopping[-3000:]


@pytest.fixture(scope="session")
def class_server():
    """The class, provisioned once for the session (the hub is ``hub``)."""
    reason = skip_reason("useradd", "chpasswd", "usermod", "runuser", "bwrap", "mkfs.ext4")
    if reason:
        pytest.skip(reason)
    # before provisioning: it denies what is installed (tests/hub/test_accounts.py attacks through these)
    subprocess.run(["bash", str(ROOT / "tests" / "hub" / "ensure_services.sh")], check=False)
    swept = sweep()
    if swept:
        print("tore down an earlier session's class:", "; ".join(swept))
    srv = Path(tempfile.mkdtemp(prefix="dp-hub-", dir="/var/tmp"))   # not /tmp: servers get a private one
    srv.chmod(0o755)
    roster = srv.parent / f"{srv.name}-roster.csv"
    roster.write_text((HUB / "roster.csv").read_text(encoding="utf-8").rstrip("\n") + "\n" + ATTACK_ROSTER,
                      encoding="utf-8")
    names = [line.split(",")[0] for line in roster.read_text(encoding="utf-8").splitlines()[1:]] + ["grader-dp-course"]
    # before anything is made: what teardown will remove (accounts that were there stay)
    (srv / LEDGER).write_text(json.dumps({"pid": os.getpid(), "accounts": sorted(set(names) - _accounts(names)),
                                          "hub_address_was_there": _on_lo(HUB_ADDRESS)}))
    server = ClassServer(srv, roster)
    server.above = {**modes_above(ROOT), **modes_above(Path(sys.base_prefix))}   # before provisioning
    previous = signal.getsignal(signal.SIGTERM)
    if previous in (signal.SIG_DFL, None):      # a plain `kill`: tear down as on Ctrl-C
        signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        first = subprocess.run([*server.provision, "--demo-passwords"], env=server.env, capture_output=True, text=True)
        assert first.returncode == 0, first.stdout + first.stderr
        yield server
    finally:
        server.stop_hub(check=False)
        print("teardown:", "; ".join(teardown(srv, roster)))
        if previous in (signal.SIG_DFL, None):
            signal.signal(signal.SIGTERM, previous)


@pytest.fixture(scope="session")
def _running_hub(class_server):
    reason = skip_reason("npm", "unshare")
    if reason:
        pytest.skip(reason)
    if not (HUB / "node_modules" / ".bin" / "configurable-http-proxy").exists():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=HUB, check=True, capture_output=True)
    class_server.start_hub()
    port = class_server.port
    yield {"port": port, "srv": class_server.srv, "course": class_server.course, "log": class_server.srv / "hub.log",
           "url": f"http://hub.localhost:{port}",            # one origin per person: the hub, each server,
           "local": f"http://127.0.0.1:{port}",               # the Formgrader (scripts: the Host header)
           "headers": {"Host": f"hub.localhost:{port}"},
           "formgrader": f"http://dp-course--service.hub.localhost:{port}/services/dp-course",
           "server": lambda name: f"http://{name}.{USER_DOMAIN}:{port}/user/{name}",
           "class": class_server}
    class_server.stop_hub()


@pytest.fixture
def hub(_running_hub):
    """The session's running JupyterHub (URLs, ports, the class)."""
    if _running_hub["class"].proc is None:
        pytest.fail("the class server was stopped (by the re-provisioning test, which must run after every hub test)")
    return _running_hub


class People:
    """One browser, one context (cookie jar) per person, logged in through the hub's login form."""

    def __init__(self, browser, url: str):
        self.browser, self.url, self.pages = browser, url, {}

    def login(self, who: str, *, lab: bool = True):
        context = self.browser.new_context(viewport={"width": 1300, "height": 900})
        page = context.new_page()
        page.goto(f"{self.url}/hub/login")
        page.fill("#username_input", who)
        page.fill("#password_input", f"demo-{who}")
        page.click("#login_submit")
        page.wait_for_url(f"**/user/{who}/**", timeout=120_000)
        if lab:
            page.wait_for_url(f"**/user/{who}/lab**", timeout=120_000)
            page.wait_for_selector("#jp-main-dock-panel", timeout=60_000)
        self.pages[who] = page
        return page


class Student:
    """A person logged in over HTTP (password, then an API token) with a kernel in their server."""

    def __init__(self, hub: dict, name: str, password: str | None = None):
        import requests

        self.hub, self.name = hub, name
        self.host = f"{name}.{USER_DOMAIN}:{hub['port']}"
        http = requests.Session()

        def sent_over_http():
            # The hub's cookies are Secure (__Host-): a browser sends them to http://*.localhost (a
            # secure context), requests only over https, and the script talks to 127.0.0.1 over http.
            for cookie in http.cookies:
                cookie.secure = False

        login = http.get(f"{hub['local']}/hub/login", headers=hub["headers"])
        sent_over_http()
        xsrf = re.search(r'name="_xsrf" value="([^"]+)"', login.text).group(1)
        done = http.post(f"{hub['local']}/hub/login", headers=hub["headers"], allow_redirects=False,
                         data={"username": name, "password": password or f"demo-{name}", "_xsrf": xsrf})
        assert done.status_code == 302, (done.status_code, done.text[:300])
        sent_over_http()
        #: the hub's login cookies of this person (what they could set in someone else's browser)
        self.cookies = {cookie.name: cookie.value for cookie in http.cookies}
        made = http.post(f"{hub['local']}/hub/api/users/{name}/tokens", json={"note": "test", "expires_in": 3600},
                         headers={**hub["headers"], "X-XSRFToken": http.cookies.get("_xsrf", xsrf)})
        assert made.status_code == 201, (made.status_code, made.text[:300])
        self.token = made.json()["token"]
        self.http = requests.Session()
        self.http.headers["Authorization"] = f"token {self.token}"
        self.kernel = None

    def hub_api(self, method: str, path: str, **kw):
        return self.http.request(method, f"{self.hub['local']}/hub/api{path}", headers=self.hub["headers"], **kw)

    def server_api(self, method: str, path: str, **kw):
        return self.http.request(method, f"{self.hub['local']}/user/{self.name}/api{path}",
                                 headers={"Host": self.host}, **kw)

    def start(self) -> None:
        """Start the server (if it is not running yet) and a kernel in it."""
        self.hub_api("POST", f"/users/{self.name}/server")
        deadline = time.monotonic() + 180
        while not (self.hub_api("GET", f"/users/{self.name}").json().get("servers", {}).get("", {}).get("ready")):
            assert time.monotonic() < deadline, f"{self.name}'s server did not start"
            time.sleep(0.5)
        self.kernel = self.server_api("POST", "/kernels", json={"name": "python3"}).json()["id"]

    def run(self, code: str, timeout: float = 120) -> str:
        """Execute ``code`` in the kernel; its stdout (raises on an error in the cell)."""
        import websocket

        ws = websocket.create_connection(
            f"ws://127.0.0.1:{self.hub['port']}/user/{self.name}/api/kernels/{self.kernel}/channels",
            header=[f"Authorization: token {self.token}"], host=self.host, timeout=timeout)
        msg_id, out = uuid.uuid4().hex, []
        try:
            ws.send(json.dumps({
                "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": self.name,
                           "session": uuid.uuid4().hex, "date": "", "version": "5.3"},
                "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
                "content": {"code": code, "silent": False, "store_history": False, "user_expressions": {},
                            "allow_stdin": False, "stop_on_error": True}}))
            # The reply (shell) may overtake the cell's output (iopub): done only when both the
            # reply has come and the kernel said it is idle again after this request.
            replied = idle = False
            while not (replied and idle):
                msg = json.loads(ws.recv())
                if msg.get("parent_header", {}).get("msg_id") != msg_id:
                    continue
                if msg["msg_type"] == "stream" and msg["content"]["name"] == "stdout":
                    out.append(msg["content"]["text"])
                elif msg["msg_type"] == "error":
                    raise AssertionError(f"{self.name}'s cell failed: {msg['content']['ename']}: "
                                         f"{msg['content']['evalue']}")
                elif msg["msg_type"] == "execute_reply":
                    replied = True
                elif msg["msg_type"] == "status" and msg["content"].get("execution_state") == "idle":
                    idle = True
            return "".join(out)
        finally:
            ws.close()
