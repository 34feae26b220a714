"""The student's one command, ``python3 -m course lab`` (Windows ``py -m course lab``), issue 28.

* the environment's Python and executables in the Windows layout (``Scripts\\python.exe``) and the
  POSIX one, and the JupyterLab command line (course flags first, the student's own options after);
* from a fresh clone of the repository (its tracked files, committed) with no ``make`` on ``PATH``
  (only ``python3``), the launcher creates ``.venv``, installs the student's packages only (no
  JupyterHub, Playwright or pytest), copies the lectures and the six assignments into the student's
  own folder (``$HOME/dp-course-work``; no exchange) and serves JupyterLab there on the course home
  (``/`` leads to its ``README.md``) in Chinese (zh_CN selected, the language pack answering), with
  nbgrader's instructor and exchange panels off. A notebook saved through the server keeps no widget
  output; the 提交 endpoint asks the student id, then writes ``提交/<学号>_<assignment>.ipynb``; the
  clone's ``git status`` stays empty. pip inherits the environment (its cache, its config: the
  machine's mirror settings), as a student's would.

Cost: the fresh-copy test pip-installs the student's packages into a new environment, as a
student does (the launcher upgrades pip first: venv's bundled pip 23.2 took 30 s to resolve the
requirements against this machine's indexes, pip 26 takes 10 s): JupyterLab answered after 46 s on
an idle machine (71 s before the pip upgrade), 46 s in a fresh-clone `make test`. pip is told not to
compile every installed module to bytecode (``PIP_COMPILE=0``, the one setting the test adds to the
student's environment): that was 60% of the install (19.3 against 7.8 CPU-s, 40 against 17 s for
requirements-student.txt at a load of 6) and checks nothing here; Python compiles what JupyterLab
imports when it imports it, and the launcher's own pip command is unchanged.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path, PurePosixPath, PureWindowsPath

import pytest

from course import launcher
from course.workspace import ASSIGNMENTS as _ASSIGNMENTS
from tests.support.servers import free_port, stop

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENTS = _ASSIGNMENTS


def test_windows_layout_of_the_environment():
    venv = PureWindowsPath(r"C:\Users\xiaoming\dp-course\.venv")
    assert launcher.venv_python(venv, windows=True) == PureWindowsPath(
        r"C:\Users\xiaoming\dp-course\.venv\Scripts\python.exe")
    assert launcher.scripts_dir(venv, windows=True) == PureWindowsPath(r"C:\Users\xiaoming\dp-course\.venv\Scripts")
    posix = PurePosixPath("/home/xiaoming/dp-course/.venv")
    assert launcher.venv_python(posix, windows=False) == PurePosixPath("/home/xiaoming/dp-course/.venv/bin/python")
    assert launcher.venv_python(Path(".venv")) == Path(".venv") / (
        "Scripts/python.exe" if os.name == "nt" else "bin/python")


def test_lab_command_puts_the_students_options_last():
    python = PureWindowsPath(r"C:\c\.venv\Scripts\python.exe")
    command = launcher.lab_command(Path("/c"), python, "tcp", ["--port=8890", "--no-browser"])
    assert command[:4] == [str(python), "-m", "jupyter", "lab"]
    assert command[-2:] == ["--port=8890", "--no-browser"]
    assert "--LabApp.default_url=/lab/tree/course/README.md" in command
    assert f"--LabApp.app_settings_dir={Path('/c') / '.lab-settings'}" in command
    assert "--KernelManager.transport=tcp" in command


def test_tool_env_puts_the_environment_first_and_drops_mplbackend(monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("PIP_INDEX_URL", "https://mirrors.example.edu.cn/pypi/simple")
    env = launcher.tool_env(Path("/c/.venv/bin/python"))
    assert env["PATH"].split(os.pathsep)[0] == str(Path("/c/.venv/bin"))
    assert "MPLBACKEND" not in env and env["PIP_INDEX_URL"] == "https://mirrors.example.edu.cn/pypi/simple"


def test_kernels_over_tcp_under_a_deep_runtime_folder(tmp_path):
    """IPC sockets only where their paths fit (a deep network home made every kernel fail)."""
    env = dict(os.environ, JUPYTER_RUNTIME_DIR="/tmp/dp-rt")
    assert launcher.kernel_transport(Path(sys.executable), env) == ("ipc" if os.name == "posix" else "tcp")
    env["JUPYTER_RUNTIME_DIR"] = str(tmp_path / ("deep-network-home-" * 4) / "runtime")
    assert launcher.kernel_transport(Path(sys.executable), env) == "tcp"


def test_usage_without_a_command(capsys):
    assert launcher.main([]) == 2
    assert "py -m course lab" in capsys.readouterr().err


def _fresh_copy(dest: Path) -> None:
    """The repository's tracked files (what a clone has), as they are in the working tree."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in files.decode().split("\0"):
        if name and (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)


def _get(url: str, token: str, method: str = "GET", body: dict | None = None) -> tuple[str, bytes]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=20) as response:
        return response.geturl(), response.read()


def _post_status(url: str, token: str, body: dict) -> tuple[int, dict]:
    try:
        _, answer = _get(url, token, "POST", body)
        return 200, json.loads(answer)
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_fresh_copy_without_make_reaches_jupyterlab_in_chinese(tmp_path):
    clone = tmp_path / "dp-course"
    _fresh_copy(clone)
    git = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "PATH": os.environ["PATH"]}
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "clone"]):
        subprocess.run(["git", *command], cwd=clone, env=git, check=True, capture_output=True)
    assert not (clone / ".venv").exists()
    # PATH holds python3 and nothing else: no make, no shell tools, no course environment
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    base = Path(sys.base_prefix) / "bin" / "python3"
    (bin_dir / "python3").symlink_to(base if base.exists() else shutil.which("python3"))
    keep = ("LANG", "LC_ALL", "TMPDIR", "XDG_CONFIG_HOME", "PIP_CONFIG_FILE")
    env = {k: v for k, v in os.environ.items() if k in keep or k.startswith("PIP_")}
    # ...without pip's bytecode compilation of every installed module (see the docstring). PIP_COMPILE=0:
    # pip reads PIP_NO_COMPILE=1 as --compile (checked with pip 23.2 and 26.3)
    env["PIP_COMPILE"] = "0"
    # the student's home, where her folder is made; pip's cache stays the machine's
    home = tmp_path / "home"
    env.update(HOME=str(home), XDG_CACHE_HOME=os.environ.get("XDG_CACHE_HOME", str(Path.home() / ".cache")))
    runtime = Path(tempfile.mkdtemp(prefix="dp-rt-", dir="/tmp"))
    env.update(PATH=str(bin_dir), JUPYTER_RUNTIME_DIR=str(runtime), JUPYTER_CONFIG_DIR=str(tmp_path / "jconfig"),
               JUPYTERLAB_SETTINGS_DIR=str(tmp_path / "settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "workspaces"))
    assert shutil.which("make", path=env["PATH"]) is None
    port, token = free_port(), secrets.token_hex(16)
    log = open(tmp_path / "launcher.log", "w")
    started = time.monotonic()
    server = subprocess.Popen(["python3", "-m", "course", "lab", "--no-browser", f"--port={port}",
                               "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}"],
                              cwd=clone, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        while True:
            try:
                _get(f"{url}/api/status", token)
                break
            except OSError:
                if server.poll() is not None:
                    pytest.fail("the launcher exited:\n" + (tmp_path / "launcher.log").read_text()[-4000:])
                if time.monotonic() - started > 1200:
                    pytest.fail("no JupyterLab after 1200 s:\n" + (tmp_path / "launcher.log").read_text()[-4000:])
                time.sleep(1)
        print(f"python3 -m course lab in a fresh copy served after {time.monotonic() - started:.0f} s")
        # what the student reads while it installs: no build backend's "editable installation" banner
        # (-q did not hide it: session 15's walkthrough saw it in the launcher's output)
        said = (tmp_path / "launcher.log").read_text(encoding="utf-8", errors="replace")
        assert "editable" not in said.lower() and "!!" not in said, said[:3000]

        # the course home, in the student's own folder, in Chinese
        work = home / "dp-course-work"
        home_url, _ = _get(f"{url}/", token)
        assert home_url.endswith("/lab/tree/README.md"), home_url
        _, body = _get(f"{url}/lab/api/settings/@jupyterlab/translation-extension:plugin", token)
        plugin = json.loads(body)          # .lab-settings/overrides.json changes the schema's default
        assert plugin["settings"].get("locale", plugin["schema"]["properties"]["locale"]["default"]) == "zh_CN"
        # no "receive Jupyter news?" toast over a student's figures at every launch (browser walkthrough, s14)
        _, body = _get(f"{url}/lab/api/settings/@jupyterlab/apputils-extension:notification", token)
        plugin = json.loads(body)
        assert plugin["schema"]["properties"]["fetchNews"]["default"] == "false", plugin["schema"]["properties"]["fetchNews"]
        _, body = _get(f"{url}/lab", token)
        assert b'"dp-course-submit"' in body, "the course's Submit extension is not loaded"
        config = json.loads(re.search(rb'<script id="jupyter-config-data" type="application/json">(.*?)</script>',
                                      body, re.S)[1])
        off = config["disabledExtensions"]
        assert {f"@jupyter/nbgrader:{panel}" for panel in ("assignment-list", "formgrader", "create-assignment",
                                                            "course-list")} <= set(off), off
        assert "@jupyter/nbgrader:validate-assignment" not in off
        _, body = _get(f"{url}/lab/api/translations/zh_CN", token)
        assert json.loads(body)["data"], "the zh_CN language pack is not installed"
        _, body = _get(f"{url}/api/contents/README.md?content=0", token)
        assert json.loads(body)["type"] == "file"
        # the six assignments in her folder, no exchange
        assert sorted(p.name for p in (work / "作业").iterdir()) == [f"{i}-{a}" for i, a in enumerate(ASSIGNMENTS, 1)]
        assert not (clone / "nbgrader_exchange").exists()
        # a notebook saved through the server keeps no widget output (the pre-save hook)
        path = "作业/1-laplace/laplace.ipynb"
        quoted = urllib.parse.quote(path)
        _, body = _get(f"{url}/api/contents/{quoted}", token)
        model = json.loads(body)
        code = next(c for c in model["content"]["cells"] if c["cell_type"] == "code")
        code["outputs"] = [{"output_type": "display_data", "metadata": {}, "data": {
            "text/plain": "VBox()", "application/vnd.jupyter.widget-view+json": {"model_id": "x", "version_major": 2,
                                                                               "version_minor": 0}}}]
        _get(f"{url}/api/contents/{quoted}", token, "PUT", {"type": "notebook", "format": "json",
                                                          "content": model["content"]})
        saved = (work / path).read_text(encoding="utf-8")
        assert "widget-view" not in saved and "运行此单元格以显示交互图" in saved
        # 提交: the student id first, then the one file to upload
        status, answer = _post_status(f"{url}/dp-course/submit", token, {"path": path})
        assert status == 409 and answer["need_student_id"], answer
        status, answer = _post_status(f"{url}/dp-course/submit", token, {"path": path, "student_id": "2023012345"})
        assert status == 200, answer
        assert Path(answer["file"]) == work / "提交" / "2023012345_laplace.ipynb"
        assert Path(answer["file"]).read_bytes() == (work / path).read_bytes()
        # using the course changed nothing in the clone
        done = subprocess.run(["git", "status", "--porcelain"], cwd=clone, capture_output=True, text=True, check=True)
        assert done.stdout == "", done.stdout
        # the student's packages, and only those
        python = launcher.venv_python(clone / ".venv")
        probe = ("import importlib.util as u; print([m for m in ('jupyterhub', 'playwright', 'pytest', "
                 "'nbgrader', 'ipympl', 'helpers') if u.find_spec(m)])")
        found = subprocess.run([str(python), "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True)
        assert found.stdout.strip() == "['nbgrader', 'ipympl', 'helpers']", found.stdout
    finally:
        stop(server)
        log.close()
        shutil.rmtree(runtime, ignore_errors=True)
