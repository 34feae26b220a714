"""Unit tests of the autograder's steps (no nbgrader runs; a few sandboxes; a few seconds)."""

from __future__ import annotations

import contextlib
import copy
import json
import re
import shutil
from pathlib import Path

import nbformat
import numpy as np
import pytest

from autograder import astcheck, bundle, sanitize
from autograder.render import feedback
from autograder.reports import report, shard
from autograder.__main__ import build_parser

REPO = Path(__file__).resolve().parents[2]
ASSIGNMENTS = sorted(p.name for p in (REPO / "source").iterdir()
                     if p.is_dir() and list(p.glob("*.ipynb")))


@contextlib.contextmanager
def _sent_headers(box):
    """The message headers the trusted side sends to ``box`` while the block runs (in order)."""
    headers, original = [], box.send
    box.send = lambda header, payload=b"", *rest, **kw: (headers.append(header), original(header, payload, *rest, **kw))
    try:
        yield headers
    finally:
        del box.send


# --- sanitize ------------------------------------------------------------------


def _cell(kind, source, **meta):
    cell = nbformat.v4.new_code_cell(source) if kind == "code" else nbformat.v4.new_markdown_cell(source)
    if meta:
        cell.metadata["nbgrader"] = dict({"grade": False, "solution": False, "locked": False,
                                          "schema_version": 3}, **meta)
    return cell


@pytest.fixture()
def release():
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [
        _cell("md", "# Title", grade_id="intro", locked=True),
        _cell("code", "import numpy as np", grade_id="setup", locked=True),
        _cell("code", "def f(x):\n    raise NotImplementedError()", grade_id="f", solution=True),
        _cell("code", "assert f(1) == 2", grade_id="test_f", grade=True, locked=True, points=2),
        _cell("code", "def g(x):\n    raise NotImplementedError()", grade_id="g", solution=True),
        _cell("code", "assert g(1) == 3", grade_id="test_g", grade=True, locked=True, points=1),
    ]
    return nb


def _ids(nb):
    return [(c.metadata.get("nbgrader") or {}).get("grade_id") for c in nb.cells]


def test_sanitize_keeps_honest_work(release):
    student = copy.deepcopy(release)
    student.cells[2].source = "def f(x):\n    return 2 * x"
    student.cells.insert(3, nbformat.v4.new_code_cell("print(f(3))"))
    nb, issues = sanitize.sanitize_notebook(student, release)
    assert issues.flags == [] and issues.repairs == []
    assert nb.cells[2].source == "def f(x):\n    return 2 * x"
    assert nb.cells[3].source == "print(f(3))" and "nbgrader" not in nb.cells[3].metadata


def test_sanitize_restores_and_flags_edited_and_deleted_tests(release):
    student = copy.deepcopy(release)
    student.cells[3].source = "pass"
    student.cells[3].metadata["nbgrader"]["points"] = 50
    del student.cells[5]
    nb, issues = sanitize.sanitize_notebook(student, release)
    assert nb.cells[3].source == "assert f(1) == 2"
    assert nb.cells[3].metadata["nbgrader"]["points"] == 2
    assert _ids(nb) == _ids(release)
    assert any("test cell 'test_f' edited" in f for f in issues.flags)
    assert any("metadata of cell 'test_f' changed" in f for f in issues.flags)
    assert any("test cell 'test_g' deleted" in f for f in issues.flags)


def test_sanitize_puts_deleted_cells_back_in_order(release):
    student = copy.deepcopy(release)
    student.cells = [student.cells[0], student.cells[2], student.cells[4]]  # setup and tests deleted
    nb, issues = sanitize.sanitize_notebook(student, release)
    assert _ids(nb) == _ids(release)
    assert len(issues.flags) == 3  # setup, test_f, test_g


def test_sanitize_repairs_duplicated_grade_ids(release):
    student = copy.deepcopy(release)
    student.cells.append(copy.deepcopy(student.cells[2]))
    student.cells.append(copy.deepcopy(student.cells[3]))
    nb, issues = sanitize.sanitize_notebook(student, release)
    assert issues.flags == []
    assert len(issues.repairs) == 2
    assert _ids(nb).count("f") == 1 and _ids(nb).count("test_f") == 1
    assert len({c.id for c in nb.cells}) == len(nb.cells)


def test_sanitize_flags_unknown_ids_and_solution_switch(release):
    student = copy.deepcopy(release)
    student.cells[3].metadata["nbgrader"]["solution"] = True
    student.cells.append(_cell("code", "x = 1", grade_id="bonus", grade=True, points=10))
    nb, issues = sanitize.sanitize_notebook(student, release)
    assert any("unknown grade_id 'bonus'" in f for f in issues.flags)
    assert any("metadata of cell 'test_f'" in f for f in issues.flags)
    assert "nbgrader" not in nb.cells[-1].metadata


def test_sanitize_keeps_an_image_pasted_into_a_written_answer(release):
    """Red team s9: a manually graded Markdown answer was rebuilt from the release with the student's
    source only, so an image pasted into it (a photo of a derivation) was lost before the Formgrader's
    copy could show it; a read-only text cell still gets the release's cell whole."""
    release.cells.insert(1, _cell("md", "YOUR ANSWER HERE", grade_id="answer", solution=True, grade=True, points=2))
    student = copy.deepcopy(release)
    student.cells[1].source = "推导见图 ![p](attachment:p.png)"
    student.cells[1].attachments = {"p.png": {"image/png": "iVBORw0KGgo="}}
    student.cells[0].attachments = {"x.png": {"image/png": "iVBORw0KGgo="}}
    nb, issues = sanitize.sanitize_notebook(student, release)
    assert nb.cells[1].source == "推导见图 ![p](attachment:p.png)"
    assert nb.cells[1].attachments == {"p.png": {"image/png": "iVBORw0KGgo="}}
    assert "attachments" not in nb.cells[0]
    shown = feedback.gradebook_notebook(nb)
    assert shown.cells[1].attachments == {"p.png": {"image/png": "iVBORw0KGgo="}}


def test_read_notebook_reasons(tmp_path):
    (tmp_path / "a.ipynb").write_text("{oops", encoding="utf-8")
    (tmp_path / "b.ipynb").write_text(json.dumps({"cells": 1}), encoding="utf-8")
    assert "not JSON" in sanitize.read_notebook(tmp_path / "a.ipynb")[1]
    assert "invalid nbformat" in sanitize.read_notebook(tmp_path / "b.ipynb")[1]
    (tmp_path / "c.ipynb").symlink_to("/dev/zero")
    assert "not a regular file" in sanitize.read_notebook(tmp_path / "c.ipynb")[1]


def test_sanitize_submission_copies_only_notebooks(tmp_path, release):
    (tmp_path / "rel").mkdir()
    nbformat.write(release, tmp_path / "rel" / "hw.ipynb")
    src = tmp_path / "src"
    src.mkdir()
    nbformat.write(release, src / "hw.ipynb")
    (src / "numpy.py").write_text("x = 1", encoding="utf-8")
    (src / "data.csv").write_text("1,2", encoding="utf-8")
    found = sanitize.sanitize_submission(src, tmp_path / "rel", tmp_path / "dest")
    assert found["notebooks"] == ["hw.ipynb"]
    assert sorted(p.name for p in (tmp_path / "dest").iterdir()) == ["hw.ipynb"]
    assert found["flags"] == ["file 'numpy.py' could shadow a module (ignored)"]


# --- static inspection -------------------------------------------------------------

PROTECTED = astcheck.imported_names(["import math\nimport numpy as np",
                                     "from helpers.checks import check_x\ncheck_x(f)"])

ATTACKS = {
    "np.testing.assert_allclose = lambda *a, **k: None": "modifies 'np.testing.assert_allclose'",
    "import builtins\nbuiltins.abs = len": "modifies 'builtins.abs'",
    "setattr(np, 'mean', len)": "calls setattr()",
    "import sys\nsys.modules['helpers.checks'] = None": "modifies 'sys.modules'",
    "import os\nos.kill(os.getpid(), 9)": "uses '.kill'",
    "import os\nos._exit(0)": "uses '._exit'",
    "import importlib": "imports 'importlib'",
    "def check_x(f):\n    pass": "rebinds 'check_x'",
    "len = lambda x: 0": "rebinds 'len'",
    "import scipy as np": "rebinds 'np'",
    "def f():\n    global np\n    np = None": "rebinds 'np'",
    "vars(np)['mean'] = len": "calls vars()",
    "get_ipython().set_custom_exc((Exception,), print)": "calls get_ipython()",
    "!rm -rf /": "shell command",
    "open('helpers.py', 'w').write('x')": "calls open()",
    "f.__globals__['np'] = None": "uses '.__globals__'",
    "from numpy import *": "star import",
    "exec('1')": "calls exec()",
}


@pytest.mark.parametrize("code", sorted(ATTACKS))
def test_inspect_code_flags_attacks(code):
    reasons = astcheck.inspect_code(code, PROTECTED)
    assert any(ATTACKS[code] in r for r in reasons), reasons


@pytest.mark.parametrize("code", [
    "import numpy as np\nimport math\n\ndef f(x, rng):\n    return np.log1p(-rng.random(x))",
    "%matplotlib inline\nimport matplotlib.pyplot as plt\nplt.plot([1, 2])",
    "class Box:\n    def __init__(self):\n        self.value = 1\nb = Box()\nb.value = 2",
    "x = np.zeros(3)\nx[0] = 1.0\nrng = np.random.default_rng(1)",
])
def test_inspect_code_accepts_honest_code(code):
    assert astcheck.inspect_code(code, PROTECTED) == []


def _instructor_code(nb) -> list[str]:
    return [c.source for c in nb.cells if c.cell_type == "code" and sanitize.nbgrader_meta(c)
            and not sanitize.is_solution(c)]


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_reference_solutions_are_not_flagged(assignment):
    nb = nbformat.read(REPO / "source" / assignment / f"{assignment}.ipynb", as_version=4)
    protected = astcheck.imported_names(_instructor_code(nb))
    for cell in nb.cells:
        if sanitize.is_solution(cell):
            code = "\n".join(l for l in cell.source.splitlines() if not l.strip().startswith("### "))
            assert astcheck.inspect_code(code, protected) == [], cell.source


# --- the channel: plain data only ------------------------------------------------------

def test_wire_round_trips_plain_data_and_refuses_the_rest():
    import numpy as np

    from autograder.sandbox import wire

    value = (None, True, 3, -2.5, float("nan"), float("inf"), "张三", [1, (2, 3)], {"k": [4.0]},
             np.arange(6, dtype=np.int64).reshape(2, 3), np.float64(1.5), np.bool_(True), np.zeros(0),
             np.array(2.5), np.arange(6.0).reshape(2, 3).T)
    payload = bytearray()
    tree = wire.encode(value, payload, [])
    back = wire.decode(json.loads(json.dumps(tree)), bytes(payload))
    assert back[:4] == value[:4] and np.isnan(back[4]) and back[5:9] == value[5:9]
    assert type(back[9]) is np.ndarray and back[9].dtype == np.int64 and (back[9] == value[9]).all()
    # Extended precision (a float128 overflow guard of public exponential mechanisms, issue 25) crosses
    # as float64, not as a refusal in the boundary's words.
    payload = bytearray()
    wide = wire.decode(wire.encode([np.array([0.25, 0.75], dtype=np.longdouble), np.longdouble(0.5)], payload, []),
                       bytes(payload))
    assert wide[0].dtype == np.float64 and wide[0].tolist() == [0.25, 0.75] and wide[1] == 0.5
    assert type(back[10]) is np.float64 and back[11] is np.bool_(True) and back[12].shape == (0,)
    assert back[13].shape == () and back[13] == 2.5  # a 0-d array stays 0-d (had come back with shape (1,))
    assert (back[14] == value[14]).all()  # a transposed (not C-contiguous) array crosses as it reads
    for bad in (np.array([object()]), lambda: 1, {1: 2}, type("Box", (), {})(), np.array(["text"]), {1, 2}):
        with pytest.raises(TypeError):
            wire.encode(bad, bytearray(), [])
    for tree, data in (({"$a": [0, 16], "dtype": "object", "shape": [2]}, b"x" * 16),
                       ({"$a": [0, 16], "dtype": "float64", "shape": [3]}, b"x" * 16),
                       ({"$a": [8, 16], "dtype": "float64", "shape": [2]}, b"x" * 16),
                       ({"__reduce__": "os.system"}, b""), ({"$g": 0}, b""), ({"$s": "object", "v": 1}, b""),
                       (json.loads("[" * 60 + "1" + "]" * 60), b"")):
        with pytest.raises(wire.WireError):
            wire.decode(tree, data)
    # Arguments' lists, dicts and arrays are named in the same order on both sides (mutations come back by index).
    value = ({"a": [1, np.zeros(2)], "b": {"c": []}}, [np.ones(3)], "s")
    sent, payload = [], bytearray()
    tree = wire.encode(value, payload, [], sent)
    got = []
    wire.decode(tree, bytes(payload), None, got)
    assert [type(c).__name__ for c in sent] == [type(c).__name__ for c in got] == \
        ["dict", "list", "ndarray", "dict", "list", "list", "ndarray"]


def test_wire_frames_have_deadlines_and_size_caps():
    import os
    import struct
    import time

    from autograder.sandbox import wire

    r, w = os.pipe()
    try:
        wire.send(w, {"a": 1}, b"xyz")
        assert wire.recv(r, time.monotonic() + 5) == ({"a": 1}, b"xyz")
        start = time.monotonic()
        with pytest.raises(TimeoutError):
            wire.recv(r, time.monotonic() + 0.2)
        assert time.monotonic() - start < 2
        os.write(w, struct.pack(">II", 2 ** 31, 0))
        with pytest.raises(wire.WireError):
            wire.recv(r, time.monotonic() + 5)
        os.write(w, struct.pack(">II", 3, 0) + b"[1]")
        with pytest.raises(wire.WireError):  # a header must be an object
            wire.recv(r, time.monotonic() + 5)
    finally:
        os.close(r)
        os.close(w)


def test_student_exceptions_cross_as_names_never_as_objects():
    from autograder.proxy import student_exception

    assert type(student_exception("ValueError", "bad b", False)) is ValueError
    assert type(student_exception("ZeroDivisionError", "x", False)) is ZeroDivisionError
    custom = student_exception("MyError", "m" * 10_000, False)
    assert type(custom).__name__ == "MyError" and isinstance(custom, Exception) and len(str(custom)) <= 2000
    for name in ("SystemExit", "KeyboardInterrupt", "GeneratorExit"):
        assert isinstance(student_exception(name, "", False), Exception)
    assert type(student_exception("os.system('x')", "", False)).__name__ == "Exception"
    from helpers.checks import ForbiddenRngMethod

    assert isinstance(student_exception("ForbiddenRngMethod", "", True), ForbiddenRngMethod)
    assert not isinstance(student_exception("ForbiddenRngMethod", "", False), ForbiddenRngMethod)


def test_standins_show_source_and_imports_but_never_run_student_code():
    from autograder.proxy import Proxy
    from autograder.standins import standins
    from helpers.checks import find_forbidden_calls

    code = ("import numpy as np\nfrom numpy.random import laplace as L\n"
            "def helper(b, n):\n    open('/tmp/should-never-exist', 'w')\n    return L(0, b, n)\n"
            "def noise(b, size, rng):\n    return helper(b, size)\n")
    functions, keys = standins([code], tag="unit")
    try:
        with pytest.raises(RuntimeError, match="stand-in"):
            functions["helper"](1, 2)
        proxy = Proxy(sandbox=None, name="noise", call_timeout=1, standin=functions["noise"])
        import inspect

        assert "return helper(b, size)" in inspect.getsource(proxy)
        found = find_forbidden_calls(proxy)
        assert any("numpy.random" in f for f in found), found
    finally:
        for key in keys:
            import linecache

            linecache.cache.pop(key, None)
    assert not Path("/tmp/should-never-exist").exists()


# --- the sandbox -----------------------------------------------------------------------

ISOLATION_PROBE = r'''
import os, resource, socket, sys
print("uid", os.getuid(), os.geteuid())
try:
    import helpers
    print("HELPERS IMPORTED")
except ImportError:
    print("no helpers")
try:
    import autograder
    print("AUTOGRADER IMPORTED")
except ImportError:
    print("no autograder")
print("pids", sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))
print("root", sorted(os.listdir("/")))
print("repo", os.path.exists(REPO), os.path.exists(REPO + "/source"))
for name in ("AS", "CPU", "NPROC", "FSIZE", "NOFILE"):
    soft, hard = resource.getrlimit(getattr(resource, "RLIMIT_" + name))
    print("limit", name, soft == hard, soft != resource.RLIM_INFINITY)
try:
    socket.create_connection(("1.1.1.1", 80), timeout=2)
    print("NETWORK")
except OSError:
    print("no network")
for path in ("/usr/evil", "/opt/site-packages/evil.pth", "/opt/runner/evil.py", "/evil", "/tmp/evil"):
    try:
        open(path, "w")
        print("WROTE", path)
    except OSError:
        pass
open(os.path.expanduser("~/ok"), "w").write("mine")
print("caps", open("/proc/self/status").read().split("CapEff:")[1].split()[0])
'''


def test_sandbox_isolation():
    """What the student's process sees: nobody, no helpers, no network, only its own pids."""
    import time

    from autograder.jail import Sandbox, probe

    if probe():
        pytest.skip(f"bubblewrap unavailable: {probe()}")
    box = Sandbox(sandboxed=True, deadline=time.monotonic() + 60, memory_mb=1024, cpu_seconds=30)
    try:
        box.send({"cells": [ISOLATION_PROBE.replace("REPO", repr(str(REPO)))], "files": {}, "graded": [],
                  "limits": box.limits, "cell_timeout": 30.0, "call_timeout": 30.0})
        cell, _ = box.recv(30, "probe")
        assert cell["error"] is None, cell["error"]
        out = cell["stdout"]
        if __import__("os").geteuid() == 0:  # a uid of its own (see test_sandbox_limits)
            from autograder.jail import UID_BASE, UID_SLOTS

            uid = int(out.split("uid ")[1].split()[0])
            assert UID_BASE <= uid < UID_BASE + UID_SLOTS and f"uid {uid} {uid}" in out
        assert "no helpers" in out and "no autograder" in out and "no network" in out
        pids = eval(out.split("pids ")[1].splitlines()[0])  # noqa: S307 - our own probe's output
        assert len(pids) <= 3, pids
        assert "repo False False" in out and "WROTE" not in out
        assert out.count("limit") == 5 and "False" not in "".join(l for l in out.splitlines() if l.startswith("limit"))
        assert "caps 0000000000000000" in out
    finally:
        box.close()


def test_calls_cross_generators_and_restrictions():
    """A Generator ends where it would in one process; RecordingGenerator's restriction holds."""
    import time

    import numpy as np

    from autograder.jail import Sandbox, SandboxError, probe
    from autograder.proxy import Proxy
    from helpers.checks import ForbiddenRngMethod, RecordingGenerator

    sandboxed = probe() is None
    box = Sandbox(sandboxed=sandboxed, deadline=time.monotonic() + 60, memory_mb=1024, cpu_seconds=30)
    code = ("import numpy as np\ndef draw(n, rng):\n    return rng.random(n)\n"
            "def cheat(rng):\n    return rng.laplace(0, 1, 3)\n"
            "def draw32(rng):\n    return rng.random(3, dtype=np.float32)\n"
            "def boom(x):\n    raise ValueError(f'bad {x}')\n"
            "def obj():\n    return object()\n"
            "def give(rng):\n    return rng\n"
            "def slow():\n    import time\n    time.sleep(60)\n")
    try:
        box.send({"cells": [code], "files": {}, "graded": ["draw", "cheat", "boom", "obj", "slow", "give", "draw32"],
                  "limits": box.limits, "cell_timeout": 30.0, "call_timeout": 2.0})
        box.recv(30, "cell")
        ready, _ = box.recv(30, "ready")
        assert ready["names"] == {n: "callable" for n in ("draw", "cheat", "boom", "obj", "slow", "give", "draw32")}
        draw, cheat, boom, obj, slow = (Proxy(box, n, 2.0) for n in ("draw", "cheat", "boom", "obj", "slow"))
        rng, local = np.random.default_rng(5), np.random.default_rng(5)
        for n in (3, 1000):
            got = draw(n, rng)
            assert type(got) is np.ndarray and np.array_equal(got, local.random(n))
        assert rng.bit_generator.state == local.bit_generator.state
        recording = RecordingGenerator(7)
        draw(4, recording)
        assert recording.calls == 1 and recording.draws == 4
        with pytest.raises(ForbiddenRngMethod):
            cheat(recording)
        assert recording.forbidden == ["laplace"]
        with pytest.raises(ForbiddenRngMethod, match="float32"):  # the tape holds float64 only
            Proxy(box, "draw32", 2.0)(recording)
        assert recording.forbidden == ["laplace", "random(dtype=float32)"] and recording.draws == 4
        assert Proxy(box, "draw32", 2.0)(np.random.default_rng(1)).dtype == np.float32  # unrestricted: served
        with pytest.raises(ValueError, match="bad 3"):
            boom(3)
        with pytest.raises(TypeError, match="cannot be graded"):
            obj()
        with pytest.raises(TypeError, match="generator cannot be returned"):
            Proxy(box, "give", 2.0)(np.random.default_rng(3))
        with pytest.raises(Exception, match="time limit"):
            slow()
        assert list(draw(2, np.random.default_rng(1))) == list(np.random.default_rng(1).random(2))
    finally:
        box.close()
    with pytest.raises(SandboxError):
        draw(1, np.random.default_rng(1))


# --- batched calls (call_repeatedly, the runner's "repeat" op) ---------------------------

REPEAT_CODE = """
import math
import numpy as np

def pick(scores, epsilon, sensitivity, rng):
    s = np.asarray(scores, dtype=float)
    w = np.exp(epsilon * (s - s.max()) / (2 * sensitivity))
    return int(np.searchsorted(np.cumsum(w / w.sum()), rng.random(), side="right"))

def grow(xs, d):
    xs.append(0)
    d["k"] = d.get("k", 0) + 1
    return [len(xs), d["k"]]

def flaky(rng):
    u = rng.random()
    if u < 0.05:
        raise ValueError(f"unlucky {u:.6f}")
    return u

def cheat(rng):
    return rng.laplace()

def late(rng):
    u = rng.random()
    return object() if u < 0.05 else u

def nap(t):
    import time
    end = time.process_time() + t  # t seconds of CPU: the limits count CPU time, not sleep
    while time.process_time() < end:
        pass
    return t

def kind(rng):
    if not isinstance(rng, np.random.Generator):
        raise TypeError("rng must be a numpy Generator")
    return [isinstance(rng, np.random.Generator), type(rng) is np.random.Generator]

def unbound(rng):
    return np.random.Generator.laplace(rng, 0.0, 1.0, 3)

def normalised(rng):
    rng = np.random.default_rng(rng)  # numpy's idiom: a Generator comes back unchanged
    return rng.laplace(0.0, 1.0, 3), np.random.default_rng(3).random()

def state(rng):
    return rng.bit_generator.state["state"]["state"]

def keep(rng):
    global _kept
    _kept = rng
    return rng.random()

def reuse():
    return _kept.random()

def scalars(n, rng):
    return [rng.random() for _ in range(n)]

def mixed(rng):
    return [rng.random(), rng.random(3), rng.random(), rng.random((2, 2)), rng.integers(0, 10, 3),
            rng.random(), rng.choice(5, 2, replace=False), rng.laplace(0.0, 1.0), rng.random(2)]

def exp_loop(n, b1, b2, rng):
    out = []
    for _ in range(n):
        out.append(rng.exponential(b1) - rng.exponential(b1) + rng.exponential(b2) - rng.exponential(b2))
        if len(out) % 100 == 0:
            out.append(rng.random())
    return out

def shuffled(xs, rng):
    rng.shuffle(xs)
    return rng.random()

def pair_loop(n, a, b, rng):
    return [rng.laplace(0.0, [a, b]) for _ in range(n)] + [rng.random()]

def clip_in_place(x, lower, upper):
    np.clip(x, lower, upper, out=x)
    return float(x.sum())

def charge_then_refuse(state, epsilon):
    state["spent"].append(epsilon)
    state["n"] = len(state["spent"])
    raise ValueError("query refused")

def nested(d, xs):
    d["inner"]["xs"].append(1)
    d["arr"][0] = 99.0
    xs[:] = [list(xs)]
    return None

def count_nested(pair, extra):
    pair[0]["xs"].append(0)
    pair[1][0].append(0)
    extra["k"][0] += 1
    return len(pair[0]["xs"]), len(pair[1][0]), float(extra["k"][0][0])

def open_ledger(total):
    return {"total": total, "spent": []}

def spend(state, epsilon, rng):
    if sum(state["spent"]) + epsilon > state["total"]:
        raise ValueError("budget spent")
    state["spent"].append(epsilon)
    return rng.laplace(0.0, 1.0 / epsilon), state

def bad_spend(state, epsilon, rng):
    return (rng.laplace(0.0, 1.0 / epsilon),) if len(state["spent"]) == 2 else spend(state, epsilon, rng)

def blob(n):
    return "x" * n

def blobs(n, m):
    return ["x" * m] * n

def wobble(rng):
    return rng.laplace(0.0, 1.0 + int(rng.integers(0, 1000)))

def scale_cycle(n, rng):
    out = []
    for i in range(n):
        out += [rng.laplace(0.0, 1.0 if i % 2 else 2.0), rng.laplace(0 if i % 2 else 0.0, 3.0)]
        if i % 50 == 7:  # off the cycle: a request like the next one expected, but another scale
            out.append(rng.laplace(0.0, 5.0))
    return out
"""


@pytest.fixture(scope="module")
def repeat_box():
    import time

    from autograder.jail import Sandbox, probe

    box = Sandbox(sandboxed=probe() is None, deadline=time.monotonic() + 300, memory_mb=1024, cpu_seconds=200)
    names = ["pick", "grow", "flaky", "cheat", "late", "nap", "kind", "unbound", "state", "keep", "reuse", "scalars",
             "mixed", "exp_loop", "shuffled", "pair_loop", "clip_in_place", "charge_then_refuse", "nested",
             "count_nested", "open_ledger", "spend", "bad_spend", "blob", "wobble", "blobs", "scale_cycle", "normalised"]
    box.send({"cells": [REPEAT_CODE], "files": {}, "graded": names,
              "limits": box.limits, "cell_timeout": 30.0, "call_timeout": 30.0})
    box.recv(30, "cell")
    ready, _ = box.recv(30, "ready")
    assert ready["names"] == {n: "callable" for n in names}
    yield box
    box.close()


def _local(name):
    from helpers.checks import load_student_code

    return load_student_code(REPEAT_CODE)[name]


def test_repeat_gives_the_loops_samples_states_and_records(repeat_box):
    """Batched through the sandbox == looped through the sandbox == looped in-process, draw for draw."""
    from autograder.proxy import Proxy
    from helpers.checks import RecordingGenerator, call_repeatedly

    proxy, local = Proxy(repeat_box, "pick", 30.0), _local("pick")
    scores = [0.0, 4.0, 8.0, 12.0, 16.0, 20.0, 6.0]
    rngs = [RecordingGenerator(11) for _ in range(3)]
    batched = call_repeatedly(proxy, 1000, scores, 0.7, 3.0, rngs[0])
    looped = [proxy(scores, 0.7, 3.0, rngs[1]) for _ in range(1000)]
    in_process = call_repeatedly(local, 1000, scores, 0.7, 3.0, rngs[2])
    assert batched == looped == in_process and len(set(batched)) == 7
    assert all(type(v) is int for v in batched)
    states = [object.__getattribute__(r, "bit_generator").state for r in rngs]
    assert states[0] == states[1] == states[2]
    assert [(r.calls, r.draws, r.forbidden) for r in rngs] == [(1000, 1000, [])] * 3
    plain = np.random.default_rng(3)
    assert proxy.call_repeatedly(50, scores, 0.7, 3.0, rng=plain) == \
        [local(scores, 0.7, 3.0, rng=r) for r in [np.random.default_rng(3)] for _ in range(50)]
    assert proxy.call_repeatedly(0, scores, 0.7, 3.0, plain) == []
    assert proxy.calls == 1000 + 1000 + 50


def _ledger_steps(fns, rng, n=12, epsilon=0.25):
    from helpers.checks.core import Output

    open_ledger, spend = fns
    steps = []
    for i in range(n):
        if i % 4 == 0:
            steps.append((open_ledger, (1.0,)))
            ledger = Output(len(steps) - 1)
        steps.append((spend, (ledger, epsilon, rng)))
        ledger = Output(len(steps) - 1, 1)
    return steps


def test_call_sequence_is_the_loop_in_one_round_trip(repeat_box):
    """A sequence whose ledger passes from call to call: the same results, exceptions and generator
    state through the sandbox (one request) as the loop in one process; a step that cannot be resolved
    or a result list past the request's size is finished by the judge, with the same outcome."""
    from autograder.proxy import Proxy
    from helpers.checks.core import Output, call_sequence

    # the runner module runs on import (it is the sandbox's program): read its constant
    calls_bytes = eval(re.search(r"^CALLS_BYTES = (.+)$", (REPO / "autograder/sandbox/runner.py").read_text(),
                                 re.M).group(1))

    proxies = [Proxy(repeat_box, name, 30.0) for name in ("open_ledger", "spend")]
    local = [_local("open_ledger"), _local("spend")]
    rngs = [np.random.default_rng(7), np.random.default_rng(7)]
    with _sent_headers(repeat_box) as sent:
        got = call_sequence(_ledger_steps(proxies, rngs[0]))
    expected = call_sequence(_ledger_steps(local, rngs[1]))
    assert got[1] is None and expected[1] is None and got[0] == expected[0] and len(got[0]) == 15
    assert [h for h in sent if "calls" in h].__len__() == 1 and len([h for h in sent if "call" in h]) == 0
    assert rngs[0].bit_generator.state == rngs[1].bit_generator.state
    # the fifth spend of 0.25 from a ledger of 1 is refused: results end there, the ValueError is returned
    rngs = [np.random.default_rng(8), np.random.default_rng(8)]
    got = call_sequence(_ledger_steps(proxies, rngs[0], epsilon=0.3))
    expected = call_sequence(_ledger_steps(local, rngs[1], epsilon=0.3))
    assert len(got[0]) == len(expected[0]) == 4 and got[0] == expected[0]
    assert type(got[1]) is type(expected[1]) is ValueError and str(got[1]) == str(expected[1]) == "budget spent"
    assert rngs[0].bit_generator.state == rngs[1].bit_generator.state
    # a result without the item the next step takes: the sandbox stops, the judge meets the same IndexError
    bad = [Proxy(repeat_box, "open_ledger", 30.0), Proxy(repeat_box, "bad_spend", 30.0)]
    rngs = [np.random.default_rng(9), np.random.default_rng(9)]
    got = call_sequence(_ledger_steps(bad, rngs[0]))
    expected = call_sequence(_ledger_steps([_local("open_ledger"), _local("bad_spend")], rngs[1]))
    assert got[0] == expected[0] and len(got[0]) == 4
    assert type(got[1]) is type(expected[1]) is IndexError
    assert rngs[0].bit_generator.state == rngs[1].bit_generator.state
    # results past CALLS_BYTES come back in parts, all of them, in order
    big = Proxy(repeat_box, "blob", 30.0)
    count = calls_bytes // 500_000 + 3
    with _sent_headers(repeat_box) as sent:
        results, error = call_sequence([(big, (500_000 + i,)) for i in range(count)])
    assert error is None and [len(r) for r in results] == [500_000 + i for i in range(count)]
    assert len([h for h in sent if "calls" in h]) == 2
    with pytest.raises(ValueError, match="same submission"):
        call_sequence([(big, (1,)), (Proxy(object(), "blob", 30.0), (1,))])
    assert repr(Output(3, 1)) == "Output(3, 1)" and repeat_box.alive


def test_call_sequence_sends_back_only_the_results_kept(repeat_box):
    """``keep``: the results not kept stay in the sandbox (``None`` on both sides, the last one made
    always back), the outcome and the generator as the loop leaves them; the judge refuses a result
    it did not ask for, and a step cannot take a result that is not kept."""
    from autograder.proxy import Proxy
    from autograder.sandbox import wire
    from helpers.checks.core import Output, call_sequence

    proxies = [Proxy(repeat_box, name, 30.0) for name in ("open_ledger", "spend")]
    local = [_local("open_ledger"), _local("spend")]
    for epsilon, made in ((0.25, 15), (0.3, 4)):  # all answered / the fifth spend refused
        rngs = [np.random.default_rng(7), np.random.default_rng(7)]
        got = call_sequence(_ledger_steps(proxies, rngs[0], epsilon=epsilon), keep={0, 2})
        expected = call_sequence(_ledger_steps(local, rngs[1], epsilon=epsilon), keep={0, 2})
        assert got[0] == expected[0] and len(got[0]) == made
        assert [i for i, r in enumerate(got[0]) if r is not None] == [0, 2, made - 1]
        assert type(got[1]) is type(expected[1]) and str(got[1]) == str(expected[1])
        assert rngs[0].bit_generator.state == rngs[1].bit_generator.state
    # 4 MiB of results, one kept: nothing past CALLS_BYTES crossed, so one request (without keep: two)
    big = Proxy(repeat_box, "blob", 30.0)
    with _sent_headers(repeat_box) as sent:
        results, error = call_sequence([(big, (500_000 + i,)) for i in range(8)], keep={1})
    assert error is None and [None if r is None else len(r) for r in results] == [None, 500_001] + [None] * 5 + [500_007]
    assert len([h for h in sent if "calls" in h]) == 1
    with pytest.raises(ValueError, match="not kept"):
        call_sequence([(local[0], (1.0,)), (local[1], (Output(0), 0.1, None)), (local[1], (Output(0), 0.1, None))],
                      keep={1})
    with pytest.raises(wire.WireError, match="not asked for"):
        Proxy._apply_calls({"done": [1, 2, 3], "rngs": []}, b"", [], 3, [0])
    assert Proxy._apply_calls({"done": [1, None, 3], "rngs": []}, b"", [], 3, [0])[0] == [1, None, 3]
    assert repeat_box.alive


def test_served_generator_is_no_generator_and_draws_as_one_process(repeat_box, capsys):
    """The sandbox's rng answers isinstance, holds no state, gives the draws one process would, and
    Python loops of scalar draws cost a few exchanges (numbers sent ahead, the generator set back)."""
    import time

    from autograder.proxy import Proxy
    from helpers.checks import RecordingGenerator

    from helpers.checks import ForbiddenRngMethod

    assert Proxy(repeat_box, "kind", 30.0)(RecordingGenerator(1)) == [True, False]
    recording = RecordingGenerator(1)
    with pytest.raises(ForbiddenRngMethod):  # the unbound sampler is a request like rng.laplace: refused
        Proxy(repeat_box, "unbound", 30.0)(recording)
    assert recording.forbidden == ["laplace"] and recording.calls == 0
    assert np.array_equal(Proxy(repeat_box, "unbound", 30.0)(np.random.default_rng(1)),
                          np.random.default_rng(1).laplace(0.0, 1.0, 3))  # served where the rules allow it
    # rng = np.random.default_rng(rng) keeps the served stand-in (it raised TypeError: a correct laplace_noise
    # scored 0/10, a correct private_mean 4/10); any other argument is still numpy's
    drawn, other = Proxy(repeat_box, "normalised", 30.0)(np.random.default_rng(1))
    assert np.array_equal(drawn, np.random.default_rng(1).laplace(0.0, 1.0, 3))
    assert other == np.random.default_rng(3).random()
    for rng in (np.random.default_rng(1), RecordingGenerator(1)):
        with pytest.raises(Exception, match="bit_generator"):
            Proxy(repeat_box, "state", 30.0)(rng)
    Proxy(repeat_box, "keep", 30.0)(np.random.default_rng(1))
    with pytest.raises(Exception, match="earlier call"):
        Proxy(repeat_box, "reuse", 30.0)()

    with _sent_headers(repeat_box) as sent:
        recording, local = RecordingGenerator(5), np.random.default_rng(5)
        start = time.perf_counter()
        got = Proxy(repeat_box, "scalars", 30.0)(10_000, recording)
        seconds = time.perf_counter() - start
    assert got == [local.random() for _ in range(10_000)]
    assert object.__getattribute__(recording, "bit_generator").state == local.bit_generator.state
    assert (recording.calls, recording.draws, recording.forbidden) == (10_000, 10_000, [])
    assert len(sent) <= 12, f"{len(sent)} messages for 10,000 scalar draws"
    with capsys.disabled():
        print(f"\n[cost] 10,000 scalar rng.random() in a Python loop: {seconds * 1e3:.0f} ms, {len(sent) - 1} exchanges")

    rng, local = np.random.default_rng(9), np.random.default_rng(9)
    got = Proxy(repeat_box, "mixed", 30.0)(rng)
    want = [local.random(), local.random(3), local.random(), local.random((2, 2)), local.integers(0, 10, 3),
            local.random(), local.choice(5, 2, replace=False), local.laplace(0.0, 1.0), local.random(2)]
    assert all(np.array_equal(a, b) for a, b in zip(got, want)) and len(got) == len(want)
    assert rng.bit_generator.state == local.bit_generator.state
    with _sent_headers(repeat_box) as sent:
        rng, local = np.random.default_rng(8), np.random.default_rng(8)
        got = Proxy(repeat_box, "exp_loop", 30.0)(2000, 1.5, 0.25, rng)
    assert got == _local("exp_loop")(2000, 1.5, 0.25, local) and rng.bit_generator.state == local.bit_generator.state
    assert len(sent) <= 150, f"{len(sent)} messages for 8,000 scalar rng.exponential() calls in a cycle"
    # A plan's entries differ only in their scale, or in 0 against 0.0, and a request off the cycle differs from the
    # entry expected next only in its scale: each is served its own draw.
    rng, local = np.random.default_rng(5), np.random.default_rng(5)
    assert Proxy(repeat_box, "scale_cycle", 30.0)(300, rng) == _local("scale_cycle")(300, local)
    assert rng.bit_generator.state == local.bit_generator.state
    # Small array results are planned too (a private_mean drawing both noises as rng.laplace(0, [a, b])).
    with _sent_headers(repeat_box) as sent:
        rng, local = np.random.default_rng(6), np.random.default_rng(6)
        got = Proxy(repeat_box, "pair_loop", 30.0)(3000, 2.0, 0.5, rng)
    want = _local("pair_loop")(3000, 2.0, 0.5, local)
    assert len(got) == len(want) and all(np.array_equal(g, w) and type(g) is type(w) for g, w in zip(got, want))
    assert rng.bit_generator.state == local.bit_generator.state
    assert len(sent) <= 40, f"{len(sent)} messages for 3,000 rng.laplace(0, [a, b]) calls"
    xs, ys = [1, 2, 3, 4, 5], [1, 2, 3, 4, 5]
    rng, local = np.random.default_rng(4), np.random.default_rng(4)
    assert Proxy(repeat_box, "shuffled", 30.0)(xs, rng) == (local.shuffle(ys), local.random())[1]
    assert xs == ys and rng.bit_generator.state == local.bit_generator.state
    recording = RecordingGenerator(3)
    with pytest.raises(Exception):
        Proxy(repeat_box, "mixed", 30.0)(recording)
    assert recording.forbidden == ["integers"] and recording.calls == 4


def test_mutated_arguments_come_back_as_in_one_process(repeat_box):
    """Lists, dicts and arrays a call modifies are modified for the caller, also when the call raises;
    call_repeatedly keeps giving every call fresh copies."""
    from autograder.proxy import Proxy
    from helpers.checks import call_repeatedly

    clip = Proxy(repeat_box, "clip_in_place", 30.0)
    x = np.array([-3.0, 0.5, 7.0])
    assert clip(x, 0.0, 1.0) == 1.5 and x.tolist() == [0.0, 0.5, 1.0]
    y = np.array([-3.0, 0.5, 7.0])
    assert call_repeatedly(clip, 3, y, 0.0, 1.0) == [1.5] * 3 and y.tolist() == [-3.0, 0.5, 7.0]

    ledger, local_ledger = {"total": 1.0, "spent": [0.5]}, {"total": 1.0, "spent": [0.5]}
    with pytest.raises(ValueError, match="refused"):
        Proxy(repeat_box, "charge_then_refuse", 30.0)(ledger, 0.7)
    with pytest.raises(ValueError):
        _local("charge_then_refuse")(local_ledger, 0.7)
    assert ledger == local_ledger == {"total": 1.0, "spent": [0.5, 0.7], "n": 2}

    d = {"inner": {"xs": []}, "arr": np.zeros(2)}
    inner, arr, xs = d["inner"], d["arr"], [1, 2]
    assert Proxy(repeat_box, "nested", 30.0)(d, xs) is None
    assert inner["xs"] == [1] and d["inner"] is inner and arr.tolist() == [99.0, 0.0] and d["arr"] is arr
    assert xs == [[1, 2]]
    # A repeat decodes its arguments once and copies them for each call: nothing nested leaks either.
    d = {"inner": {"xs": []}, "arr": np.zeros(2)}
    assert call_repeatedly(Proxy(repeat_box, "nested", 30.0), 3, d, [1, 2]) == [None] * 3
    assert d["inner"]["xs"] == [] and d["arr"].tolist() == [0.0, 0.0]
    count = Proxy(repeat_box, "count_nested", 30.0)
    assert call_repeatedly(count, 4, ({"xs": [1]}, [[2]]), {"k": [np.zeros(1)]}) == [(2, 2, 1.0)] * 4
    assert repeat_box.alive


@pytest.mark.parametrize("draw", [
    {"draw": 0, "method": "random", "args": [5], "kwargs": {"$d": {}}, "used": 3, "calls": 0},  # used, never sent
    {"draw": 1, "method": "random", "args": [5], "kwargs": {"$d": {}}, "used": 0, "calls": 0},  # no such generator
    {"draw": 0, "method": "random", "args": [5], "kwargs": {"$d": {}}, "used": 0, "calls": 0, "state": 1},
])
def test_malformed_draw_requests_kill_the_sandbox(draw):
    from autograder.jail import SandboxError
    from autograder.proxy import Proxy

    box = _FakeSandbox(draw)
    with pytest.raises(SandboxError):
        Proxy(box, "f", 1.0)(np.random.default_rng(1))
    assert box.problem.startswith("malformed reply")


def test_forged_claims_of_used_draws_kill_the_sandbox():
    """A stand-in may say how many of the numbers sent ahead it used, never more, nor more calls than that."""
    from autograder.jail import SandboxError
    from autograder.proxy import Proxy
    from helpers.checks import RecordingGenerator

    replies = [({"draw": 0, "method": "random", "args": [2], "kwargs": {"$d": {}}, "used": 0, "calls": 0,
                 "ahead": 8}, b""),
               ({"ok": 1, "rngs": [{"used": 8, "calls": 9}]}, b"")]

    class Box(_FakeSandbox):
        def recv(self, seconds, what, step=None):
            return replies.pop(0)

    box, rng = Box(None), RecordingGenerator(1)
    with pytest.raises(SandboxError):
        Proxy(box, "f", 1.0)(rng)
    assert box.problem.startswith("malformed reply") and rng.draws == 0


def test_checks_sample_the_same_batched_and_looped(repeat_box, capsys):
    """The exponential checks print the same statistics through the proxy (one message) and in-process."""
    from autograder.proxy import Proxy
    from helpers import checks

    proxy = Proxy(repeat_box, "pick", 30.0)
    with _sent_headers(repeat_box) as headers:
        checks.check_exponential_mechanism_distribution(proxy, seed=5, n=20_000)
        checks.check_exponential_mechanism_basics(proxy)
    through_proxy = capsys.readouterr().out
    # 20 batches of 1,000 (a generator each), then one batch's draws judged (replay, a changed stretch, two
    # nudges: issue 35; a 2^-10 nudge: the coarse-digest check, helpers/checks/digest.py; one run on independent
    # draws, helpers/checks/pairs.py; four single uniforms replaced, helpers/checks/single_uniform.py); the
    # basics: 20, one call, 20 at ε = 0 and their replay, 20 at scores 1e6; and four batches with a share of
    # their uniforms replaced (how many uniforms each call depends on: helpers/checks/dependency.py, session 14).
    assert [h.get("repeat") for h in headers if "call" in h] == [1000] * 34 + [20, None, 20, 20, 20]
    checks.check_exponential_mechanism_distribution(_local("pick"), seed=5, n=20_000)
    checks.check_exponential_mechanism_basics(_local("pick"))
    assert capsys.readouterr().out == through_proxy and "stat = " in through_proxy


def test_repeat_copies_arguments_per_call_and_stops_at_the_first_exception(repeat_box):
    from autograder.proxy import Proxy
    from helpers.checks import ForbiddenRngMethod, RecordingGenerator, call_repeatedly

    xs, d = [1, 2, 3], {}
    assert Proxy(repeat_box, "grow", 30.0).call_repeatedly(4, xs, d) == [[4, 1]] * 4
    assert xs == [1, 2, 3] and d == {}  # copies, as for single calls
    assert call_repeatedly(_local("grow"), 4, xs, d) == [[4, 1]] * 4 and xs == [1, 2, 3]  # in-process too

    flaky, local = Proxy(repeat_box, "flaky", 30.0), _local("flaky")
    rng, ref = np.random.default_rng(2), np.random.default_rng(2)
    with pytest.raises(ValueError) as batched:
        flaky.call_repeatedly(10_000, rng)
    with pytest.raises(ValueError) as looped:
        call_repeatedly(local, 10_000, ref)
    assert str(batched.value) == str(looped.value) and str(batched.value).startswith("unlucky")
    assert rng.bit_generator.state == ref.bit_generator.state  # as the failing call left it
    with pytest.raises(TypeError, match="cannot be graded"):
        Proxy(repeat_box, "late", 30.0).call_repeatedly(10_000, np.random.default_rng(2))
    recording = RecordingGenerator(1)
    with pytest.raises(ForbiddenRngMethod):
        Proxy(repeat_box, "cheat", 30.0).call_repeatedly(5, recording)
    assert recording.forbidden == ["laplace"]
    assert repeat_box.alive


def test_repeat_time_limit_scales_with_n_within_the_cell(repeat_box):
    from autograder.proxy import MAX_REPEAT, CellBudget, Proxy

    nap = Proxy(repeat_box, "nap", 0.5)
    assert nap.call_repeatedly(6, 0.2) == [0.2] * 6  # 1.2 s of CPU: over one call's limit, within 6
    budget = CellBudget()
    budget.restart(0.5)
    cell = Proxy(repeat_box, "nap", 0.5, cell_budget=budget)
    with pytest.raises(TimeoutError, match="6 calls of nap.*CPU time.*vectorise"):
        cell.call_repeatedly(6, 0.2)
    assert repeat_box.alive  # the runner interrupted the batch itself
    for bad in (-1, MAX_REPEAT + 1, 2.0, True):
        with pytest.raises(ValueError, match="n must be"):
            nap.call_repeatedly(bad, 0.0)


def test_private_mean_checks_sample_the_same_batched_and_looped(capsys):
    """checks_private_mean's accuracy and audit loops: one message per batch, same statistics as in-process."""
    import time

    from autograder.jail import Sandbox, probe
    from autograder.proxy import Proxy
    from helpers.checks import private_mean as cpm
    from helpers.checks import load_student_code

    nb = nbformat.read(REPO / "source" / "private_mean" / "private_mean.ipynb", as_version=4)
    code = "import math\nimport numpy as np\n" + "\n\n".join(
        c.source for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution"))
    box = Sandbox(sandboxed=probe() is None, deadline=time.monotonic() + 300, memory_mb=1024, cpu_seconds=200)
    try:
        box.send({"cells": [code], "files": {}, "graded": ["private_mean"], "limits": box.limits,
                  "cell_timeout": 30.0, "call_timeout": 30.0})
        box.recv(30, "cell")
        assert box.recv(30, "ready")[0]["names"] == {"private_mean": "callable"}
        with _sent_headers(box) as headers:
            proxy = Proxy(box, "private_mean", 30.0)
            cpm.check_private_mean_accuracy(proxy, seed=4)
            cpm.check_private_mean_privacy(proxy, seed=4)
    finally:
        box.close()
    through_proxy = capsys.readouterr().out
    sent = [h.get("repeat") for h in headers if "call" in h]
    # batched (never one call per message), in batches of the same size as every other check
    assert all(isinstance(n, int) and 0 < n <= cpm.BATCH for n in sent) and sum(sent) == 1000 + 8000, sent
    local = load_student_code(code)["private_mean"]
    cpm.check_private_mean_accuracy(local, seed=4)
    cpm.check_private_mean_privacy(local, seed=4)
    assert capsys.readouterr().out == through_proxy and "ε >= " in through_proxy


class _FakeStep:
    def used(self):
        return None


class _FakeSandbox:
    """A channel that answers with a canned reply (what a hostile runner could send)."""

    def __init__(self, reply, data=b""):
        self.reply, self.data, self.problem = reply, data, None

    def send(self, header, payload=b"", step=None, **kwargs):
        self.header = header

    def step(self, seconds, cpu0=None):
        return _FakeStep()

    def recv(self, seconds, what, step=None):
        return self.reply, self.data

    def kill(self, reason=None):
        self.problem = self.problem or reason


@pytest.mark.parametrize("reply", [
    {"ok": 1, "rngs": []},                                   # not a list
    {"ok": [1, 2], "rngs": []},                              # wrong length
    {"ok": [1, 2, {"$g": 0}], "rngs": []},                   # a generator as a result
    {"ok": [1, 2, {"$a": [0, 8], "dtype": "float64", "shape": [1]}], "rngs": []},  # array past the payload
    {"ok": [1, 2, 3], "rngs": [{"state": "x"}]},             # a generator state nobody sent
    {"ok": [1, 2, 3], "error": {"type": "ValueError", "message": "x"}, "rngs": []},
    {"error": {"type": "ValueError"}, "rngs": []},
])
def test_malformed_repeat_replies_kill_the_sandbox(reply):
    from autograder.jail import SandboxError
    from autograder.proxy import Proxy

    box = _FakeSandbox(reply)
    with pytest.raises(SandboxError):
        Proxy(box, "f", 1.0).call_repeatedly(3, 1.0)
    assert box.header["repeat"] == 3 and box.problem.startswith("malformed reply")
    good = _FakeSandbox({"ok": [1, {"$f": "nan"}, {"$s": "int64", "v": 2}], "rngs": []})
    out = Proxy(good, "f", 1.0).call_repeatedly(3, 1.0)
    assert out[0] == 1 and np.isnan(out[1]) and type(out[2]) is np.int64 and good.problem is None


def test_per_call_and_per_batch_cost(repeat_box, capsys):
    """Not a speed assertion beyond "batching is faster": prints the costs for the notes."""
    import time

    from autograder.proxy import Proxy
    from helpers.checks import RecordingGenerator

    proxy, n, scores = Proxy(repeat_box, "pick", 30.0), 1000, [1.0, 2.0, 3.0, 2.5]
    rng = RecordingGenerator(0)
    start = time.perf_counter()
    for _ in range(n):
        proxy(scores, 0.7, 3.0, rng)
    looped = time.perf_counter() - start
    start = time.perf_counter()
    proxy.call_repeatedly(n, scores, 0.7, 3.0, rng)
    batched = time.perf_counter() - start
    with capsys.disabled():
        print(f"\n[cost] {n} calls: looped {looped * 1e6 / n:.0f} us/call, batched {batched * 1e6 / n:.0f} us/call")
    assert batched < looped


# --- the worker protocol ----------------------------------------------------------------

def test_worker_results_are_validated_field_by_field():
    from autograder.grade import validate

    expected = [{"notebook": "hw.ipynb", "grade_id": "t1", "points": 2.0},
                {"notebook": "hw.ipynb", "grade_id": "t2", "points": 1.0}]
    audit = {"claimed": 1.0, "lower_bound": 1.7, "hidden": True}
    good = {"cells": [dict(expected[0], score=2.0, message=None),
                      dict(expected[1], score=0, message="m", diagnosis="laplace.scale_inverted", audits=[audit])],
            "errors": [], "flags": ["f"], "repairs": [], "notes": [], "feedback": {"hw.ipynb": "<p>"},
            "autograded": {}, "similarity": [], "timings": {"a": 1}, "seconds": 1.5}
    clean = validate(json.loads(json.dumps(good)), expected, ["hw.ipynb"])
    assert [c["score"] for c in clean["cells"]] == [2.0, 0.0]
    assert [(c["diagnosis"], c["audits"]) for c in clean["cells"]] == [(None, []), ("laplace.scale_inverted", [audit])]
    bad_cases = [None, [], {**good, "cells": good["cells"][:1]},
                 {**good, "cells": [dict(good["cells"][0], score=1.5), good["cells"][1]]},
                 {**good, "cells": [dict(good["cells"][0], score=100), good["cells"][1]]},
                 {**good, "cells": [dict(good["cells"][0], points=100, score=100), good["cells"][1]]},
                 {**good, "cells": [dict(good["cells"][0], grade_id="x"), good["cells"][1]]},
                 {**good, "cells": [dict(good["cells"][0], score="2"), good["cells"][1]]},
                 {**good, "feedback": {"../../grades.csv": "x"}}, {**good, "errors": [1]},
                 {**good, "errors": "x"},
                 {**good, "cells": [dict(good["cells"][0], diagnosis="<b>x</b>"), good["cells"][1]]},
                 {**good, "cells": [dict(good["cells"][0], diagnosis=3), good["cells"][1]]},
                 {**good, "cells": [dict(good["cells"][0], audits=[dict(audit, lower_bound="2")]), good["cells"][1]]},
                 {**good, "cells": [dict(good["cells"][0], audits=[dict(audit, claimed=float("nan"))]), good["cells"][1]]},
                 {**good, "cells": [dict(good["cells"][0], audits=[audit] * 21), good["cells"][1]]}]
    for bad in bad_cases:
        with pytest.raises((ValueError, TypeError)):
            validate(bad, expected, ["hw.ipynb"])

# --- the release, generated from source ---------------------------------------------------

def test_the_gradebook_schema_head_read_in_process_is_the_alembic_executables(monkeypatch):
    """prepare_spec's gradebook gets the schema version nbgrader's own subprocess gives it (else a
    later `nbgrader db upgrade` of such a gradebook would start from the wrong head), without it."""
    import os
    import sys
    import types

    import nbgrader.api

    from autograder import grade

    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    expected = nbgrader.api.get_alembic_version()       # the alembic executable's answer
    assert re.fullmatch(r"[0-9a-f]{12}", expected), expected
    calls = []
    monkeypatch.setattr(nbgrader.api, "get_alembic_version", nbgrader.api.get_alembic_version)  # undone after
    monkeypatch.setattr(nbgrader.api, "sp", types.SimpleNamespace(check_output=lambda *a, **k: calls.append(a)))
    grade._alembic_head_in_process()
    assert nbgrader.api.get_alembic_version() == expected and calls == []
    # another nbgrader layout (red team s9): nbgrader's own subprocess answers, as before
    import alembic.script

    def no_scripts(*args, **kwargs):
        raise RuntimeError("no migration scripts here")

    monkeypatch.setattr(alembic.script, "ScriptDirectory", no_scripts)
    monkeypatch.setattr(nbgrader.api, "sp", types.SimpleNamespace(
        check_output=lambda *a, **k: calls.append(a) or b"0123456789ab (head)\n"))
    assert nbgrader.api.get_alembic_version() == "0123456789ab" and len(calls) == 1


# --- feedback, shards, reports ---------------------------------------------------------

def test_strip_hidden_and_leak_check(tmp_path):
    source = "check(f)\n### BEGIN HIDDEN TESTS\nassert f(123456) == 7\n### END HIDDEN TESTS\nprint(1)"
    stripped, found = feedback.strip_hidden(source)
    assert found and "123456" not in stripped and stripped.endswith("print(1)")
    assert feedback.hidden_lines(source) == ["assert f(123456) == 7"]
    page = tmp_path / "f.html"
    page.write_text('<span class="n">assert</span> <span>f</span>(123456) <span>==</span> 7', encoding="utf-8")
    assert feedback.leaked_lines(page, feedback.hidden_lines(source)) == ["assert f(123456) == 7"]


def test_shards_are_disjoint_balanced_and_complete():
    students = [f"s{i:03d}" for i in range(23)][::-1]
    parts = [shard.select_shard(students, k, 4) for k in range(1, 5)]
    assert sorted(sum(parts, [])) == sorted(students)
    assert max(map(len, parts)) - min(map(len, parts)) <= 1
    assert shard.parse_shard("2/4") == (2, 4)
    for bad in ("0/3", "4/3", "x", "1/0"):
        with pytest.raises(ValueError):
            shard.parse_shard(bad)


def _out(tmp_path, name, students):
    results = [{"student": s, "assignment": "hw", "seed": 1, "score": 2.0, "max_score": 2.0, "status": "ok",
                "cells": [{"notebook": "hw.ipynb", "grade_id": "t", "points": 2.0, "score": 2.0}],
                "flags": [], "errors": [], "repairs": [], "notes": []} for s in students]
    out = tmp_path / name
    out.mkdir()
    report.write_grades(out / "grades.csv", results)
    report.write_report(out / "report.json", [{"seed": 1, "shard": name}], results)
    for s in students:
        (out / "feedback" / s / "hw").mkdir(parents=True)
        (out / "feedback" / s / "hw" / "hw.html").write_text("ok", encoding="utf-8")
    return out


def test_merge_joins_rows_reports_and_feedback(tmp_path):
    a = _out(tmp_path, "a", ["ann", "cid"])
    b = _out(tmp_path, "b", ["bob"])
    merged = report.merge([a, b], tmp_path / "m")
    rows = report.read_grades(tmp_path / "m" / "grades.csv")
    assert [r["student"] for r in rows] == ["ann", "bob", "cid"]
    assert rows[0] == {"student": "ann", "assignment": "hw", "score": "2", "max_score": "2",
                       "status": "ok"}
    assert len(merged["runs"]) == 2
    assert sorted(p.parts[-3] for p in (tmp_path / "m" / "feedback").rglob("*.html")) == ["ann", "bob", "cid"]
    with pytest.raises(ValueError, match="graded twice"):
        report.merge([a, a], tmp_path / "m2")


# --- CI template and student bundle ------------------------------------------------------

def test_ci_workflow_is_valid_and_consistent():
    yaml = pytest.importorskip("yaml")
    text = (REPO / "autograder" / "ci" / "grade.yml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    on = data.get("on", data.get(True))
    assert "workflow_dispatch" in on
    jobs = data["jobs"]
    shards = jobs["grade"]["strategy"]["matrix"]["shard"]
    assert shards == list(range(1, len(shards) + 1)) and data["env"]["SHARDS"] == len(shards)
    uses = [s.get("uses", "") for job in jobs.values() for s in job["steps"]]
    assert any(u.startswith("actions/upload-artifact@") for u in uses)
    assert any(u.startswith("actions/download-artifact@") for u in uses)
    assert jobs["merge"]["needs"] == "grade"
    grade_cmd = " ".join(s.get("run", "") for s in jobs["grade"]["steps"] if "-m autograder" in s.get("run", ""))
    install = " ".join(s.get("run", "") for s in jobs["grade"]["steps"] if "make install" in s.get("run", ""))
    assert "apt-get install" in install and "bubblewrap" in install
    merge_cmd = " ".join(s.get("run", "") for s in jobs["merge"]["steps"])
    # The commands parse with the real CLI (placeholders filled in).
    argv = grade_cmd[grade_cmd.index("-m autograder") + len("-m autograder"):]
    argv = re.sub(r'"?\$(\w+)/\$(\w+)"?', "1/4", argv)
    argv = re.sub(r'"?out/shard-\$SHARD"?', "out/shard-1", argv)
    argv = re.sub(r'"?\$(\w+)"?', "7", argv).split()
    args = build_parser().parse_args(argv)
    assert args.shard == "1/4" and args.jobs == 2
    merge_argv = merge_cmd[merge_cmd.index("-m autograder") + len("-m autograder"):].split()
    assert build_parser().parse_args(merge_argv).command == "merge"


def test_student_bundle_has_no_solutions_or_hidden_tests(tmp_path):
    out = bundle.build_bundle(tmp_path / "bundle", course=REPO)
    names = {p.name for p in out.iterdir()}
    assert names >= {"course", "release", "helpers", "requirements.txt", "pyproject.toml",
                     "Makefile", "README.md"}
    assert not {"source", "autograder", "tests"} & names
    assert (out / "helpers" / "checks" / "laplace.py").is_file()
    # the student's one command (python3 -m course lab), its packages, JupyterLab in Chinese, Submit saves first
    assert (out / "course" / "__main__.py").is_file() and (out / "requirements-student.txt").is_file()
    assert (out / ".lab-settings" / "overrides.json").is_file()
    assert (out / "course" / "labextensions" / "dp-course-submit" / "static" / "remoteEntry.js").is_file()
    assert 'include = ["helpers", "helpers.*", "course"]' in (out / "pyproject.toml").read_text(encoding="utf-8")
    assert (out / "course" / "student_config" / "jupyter_server_config.json").is_file()
    assert bundle.find_secrets(out, REPO / "source") == []
    secrets = bundle.secrets_of(REPO / "source")
    assert secrets["solutions"] and secrets["hidden"]
    # The scan does find a leak when there is one.
    shutil.copy(next((REPO / "source").glob("*/*.ipynb")), out / "course" / "leak.ipynb")
    assert any("solution block" in p for p in bundle.find_secrets(out, REPO / "source"))
    # ... and the question bank's answers (the guide's, for instructors only)
    qid, sentence = bundle.answers_of(REPO / "docs" / "questions.toml")[0]
    (out / "course" / "notes.md").write_text(f"我的笔记：{sentence}", encoding="utf-8")
    assert f"course/notes.md: answer of {qid} in the question bank" in bundle.find_secrets(out, REPO / "source")
    zipped = bundle.build_bundle(tmp_path / "student.zip", course=REPO)
    assert zipped.suffix == ".zip" and zipped.stat().st_size > 0


# --- the issue-3 corpus: honest code of every style is never flagged ---------------------

def _corpus():
    if not (REPO / "tests" / "corpus" / "manifest.json").is_file():
        pytest.skip("tests/corpus not available")
    from tests.support import corpus

    return corpus


def test_corpus_solutions_pass_static_inspection():
    corpus = _corpus()
    checked = 0
    for assignment in corpus.load_manifest():  # every assignment with a corpus, new ones included
        nb = nbformat.read(REPO / "source" / assignment / f"{assignment}.ipynb", as_version=4)
        protected = astcheck.imported_names(_instructor_code(nb))
        for entry in corpus.corpus_entries(assignment):
            for name, code in entry["solutions"].items():
                assert astcheck.inspect_code(code, protected) == [], (entry["id"], name)
                checked += 1
    assert checked >= 50


def test_served_generator_caps_the_numbers_of_one_call():
    """Red team (session 6): the judge keeps what a draws check replays, so a call asking
    ``rng.random(1 << 22)`` 32 times held 8.5 GB in the trusted worker. One call's generator
    hands out at most ``MAX_CALL_DRAWS`` numbers in all, then refuses with a clear error."""
    from autograder import served as served_module
    from helpers.checks import RecordingGenerator

    for rng in (np.random.default_rng(1), RecordingGenerator(1, keep=True)):
        served = served_module.Served(rng)
        chunk = served_module.MAX_CALL_DRAWS // 4
        replies = [served.serve("random", (chunk,), {}, None)[0] for _ in range(5)]
        assert all("value" in r for r in replies[:4])
        assert "too many random numbers in one call" in replies[4]["error"]
        assert replies[4]["type"] == "ValueError"


@pytest.mark.parametrize("method", ["laplace", "normal", "exponential", "gumbel", "logistic", "uniform"])
def test_vectorised_plans_draw_what_calls_in_a_row_draw(method):
    """A plan of a cycle of such calls is drawn with one vectorised call: the same values and the same
    generator state as the calls one after another, for scalar, list and sized parameters, also when
    only the first entries are drawn again (the state a partly used plan is set back to)."""
    from autograder.served import VECTOR_METHODS, draw_cycle as _draw_cycle, signature as _signature

    assert method in VECTOR_METHODS
    two = VECTOR_METHODS[method] == 2
    cycle = [(None, method, ((0.5, 2.0) if two else (2.0,)), {}),
             (None, method, ((-1.0, [0.5, 3.0]) if two else ([0.5, 3.0],)), {}),
             (None, method, ((0.0, 1.5) if two else (1.5,)), {"size": 3}),
             (None, method, ((1e-3, 7.0) if two else (7.0,)), {})]
    assert list(_signature(method).parameters)[-1] == "size"
    for count in (0, 1, 6, 203):
        vector, loop = np.random.default_rng(count), np.random.default_rng(count)
        payload = bytearray()
        trees = _draw_cycle(vector, cycle, count, payload)
        looped = [getattr(loop, method)(*args, **kwargs) for _, _, args, kwargs in (cycle * 60)[:count]]
        got = [wire_decode(t, bytes(payload)) for t in trees]
        assert len(got) == count
        for a, b in zip(got, looped):
            assert type(a) is type(b) and np.array_equal(a, b)
        assert vector.bit_generator.state == loop.bit_generator.state
        again = np.random.default_rng(count)
        assert _draw_cycle(again, cycle, count, None) == [] and again.bit_generator.state == loop.bit_generator.state


def wire_decode(tree, payload):
    from autograder.sandbox import wire

    return wire.decode(tree, payload, None)


# --- red team, session 7: payload bytes named again and again ------------------------------------------


_ALIAS = {"$a": [0, 1000], "dtype": "uint8", "shape": [1000]}


@pytest.mark.parametrize("reply, sequence", [
    ({"done": [[_ALIAS] * 2, _ALIAS], "rngs": []}, True),        # results of a {"calls"} request
    ({"ok": [_ALIAS, _ALIAS], "rngs": []}, False),              # one result
    ({"ok": [[_ALIAS], [_ALIAS], [_ALIAS]], "rngs": []}, None),  # a call_repeatedly batch
])
def test_arrays_naming_the_same_payload_bytes_kill_the_sandbox(reply, sequence):
    """A reply whose arrays name the same payload bytes more than once (any runner can write one)
    made the judge copy them as often: 1,000 bytes became 1 MB in the judge, a 64 MB payload could
    become terabytes. Each message's arrays may now hold its payload's bytes once at most."""
    from autograder.jail import SandboxError
    from autograder.proxy import Proxy
    from autograder.sandbox import wire
    from helpers.checks.core import call_sequence

    with pytest.raises(wire.WireError, match="more than once"):
        wire.decode([_ALIAS, _ALIAS], bytes(1000))
    arrays = wire.array_budget(bytes(1000))
    assert wire.decode(_ALIAS, bytes(1000), arrays=arrays).nbytes == 1000
    with pytest.raises(wire.WireError, match="more than once"):
        wire.decode(_ALIAS, bytes(1000), arrays=arrays)  # a second tree of the same message
    assert wire.decode([_ALIAS, {**_ALIAS, "$a": [1000, 1000]}], bytes(2000))[1].nbytes == 1000

    box = _FakeSandbox(reply, bytes(1000))
    proxy = Proxy(box, "f", 1.0)
    if sequence:
        results, error = call_sequence([(proxy, (i,)) for i in range(3)])
        assert results == [] and isinstance(error, SandboxError)
    elif sequence is None:
        with pytest.raises(SandboxError):
            proxy.call_repeatedly(3, 1.0)
    else:
        with pytest.raises(SandboxError):
            proxy(1.0)
    assert box.problem.startswith("malformed reply")


def test_a_runner_aliasing_payload_bytes_in_its_results_is_killed():
    """Through a real sandbox: student code replacing ``wire.send`` to name its 1,000 payload bytes
    in 50 arrays of each of 20 results is killed, not decoded to 1 MB in the judge."""
    import time

    from autograder.jail import Sandbox, SandboxError, probe
    from autograder.proxy import Proxy
    from helpers.checks.core import call_sequence

    code = (
        "import wire\n"
        "def alias(n):\n"
        "    original = wire.send\n"
        "    def send(fd, header, payload=b''):\n"
        "        if header.get('done'):\n"
        "            payload = bytes(1000)\n"
        "            one = {'$a': [0, 1000], 'dtype': 'uint8', 'shape': [1000]}\n"
        "            header['done'] = [[one] * 50] * len(header['done'])\n"
        "        return original(fd, header, payload)\n"
        "    wire.send = send\n"
        "    return n\n")
    box = Sandbox(sandboxed=probe() is None, deadline=time.monotonic() + 120, memory_mb=512, cpu_seconds=60)
    try:
        box.send({"cells": [code], "files": {}, "graded": ["alias"], "limits": box.limits,
                  "cell_timeout": 30.0, "call_timeout": 30.0})
        box.recv(30, "cell")
        box.recv(30, "ready")
        results, error = call_sequence([(Proxy(box, "alias", 30.0), (i,)) for i in range(20)])
        assert results == [] and isinstance(error, SandboxError) and "malformed reply" in str(error)
        assert not box.alive
    finally:
        box.close()


def test_each_call_of_a_batch_counts_its_own_exchanges(repeat_box):
    """A call gets a generator of its own after OWN_AFTER exchanges of its own (a loop whose draws never
    repeat): in a {"calls"} or repeat request the exchanges of the calls before it did count too, so from
    the 129th of these 2-exchange calls on the values and the judge's generator state were no longer the
    loop's (red team, session 7). Each call now counts its own, as one call per request did."""
    from autograder.proxy import Proxy
    from autograder.served import OWN_AFTER
    from helpers.checks import call_repeatedly
    from helpers.checks.core import call_sequence

    proxy, local = Proxy(repeat_box, "wobble", 30.0), _local("wobble")
    count = OWN_AFTER + 44
    rngs = [np.random.default_rng(5), np.random.default_rng(5)]
    got = call_sequence([(proxy, (rngs[0],))] * count)
    want = call_sequence([(local, (rngs[1],))] * count)
    assert got[1] is None and want[1] is None and got[0] == want[0]
    assert rngs[0].bit_generator.state == rngs[1].bit_generator.state
    rngs = [np.random.default_rng(6), np.random.default_rng(6)]
    assert call_repeatedly(proxy, count, rngs[0]) == call_repeatedly(local, count, rngs[1])
    assert rngs[0].bit_generator.state == rngs[1].bit_generator.state
    assert repeat_box.alive


@pytest.mark.parametrize("step", [1, -1, "1", 3])
def test_draw_requests_for_a_call_not_in_the_request_kill_the_sandbox(step):
    from autograder.jail import SandboxError
    from autograder.proxy import Proxy

    draw = {"draw": 0, "method": "random", "args": [None], "kwargs": {"$d": {}}, "used": 0, "calls": 0, "step": step}
    box = _FakeSandbox(draw)
    with pytest.raises(SandboxError):
        Proxy(box, "f", 1.0)(np.random.default_rng(1))  # one call: only step 0
    assert box.problem.startswith("malformed reply")


@pytest.mark.xfail(strict=True, reason="red team s7, not fixed: the reply of a {\"calls\"} request holds up to "
                   "CALLS_BYTES of earlier results besides the last one, so a last result that fits the channel "
                   "alone (a 7 MB JSON header, limit 8 MiB) is refused as 'returned too much data' in a sequence")
def test_a_result_that_fits_alone_fits_in_a_sequence(repeat_box):
    from autograder.proxy import Proxy
    from helpers.checks.core import call_sequence

    blob, blobs = Proxy(repeat_box, "blob", 30.0), Proxy(repeat_box, "blobs", 30.0)
    alone = blobs(7, 1_000_000)  # 7 MB of JSON: within the channel's 8 MiB
    assert len(alone) == 7
    results, error = call_sequence([(blob, (500_000,))] * 4 + [(blobs, (7, 1_000_000))])
    assert repeat_box.alive
    assert error is None and len(results) == 5 and results[4] == alone


def test_an_item_the_sandbox_cannot_resolve_is_passed_as_the_loop_passes_it(repeat_box):
    """``Output(1, -1)`` (the ledger of step 1, taken from the end) is not resolved in the sandbox: it
    stops there and the judge sends the rest with that item resolved; the ledger the next call changes
    is a copy, as in the loop (red team, session 7: held)."""
    from autograder.proxy import Proxy
    from helpers.checks.core import Output, call_sequence

    def steps(fns, rng):
        open_ledger, spend = fns
        return [(open_ledger, (1.0,)), (spend, (Output(0), 0.25, rng)), (spend, (Output(1, -1), 0.25, rng))]

    rngs = [np.random.default_rng(2), np.random.default_rng(2)]
    got = call_sequence(steps([Proxy(repeat_box, n, 30.0) for n in ("open_ledger", "spend")], rngs[0]))
    want = call_sequence(steps([_local("open_ledger"), _local("spend")], rngs[1]))
    assert got[1] is None and want[1] is None and len(got[0]) == 3
    assert got[0][1][1] == want[0][1][1] == {"total": 1.0, "spent": [0.25]}
    assert got[0] == want[0] and rngs[0].bit_generator.state == rngs[1].bit_generator.state


def test_steps_sent_again_after_a_stop_count_once(repeat_box):
    """The runner stops a {"calls"} request past CALLS_BYTES of results and the judge sends the rest
    again: those steps counted towards MAX_CALLS at every sending (results of 1 MB: a stop every 3
    steps, ~1,000 counted per step made, 2,000,000 reached after ~2,000 steps; red team, session 7).
    They count once, as the loop's calls."""
    from autograder.proxy import Proxy
    from helpers.checks.core import call_sequence

    big = Proxy(repeat_box, "blob", 30.0)
    results, error = call_sequence([(big, (1_000_000,))] * 12)
    assert error is None and len(results) == 12 and big.calls == 12


def test_the_judges_work_on_a_result_counts_in_the_cells_budget():
    """Red team s11 A8: a result the sandbox sends for nothing (its runner patched) but the judge must
    decode and check cost the trusted side 90 s at --timeout 20. The judge's own CPU time on a call's
    data is spent from the test cell's budget, as the sandbox's is."""
    from autograder.proxy import CellBudget, Proxy

    class Box(_FakeSandbox):
        def cpu_seconds(self):
            return 0.0  # the sandbox used nothing: all of the cost below is the judge's

    big = {"ok": [[0] * 400_000, {"$d": {"spent": [0.5] * 200_000}}], "rngs": []}
    budget = CellBudget()
    budget.restart(30.0)
    proxy = Proxy(Box(big), "answer", 30.0, cell_budget=budget)
    for _ in range(3):
        proxy({"spent": []}, 0.5)
    assert budget.used > 0.01, budget.used
