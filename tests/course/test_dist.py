"""``make dist``: the student pack a lecturer attaches to a release or uploads to the LMS (issue 33 §1).

* ``make dist`` writes ``dist/dp-course-student-<version>.zip`` (the version of ``pyproject.toml`` and the commit);
  unpacked into an empty folder it holds the lectures (Chinese and English), the six student
  notebooks, the launcher, the student requirements, ``helpers/`` and a Chinese-first README, and no
  ``source/``, ``docs/``, ``tests/``, ``hub/``, ``autograder/``, solution, hidden test or answer of the
  teacher's guide (the bundle's scan; shown to find a planted answer);
* (slow) the unpacked pack used as a student would: ``python3 -m course lab`` with only ``python3`` on
  PATH installs the student's packages and serves JupyterLab in Chinese on the course home, in her
  own folder, with the six assignments.

The lecturer pack (slides as offline HTML and PDF, the guide, exam papers, grader): tests/browser/test_dist.py.
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
import zipfile
from pathlib import Path

import pytest

from autograder import bundle
from course.workspace import ASSIGNMENTS
from tests.support.servers import free_port, stop

ROOT = Path(__file__).resolve().parents[2]
# One worker for the module: the built and unpacked pack is a module fixture (built once per worker).
pytestmark = pytest.mark.xdist_group("student-pack")


def _version() -> str:
    return re.search(r'^version = "(.*)"', (ROOT / "pyproject.toml").read_text(), re.M)[1]


@pytest.fixture(scope="module")
def pack(tmp_path_factory) -> Path:
    """``make dist``'s student zip (``python -m autograder dist --student-only``), unpacked into an
    empty folder: the folder it holds. The lecturer pack: tests/browser/test_dist.py."""
    where = tmp_path_factory.mktemp("dist")
    done = subprocess.run([sys.executable, "-m", "autograder", "dist", "--student-only", "--out", str(where)],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    (archive,) = where.glob(f"dp-course-student-{_version()}*.zip")
    out = tmp_path_factory.mktemp("unpacked")
    with zipfile.ZipFile(archive) as zipped:
        zipped.extractall(out)
    (top,) = out.iterdir()
    return top


def test_the_student_pack_holds_what_a_student_needs_and_nothing_of_the_instructor(pack):
    names = {p.name for p in pack.iterdir()}
    assert {"course", "release", "helpers", "requirements-student.txt", "pyproject.toml", "README.md"} <= names
    assert not names & set(bundle.FORBIDDEN)
    assert (pack / "README.md").read_text(encoding="utf-8").startswith("# 差分隐私课程")
    assert (pack / "course" / "__main__.py").is_file() and (pack / "course" / "student_config").is_dir()
    lectures = sorted(p.name for p in (ROOT / "course").glob("*.ipynb"))
    assert lectures == sorted(p.name for p in (pack / "course").glob("*.ipynb"))
    assert sorted(p.name for p in (ROOT / "course" / "en").glob("*.ipynb")) == \
        sorted(p.name for p in (pack / "course" / "en").glob("*.ipynb"))
    for name in ASSIGNMENTS:
        assert (pack / "release" / name / f"{name}.ipynb").read_bytes() == \
            (ROOT / "release" / name / f"{name}.ipynb").read_bytes()
    assert bundle.find_secrets(pack, ROOT / "source") == []


def test_the_scan_finds_an_answer_of_the_guide(pack, tmp_path):
    answers = bundle.guide_answers(ROOT / "docs" / "teacher-guide.md")
    assert len(answers) >= 20
    copy = tmp_path / "pack"
    shutil.copytree(pack, copy)
    with open(copy / "course" / "6.1-basics.ipynb", "a", encoding="utf-8") as handle:
        handle.write(answers[len(answers) // 2])
    (copy / "docs").mkdir()
    found = bundle.find_secrets(copy, ROOT / "source")
    assert any("answer of the teacher's guide" in f for f in found) and any(f.startswith("docs/") for f in found)


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_the_unpacked_pack_reaches_jupyterlab_in_chinese(pack, tmp_path):
    from tests.course.test_launcher import _get

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    base = Path(sys.base_prefix) / "bin" / "python3"
    (bin_dir / "python3").symlink_to(base if base.exists() else shutil.which("python3"))
    env = {k: v for k, v in os.environ.items() if k in ("LANG", "LC_ALL", "TMPDIR") or k.startswith("PIP_")}
    env["PIP_COMPILE"] = "0"  # no bytecode for every installed module: 60% of the install (test_launcher.py)
    home = tmp_path / "home"
    runtime = Path(tempfile.mkdtemp(prefix="dp-rt-", dir="/tmp"))
    env.update(PATH=str(bin_dir), HOME=str(home), XDG_CACHE_HOME=os.environ.get("XDG_CACHE_HOME",
                                                                                str(Path.home() / ".cache")),
               JUPYTER_RUNTIME_DIR=str(runtime), JUPYTERLAB_SETTINGS_DIR=str(tmp_path / "settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "workspaces"))
    port, token = free_port(), secrets.token_hex(16)
    log = open(tmp_path / "launcher.log", "w")
    started = time.monotonic()
    server = subprocess.Popen(["python3", "-m", "course", "lab", "--no-browser", f"--port={port}",
                               "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}"],
                              cwd=pack, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        while True:
            try:
                _get(f"{url}/api/status", token)
                break
            except OSError:
                if server.poll() is not None or time.monotonic() - started > 1200:
                    pytest.fail("no JupyterLab:\n" + (tmp_path / "launcher.log").read_text()[-4000:])
                time.sleep(1)
        print(f"the student pack served after {time.monotonic() - started:.0f} s")
        home_url, _ = _get(f"{url}/", token)
        assert home_url.endswith("/lab/tree/README.md"), home_url
        _, body = _get(f"{url}/lab/api/settings/@jupyterlab/translation-extension:plugin", token)
        plugin = json.loads(body)
        assert plugin["settings"].get("locale", plugin["schema"]["properties"]["locale"]["default"]) == "zh_CN"
        _, body = _get(f"{url}/lab/api/translations/zh_CN", token)
        assert json.loads(body)["data"]
        work = home / "dp-course-work"
        assert sorted(p.name for p in (work / "作业").iterdir()) == [f"{i}-{a}" for i, a in enumerate(ASSIGNMENTS, 1)]
        python = pack / ".venv" / "bin" / "python"
        probe = ("import importlib.util as u; print([m for m in ('jupyterhub', 'playwright', 'pytest', 'autograder', "
                 "'nbgrader', 'ipympl', 'helpers', 'course') if u.find_spec(m)])")
        found = subprocess.run([str(python), "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True)
        assert found.stdout.strip() == "['nbgrader', 'ipympl', 'helpers', 'course']", found.stdout
    finally:
        stop(server)
        log.close()
        shutil.rmtree(runtime, ignore_errors=True)
