"""The two-command setup promised by README.md, and what it must provide."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _requirements(name: str) -> list[str]:
    """The requirement lines of ``name``, its ``-r`` includes followed."""
    out = []
    for line in (ROOT / name).read_text().splitlines():
        line = line.split("#")[0].strip()
        if line.startswith("-r "):
            out += _requirements(line[3:].strip())
        elif line:
            out.append(line)
    return out


def test_requirements_are_pinned():
    requirements = _requirements("requirements.txt")
    unpinned = [line for line in requirements if not re.fullmatch(r"[A-Za-z0-9_.\-\[\]]+==[\w.]+", line)]
    assert requirements and not unpinned, f"unpinned requirements: {unpinned}"
    names = {line.split("==")[0].lower() for line in requirements}
    for needed in ("jupyterlab", "nbgrader", "numpy", "scipy", "matplotlib", "ipywidgets", "pytest"):
        assert needed in names


def test_student_requirements_are_the_lectures_and_the_local_loop():
    """requirements-student.txt (python3 -m course lab): pinned like the rest, everything the
    lectures and nbgrader's local loop import, nothing of the class server or the test suite."""
    student = _requirements("requirements-student.txt")
    assert all(re.fullmatch(r"[A-Za-z0-9_.\-\[\]]+==[\w.]+", line) for line in student), student
    names = {line.split("==")[0].lower() for line in student}
    assert {"jupyterlab", "jupyterlab-language-pack-zh-cn", "nbgrader", "ipympl", "numpy", "scipy",
            "latex2mathml"} <= names
    assert not names & {"jupyterhub", "jupyterhub-idle-culler", "jupyterhub-ltiauthenticator", "playwright",
                        "pytest", "pytest-xdist", "pytest-timeout"}
    assert set(student) <= set(_requirements("requirements.txt"))


def test_readme_gives_the_two_commands_and_ci_runs_the_test_one():
    readme = (ROOT / "README.md").read_text()
    assert "make lab" in readme and "make test" in readme
    ci = (ROOT / ".ci" / "run").read_text()
    commands = [line.strip() for line in ci.splitlines() if line.strip() and not line.startswith("#")]
    assert "make test" in commands, ".ci/run must call exactly the README's test command"


def test_nbgrader_extensions_are_enabled():
    labext = subprocess.run(
        [str(BIN / "jupyter"), "labextension", "list"], capture_output=True, text=True, check=True
    )
    text = labext.stdout + labext.stderr
    line = next((line for line in text.splitlines() if "@jupyter/nbgrader" in line), "")
    assert "enabled" in line and "OK" in line, text
    server = subprocess.run(
        [str(BIN / "jupyter"), "server", "extension", "list"], capture_output=True, text=True, check=True
    )
    assert re.search(r"nbgrader\.server_extensions\.\w+\s+\S*enabled", server.stdout + server.stderr)


@pytest.mark.parametrize("folder", ["course", "source", "release"])
def test_helpers_importable_from_a_kernel_started_in(folder, tmp_path):
    """A kernel started in each notebook folder imports helpers without sys.path hacks."""
    nbformat = pytest.importorskip("nbformat")
    from nbclient import NotebookClient

    code = "import helpers, helpers.mechanisms, json; print(json.dumps(helpers.__file__))"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    NotebookClient(
        nb, kernel_name="python3", timeout=60, resources={"metadata": {"path": str(ROOT / folder)}}
    ).execute()
    printed = json.loads(nb.cells[0].outputs[0]["text"])
    assert Path(printed).resolve() == (ROOT / "helpers" / "__init__.py").resolve()


@pytest.mark.slow
def test_make_lab_serves_the_course(tmp_path):
    """The README's first command starts JupyterLab on the course (as root too, as in CI), and its
    kernels start under a runtime folder too deep for IPC sockets (a deep network home): make lab
    then runs them over TCP (over IPC the kernel failed with "File name too long")."""
    import os
    import time
    import urllib.request

    from tests.support.servers import free_port, stop

    port = free_port()
    token = "make-lab-test"
    runtime = tmp_path / ("deep-network-home-" * 4) / "runtime"
    assert len(str(runtime)) > 60
    args = f"--no-browser --port={port} --ServerApp.port_retries=0 --IdentityProvider.token={token}"
    proc = subprocess.Popen(["make", "--no-print-directory", "lab", f"LAB_ARGS={args}"], cwd=ROOT,
                            env=dict(os.environ, JUPYTER_RUNTIME_DIR=str(runtime)),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        listing = None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                url = f"http://127.0.0.1:{port}/api/contents/course?token={token}"
                with urllib.request.urlopen(url, timeout=5) as response:
                    listing = json.load(response)
                break
            except OSError:
                time.sleep(0.5)
        if listing is None:
            stop(proc)
            output = proc.stdout.read()
            pytest.fail(f"make lab did not serve the course:\n{output[-3000:]}")
        names = {item["name"] for item in listing["content"]}
        assert {"README.md", "6.1-basics.ipynb", "en", "data"} <= names, names
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/lab/tree/course?token={token}", timeout=10) as page:
            assert page.status == 200 and "JupyterLab" in page.read().decode()
        # a kernel starts (the server answers once it is up) and is then shut down
        start = urllib.request.Request(f"http://127.0.0.1:{port}/api/kernels?token={token}", method="POST",
                                       data=b'{"name": "python3"}', headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(start, timeout=120) as response:
            kernel = json.load(response)
        assert kernel.get("execution_state") in {"idle", "starting", "busy"}, kernel
        shutdown = urllib.request.Request(f"http://127.0.0.1:{port}/api/kernels/{kernel['id']}?token={token}",
                                          method="DELETE")
        with urllib.request.urlopen(shutdown, timeout=60) as response:
            assert response.status == 204
    finally:
        stop(proc)


def test_xdist_group_keeps_a_group_on_one_worker(tmp_path):
    """The hub tests share OS accounts and one class server, the make-lab tests one exchange: they
    rely on ``--dist loadgroup`` sending an ``xdist_group`` to one worker. With pytest 9 and
    pytest-xdist 3.8 the mark was silently ignored (tests of one group ran on both workers)."""
    out = tmp_path / "workers"
    out.mkdir()
    (tmp_path / "test_group.py").write_text(
        "import os, pathlib, pytest\n"
        "pytestmark = pytest.mark.xdist_group('g')\n"
        + "".join(f"def test_{i}():\n"
                  f"    (pathlib.Path(os.environ['GROUP_OUT']) / 'w{i}').write_text(os.environ['PYTEST_XDIST_WORKER'])\n"
                  for i in range(8)), encoding="utf-8")
    (tmp_path / "test_free.py").write_text("".join(f"def test_free_{i}():\n    pass\n" for i in range(8)),
                                           encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "pytest", "-n", "3", "--dist", "loadgroup", "-q", "-p", "no:cacheprovider",
                          "test_free.py", "test_group.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "GROUP_OUT": str(out)})
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    workers = {(out / f"w{i}").read_text() for i in range(8)}
    assert len(workers) == 1, f"one xdist_group ran on workers {sorted(workers)}"
