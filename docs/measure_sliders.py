"""The kernel's work per slider move, old code against new, under the same load (issue 36).

    .venv/bin/python docs/measure_sliders.py --old /tmp/old [--moves 20] [course/6.3-exponential.ipynb ...]

``--old`` is a tree holding another version's ``helpers/`` (e.g. ``mkdir /tmp/old && git archive
1b15529 helpers | tar -x -C /tmp/old``). For each lecture notebook (default: every one with a slider
figure) two kernels are started with the live backend (``JPY_SESSION_NAME`` set, as JupyterLab
starts them), one importing ``helpers`` from ``--old``, one from this checkout; both run every code
cell. Then every slider of every figure is moved ``--moves`` times, the two kernels in turn, so
that both see the same load: a move is ipykernel's comm handler called with the message a browser
sends (``{"method": "update", "state": {"index" | "value": ...}}``), timed from the call to its
return: the widget update, the course's update, the blit, the frame's encoding and sending. Each
figure's canvas is first told the front end is there (no data-URL syncing) and drawn in full, as
when it is shown. Prints per slider the median and p95 (ms) of each; ``--json FILE`` appends rows.
Not a test: a measurement to repeat on a quiet machine (hub/README.md, Sizing).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

import nbformat
from jupyter_client.manager import start_new_kernel

ROOT = Path(__file__).resolve().parents[1]

SETUP = r'''
import gc, time
from helpers.lectures.widgets import LiveFigure
_k = get_ipython().kernel
_cm = _k.comm_manager if hasattr(_k, "comm_manager") else __import__("comm").get_comm_manager()
# in notebook order (a figure drawn in the browser has a plain Agg canvas, no manager)
_lives = sorted((o for o in gc.get_objects() if isinstance(o, LiveFigure)),
                key=lambda l: getattr(l, "serial", None) or l.fig.canvas.manager.num)
_sliders = []
for _i, _live in enumerate(_lives):
    _live.fig.canvas.syncing_data_url = False
    _live.fig.canvas.draw()
    _sliders += [(_i + 1, _n, _s) for _n, _s in _live.sliders.items() if getattr(_s, "options", None) or hasattr(_s, "step")]

def _move(j, i):
    _, _, s = _sliders[j]
    if getattr(s, "options", None):
        state = {"index": (3 * i + 1) % len(s.options)}
    else:                                   # a step of the slider's own grid, as the arrow keys make
        state = {"value": s.min + ((3 * i + 1) % (1 + round((s.max - s.min) / s.step))) * s.step}
    msg = {"content": {"comm_id": s.comm.comm_id, "data": {"method": "update", "state": state, "buffer_paths": []}},
           "buffers": [], "header": {"msg_type": "comm_msg"}, "parent_header": {}, "metadata": {}}
    t = time.perf_counter()
    _cm.comm_msg(None, None, msg)
    return 1000 * (time.perf_counter() - t)
'''


def _run(client, code: str, timeout: float = 600) -> str:
    out: list[dict] = []
    client.execute_interactive(code, timeout=timeout, output_hook=out.append)
    for m in out:
        if m["msg_type"] == "error":
            raise RuntimeError("\n".join(m["content"]["traceback"])[-1500:])
    return "".join(m["content"]["text"] for m in out if m["msg_type"] == "stream")


def _p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20, method="inclusive")[-1]


def measure(notebook: Path, old: Path, moves: int) -> list[dict]:
    kernels = {}
    try:
        for tag, tree in (("old", old), ("new", ROOT)):
            env = dict(os.environ, JPY_SESSION_NAME=str(notebook), PYTHONPATH=str(tree))
            env.pop("MPLBACKEND", None)
            kernels[tag] = start_new_kernel(kernel_name="python3", cwd=str(notebook.parent), env=env)
        for _, client in kernels.values():
            for cell in nbformat.read(notebook, as_version=4).cells:
                if cell.cell_type == "code":
                    _run(client, cell.source)
            _run(client, SETUP)
        names = json.loads(_run(kernels["new"][1], "import json; print(json.dumps([(f, n) for f, n, _ in _sliders]))"))
        times = {tag: [[] for _ in names] for tag in kernels}
        for i in range(moves):
            for j in range(len(names)):
                for tag in (("old", "new") if i % 2 else ("new", "old")):
                    times[tag][j].append(float(_run(kernels[tag][1], f"print(_move({j}, {i}))")))
    finally:
        for manager, client in kernels.values():
            client.stop_channels()
            manager.shutdown_kernel(now=True)
    return [{"notebook": notebook.name, "figure": figure, "slider": name,
             **{f"{tag}_{stat}": round(f(times[tag][j]), 1) for tag in ("old", "new")
                for stat, f in (("median", statistics.median), ("p95", _p95))},
             "loadavg": round(os.getloadavg()[0], 1)} for j, (figure, name) in enumerate(names)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--old", type=Path, required=True, help="a tree with the other version's helpers/")
    parser.add_argument("--moves", type=int, default=20)
    parser.add_argument("--json", type=Path, help="append the rows to this file (JSON lines)")
    args = parser.parse_args(argv)
    notebooks = args.notebooks or [p for p in sorted((ROOT / "course").glob("*.ipynb"))
                                   if "_widget(" in p.read_text(encoding="utf-8")]
    for notebook in notebooks:
        rows = measure(notebook.resolve(), args.old.resolve(), args.moves)
        for r in rows:
            print(f"{r['notebook']:<34} fig {r['figure']} {r['slider']:<12} old {r['old_median']:6.1f} / {r['old_p95']:6.1f}"
                  f"   new {r['new_median']:6.1f} / {r['new_p95']:6.1f} ms   load {r['loadavg']}", flush=True)
        if args.json:
            with open(args.json, "a", encoding="utf-8") as fh:
                fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
