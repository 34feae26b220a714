"""The class server keeps students apart: one origin per person, limits per student (issue 16).

One hub for the module (``hub/provision.py --reset --demo-passwords`` into a temporary
``--srv``, then ``jupyterhub -f hub/jupyterhub_config.py`` on a free port; the per-student
sizes are set through the documented ``DP_HUB_*`` variables, smaller than the defaults so
that filling them is quick). Students act through what every student has: they log in with
their password, take an API token (their right on the hub) and run code in a kernel of their
own server. The instructor is Chromium driven by Playwright.

- **Cross-origin attack.** alice's server serves a page (a notebook whose HTML output she
  signed as trusted, so JupyterLab runs its script unsandboxed on her server's origin) that, with the instructor's cookies, reads the Formgrader's API and files (hidden
  tests, scores), the hub API and bob's server, and POSTs a terminal into the Formgrader (with a
  tossed ``_xsrf`` cookie too). Instructors may open their students' servers (to help them);
  the instructor, logged in to the hub and the Formgrader, opens alice's link. Nothing is read, and no terminal runs as ``grader-dp-course``.
- **Memory per student.** Three processes of alice each hold 1.5 GiB (under the per-process
  address-space cap): together they exceed her cgroup's 2 GiB, so the kernel kills inside her
  group; the hub and bob are unaffected.
- **/tmp and /dev/shm** are private to alice and stop at their caps; **the home** stops at its
  image size.
- **CPU share.** alice runs 16 busy loops; bob's CPU-bound task is timed before and during.
- The hub stops on Ctrl-C (SIGINT to its process group) without a traceback.

Needs root (useradd, PAM, setuid, cgroups, mounts); skipped with the reason otherwise.
"""

from __future__ import annotations

import json
import hashlib
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HUB = ROOT / "hub"
CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = ROOT / "artifacts"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
MIB = 2**20
SIZES = {"DP_HUB_MEM_LIMIT": "2G", "DP_HUB_TMP_LIMIT": "64M", "DP_HUB_SHM_LIMIT": "32M",
         "DP_HUB_HOME_LIMIT": "256M"}
#: bob's task may take at most this many times longer while alice runs 16 busy loops (it was
#: 6.6x without per-student CPU shares; with equal shares on 2 cores it should stay near 1)
CPU_RATIO_BOUND = 2.5

# One worker runs every class-server test in turn (they share OS accounts and the course account).
pytestmark = [pytest.mark.browser, pytest.mark.timeout(600), pytest.mark.xdist_group("hub")]


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _skip_reason() -> str | None:
    if sys.platform != "linux" or os.geteuid() != 0:
        return "needs root: the class server creates OS users, cgroups and mounts (CI runs as root)"
    for tool in ("useradd", "chpasswd", "npm", "unshare", "mkfs.ext4"):
        if not shutil.which(tool):
            return f"{tool} not found"
    if not Path(CHROMIUM).exists():
        return f"{CHROMIUM} not found: run tests/browser/ensure_chromium.sh"
    return None


class Student:
    """A person logged in over HTTP (password, then an API token) with a kernel in their server."""

    def __init__(self, hub: dict, name: str):
        import requests

        self.hub, self.name = hub, name
        self.host = f"{name}.hub.localhost:{hub['port']}"
        http = requests.Session()
        login = http.get(f"{hub['url']}/hub/login", headers=hub["headers"])
        xsrf = re.search(r'name="_xsrf" value="([^"]+)"', login.text).group(1)
        done = http.post(f"{hub['url']}/hub/login", headers=hub["headers"], allow_redirects=False,
                         data={"username": name, "password": f"demo-{name}", "_xsrf": xsrf})
        assert done.status_code == 302, (done.status_code, done.text[:300])
        made = http.post(f"{hub['url']}/hub/api/users/{name}/tokens", json={"note": "test", "expires_in": 3600},
                         headers={**hub["headers"], "X-XSRFToken": http.cookies.get("_xsrf", xsrf)})
        assert made.status_code == 201, (made.status_code, made.text[:300])
        self.token = made.json()["token"]
        self.http = requests.Session()
        self.http.headers["Authorization"] = f"token {self.token}"
        self.kernel = None

    def hub_api(self, method: str, path: str, **kw):
        return self.http.request(method, f"{self.hub['url']}/hub/api{path}", headers=self.hub["headers"], **kw)

    def server_api(self, method: str, path: str, **kw):
        return self.http.request(method, f"{self.hub['url']}/user/{self.name}/api{path}",
                                 headers={"Host": self.host}, **kw)

    def start(self) -> None:
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


@pytest.fixture(scope="module")
def hub():
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    if not (HUB / "node_modules" / ".bin" / "configurable-http-proxy").exists():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=HUB, check=True, capture_output=True)
    srv = Path(tempfile.mkdtemp(prefix="dp-hub-iso-", dir="/var/tmp"))   # not /tmp: servers get a private one
    srv.chmod(0o755)
    port = _free_port()
    # the course's Python: the one the other hub tests of this checkout build and reuse (locked)
    venv = Path("/var/tmp") / f"dp-course-venv-{hashlib.sha256(str(HUB.parent).encode()).hexdigest()[:10]}"
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}",
               DP_HUB_SRV=str(srv), DP_HUB_STATE=str(srv / "hub"), DP_HUB_PORT=str(port), DP_HUB_VENV=str(venv),
               **SIZES)
    env.pop("DP_HUB_URL", None)
    subprocess.run([sys.executable, str(HUB / "provision.py"), "--srv", str(srv), "--reset", "--demo-passwords",
                    "--venv", str(venv)], env=env, check=True, capture_output=True)
    log = open(srv / "hub.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "jupyterhub", "-f", str(HUB / "jupyterhub_config.py")],
                            cwd=srv, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    import requests

    info = {"url": f"http://127.0.0.1:{port}", "port": port, "srv": srv, "log": srv / "hub.log",
            "public": f"http://hub.localhost:{port}", "headers": {"Host": f"hub.localhost:{port}"}}
    try:
        deadline = time.monotonic() + 240   # the Formgrader service starts first (slow on a loaded machine)
        while True:
            try:
                if requests.get(f"{info['url']}/hub/api/", headers=info["headers"], timeout=2).ok:
                    break
                raise OSError("not yet")        # the proxy answers 503 until the hub's route is in
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("JupyterHub did not start:\n" + (srv / "hub.log").read_text()[-4000:])
                time.sleep(0.5)
        info["students"] = {name: Student(info, name) for name in ("alice", "bob")}
        for student in info["students"].values():
            student.start()
        yield info
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)      # Ctrl-C in `make hub`; the hub stops every server
            try:
                proc.wait(timeout=90)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        log.close()
        text = (srv / "hub.log").read_text(errors="replace")
        if ARTIFACTS.is_dir():
            shutil.copy(srv / "hub.log", ARTIFACTS / "hub-isolation.log")
        shutil.rmtree(srv, ignore_errors=True)
        stopping = text.split("Received signal SIGINT")[-1]
        assert "Traceback" not in stopping, "Ctrl-C stopped the hub with a traceback:\n" + stopping[-3000:]


ATTACK_PAGE = r"""<h1>Please look at my plot</h1><script>
(async () => {
  const port = location.port, hub = location.hostname.split('.').slice(1).join('.');
  const fg = `http://dp-course--service.${hub}:${port}/services/dp-course`;
  const reads = {
    formgrader_assignments: fg + '/formgrader/api/assignments',
    formgrader_scores: fg + '/formgrader/api/submissions/laplace',
    formgrader_hidden_tests: fg + '/api/contents/source/laplace/laplace.ipynb',
    formgrader_same_path: '/services/dp-course/api/contents/source/laplace/laplace.ipynb',
    hub_users: `http://${hub}:${port}/hub/api/users`,
    hub_same_path: '/hub/api/users',
    bob_server: `http://bob.${hub}:${port}/user/bob/api/contents`,
    bob_same_path: '/user/bob/api/contents',
  };
  const results = {};
  for (const [key, url] of Object.entries(reads)) {
    try {
      const r = await fetch(url, {credentials: 'include'});
      results[key] = {status: r.status, body: (await r.text()).slice(0, 2000)};
    } catch (e) { results[key] = {error: String(e)}; }
  }
  // writes need no readable answer: no-cors requests are sent with the cookies all the same
  try { document.cookie = `_xsrf=tossed; domain=${hub}; path=/`; } catch (e) {}
  for (const url of [fg + '/api/terminals', fg + '/api/terminals?_xsrf=tossed', '/services/dp-course/api/terminals']) {
    try { await fetch(url, {method: 'POST', mode: 'no-cors', credentials: 'include'}); } catch (e) {}
  }
  window.results = results;
})();
</script>"""
#: alice's notebook: the page above as an HTML output, signed as trusted with her own server's
#: notebook secret (hers to use), so JupyterLab runs its script when anyone opens it there.
PLANT = (
    "import nbformat, pathlib, shutil, subprocess\n"
    "nb = nbformat.v4.new_notebook()\n"
    "nb.cells.append(nbformat.v4.new_code_cell('plot()', outputs=[nbformat.v4.new_output(\n"
    "    'display_data', data={'text/html': PAGE})]))\n"
    "path = pathlib.Path.home() / 'plot.ipynb'\n"
    "nbformat.write(nb, path)\n"
    "subprocess.run([shutil.which('jupyter'), 'trust', str(path)], check=True, capture_output=True)\n"
)


def test_student_page_cannot_act_as_the_instructor(hub):
    from playwright.sync_api import sync_playwright

    alice = hub["students"]["alice"]
    alice.run(f"PAGE = {ATTACK_PAGE!r}\n" + PLANT)
    public = hub["public"]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_context().new_page()
            page.goto(f"{public}/hub/login")
            page.fill("#username_input", "teacher")
            page.fill("#password_input", "demo-teacher")
            page.click("#login_submit")
            page.wait_for_url("**/user/teacher/**", timeout=120_000)
            # logged in to the Formgrader too: its cookie is what the page would abuse
            formgrader = f"http://dp-course--service.hub.localhost:{hub['port']}/services/dp-course"
            page.goto(f"{formgrader}/formgrader")
            page.get_by_text("Manage Assignments").first.wait_for(timeout=60_000)
            link = f"http://alice.hub.localhost:{hub['port']}/user/alice/lab/tree/plot.ipynb"
            page.goto(link)
            # JupyterHub asks the instructor once before a student's server may know who they are
            page.get_by_role("button", name=re.compile("Authorize", re.I)).click()
            page.wait_for_url("**/user/alice/lab/**", timeout=60_000)
            page.get_by_role("heading", name="Please look at my plot").wait_for(timeout=60_000)
            page.wait_for_function("() => window.results !== undefined", timeout=60_000)
            results = page.evaluate("window.results")
            page.wait_for_timeout(2000)         # the POSTs have landed, if they were accepted
            # the instructor's own look at the Formgrader's terminals (a terminal runs as grader-dp-course)
            page.goto(f"{formgrader}/api/terminals")
            terminals = json.loads(page.inner_text("body"))
        finally:
            browser.close()
    print(json.dumps({k: v.get("status", v.get("error")) for k, v in results.items()}))
    secrets = ("BEGIN HIDDEN TESTS", "laplace_noise", "grader-dp-course", '"name": "bob"', "score", "alice")
    for key, result in results.items():
        body = result.get("body", "")
        assert "error" in result or result["status"] >= 300 or not any(s in body for s in secrets), (key, result)
        assert not any(s in body for s in secrets[:5]), (key, body[:500])
    assert terminals == [], f"the page opened a terminal as the course account: {terminals}"


def test_memory_is_capped_per_student(hub):
    alice, bob = hub["students"]["alice"], hub["students"]["bob"]
    out = alice.run(
        "import json, subprocess, sys\n"
        "hold = 'b = b\"x\" * (1536 * 2**20); import time; time.sleep(4); print(\"held\")'\n"
        "ps = [subprocess.Popen([sys.executable, '-c', hold], stdout=subprocess.PIPE, stderr=subprocess.PIPE)"
        " for _ in range(3)]\n"
        "print(json.dumps([(p.wait(), p.stdout.read().decode(), p.stderr.read().decode()[-200:]) for p in ps]))\n")
    results = json.loads(out)
    print(results)
    held = [r for r in results if r[1].strip() == "held"]
    assert len(held) < 3, "three processes held 4.5 GiB together: no per-student memory cap"
    assert all(r[0] == -9 or "MemoryError" in r[2] for r in results if r[1].strip() != "held"), results
    assert alice.run("print(6 * 7)").strip() == "42"          # her kernel lives on
    assert bob.run("print(6 * 7)").strip() == "42"            # and the classmate is untouched
    assert alice.hub_api("GET", "/").status_code == 200


FILL = (
    "import errno, json, os\n"
    "def fill(path):\n"
    "    n = 0\n"
    "    try:\n"
    "        with open(path, 'wb') as f:\n"
    "            while n < 2**31:\n"
    "                f.write(b'x' * 2**20); f.flush(); n += 2**20\n"
    "    except OSError as e:\n"
    "        code = errno.errorcode.get(e.errno)\n"
    "    else:\n"
    "        code = None\n"
    "    os.remove(path)\n"
    "    return n, code\n"
)


@pytest.mark.parametrize("folder, size", [("/tmp", "DP_HUB_TMP_LIMIT"), ("/dev/shm", "DP_HUB_SHM_LIMIT"),
                                          ("~", "DP_HUB_HOME_LIMIT")])
def test_private_folders_are_capped(hub, folder, size):
    alice = hub["students"]["alice"]
    cap = int(SIZES[size][:-1]) * MIB
    name = f"fill-{uuid.uuid4().hex[:8]}"
    path = f"{os.path.expanduser('~alice') if folder == '~' else folder}/{name}"
    written, code = json.loads(alice.run(FILL + f"print(json.dumps(fill({path!r})))\n"))
    print(folder, written // MIB, "MiB", code)
    assert code == "ENOSPC", (folder, written, code)
    assert cap // 4 <= written <= cap, (folder, written, cap)
    if folder != "~":    # private: not the host's /tmp or /dev/shm (nothing of alice's there)
        assert not Path(path).exists()
        assert alice.run(f"import os; print(os.stat({folder!r}).st_dev)").strip() != str(os.stat(folder).st_dev)


def test_cpu_share_per_student(hub):
    alice, bob = hub["students"]["alice"], hub["students"]["bob"]
    task = ("import time\nt = time.perf_counter()\ns = 0\nfor i in range(3_000_000): s += i * i\n"
            "print(time.perf_counter() - t)\n")

    def timed() -> float:
        return statistics.median(float(bob.run(task)) for _ in range(3))

    alone = timed()
    alice.run("import subprocess, sys\n"
              "loops = [subprocess.Popen([sys.executable, '-c', 'while True: pass']) for _ in range(16)]\n")
    try:
        time.sleep(1)
        busy = timed()
    finally:
        alice.run("[p.kill() for p in loops]; [p.wait() for p in loops]")
    ratio = busy / alone
    print(f"bob's task: {alone:.2f} s alone, {busy:.2f} s with alice's 16 loops: ratio {ratio:.2f}")
    assert ratio < CPU_RATIO_BOUND, f"bob's task was {ratio:.1f}x slower with alice's 16 busy loops"
