"""Unit tests of the autograder's steps (no kernels, no nbgrader runs; a few seconds)."""

from __future__ import annotations

import copy
import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest

from autograder import astcheck, bundle, feedback, recheck, report, sanitize, shard
from autograder.__main__ import build_parser
from autograder.worker import finalize

REPO = Path(__file__).resolve().parents[1]
ASSIGNMENTS = sorted(p.name for p in (REPO / "source").iterdir()
                     if p.is_dir() and list(p.glob("*.ipynb")))


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


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_reference_solutions_are_not_flagged(assignment):
    nb = nbformat.read(REPO / "source" / assignment / f"{assignment}.ipynb", as_version=4)
    protected = astcheck.imported_names(recheck.instructor_code(nb))
    for cell in nb.cells:
        if sanitize.is_solution(cell):
            code = "\n".join(l for l in cell.source.splitlines() if not l.strip().startswith("### "))
            assert astcheck.inspect_code(code, protected) == [], cell.source
            assert "def " in astcheck.definitions_only(code, protected)


def test_definitions_only_drops_top_level_code():
    code = ("import numpy as np\nimport os\nEPS = 0.5\nx = compute()\nprint(1)\n"
            "def g(a, b=np.inf):\n    return a\n@wrap\ndef h():\n    pass\n"
            "def k(a=setattr(np, 'x', 1)):\n    pass\ndef check_x():\n    pass\n"
            "from math import log\nnp.mean = len")
    kept = astcheck.definitions_only(code, PROTECTED)
    assert kept.splitlines() == ["EPS = 0.5", "", "def g(a, b=np.inf):", "    return a",
                                 "from math import log"]


# --- recheck runner ---------------------------------------------------------------

def _blocks(*items):
    return [{"kind": kind, "grade_id": gid, "points": points, "source": src}
            for kind, gid, points, src in items]


@pytest.fixture(scope="module")
def fork_server():
    server = recheck.ForkServer(("numpy", "scipy.stats", "helpers.checks"))
    yield server
    server.close()


@pytest.mark.parametrize("forked", [False, True], ids=["new-interpreter", "fork-server"])
def test_recheck_scores_guards_modules_and_survives_a_kill(forked, request):
    blocks = _blocks(
        ("instructor", "setup", 0, "import numpy as np"),
        ("student", None, 0, "def f(x):\n    return 2 * x\n"
                              "def patch():\n    np.mean = len\n    return 1\n"
                              "def die():\n    import os\n    os._exit(3)"),
        ("test", "ok", 2, "assert f(1) == 2"),
        ("test", "fails", 1, "assert f(1) == 3"),
        ("test", "patches", 3, "assert patch() == 1"),
        ("test", "after_patch", 1, "assert f(2) == 4"),
        ("test", "dies", 1, "die()"),
        ("test", "never", 1, "assert True"),
    )
    server = request.getfixturevalue("fork_server") if forked else None
    out = recheck.run_blocks(blocks, seed=1, timeout=60, memory_mb=2048, server=server)
    assert out["scores"] == {"ok": 2, "fails": 0, "patches": 0, "after_patch": 0, "dies": 0,
                             "never": 0}
    assert "TamperError" in out["errors"]["patches"] and "numpy.mean" in out["errors"]["patches"]
    assert "TamperError" in out["errors"]["after_patch"]
    assert out["status"] == "died" and "not reached" in out["errors"]["never"]


@pytest.mark.parametrize("forked", [False, True], ids=["new-interpreter", "fork-server"])
def test_recheck_time_limit_seed_and_memory_cap(forked, request):
    server = request.getfixturevalue("fork_server") if forked else None
    blocks = _blocks(("test", "seed", 1, "import os\nassert os.environ['DP_COURSE_SEED'] == '77'"),
                     ("test", "big", 1, "x = bytearray(4 * 1024 ** 3)"),
                     ("test", "loop", 1, "import time\nwhile True:\n    time.sleep(0.05)"))
    out = recheck.run_blocks(blocks, seed=77, timeout=3, memory_mb=1024, server=server)
    assert out["scores"] == {"seed": 1, "big": 0, "loop": 0}
    assert "MemoryError" in out["errors"]["big"]
    assert out["status"] == "timeout" and out["seconds"] < 20


def test_recheck_gets_the_assignment_data_files():
    blocks = _blocks(("test", "data", 1, "assert open('data/x.csv').read() == '1,2'"))
    out = recheck.run_blocks(blocks, seed=1, timeout=30, memory_mb=None,
                             files={"data/x.csv": b"1,2", "../escape.txt": b"no"})
    assert out["scores"] == {"data": 1}


def test_watchdog_kills_the_kernel_process_group(tmp_path):
    import subprocess
    import time

    from autograder.worker import Watchdog

    proc = subprocess.Popen(["sleep", "60"], start_new_session=True)
    (tmp_path / "kernel.pid").write_text(str(proc.pid))
    start = time.monotonic()
    with Watchdog(tmp_path / "kernel.pid", 0.3) as dog:
        proc.wait(timeout=30)
    assert dog.fired and proc.returncode == -9 and time.monotonic() - start < 10


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
    results = [finalize({"student": s, "assignment": "hw", "seed": 1, "cells": [
        {"notebook": "hw.ipynb", "grade_id": "t", "points": 2.0, "nbgrader": 2.0,
         "recheck": 2.0, "score": 2.0}], "flags": [], "errors": [], "repairs": [], "notes": []})
        for s in students]
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
    grade_cmd = " ".join(s.get("run", "") for s in jobs["grade"]["steps"])
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
    assert (out / "helpers" / "checks.py").is_file()
    assert 'packages = ["helpers"]' in (out / "pyproject.toml").read_text(encoding="utf-8")
    assert bundle.find_secrets(out, REPO / "source") == []
    secrets = bundle.secrets_of(REPO / "source")
    assert secrets["solutions"] and secrets["hidden"]
    # The scan does find a leak when there is one.
    shutil.copy(next((REPO / "source").glob("*/*.ipynb")), out / "course" / "leak.ipynb")
    assert any("solution block" in p for p in bundle.find_secrets(out, REPO / "source"))
    zipped = bundle.build_bundle(tmp_path / "student.zip", course=REPO)
    assert zipped.suffix == ".zip" and zipped.stat().st_size > 0


# --- the issue-3 corpus: honest code of every style is never flagged ---------------------

def _corpus():
    import importlib.util

    path = REPO / "tests" / "corpus" / "build.py"
    if not (REPO / "tests" / "corpus" / "manifest.json").is_file():
        pytest.skip("tests/corpus not available")
    spec = importlib.util.spec_from_file_location("corpus_build", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_corpus_solutions_pass_static_inspection():
    corpus = _corpus()
    checked = 0
    for assignment in corpus.ASSIGNMENTS:
        nb = nbformat.read(REPO / "source" / assignment / f"{assignment}.ipynb", as_version=4)
        protected = astcheck.imported_names(recheck.instructor_code(nb))
        for entry in corpus.corpus_entries(assignment):
            for name, code in entry["solutions"].items():
                assert astcheck.inspect_code(code, protected) == [], (entry["id"], name)
                assert f"def {name}" in astcheck.definitions_only(code, protected), (entry["id"], name)
                checked += 1
    assert checked >= 50


def test_recheck_grades_the_corpus_like_its_manifest(tmp_path, fork_server):
    """Correct variants get every point in the recheck; wrong ones lose the cells they must."""
    corpus = _corpus()
    for assignment in corpus.ASSIGNMENTS:
        source = nbformat.read(REPO / "source" / assignment / f"{assignment}.ipynb", as_version=4)
        for entry in corpus.corpus_entries(assignment):
            path = corpus.make_submission(assignment, entry["solutions"],
                                          tmp_path / assignment / f"{entry['id']}.ipynb")
            student = nbformat.read(path, as_version=4)
            out = recheck.run_blocks(recheck.build_blocks(student, source), seed=11, timeout=120,
                                     memory_mb=2048, server=fork_server)
            zero = {gid for gid, score in out["scores"].items() if score == 0}
            if entry["kind"] == "correct":
                assert not zero, (entry["id"], out["errors"])
            else:
                assert set(entry["expect_zero"]) <= zero, (entry["id"], zero)


# --- kernels: launcher, zygote, limits ------------------------------------------------------

def test_kernel_zygote_forks_limited_kernels_that_die_with_their_launcher(tmp_path, monkeypatch):
    """Kernels forked by the zygote get the launcher's cwd, env and memory cap; interrupts reach
    them, and killing the launcher (what the watchdog does) kills the kernel."""
    import os
    import signal
    import time

    from nbclient import NotebookClient

    from autograder import worker
    from autograder.limits import MEMORY_ENV, PIDFILE_ENV

    worker.write_kernelspec(tmp_path / "jupyter")
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv(MEMORY_ENV, "1024")
    monkeypatch.setenv("DP_COURSE_SEED", "4242")
    monkeypatch.setenv(PIDFILE_ENV, str(tmp_path / "kernel.pid"))
    zygote = worker.start_zygote(tmp_path)
    monkeypatch.setenv("AUTOGRADER_ZYGOTE", os.environ.pop("AUTOGRADER_ZYGOTE"))
    assert zygote is not None
    try:
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(
            "import os, sys, resource\n"
            "print(os.getppid(), 'scipy.stats' in sys.modules, resource.getrlimit(resource.RLIMIT_AS)[0] >> 20,"
            " os.environ['DP_COURSE_SEED'], os.getcwd(), os.getpid())"),
            nbformat.v4.new_code_cell("import time\ntime.sleep(60)"),
            nbformat.v4.new_code_cell("x = bytearray(2 * 1024 ** 3)")]
        client = NotebookClient(nb, kernel_name=worker.KERNEL_NAME, timeout=3, allow_errors=True,
                                interrupt_on_timeout=True, resources={"metadata": {"path": str(tmp_path)}})
        client.execute()
        ppid, preloaded, cap, seed, cwd, _ = client.nb.cells[0].outputs[0]["text"].split()
        assert int(ppid) == zygote.pid and preloaded == "True"
        assert (int(cap), seed, cwd) == (1024, "4242", str(tmp_path))
        assert [o.get("ename") for o in client.nb.cells[1].outputs] == ["KeyboardInterrupt"]
        assert [o.get("ename") for o in client.nb.cells[2].outputs] == ["MemoryError"]

        # Killing the launcher's process group kills the forked kernel.
        client = NotebookClient(nb, kernel_name=worker.KERNEL_NAME, timeout=30,
                                resources={"metadata": {"path": str(tmp_path)}})
        with client.setup_kernel():
            children = Path(f"/proc/{zygote.pid}/task/{zygote.pid}/children")
            kernels = children.read_text().split()
            assert len(kernels) == 1
            kernel_pid = int(kernels[0])
            os.killpg(int((tmp_path / "kernel.pid").read_text()), signal.SIGKILL)
            for _ in range(100):
                try:
                    os.kill(kernel_pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.1)
            else:
                raise AssertionError("the forked kernel survived its launcher")
    finally:
        zygote.stdin.close()
        zygote.wait(timeout=30)

