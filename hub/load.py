"""Load on the one-machine class server: N students start a server and run a lecture notebook.

    sudo nice -n 10 .venv/bin/python hub/load.py [--students 5 10 20] [--notebook course/6.2-laplace.ipynb]

A script, not a test. For each N: a fresh hub (hub/jupyterhub_config.py, loopback, free
port, temporary course folders) whose roster is N load accounts ``dpload01``...; the
script acts as a hub service with a token (the ``load-test`` service the config adds
when ``DP_HUB_LOAD_TOKEN`` is set), and for all N students at once, through the hub's
REST API: start the server (``POST /hub/api/users/NAME/server``), wait until ready,
start a kernel in it and run every code cell of the notebook over the kernel's
websocket (the protocol JupyterLab uses). Reported per N: wall time from the first
spawn request to the last notebook finished, spawn and run times (median / max),
memory per student (PSS of all processes of the account, with its kernel alive after
the run; PSS splits shared library pages fairly between processes), total, failures,
and the machine's load average; the hub's log goes to ``artifacts/hub-load-N.log``. The accounts stay (idempotent); their servers are
stopped with the hub.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import nbformat
from tornado.httpclient import AsyncHTTPClient, HTTPRequest
from tornado.websocket import websocket_connect

HUB = Path(__file__).resolve().parent
sys.path.insert(0, str(HUB))
import provision  # noqa: E402  (hub/provision.py)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pss_kib(uid: int) -> int:
    """Proportional set size of every process of ``uid``, KiB."""
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid != uid:
                continue
            for line in (entry / "smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total


class Hub:
    """A hub on loopback for ``names``; stopped (with every server) by ``stop``."""

    def __init__(self, names: list[str]):
        self.srv = Path(tempfile.mkdtemp(prefix="dp-load-", dir="/var/tmp"))   # not /tmp: servers get a private one
        self.srv.chmod(0o755)
        roster = self.srv / "roster.csv"
        with open(roster, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(["id", "name", "role"])
            writer.writerow(["teacher", "Dana Zhou", "instructor"])
            writer.writerows([name, f"Load {name[-2:]}", "student"] for name in names)
        self.token = secrets.token_hex(32)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        # the course's Python: DP_HUB_VENV (e.g. /srv/dp-course/venv of `make hub`) saves building one
        venv = Path(os.environ.get("DP_HUB_VENV", self.srv / "venv"))
        env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}",
                   DP_HUB_SRV=str(self.srv), DP_HUB_STATE=str(self.srv / "hub"), DP_HUB_PORT=str(self.port),
                   DP_HUB_ROSTER=str(roster), DP_HUB_LOAD_TOKEN=self.token, DP_HUB_VENV=str(venv))
        provision.provision(roster, self.srv, reset=True, venv=venv)
        self.log = open(self.srv / "hub.log", "w")
        self.proc = subprocess.Popen([sys.executable, "-m", "jupyterhub", "-f", str(HUB / "jupyterhub_config.py")],
                                     cwd=self.srv, env=env, stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT, start_new_session=True)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=180)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
        self.log.close()
        shutil.rmtree(self.srv, ignore_errors=True)


def host(hub: Hub, name: str = "hub") -> str:
    """The Host header of ``name``'s origin (hub/jupyterhub_config.py: one subdomain per user).

    Requests go to the proxy on 127.0.0.1 with this header: outside a browser ``*.localhost``
    does not resolve here (no wildcard DNS on loopback).
    """
    return f"{name}.localhost:{hub.port}" if name == "hub" else f"{name}.hub.localhost:{hub.port}"


async def api(client, hub: Hub, method: str, path: str, body=None, base="/hub/api", user: str = "hub"):
    request = HTTPRequest(f"{hub.url}{base}{path}", method=method,
                          headers={"Authorization": f"token {hub.token}", "Host": host(hub, user)},
                          body=None if body is None else json.dumps(body), allow_nonstandard_methods=True,
                          request_timeout=300)
    response = await client.fetch(request, raise_error=True)
    return json.loads(response.body) if response.body else None


async def run_cells(hub: Hub, name: str, kernel_id: str, cells: list[str], timeout: float) -> None:
    url = f"ws://127.0.0.1:{hub.port}/user/{name}/api/kernels/{kernel_id}/channels"
    ws = await websocket_connect(HTTPRequest(url, headers={"Authorization": f"token {hub.token}",
                                                           "Host": host(hub, name)}))
    session = uuid.uuid4().hex
    try:
        for code in cells:
            msg_id = uuid.uuid4().hex
            ws.write_message(json.dumps({
                "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": name,
                           "session": session, "date": "", "version": "5.3"},
                "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
                "content": {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                            "allow_stdin": False, "stop_on_error": True}}))
            while True:
                raw = await asyncio.wait_for(ws.read_message(), timeout)
                if raw is None:
                    raise RuntimeError("kernel websocket closed")
                msg = json.loads(raw)
                if msg.get("parent_header", {}).get("msg_id") != msg_id:
                    continue
                if msg["msg_type"] == "execute_reply":
                    if msg["content"]["status"] != "ok":
                        raise RuntimeError(f"cell failed: {msg['content'].get('ename')}: "
                                           f"{msg['content'].get('evalue')}")
                    break
    finally:
        ws.close()


async def student(client, hub: Hub, name: str, cells: list[str], notebook_path: str, timeout: float) -> dict:
    result = {"name": name, "error": None}
    start = time.perf_counter()
    try:
        await api(client, hub, "POST", f"/users/{name}/server")
        while True:
            model = await api(client, hub, "GET", f"/users/{name}")
            server = model.get("servers", {}).get("")
            if server and server.get("ready"):
                break
            if time.perf_counter() - start > 300:
                raise TimeoutError("server not ready in 300 s")
            await asyncio.sleep(0.5)
        result["spawn_s"] = time.perf_counter() - start
        session = await api(client, hub, "POST", "/api/sessions",    # kernel in ~/course, as JupyterLab does
                            {"path": notebook_path, "type": "notebook", "name": "", "kernel": {"name": "python3"}},
                            base=f"/user/{name}", user=name)
        run_start = time.perf_counter()
        await run_cells(hub, name, session["kernel"]["id"], cells, timeout)
        result["run_s"] = time.perf_counter() - run_start
        result["pss_mib"] = pss_kib(pwd.getpwnam(name).pw_uid) / 1024
    except Exception as exc:   # a failure is a result here, counted and reported
        result["error"] = f"{type(exc).__name__}: {exc}"[:300]
    result["total_s"] = time.perf_counter() - start
    return result


async def one_round(n: int, notebook: Path, notebook_path: str, timeout: float) -> dict:
    names = [f"dpload{i:02d}" for i in range(1, n + 1)]
    hub = Hub(names)
    client = AsyncHTTPClient(max_clients=4 * n + 10)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                await client.fetch(f"{hub.url}/hub/api/", headers={"Host": host(hub)}, request_timeout=2)
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise RuntimeError("hub did not start: " + (hub.srv / "hub.log").read_text()[-2000:])
                await asyncio.sleep(0.5)
        cells = [c.source for c in nbformat.read(notebook, as_version=4).cells if c.cell_type == "code"]
        start = time.perf_counter()
        results = await asyncio.gather(*(student(client, hub, name, cells, notebook_path, timeout) for name in names))
        wall = time.perf_counter() - start
        load = os.getloadavg()
    finally:
        artifacts = HUB.parent / "artifacts"
        artifacts.mkdir(exist_ok=True)
        hub.log.flush()
        shutil.copy(hub.srv / "hub.log", artifacts / f"hub-load-{n}.log")   # kept: the hub's view of failures
        hub.stop()
    ok = [r for r in results if not r["error"]]
    summary = {"students": n, "wall_s": round(wall, 1), "failures": n - len(ok),
               "errors": sorted({r["error"] for r in results if r["error"]})[:3], "loadavg_1min": round(load[0], 2)}
    if ok:
        for key in ("spawn_s", "run_s", "pss_mib"):
            values = [r[key] for r in ok]
            summary[f"{key}_median"] = round(statistics.median(values), 1)
            summary[f"{key}_max"] = round(max(values), 1)
        summary["pss_total_mib"] = round(sum(r["pss_mib"] for r in ok))
    return summary


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, nargs="+", default=[5, 10, 20])
    parser.add_argument("--notebook", default="course/6.2-laplace.ipynb",
                        help="lecture notebook, relative to the student's home (default %(default)s)")
    parser.add_argument("--cell-timeout", type=float, default=600)
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        parser.error("run as root: the load accounts are OS users")
    notebook = HUB.parent / args.notebook
    if not notebook.is_file():
        parser.error(f"{notebook} not found")
    print(f"{os.cpu_count()} CPUs; notebook {args.notebook}", flush=True)
    for n in args.students:
        summary = asyncio.run(one_round(n, notebook, args.notebook, args.cell_timeout))
        print(json.dumps(summary, ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
