"""The student's one command: ``python3 -m course lab`` (Windows: ``py -m course lab``).

The same loop on Linux, macOS and Windows, with the standard library and pip only:

1. checks the Python (3.11 or newer: the pinned numpy 2.4.6 and nbgrader 0.9.6 need it) and says so,
   in Chinese and English, before anything is installed;
2. creates ``.venv`` next to ``course/`` (``venv``) and installs the student's packages
   (``requirements-student.txt``: the lectures and the assignments, no JupyterHub, Playwright or
   pytest) and the course's own package (``pip install --no-deps -e .``), again only when those
   files or the Python changed;
3. copies the lectures (Chinese and English) and the six released assignments into the student's
   own folder (:mod:`course.workspace`: ``~/dp-course-work`` or ``DP_COURSE_WORKSPACE``), and on
   later launches adds what the course added without touching her changes, saying what it did;
4. starts JupyterLab in Chinese there (``.lab-settings/``) on the course home, with the course's
   own extension (``course/labextensions/``: the notebook's **提交** button) and server settings
   (``course/student_config/``: the submit endpoint, widget outputs never saved, nbgrader's
   instructor and exchange panels hidden). Everything after ``lab`` goes to JupyterLab
   (``--port=8890``, ``--no-browser``, ...).

``python3 -m course submit <assignment>`` does what the button does from a terminal: the saved
notebook becomes ``提交/<学号>_<assignment>.ipynb``, the one file to upload to the LMS. No
exchange, no file modes, no sockets: nothing the student runs needs POSIX (nbgrader 0.9.6's
file-system exchange refuses every action on Windows). ``make lab`` is the instructor's view
(``--instructor``: the repository itself, the Formgrader, nbgrader's exchange; :mod:`course.instructor`).

pip runs as a child process with the caller's environment, so a school's package mirror set
with ``PIP_INDEX_URL`` (or ``pip config set global.index-url ...``, pip's own config files) is
used as is. Paths are ``pathlib`` paths, the environment's Python is ``Scripts\\python.exe`` on
Windows (:func:`venv_python`).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path, PurePath

ROOT = Path(__file__).resolve().parents[1]
VENV = ".venv"
STUDENT_REQUIREMENTS = "requirements-student.txt"
#: The oldest Python the pins install on (numpy 2.4.6 and nbgrader 0.9.6 require 3.11;
#: tests/course/test_laptop_loop.py resolves them for 3.11-3.13 on Windows, macOS and Linux).
MIN_PYTHON = (3, 11)
#: The newest Python the pins were resolved for: a newer one is tried, with a warning.
TESTED_PYTHON = (3, 13)
#: Written into the environment after the student's packages went in: the digest of what went in.
INSTALLED_MARK = ".dp-course-student"
#: The student's JupyterLab server settings (JUPYTER_CONFIG_PATH): the submit endpoint, the
#: pre-save hook, nbgrader's instructor and exchange panels off.
STUDENT_CONFIG = Path("course") / "student_config"
#: A kernel's IPC socket path (runtime folder + "/kernel-<uuid>-ipc-<port>", up to 53 characters
#: more) may not exceed 107 bytes on Linux, 103 on macOS: kernels go over IPC only under a runtime
#: folder of at most this many bytes (a deeper one, a network home say, made every kernel
#: fail with "File name too long").
IPC_RUNTIME_MAX = (107 if sys.platform.startswith("linux") else 103) - 53

#: Messages in Chinese, then English (the student reads the first).
SAY = {
    "venv": "创建 Python 环境 {path} / creating the Python environment {path}",
    "venv_failed": ("无法创建 Python 环境（{error}）。Debian/Ubuntu 上请先安装 python3-venv："
                    "sudo apt install python3-venv / cannot create the environment ({error}); on "
                    "Debian/Ubuntu install python3-venv first"),
    "install": ("安装课程所需的软件包（第一次需要几分钟；学校镜像见 README：PIP_INDEX_URL）/ installing the "
                "course's packages (a few minutes the first time; a school mirror: see README, PIP_INDEX_URL)"),
    "pip_failed": ("pip 安装失败（退出码 {code}）。如果无法访问 PyPI，请设置镜像：PIP_INDEX_URL 或 pip config "
                   "（见 README）/ pip failed (exit status {code}); without access to PyPI set a mirror: "
                   "PIP_INDEX_URL or pip config (see README)"),
    "old_python": ("需要 Python 3.11 或更新的版本（3.11、3.12、3.13），当前是 {version}，什么都没有安装。课程固定的 "
                   "numpy 2.4.6 和 nbgrader 0.9.6 不支持更早的版本。请从 https://www.python.org/downloads/ 安装 "
                   "Python 3.12（Windows：勾选“py launcher”，然后运行 py -3.12 -m course lab；Ubuntu 22.04："
                   "sudo apt install python3.11 python3.11-venv，然后运行 python3.11 -m course lab）。\n"
                   "Python 3.11 or newer is needed (3.11, 3.12, 3.13); this is {version} and nothing was installed "
                   "(the course's numpy 2.4.6 and nbgrader 0.9.6 require 3.11). Install Python 3.12 from "
                   "python.org (Windows: run py -3.12 -m course lab) or, on Ubuntu 22.04, python3.11 and "
                   "python3.11-venv (then python3.11 -m course lab)."),
    "new_python": ("注意：Python {version} 比本课程测试过的版本（3.11、3.12、3.13）新，课程固定的软件包可能还没有"
                   "它的安装包；如果下面的安装失败，请从 https://www.python.org/downloads/ 安装 Python 3.13，再用 "
                   "py -3.13 -m course lab（Windows）或 python3.13 -m course lab 启动。/ Python {version} is newer than "
                   "the course was tested with (3.11-3.13); if the install below fails, install Python 3.13 and run "
                   "py -3.13 -m course lab (Windows) or python3.13 -m course lab."),
    "start": "启动 JupyterLab（内核使用 {transport}）/ starting JupyterLab (kernels over {transport})",
    "ask_id": "请输入你的学号（只需输入一次，会记在课程文件夹里）/ your student id (asked once, remembered): ",
    "no_id": ("还没有学号：请运行 python -m course submit {assignment} --student-id <你的学号> / no student id yet: "
              "run python -m course submit {assignment} --student-id <your id>"),
    "usage": ("用法 / usage: python3 -m course lab [JupyterLab 的选项 / JupyterLab's options, e.g. "
              "--port=8890 --no-browser]\n"
              "       python3 -m course submit <作业 / assignment> [--student-id <学号>]   "
              "(生成要上传的文件 / write the file to upload)\n"
              "       python3 -m course install   (只安装 / install only)\n"
              "Windows: py -m course lab, py -m course submit laplace"),
}


def say(key: str, **values) -> None:
    print(SAY[key].format(**values), file=sys.stderr, flush=True)


def python_supported(version: tuple[int, ...] | None = None) -> bool:
    """Whether this Python can install the pins; says why not (Chinese, then English) when it cannot."""
    version = tuple(sys.version_info[:3]) if version is None else tuple(version)
    if version[:2] > TESTED_PYTHON:
        say("new_python", version=".".join(str(part) for part in version))
    if version[:2] >= MIN_PYTHON:
        return True
    say("old_python", version=".".join(str(part) for part in version))
    return False


def venv_python(venv_dir: PurePath, windows: bool | None = None) -> PurePath:
    """The Python of the virtual environment ``venv_dir``.

    ``Scripts\\python.exe`` on Windows, ``bin/python`` elsewhere (``windows`` defaults to this
    machine's). Pass a ``PureWindowsPath`` with ``windows=True`` to get the Windows layout on
    any machine.
    """
    windows = os.name == "nt" if windows is None else windows
    return venv_dir / "Scripts" / "python.exe" if windows else venv_dir / "bin" / "python"


def scripts_dir(venv_dir: PurePath, windows: bool | None = None) -> PurePath:
    """The environment's folder of executables (``alembic``, which nbgrader runs, is there)."""
    return venv_python(venv_dir, windows).parent


def _digest(root: Path) -> str:
    """What the installed environment was made from: the requirement files and the interpreter."""
    parts = [(root / name).read_bytes() for name in (STUDENT_REQUIREMENTS, "pyproject.toml")
             if (root / name).is_file()]
    return hashlib.sha256(b"\0".join(parts) + sys.version.encode()).hexdigest()


def ensure_environment(root: Path = ROOT) -> Path:
    """``root/.venv`` with the student's packages in it; returns its Python."""
    if not python_supported():
        raise SystemExit(1)
    venv_dir = root / VENV
    python = Path(venv_python(venv_dir))
    if not python.exists():
        say("venv", path=venv_dir)
        try:
            venv.EnvBuilder(with_pip=True).create(venv_dir)
        except (OSError, subprocess.CalledProcessError) as error:
            say("venv_failed", error=error)
            raise SystemExit(1) from error
    mark = venv_dir / INSTALLED_MARK
    want = _digest(root)
    if mark.is_file() and mark.read_text(encoding="utf-8").strip() == want:
        return python
    say("install")
    # pip inherits this environment: PIP_INDEX_URL, PIP_TRUSTED_HOST, pip's config files.
    # A current pip first: the one venv bundles (23.2 with Python 3.11) takes 30 s to resolve the
    # requirements against a full index, pip 26 10 s. Not fatal: the bundled pip installs them too.
    # The two short steps (pip itself, the course's own package) are silent unless they fail: the build
    # backend's "editable installation" banner alarmed a student, and -q does not hide it (session 15's
    # walkthrough); the long one keeps pip's progress lines.
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--upgrade", "pip"],
                   cwd=root, capture_output=True)
    for step, quiet in (([str(python), "-m", "pip", "install", "--disable-pip-version-check", "-r",
                          str(root / STUDENT_REQUIREMENTS)], False),
                        ([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps", "-e",
                          str(root)], True)):
        done = subprocess.run(step, cwd=root, capture_output=quiet, text=quiet or None,
                              encoding="utf-8" if quiet else None, errors="replace" if quiet else None)
        if done.returncode != 0:
            if quiet:
                print(done.stdout, done.stderr, sep="\n", file=sys.stderr)
            say("pip_failed", code=done.returncode)
            raise SystemExit(done.returncode)
    mark.write_text(want + "\n", encoding="utf-8")
    return python


def tool_env(python: PurePath, root: Path | None = None) -> dict[str, str]:
    """The environment for the course's tools: the venv's executables first on PATH (nbgrader
    runs ``alembic``); no MPLBACKEND, so that kernels get the live ipympl canvas. With ``root``
    (the student's JupyterLab), the course's server settings come first on JUPYTER_CONFIG_PATH."""
    env = dict(os.environ)
    env["PATH"] = str(python.parent) + os.pathsep + env.get("PATH", "")
    env.pop("MPLBACKEND", None)
    if root is not None:
        env["JUPYTER_CONFIG_PATH"] = os.pathsep.join(
            [str(root / STUDENT_CONFIG)] + [p for p in env.get("JUPYTER_CONFIG_PATH", "").split(os.pathsep) if p])
    return env


def kernel_transport(python: Path, env: dict[str, str]) -> str:
    """``ipc`` where the kernels' socket paths fit (no "running over TCP without encryption"
    warning at every kernel start), else ``tcp`` (Windows has no IPC transport)."""
    if os.name != "posix":
        return "tcp"
    done = subprocess.run([str(python), "-m", "jupyter", "--runtime-dir"], env=env, capture_output=True,
                          text=True)
    runtime = done.stdout.strip()
    return "ipc" if done.returncode == 0 and 0 < len(os.fsencode(runtime)) <= IPC_RUNTIME_MAX else "tcp"


def lab_command(root: Path, python: PurePath, transport: str, extra: list[str],
                workspace: Path | None = None) -> list[str]:
    """``jupyter lab`` as the course opens it, then the caller's own options.

    On the student's ``workspace`` (its ``README.md`` first), or without one on the course
    root itself (``course/README.md`` first: the instructor's ``make lab``).
    """
    home = "/lab/tree/README.md" if workspace is not None else "/lab/tree/course/README.md"
    command = [str(python), "-m", "jupyter", "lab", f"--ServerApp.root_dir={workspace or root}",
               f"--LabApp.default_url={home}",
               f"--LabApp.app_settings_dir={root / '.lab-settings'}",
               # the course's own JupyterLab extension (course/labextensions/): 提交 saves first
               f"--LabApp.extra_labextensions_path={root / 'course' / 'labextensions'}",
               f"--KernelManager.transport={transport}"]
    # Jupyter refuses to start as root without --allow-root (containers, CI). No euid on Windows.
    if getattr(os, "geteuid", lambda: 1)() == 0 and "--allow-root" not in extra:
        command.append("--allow-root")
    return command + list(extra)


def prepare_workspace(root: Path = ROOT, workspace: Path | None = None) -> Path:
    """The student's own folder, made or brought up to date (:func:`course.workspace.sync`), said."""
    from course import workspace as ws

    workspace = workspace or ws.default_workspace()
    first = not (workspace / ws.STATE_DIR / ws.MANIFEST).is_file()
    done = ws.sync(workspace, root)
    for line in ws.report(workspace, done, first):
        print(line, file=sys.stderr, flush=True)
    return workspace


def serve(command: list[str], cwd: Path, env: dict[str, str]) -> int:
    server = subprocess.Popen(command, cwd=cwd, env=env)
    while True:
        try:
            return server.wait()
        except KeyboardInterrupt:   # Ctrl+C reaches JupyterLab too: it asks, then stops
            continue


def lab(extra: list[str], root: Path = ROOT) -> int:
    """The student's JupyterLab on her own folder; ``--instructor``: the course root (``make lab``),
    where there is one (``source/``; in the student bundle ``make lab`` is the student's loop)."""
    instructor = "--instructor" in extra and (root / "source").is_dir()
    extra = [arg for arg in extra if arg != "--instructor"]
    python = ensure_environment(root)
    if instructor:
        from course import instructor as course_instructor

        env = tool_env(python)
        course_instructor.release_assignments(root, python, env)
        course_instructor.add_local_student(root, python, env)
        workspace = None
    else:
        env = tool_env(python, root)
        workspace = prepare_workspace(root)
    transport = kernel_transport(python, env)
    say("start", transport=transport)
    return serve(lab_command(root, python, transport, extra, workspace), workspace or root, env)


def submit(argv: list[str], workspace: Path | None = None) -> int:
    """``submit <assignment> [--student-id <学号>]``: the upload file, and what to do with it."""
    from course import workspace as ws

    workspace = workspace or ws.default_workspace()
    given = None
    if "--student-id" in argv:
        at = argv.index("--student-id")
        given = argv[at + 1] if at + 1 < len(argv) else ""
        argv = argv[:at] + argv[at + 2:]
    if len(argv) != 1:
        say("usage")
        return 2
    try:
        assignment = ws.resolve_assignment(argv[0])
        student = ws.remember_student_id(workspace, given) if given is not None else ws.student_id(workspace)
        if student is None:
            if not sys.stdin or not sys.stdin.isatty():
                say("no_id", assignment=assignment)
                return 2
            student = ws.remember_student_id(workspace, input(SAY["ask_id"]))
        target, notice = ws.submit(workspace, assignment, student)
    except ValueError as error:
        print(error, file=sys.stderr, flush=True)
        return 1
    print(notice, flush=True)
    return 0


def readable_output() -> None:
    """Chinese on any console: a stream whose encoding has no Chinese (an English Windows' cp1252
    when the output is redirected) writes escapes instead of failing on the first message."""
    for stream in (sys.stdout, sys.stderr):
        try:
            "中文“”".encode(stream.encoding or "ascii")
        except (LookupError, UnicodeEncodeError):
            reconfigure = getattr(stream, "reconfigure", None)
            if reconfigure is not None:
                reconfigure(errors="backslashreplace")


def main(argv: list[str] | None = None) -> int:
    readable_output()
    if not python_supported():      # before anything is installed or imported
        return 1
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["lab"]:
        return lab(argv[1:])
    if argv[:1] == ["submit"]:
        return submit(argv[1:])
    if argv[:1] == ["install"] and len(argv) == 1:
        ensure_environment()
        return 0
    say("usage")
    return 2
