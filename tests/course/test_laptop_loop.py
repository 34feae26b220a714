"""The student's laptop loop, the same on Windows, macOS and Linux (issue 33).

* the workspace: ``python -m course lab`` copies the lectures and the six assignments into a folder
  of the student's own; a course update adds what is new, updates what she has not changed, puts
  the new version next to what she changed, and says so; a clone she used stays ``git status``
  clean through autosave, ``git pull`` and a relaunch;
* saved notebooks carry no live-widget output (the pre-save hook, wired through
  ``course/student_config/``): a figure reopens as its picture, other widgets as a Chinese note;
* 提交 (``python -m course submit`` and the button's endpoint) writes ``提交/<学号>_<assignment>.ipynb``
  with a notice saying where it is and what to do; the student id is asked once;
* no POSIX-only call in the student's modules (static), and the whole loop with the Windows
  branches forced (``os.name``, ``sys.platform``, ``os.pathsep``, no ``geteuid``);
* Python >= 3.11, said before anything is installed, and stated in every student-facing text.
"""

from __future__ import annotations

import ast
import asyncio
import io
import json
import os
import re
import shutil
import subprocess
import sys
import types
from pathlib import Path, PureWindowsPath

import pytest

from course import launcher, labserver
from course import workspace as ws

ROOT = Path(__file__).resolve().parents[2]
STUDENT_MODULES = ("course/launcher.py", "course/__main__.py", "course/workspace.py", "course/labserver.py",
                   "course/__init__.py")


def _course_copy(dest: Path) -> Path:
    """What the workspace is made from: the course's notebooks and README, and release/."""
    for rel in ["course/README.md", "course/data/README.md", *(p.relative_to(ROOT).as_posix() for p in (ROOT / "course").glob("*.ipynb")),
                *(p.relative_to(ROOT).as_posix() for p in (ROOT / "course" / "en").glob("*.ipynb")),
                *(p.relative_to(ROOT).as_posix() for p in (ROOT / "release").rglob("*.ipynb"))]:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, dest / rel)
    return dest


def _edit(path: Path, text: str) -> None:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    notebook["cells"].append({"cell_type": "markdown", "metadata": {}, "source": text})
    path.write_text(json.dumps(notebook, ensure_ascii=False), encoding="utf-8")


# --- the workspace ---------------------------------------------------------------------------------

def test_first_launch_copies_lectures_and_assignments_in_the_course_order(tmp_path):
    work = tmp_path / "work"
    done = ws.sync(work, ROOT)
    lectures = sorted(p.name for p in (ROOT / "course").glob("*.ipynb"))
    assert lectures and all((work / name).is_file() for name in lectures)
    assert all((work / "en" / p.name).is_file() for p in (ROOT / "course" / "en").glob("*.ipynb"))
    folders = sorted(p.name for p in (work / ws.ASSIGNMENTS_DIR).iterdir())
    assert folders == [f"{i}-{name}" for i, name in enumerate(ws.ASSIGNMENTS, 1)]   # sorted = course order
    for name in ws.ASSIGNMENTS:
        copied = work / ws.assignment_folder(name) / f"{name}.ipynb"
        assert copied.read_bytes() == (ROOT / "release" / name / f"{name}.ipynb").read_bytes()
    readme = (work / "README.md").read_text(encoding="utf-8")
    assert "../release/" not in readme and f"({ws.ASSIGNMENTS_DIR}/1-laplace/laplace.ipynb)" in readme
    # every relative link of the course home leads to a file of the workspace
    targets = {t.split("#")[0] for t in re.findall(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)\)", readme)
               if not re.match(r"[a-z]+:|#", t)}
    assert targets and all((work / t).is_file() for t in targets), sorted(t for t in targets if not (work / t).is_file())
    assert (work / ws.UPLOAD_DIR).is_dir()
    assert set(done["added"]) == set(ws.course_files(ROOT)) and not done["updated"] + done["beside"]
    # nothing of the instructor's: no sources, no hidden tests, no tools
    names = {p.name for p in work.rglob("*")}
    assert not names & {"source", "build.py", "launcher.py", "_src", "nbgrader_config.py", "teacher-guide.md"}


def test_a_notebook_only_opened_or_run_still_takes_the_update(tmp_path):
    """Opening a lecture rewrites it (JupyterLab's autosave adds the kernel's ``language_info``), running
    it adds outputs: neither is the student's work, so the course's next fix replaces it (a student who
    had opened every lecture kept reading the old text after every update, browser walkthrough of
    session 14). Her own cell, or an edited one, still keeps her copy and puts the fix beside it."""
    course, work = _course_copy(tmp_path / "course"), tmp_path / "work"
    ws.sync(work, course)
    opened, run, edited = work / "6.1-basics.ipynb", work / "6.2-laplace.ipynb", work / "6.4-randomized-response.ipynb"
    for path in (opened, run, edited):
        notebook = json.loads(path.read_text(encoding="utf-8"))
        notebook["metadata"]["language_info"].update(codemirror_mode={"name": "ipython", "version": 3},
                                                     file_extension=".py", mimetype="text/x-python", version="3.12.3")
        if path == run:
            code = next(c for c in notebook["cells"] if c["cell_type"] == "code")
            code["outputs"], code["execution_count"] = [{"output_type": "stream", "name": "stdout", "text": "1\n"}], 1
        if path == edited:
            code = next(c for c in notebook["cells"] if c["cell_type"] == "code")
            code["source"] = "# 我改过\n" + "".join(code["source"])
        path.write_text(json.dumps(notebook, ensure_ascii=False, indent=1), encoding="utf-8")
    for rel in ("course/6.1-basics.ipynb", "course/6.2-laplace.ipynb", "course/6.4-randomized-response.ipynb"):
        _edit(course / rel, "UPDATE-5c1d 勘误")
    done = ws.sync(work, course)
    assert sorted(done["updated"]) == ["6.1-basics.ipynb", "6.2-laplace.ipynb"], done
    assert done["beside"] == ["6.4-randomized-response-新版.ipynb"], done
    assert "UPDATE-5c1d" in opened.read_text(encoding="utf-8") and "UPDATE-5c1d" in run.read_text(encoding="utf-8")
    assert "我改过" in edited.read_text(encoding="utf-8") and "UPDATE-5c1d" not in edited.read_text(encoding="utf-8")


def test_an_update_adds_and_updates_without_touching_the_students_edits(tmp_path, capsys):
    course, work = _course_copy(tmp_path / "course"), tmp_path / "work"
    assert launcher.prepare_workspace(course, work) == work
    assert "你的课程文件夹" in capsys.readouterr().err
    # she edits a lecture and an assignment (adds a cell), and deletes one lecture
    _edit(work / "6.2-laplace.ipynb", "我的笔记")
    _edit(work / ws.assignment_folder("laplace") / "laplace.ipynb", "我的答案")
    (work / "6.3-exponential.ipynb").unlink()
    # the course changes: a fix in 6.1 (which she never changed), in 6.2 and laplace (which she did), a new lab
    for rel in ("course/6.1-basics.ipynb", "course/6.2-laplace.ipynb", "release/laplace/laplace.ipynb"):
        _edit(course / rel, "UPDATE-7f3a 勘误")
    shutil.copy(course / "course" / "lab-budget.ipynb", course / "course" / "lab-new.ipynb")
    launcher.prepare_workspace(course, work)
    said = capsys.readouterr().err
    assert "新增 1 个文件" in said and "lab-new.ipynb" in said
    assert "更新了 1 个你没有改过的文件" in said and "6.1-basics.ipynb" in said
    assert "2 个文件你改过" in said and "6.2-laplace-新版.ipynb" in said
    assert "恢复了 1 个被删除的文件" in said and "6.3-exponential.ipynb" in said
    assert "我的笔记" in (work / "6.2-laplace.ipynb").read_text(encoding="utf-8")
    assert "UPDATE-7f3a" not in (work / "6.2-laplace.ipynb").read_text(encoding="utf-8")
    assert "UPDATE-7f3a" in (work / "6.2-laplace-新版.ipynb").read_text(encoding="utf-8")
    assert "我的答案" in (work / ws.assignment_folder("laplace") / "laplace.ipynb").read_text(encoding="utf-8")
    assert "UPDATE-7f3a" in (work / ws.assignment_folder("laplace") / "laplace-新版.ipynb").read_text(encoding="utf-8")
    assert "UPDATE-7f3a" in (work / "6.1-basics.ipynb").read_text(encoding="utf-8")
    assert (work / "lab-new.ipynb").is_file() and (work / "6.3-exponential.ipynb").is_file()
    # a course notebook saved with a live figure in it is copied without the widget output
    notebook = json.loads((course / "course" / "lab-budget.ipynb").read_text(encoding="utf-8"))
    code = next(c for c in notebook["cells"] if c["cell_type"] == "code")
    code["outputs"] = [_widget_output(True)]
    (course / "course" / "lab-widget.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    launcher.prepare_workspace(course, work)
    copied = (work / "lab-widget.ipynb").read_text(encoding="utf-8")
    assert ws.WIDGET_MIME not in copied and "image/png" in copied and "运行此单元格" in copied
    # a relaunch with nothing new says only where the folder is
    capsys.readouterr()
    launcher.prepare_workspace(course, work)
    assert capsys.readouterr().err.strip().splitlines() == [ws.say("where", path=work)]
    assert "我的笔记" in (work / "6.2-laplace.ipynb").read_text(encoding="utf-8")


def _git(cwd: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.org", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.org")
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout


def test_a_clone_the_student_used_stays_clean_and_pulls_updates(tmp_path, monkeypatch):
    """The launcher's setup step, autosave through the server's contents manager (with the course's
    settings), a lecturer's update by ``git pull``, a relaunch: ``git status`` stays empty."""
    from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
    from traitlets.config import Config

    origin = tmp_path / "origin"
    _course_copy(origin)
    shutil.copy(ROOT / ".gitignore", origin / ".gitignore")
    _git(origin, "init", "-q", "-b", "main")
    _git(origin, "add", "-A")
    _git(origin, "commit", "-q", "-m", "course")
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", str(origin), str(clone))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("DP_COURSE_WORKSPACE", raising=False)
    work = launcher.prepare_workspace(clone)
    assert work == tmp_path / "home" / "dp-course-work"

    # JupyterLab's autosave, as the student's server does it (course/student_config/)
    config = Config(json.loads((ROOT / "course/student_config/jupyter_server_config.json").read_text()))
    manager = AsyncLargeFileManager(root_dir=str(work), config=config)
    model = asyncio.run(manager.get("6.2-laplace.ipynb"))
    model["content"].cells[0].source += "\n\n我的笔记"
    asyncio.run(manager.save({"type": "notebook", "format": "json", "content": model["content"]},
                             "6.2-laplace.ipynb"))
    assert _git(clone, "status", "--porcelain") == ""

    # the lecturer updates the course; the student pulls and relaunches
    _edit(origin / "course" / "6.1-basics.ipynb", "UPDATE-7f3a 勘误")
    _git(origin, "commit", "-q", "-am", "erratum")
    _git(clone, "pull", "-q", "--ff-only")
    launcher.prepare_workspace(clone)
    assert _git(clone, "status", "--porcelain") == ""
    assert "我的笔记" in (work / "6.2-laplace.ipynb").read_text(encoding="utf-8")
    assert "UPDATE-7f3a" in (work / "6.1-basics.ipynb").read_text(encoding="utf-8")


# --- widget outputs are never saved ----------------------------------------------------------------

def _widget_output(with_png: bool) -> dict:
    data = {"text/plain": "Canvas(toolbar=Toolbar(...))",
            ws.WIDGET_MIME: {"version_major": 2, "version_minor": 0, "model_id": "abc"}}
    if with_png:
        data |= {"image/png": "iVBORw0KGgo=", "text/html": "<img src='data:...'/>"}
    return {"output_type": "display_data", "data": data, "metadata": {}}


def test_saved_widget_figures_reopen_as_a_picture_or_a_chinese_note(tmp_path):
    from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
    from traitlets.config import Config

    notebook = {"nbformat": 4, "nbformat_minor": 5,
                "metadata": {"widgets": {"application/vnd.jupyter.widget-state+json": {"state": {}}}},
                "cells": [{"cell_type": "code", "id": "a", "metadata": {}, "execution_count": 1, "source": "x",
                           "outputs": [_widget_output(True), _widget_output(False),
                                       {"output_type": "stream", "name": "stdout", "text": "ok\n"}]},
                          {"cell_type": "markdown", "id": "b", "metadata": {}, "source": "m"}]}
    config = Config(json.loads((ROOT / "course/student_config/jupyter_server_config.json").read_text()))
    manager = AsyncLargeFileManager(root_dir=str(tmp_path), config=config)
    asyncio.run(manager.save({"type": "notebook", "format": "json", "content": notebook}, "n.ipynb"))
    saved = json.loads((tmp_path / "n.ipynb").read_text(encoding="utf-8"))
    figure, widget, stream = ({k: "".join(v) for k, v in out.get("data", {"text": out.get("text")}).items()}
                              for out in saved["cells"][0]["outputs"])
    assert figure == {"image/png": "iVBORw0KGgo=", "text/plain": ws.RUN_AGAIN}
    assert widget == {"text/plain": ws.RUN_AGAIN} and ws.RUN_AGAIN.startswith("运行此单元格以显示交互图")
    assert stream == {"text": "ok\n"} and "widgets" not in saved["metadata"]
    assert ws.WIDGET_MIME not in (tmp_path / "n.ipynb").read_text(encoding="utf-8")


# --- 提交 ------------------------------------------------------------------------------------------

def test_submit_writes_the_one_file_to_upload_and_remembers_the_student_id(tmp_path, monkeypatch, capsys):
    work = tmp_path / "work"
    ws.sync(work, ROOT)
    monkeypatch.setenv("DP_COURSE_WORKSPACE", str(work))
    answer = work / ws.assignment_folder("laplace") / "laplace.ipynb"
    _edit(answer, "我的答案")
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))          # no terminal to ask on
    assert launcher.main(["submit", "laplace"]) == 2
    assert "--student-id" in capsys.readouterr().err
    assert launcher.main(["submit", "laplace", "--student-id", "张三"]) == 1
    assert "学号只能由字母、数字" in capsys.readouterr().err
    assert launcher.main(["submit", "laplace", "--student-id", "2023012345"]) == 0
    notice = capsys.readouterr().out
    upload = work / ws.UPLOAD_DIR / "2023012345_laplace.ipynb"
    assert upload.read_bytes() == answer.read_bytes()
    assert str(upload) in notice and "上传到课程平台" in notice and "作业 laplace" in notice
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(UTC[+-]\d\d:\d\d\)", notice)   # local time, to the second
    # remembered: the next submission needs no id; the number or the folder name work too
    assert launcher.main(["submit", "2"]) == 0
    assert (work / ws.UPLOAD_DIR / "2023012345_exponential.ipynb").is_file()
    assert launcher.main(["submit", f"{ws.ASSIGNMENTS_DIR}/3-randomized_response"]) == 0
    assert launcher.main(["submit", "laplase"]) == 1
    assert "没有这个作业" in capsys.readouterr().err
    answer.write_text("{", encoding="utf-8")                     # half-saved
    assert launcher.main(["submit", "laplace"]) == 1
    assert "不是完整的笔记本" in capsys.readouterr().err


def test_submit_asks_the_student_id_once_on_a_terminal(tmp_path, monkeypatch, capsys):
    work = tmp_path / "work"
    ws.sync(work, ROOT)

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stdin", Terminal("2023-0042\n"))
    assert launcher.submit(["laplace"], work) == 0
    assert ws.student_id(work) == "2023-0042"
    assert (work / ws.UPLOAD_DIR / "2023-0042_laplace.ipynb").is_file()


def test_the_buttons_endpoint(tmp_path):
    work = tmp_path / "work"
    ws.sync(work, ROOT)
    path = f"{ws.assignment_folder('private_mean')}/private_mean.ipynb"
    status, answer = labserver.submit_answer(work, {"path": path})
    assert status == 409 and answer["need_student_id"] and "学号" in answer["message"]
    status, answer = labserver.submit_answer(work, {"path": path, "student_id": "S001"})
    assert status == 200 and Path(answer["file"]) == work / ws.UPLOAD_DIR / "S001_private_mean.ipynb"
    assert len(answer["short"]) <= 140 and "S001_private_mean.ipynb" in answer["short"]   # JupyterLab shows 140
    # the folder on disk when it fits (a browser's upload dialog needs it), else the course folder's path
    home = Path("/home/zhang/dp-course-work") / ws.UPLOAD_DIR / "2023012345_laplace.ipynb"   # a laptop's depth
    assert ws.short_notice(home, "laplace", 0).startswith(f"已生成 {home}（")
    deep = tmp_path / ("x" * 90) / "work"
    assert ws.short_notice(deep / ws.UPLOAD_DIR / "S001_laplace.ipynb", "laplace", 0).startswith(
        f"已生成 {ws.UPLOAD_DIR}/S001_laplace.ipynb（")
    # the notebook on screen, whatever its name in the assignment's folder
    beside = work / ws.assignment_folder("private_mean") / "private_mean-新版.ipynb"
    shutil.copy(work / path, beside)
    _edit(beside, "新版上的答案")
    status, answer = labserver.submit_answer(work, {"path": beside.relative_to(work).as_posix()})
    assert status == 200 and "新版上的答案" in Path(answer["file"]).read_text(encoding="utf-8")
    for bad in ("6.1-basics.ipynb", f"{ws.ASSIGNMENTS_DIR}/../6.1-basics.ipynb", f"{ws.ASSIGNMENTS_DIR}/9-x/x.ipynb"):
        status, answer = labserver.submit_answer(work, {"path": bad})
        assert status == 400 and "没有这个作业" in answer["message"], bad


# --- no POSIX-only call; the Windows branches forced -------------------------------------------------

POSIX_MODULES = {"pwd", "grp", "fcntl", "termios", "tty", "pty", "resource", "posix", "crypt", "spwd", "syslog"}
POSIX_OS = {"chmod", "fchmod", "lchmod", "chown", "fchown", "lchown", "getuid", "geteuid", "getgid", "getegid",
            "setuid", "seteuid", "setgid", "setegid", "getgroups", "symlink", "link", "mkfifo", "mknod", "fork",
            "forkpty", "killpg", "setsid", "setpgid", "getpgid", "O_NOFOLLOW", "O_DIRECTORY", "O_CLOEXEC",
            "WNOHANG", "sync", "statvfs", "getloadavg", "umask"}
POSIX_METHODS = {"chmod", "lchmod", "symlink_to", "hardlink_to", "is_socket", "is_fifo"}
#: pathlib's owner() and group() (no argument; a regex match's group(1) is not one)
POSIX_NO_ARG = {"owner", "group"}


def posix_only_calls(source: str) -> list[str]:
    """POSIX-only names used by ``source``: modules, ``os`` functions and flags, path methods, signals
    other than SIGINT, Unix sockets. ``getattr(os, name, default)`` (a portable probe) is allowed."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names if a.name.split(".")[0] in POSIX_MODULES]
        elif isinstance(node, ast.ImportFrom):
            module = (node.module or "").split(".")[0]
            if module in POSIX_MODULES:
                found.append(f"from {node.module} import")
            if module == "os":
                found += [f"from os import {a.name}" for a in node.names if a.name in POSIX_OS]
            if module == "signal":
                found += [f"from signal import {a.name}" for a in node.names if a.name not in ("SIGINT", "signal")]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            owner, name = node.value.id, node.attr
            if (owner == "os" and name in POSIX_OS) or (owner == "socket" and name == "AF_UNIX") \
                    or (owner == "signal" and name not in ("SIGINT", "signal", "default_int_handler")):
                found.append(f"{owner}.{name}")
            elif owner != "os" and name in POSIX_METHODS:
                found.append(f".{name}()")
        elif isinstance(node, ast.Attribute) and node.attr in POSIX_METHODS:
            found.append(f".{node.attr}()")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in POSIX_NO_ARG
              and not node.args and not node.keywords):
            found.append(f".{node.func.attr}()")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
              and len(node.args) == 2 and isinstance(node.args[1], ast.Constant) and node.args[1].value in POSIX_OS):
            found.append(f"getattr(os, {node.args[1].value!r}) without a default")
    return found


@pytest.mark.parametrize("module", STUDENT_MODULES)
def test_no_posix_only_call_in_the_students_modules(module):
    assert posix_only_calls((ROOT / module).read_text(encoding="utf-8")) == []


def test_the_posix_scan_finds_what_it_looks_for():
    for code in ("import pwd", "import fcntl", "os.chmod(p, 0o777)", "path.chmod(0o777)", "os.symlink(a, b)",
                 "p.symlink_to(q)", "os.geteuid()", "socket.socket(socket.AF_UNIX)", "os.kill(p, signal.SIGTERM)",
                 "from os import getuid", "getattr(os, 'geteuid')()", "os.open(p, os.O_NOFOLLOW)",
                 "Path(p).owner()", "path.group()"):
        assert posix_only_calls(code), code
    for code in ("getattr(os, 'geteuid', lambda: 1)()", "signal.signal(signal.SIGINT, h)", "os.replace(a, b)",
                 "Path(p).read_text()", "os.name == 'nt'", "match.group(1)"):
        assert posix_only_calls(code) == [], code


def _windows_os():
    """``os`` as a Windows machine shows it to the launcher: ``nt``, ``;`` between paths, no euid."""
    fake = types.SimpleNamespace(**{name: getattr(os, name) for name in dir(os) if not name.startswith("__")})
    fake.name, fake.pathsep = "nt", ";"
    for name in POSIX_OS:
        if hasattr(fake, name):
            delattr(fake, name)
    return fake


WINDOWS_RESERVED = re.compile(r'[<>:"/\\|?*\x00-\x1f]')
WINDOWS_DEVICES = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(10)), *(f"LPT{i}" for i in range(10))}


def test_the_whole_loop_with_the_windows_branches_forced(tmp_path, monkeypatch, capsys):
    """Setup, first copy, JupyterLab's command line, 提交, as on Windows: the environment's Python is
    ``Scripts\\python.exe``, kernels go over TCP, no ``--allow-root`` (no euid), ``;`` joins paths,
    every name written is one Windows accepts and every path fits in 260 characters."""
    course = _course_copy(tmp_path / "course")
    shutil.copy(ROOT / launcher.STUDENT_REQUIREMENTS, course)
    shutil.copy(ROOT / "pyproject.toml", course)
    fake_os = _windows_os()
    for module in (launcher, ws):
        monkeypatch.setattr(module, "os", fake_os)
    monkeypatch.setattr(sys, "platform", "win32")
    # an environment already installed, in the Windows layout (the launcher must find it there)
    python = course / ".venv" / "Scripts" / "python.exe"
    python.parent.mkdir(parents=True)
    python.write_bytes(b"")
    (course / ".venv" / launcher.INSTALLED_MARK).write_text(launcher._digest(course) + "\n", encoding="utf-8")
    ran = []

    def no_subprocess(*args, **kwargs):
        raise AssertionError(f"nothing runs before JupyterLab here: {args}")

    monkeypatch.setattr(launcher.subprocess, "run", no_subprocess)
    monkeypatch.setattr(launcher, "serve", lambda command, cwd, env: ran.append((command, cwd, env)) or 0)
    work = tmp_path / "home" / "dp-course-work"
    monkeypatch.setenv("DP_COURSE_WORKSPACE", str(work))
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", "C:\\ProgramData\\jupyter")

    assert launcher.lab(["--no-browser"], course) == 0
    (command, cwd, env), = ran
    assert command[0] == str(python) and cwd == work
    assert f"--ServerApp.root_dir={work}" in command and "--KernelManager.transport=tcp" in command
    assert "--allow-root" not in command and command[-1] == "--no-browser"
    assert env["JUPYTER_CONFIG_PATH"] == f"{course / launcher.STUDENT_CONFIG};C:\\ProgramData\\jupyter"
    assert env["PATH"].startswith(f"{python.parent};")

    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert launcher.main(["submit", "laplace", "--student-id", "2023012345"]) == 0
    assert "2023012345_laplace.ipynb" in capsys.readouterr().out

    base = PureWindowsPath(r"C:\Users\xiaoming\dp-course-work")
    seen: dict[str, str] = {}
    for path in work.rglob("*"):
        rel = path.relative_to(work)
        for part in rel.parts:
            assert not WINDOWS_RESERVED.search(part) and part.rstrip(" .") == part, part
            assert part.split(".")[0].upper() not in WINDOWS_DEVICES, part
        assert len(str(base.joinpath(*rel.parts))) < 260, rel
        assert seen.setdefault(rel.as_posix().lower(), rel.as_posix()) == rel.as_posix(), "names differ only by case"


# --- Python >= 3.11 ----------------------------------------------------------------------------------

def test_an_old_python_is_told_in_chinese_before_anything_is_installed(monkeypatch, capsys):
    monkeypatch.setattr(launcher.sys, "version_info", (3, 10, 12, "final", 0))
    monkeypatch.setattr(launcher, "ensure_environment", lambda *a: pytest.fail("installed on Python 3.10"))
    monkeypatch.setattr(launcher, "prepare_workspace", lambda *a: pytest.fail("copied on Python 3.10"))
    assert launcher.main(["lab"]) == 1
    said = capsys.readouterr().err
    assert said.startswith("需要 Python 3.11 或更新的版本") and "当前是 3.10.12" in said and "Python 3.11 or newer" in said
    assert launcher.python_supported((3, 11, 0)) and not launcher.python_supported((3, 9, 18))
    capsys.readouterr()
    assert launcher.python_supported((3, 13, 1)) and not capsys.readouterr().err


def test_a_newer_python_than_tested_is_tried_with_a_chinese_warning(capsys):
    """python.org's default download may be newer than the pins were resolved for: the launcher goes on,
    saying in Chinese first which version to install if the packages do not install."""
    assert launcher.python_supported((3, 14, 0))
    said = capsys.readouterr().err
    assert said.startswith("注意：Python 3.14.0 比本课程测试过的版本") and "py -3.13 -m course lab" in said


def test_the_launcher_still_parses_on_old_pythons():
    """An old Python must get as far as the message: the modules it imports parse as Python 3.8."""
    for module in ("course/__main__.py", "course/__init__.py", "course/launcher.py"):
        ast.parse((ROOT / module).read_text(encoding="utf-8"), feature_version=(3, 8))


@pytest.mark.parametrize("text", ["README.md", "autograder/STUDENT_README.md", "course/README.md",
                                  "course/launcher.py"])
def test_every_student_text_states_python_3_11(text):
    body = (ROOT / text).read_text(encoding="utf-8")
    assert "3.11" in body
    assert not re.search(r"(≥|>=) ?3\.10|3\.10 或更新|3\.10 or newer", body), "still says Python 3.10"


# --- make lab: the instructor's view; a failed release does not stop it ----------------------------

def _installed(course: Path) -> None:
    """An environment the launcher takes as installed (no pip run)."""
    for name in (launcher.STUDENT_REQUIREMENTS, "pyproject.toml"):
        shutil.copy(ROOT / name, course)
    python = Path(launcher.venv_python(course / ".venv"))
    python.parent.mkdir(parents=True)
    python.write_bytes(b"")
    (course / ".venv" / launcher.INSTALLED_MARK).write_text(launcher._digest(course) + "\n", encoding="utf-8")


def test_make_lab_opens_even_when_nbgrader_cannot_release(tmp_path, monkeypatch, capsys):
    """``lab --instructor`` (make lab) on a course root: nbgrader's release fails (as on Windows,
    "Sorry, the exchange is not available on Windows."): said in Chinese, JupyterLab opens anyway."""
    from course import instructor

    course = _course_copy(tmp_path / "course")
    _installed(course)
    (course / "source" / "laplace").mkdir(parents=True)
    (course / "source" / "laplace" / "laplace.ipynb").write_text("{}", encoding="utf-8")
    (course / "nbgrader_config.py").write_text("", encoding="utf-8")
    monkeypatch.setenv("NBGRADER_EXCHANGE", str(tmp_path / "exchange"))
    monkeypatch.setenv("DP_COURSE_WORKSPACE", str(tmp_path / "work"))

    def nbgrader(command, **kwargs):
        if "generate_assignment" in command or "release_assignment" in command:
            raise subprocess.CalledProcessError(1, command, "Sorry, the exchange is not available on Windows.")
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(instructor.subprocess, "run", nbgrader)
    monkeypatch.setattr(launcher, "kernel_transport", lambda python, env: "tcp")
    ran = []
    monkeypatch.setattr(launcher, "serve", lambda command, cwd, env: ran.append((command, cwd)) or 0)
    assert launcher.lab(["--instructor"], course) == 0
    assert "发布作业失败" in capsys.readouterr().err
    (command, cwd), = ran
    assert cwd == course and f"--ServerApp.root_dir={course}" in command and not (tmp_path / "work").exists()
    # the student bundle has no source/: make lab there is the student's loop
    shutil.rmtree(course / "source")
    assert launcher.lab(["--instructor"], course) == 0
    assert ran[-1][1] == tmp_path / "work" and (tmp_path / "work" / "README.md").is_file()


def test_an_english_windows_console_gets_no_encoding_error(tmp_path, monkeypatch):
    """Output redirected on an English Windows is cp1252: the Chinese notice must not crash submit."""
    work = tmp_path / "work"
    ws.sync(work, ROOT)
    out, err = (io.TextIOWrapper(io.BytesIO(), encoding="cp1252") for _ in range(2))
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setenv("DP_COURSE_WORKSPACE", str(work))
    assert launcher.main(["submit", "laplace", "--student-id", "S1"]) == 0
    assert launcher.main(["submit", "nope"]) == 1
    out.flush()
    assert b"S1_laplace.ipynb" in out.buffer.getvalue() and b"\\u" in out.buffer.getvalue()
