"""One ``make lab`` for the browser tests of a lone student and instructor (the "lab" xdist group).

``tests/browser/test_lectures.py`` (the lecture notebooks) and ``tests/browser/test_lab_grading.py``
(assignments panel, Formgrader, feedback) both need JupyterLab as ``make lab`` starts it. They
share this one server, started from nothing the way a newcomer starts it: ``make lab`` itself
(same command, same environment, no backend override), with only a free port, a token,
throw-away settings and workspace folders, and a fresh, empty exchange folder
(``NBGRADER_EXCHANGE``), so the course-local release ``make lab`` makes is tested from nothing.
Settings: every cell rendered (no windowing, so every figure exists in the page), no autosave
(running the course leaves the repository's notebooks as they are), no news check.

Both modules are in the "lab" xdist group (one worker), so the session fixture starts once.
What the run adds to the repository's course root for the test student (submitted/,
autograded/, feedback/, the gradebook row) is removed before and after.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from tests.support.servers import free_port, stop

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
#: The student whose work the lab-grading test hands in (its rows are removed afterwards).
STUDENT = "dp_browser_student"


def api_get(url: str, token: str, path: str) -> bytes:
    request = urllib.request.Request(f"{url}{path}", headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.read()


def _clean_course_root() -> None:
    for step in ("submitted", "autograded", "feedback"):
        shutil.rmtree(ROOT / step / STUDENT, ignore_errors=True)
    venv_bin = ROOT / ".venv" / "bin"
    env = dict(os.environ, PATH=f"{venv_bin}{os.pathsep}{os.environ.get('PATH', '')}")   # nbgrader runs alembic
    subprocess.run([str(venv_bin / "nbgrader"), "db", "student", "remove", STUDENT, "--force"], cwd=ROOT, env=env,
                   capture_output=True)


@pytest.fixture(scope="session")
def make_lab(tmp_path_factory):
    """``make lab`` from nothing: ``{"url", "token", "exchange", "tmp", "log"}``."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not found: run tests/browser/ensure_chromium.sh (apt-get install chromium)")
    tmp = tmp_path_factory.mktemp("make_lab")
    exchange = tmp / "exchange"      # fresh: make lab must create and fill it
    port, token = free_port(), secrets.token_hex(16)
    settings = tmp / "settings" / "@jupyterlab"
    for plugin, text in (("notebook-extension/tracker", '{"windowingMode": "none"}'),
                         ("docmanager-extension/plugin", '{"autosave": false}'),
                         ("apputils-extension/notification", '{"fetchNews": "false", "checkForUpdates": false}')):
        path = settings / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    lab_args = (f"--no-browser --port={port} --ServerApp.port_retries=0 --IdentityProvider.token={token} "
                f"--LabApp.user_settings_dir={tmp / 'settings'} --LabApp.workspaces_dir={tmp / 'workspaces'}")
    # Kernels talk over IPC sockets (make lab's choice), whose paths may not exceed 107 bytes: pytest's
    # tmp folders under xdist are too deep for them ("File name too long" starting a kernel, seen in CI).
    runtime = Path(tempfile.mkdtemp(prefix="dp-rt-", dir="/tmp"))
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(runtime), NBGRADER_EXCHANGE=str(exchange))
    _clean_course_root()
    log = open(tmp / "lab.log", "w")
    started = time.monotonic()
    server = subprocess.Popen(["make", "--no-print-directory", "lab", f"LAB_ARGS={lab_args}"], cwd=ROOT, env=env,
                              stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(1200):   # the first make lab generates and releases six assignments
            try:
                api_get(url, token, "/api/status")
                break
            except OSError:
                if server.poll() is not None:
                    pytest.fail("make lab exited:\n" + (tmp / "lab.log").read_text()[-3000:])
                time.sleep(0.5)
        else:
            pytest.fail("make lab did not serve in 600 s:\n" + (tmp / "lab.log").read_text()[-3000:])
        print(f"make lab (fresh exchange) served after {time.monotonic() - started:.1f} s")
        yield {"url": url, "token": token, "exchange": exchange, "tmp": tmp, "log": tmp / "lab.log"}
    finally:
        stop(server, timeout=20)    # the make/jupyter we started, and its kernels
        log.close()
        _clean_course_root()
        shutil.rmtree(runtime, ignore_errors=True)
