"""Load on the one-machine class server: N students start a server and run a lecture notebook,
or all move the same slider at once ("now everyone move ε").

    sudo nice -n 10 .venv/bin/python hub/load.py [--students 5 10 20] [--notebook course/6.2-laplace.ipynb]
    sudo nice -n 10 .venv/bin/python hub/load.py --slider [--students 1 10 20] [--seconds 60] [--rate 2]

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

``--slider`` (issue 36): each student runs lecture 6.2 up to its first live figure (Fig. 6-3, the
Laplace density with its ε slider) and then acts as JupyterLab's widget views do, over the same
kernel websocket: it answers the ipympl canvas's requests to draw and acknowledges each frame, and
moves the ε slider ``--rate`` times a second for ``--seconds`` (an ipywidgets ``update`` of the
slider's ``index``, what dragging it sends). Reported per N: the latency from sending a move to
receiving the new frame's pixels (median, p95, max; a move with no frame within 5 s is a failure),
and the class's CPU per move (user + system time of the students' servers and kernels and of the
hub and its proxy over the moving phase, from /proc, divided by the moves that got their frame). The browser's painting is not included (measured in
``tests/browser/test_lectures.py``).
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
import struct
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
        roster = self.roster = self.srv / "roster.csv"
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
        # The students' servers outlive a stopped hub on purpose (cleanup_servers = False): stop them
        # as `provision.py --stop` does, before their course root goes.
        for line in provision.stop_class(self.srv, provision.read_roster(self.roster)):
            print(line, file=sys.stderr)
        shutil.rmtree(self.srv, ignore_errors=True)


def host(hub: Hub, name: str = "hub") -> str:
    """The Host header of ``name``'s origin (hub/jupyterhub_config.py: one subdomain per user).

    Requests go to the proxy on 127.0.0.1 with this header: outside a browser ``*.localhost``
    does not resolve here (no wildcard DNS on loopback). The hub is ``hub.localhost``, a student's
    server ``<name>.users.localhost`` (``DP_HUB_USER_DOMAIN``'s default for a hub on ``*.localhost``).
    """
    # students' servers live on a registrable domain of their own (hub/README.md, issue 26)
    return f"{name}.localhost:{hub.port}" if name == "hub" else f"{name}.users.localhost:{hub.port}"


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


def decode_frame(raw) -> dict:
    """A kernel websocket message: JSON text, or Jupyter's binary frame (offsets, JSON, buffers)."""
    if isinstance(raw, str):
        return json.loads(raw)
    nbufs = struct.unpack("!I", raw[:4])[0]
    offsets = list(struct.unpack("!" + "I" * nbufs, raw[4:4 + 4 * nbufs])) + [len(raw)]
    parts = [raw[offsets[i]:offsets[i + 1]] for i in range(nbufs)]
    msg = json.loads(parts[0])
    msg["buffers"] = parts[1:]
    return msg


class KernelViews:
    """The part of JupyterLab a slider test needs: a kernel websocket, widget models, ipympl frames."""

    def __init__(self, ws, name: str):
        self.ws, self.name, self.session = ws, name, uuid.uuid4().hex
        self.models: dict[str, dict] = {}
        self.frames: list[float] = []          # arrival time of every canvas frame (pixels)

    def send(self, msg_type: str, content: dict, channel: str = "shell") -> str:
        msg_id = uuid.uuid4().hex
        self.ws.write_message(json.dumps({
            "header": {"msg_id": msg_id, "msg_type": msg_type, "username": self.name, "session": self.session,
                       "date": "", "version": "5.3"},
            "parent_header": {}, "metadata": {}, "channel": channel, "buffers": [], "content": content}))
        return msg_id

    def custom(self, comm_id: str, kind: str) -> None:
        self.send("comm_msg", {"comm_id": comm_id, "data": {"method": "custom", "content": {"type": kind}}})

    def canvas_ids(self) -> list[str]:
        return [c for c, state in self.models.items() if state.get("_model_name") == "MPLCanvasModel"]

    def handle(self, msg: dict) -> None:
        content = msg.get("content", {})
        if msg.get("msg_type") == "comm_open":
            self.models[content["comm_id"]] = content.get("data", {}).get("state", {})
        elif msg.get("msg_type") == "comm_msg" and content.get("comm_id") in self.canvas_ids():
            if msg.get("buffers"):              # a frame: what the view paints; acknowledged as the view does
                self.frames.append(time.perf_counter())
                self.custom(content["comm_id"], "ack")
                return
            data = content.get("data", {})
            inner = data.get("content", {}).get("data") if data.get("method") == "custom" else None
            if inner and json.loads(inner).get("type") == "draw":   # the canvas asks its view to ask for a frame
                self.custom(content["comm_id"], "draw")

    async def read(self, timeout: float) -> dict:
        raw = await asyncio.wait_for(self.ws.read_message(), timeout)
        if raw is None:
            raise RuntimeError("kernel websocket closed")
        msg = decode_frame(raw)
        self.handle(msg)
        return msg

    async def execute(self, code: str, timeout: float) -> None:
        msg_id = self.send("execute_request", {"code": code, "silent": False, "store_history": True,
                                               "user_expressions": {}, "allow_stdin": False, "stop_on_error": True})
        replied = idle = False
        # The reply (shell) can arrive before the cell's last iopub messages (the widgets' comm_open):
        # done when both the reply and the kernel's idle status for this request are in.
        while not (replied and idle):
            msg = await self.read(timeout)
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "execute_reply":
                if msg["content"]["status"] != "ok":
                    raise RuntimeError(f"cell failed: {msg['content'].get('ename')}: {msg['content'].get('evalue')}")
                replied = True
            elif msg["msg_type"] == "status" and msg["content"].get("execution_state") == "idle":
                idle = True

    async def pump(self, seconds: float) -> None:
        end = time.perf_counter() + seconds
        while (left := end - time.perf_counter()) > 0:
            try:
                await self.read(left)
            except asyncio.TimeoutError:
                return


async def move_slider(hub: Hub, name: str, kernel_id: str, cells: list[str], *, seconds: float, rate: float,
                      timeout: float, start_at: float) -> list[float | None]:
    """Run ``cells``, show the figure as a view would, move its ε slider; the latency of each move (s)."""
    url = f"ws://127.0.0.1:{hub.port}/user/{name}/api/kernels/{kernel_id}/channels"
    ws = await websocket_connect(HTTPRequest(url, headers={"Authorization": f"token {hub.token}",
                                                           "Host": host(hub, name)}), max_message_size=64 << 20)
    views = KernelViews(ws, name)
    try:
        for code in cells:
            await views.execute(code, timeout)
        slider = next((c for c, state in views.models.items() if state.get("description") == "ε"), None)
        if slider is None:
            raise RuntimeError(f"no ε slider among the widgets: {sorted({str(s.get('_model_name')) for s in views.models.values()})}")
        options = len(views.models[slider].get("_options_labels", ())) or 21
        for canvas in views.canvas_ids():           # what the figure's view sends when it is created
            for kind in ("initialized", "send_image_mode", "refresh"):
                views.custom(canvas, kind)
        first = time.perf_counter()
        while not views.frames:
            if time.perf_counter() - first > 60:
                raise TimeoutError("the figure sent no first frame in 60 s")
            await views.read(60)
        await views.pump(max(0.0, start_at - time.perf_counter()))   # every student starts moving together
        latencies: list[float | None] = []
        for i in range(int(seconds * rate)):
            tick = start_at + i / rate
            await views.pump(max(0.0, tick - time.perf_counter()))
            before, sent = len(views.frames), time.perf_counter()
            views.send("comm_msg", {"comm_id": slider, "data": {"method": "update", "state": {"index": (7 * i + 3) % options},
                                                                "buffer_paths": []}})
            while len(views.frames) == before and time.perf_counter() - sent < 5:
                try:
                    await views.read(5 - (time.perf_counter() - sent))
                except asyncio.TimeoutError:
                    break
            latencies.append(views.frames[before] - sent if len(views.frames) > before else None)
        return latencies
    finally:
        ws.close()


def class_cpu_seconds(uids: set[int], hub_group: int) -> dict[int, float]:
    """CPU seconds (user + system) so far of every live process of the class: the students' servers
    and kernels (by uid) and the hub with its proxy (the hub's process group); by pid."""
    tick, found = os.sysconf("SC_CLK_TCK"), {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            fields = stat[stat.rindex(")") + 2:].split()
            if entry.stat().st_uid in uids or int(fields[2]) == hub_group:
                found[int(entry.name)] = (int(fields[11]) + int(fields[12])) / tick
        except (OSError, ValueError, IndexError):
            continue
    return found


async def slider_student(client, hub: Hub, name: str, cells: list[str], notebook_path: str, args,
                         start_at: float) -> dict:
    result = {"name": name, "error": None, "latencies": []}
    try:
        await api(client, hub, "POST", f"/users/{name}/server")
        started = time.perf_counter()
        while not ((await api(client, hub, "GET", f"/users/{name}")).get("servers", {}).get("", {}) or {}).get("ready"):
            if time.perf_counter() - started > 300:
                raise TimeoutError("server not ready in 300 s")
            await asyncio.sleep(0.5)
        session = await api(client, hub, "POST", "/api/sessions",
                            {"path": notebook_path, "type": "notebook", "name": "", "kernel": {"name": "python3"}},
                            base=f"/user/{name}", user=name)
        result["latencies"] = await move_slider(hub, name, session["kernel"]["id"], cells, seconds=args.seconds,
                                                rate=args.rate, timeout=args.cell_timeout, start_at=start_at)
    except Exception as exc:   # a failure is a result here, counted and reported
        result["error"] = f"{type(exc).__name__}: {exc}"[:300]
    return result


def slider_cells(notebook: Path) -> list[str]:
    """The code cells of the lecture up to and including its first ε figure (6.2: Fig. 6-3)."""
    cells = []
    for cell in nbformat.read(notebook, as_version=4).cells:
        if cell.cell_type == "code":
            cells.append(cell.source)
            if "_widget(" in cell.source and ".widget" in cell.source:
                return cells
    raise ValueError(f"{notebook}: no live figure (a *_widget(...) cell) to move")


async def slider_round(n: int, notebook: Path, notebook_path: str, args) -> dict:
    names = [f"dpload{i:02d}" for i in range(1, n + 1)]
    hub = Hub(names)
    client = AsyncHTTPClient(max_clients=4 * n + 10)
    try:
        await wait_for_hub(client, hub)
        cells = slider_cells(notebook)
        # Spawning and running the cells first; every student then moves at once, from start_at on.
        start_at = time.perf_counter() + args.warmup
        tasks = [asyncio.create_task(slider_student(client, hub, name, cells, notebook_path, args, start_at))
                 for name in names]
        await asyncio.sleep(max(0.0, start_at - time.perf_counter()))
        uids = {pwd.getpwnam(name).pw_uid for name in names}
        cpu0 = class_cpu_seconds(uids, hub.proc.pid)
        results = await asyncio.gather(*tasks)
        cpu1 = class_cpu_seconds(uids, hub.proc.pid)
        load = os.getloadavg()
    finally:
        artifacts = HUB.parent / "artifacts"
        artifacts.mkdir(exist_ok=True)
        hub.log.flush()
        shutil.copy(hub.srv / "hub.log", artifacts / f"hub-slider-{n}.log")
        hub.stop()
    # processes alive at both ends (servers, kernels, hub, proxy); one that started meanwhile counts whole
    class_cpu = sum(cpu1[pid] - cpu0.get(pid, 0.0) for pid in cpu1)
    moves = [lat for r in results for lat in r["latencies"]]
    done = sorted(lat * 1000 for lat in moves if lat is not None)
    summary = {"students": n, "moves": len(moves), "failures": len(moves) - len(done)
               + sum(1 for r in results if r["error"]) * int(args.seconds * args.rate),
               "errors": sorted({r["error"] for r in results if r["error"]})[:3],
               "class_cpu_ms_per_move": round(1000 * class_cpu / max(1, len(done)), 1),
               "loadavg_1min": round(load[0], 2)}
    if done:
        summary.update(latency_ms_median=round(statistics.median(done), 1),
                       latency_ms_p95=round(done[min(len(done) - 1, int(0.95 * len(done)))], 1),
                       latency_ms_max=round(done[-1], 1))
    return summary


async def wait_for_hub(client, hub: Hub) -> None:
    deadline = time.monotonic() + 120
    while True:
        try:
            await client.fetch(f"{hub.url}/hub/api/", headers={"Host": host(hub)}, request_timeout=2)
            return
        except Exception:
            if time.monotonic() > deadline:
                raise RuntimeError("hub did not start: " + (hub.srv / "hub.log").read_text()[-2000:])
            await asyncio.sleep(0.5)


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
        await wait_for_hub(client, hub)
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
    parser.add_argument("--slider", action="store_true",
                        help="everyone moves the notebook's first ε slider at once (latency to new pixels, CPU per move)")
    parser.add_argument("--seconds", type=float, default=60, help="--slider: how long everyone moves (default 60)")
    parser.add_argument("--rate", type=float, default=2, help="--slider: moves per second per student (default 2)")
    parser.add_argument("--warmup", type=float, default=None,
                        help="--slider: seconds for spawning and running the cells before the moves begin "
                             "(default 60 + 6 per student)")
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        parser.error("run as root: the load accounts are OS users")
    notebook = HUB.parent / args.notebook
    if not notebook.is_file():
        parser.error(f"{notebook} not found")
    print(f"{os.cpu_count()} CPUs; notebook {args.notebook}", flush=True)
    for n in args.students:
        if args.slider:
            args.warmup = args.warmup if args.warmup is not None else 60 + 6 * n
            summary = asyncio.run(slider_round(n, notebook, args.notebook, args))
        else:
            summary = asyncio.run(one_round(n, notebook, args.notebook, args.cell_timeout))
        print(json.dumps(summary, ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
