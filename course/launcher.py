"""The student's one command: ``python3 -m course lab`` (Windows: ``py -m course lab``).

What ``make lab`` does, with the standard library and pip only, on Linux, macOS and Windows:

1. creates ``.venv`` next to ``course/`` (``venv``; Python >= 3.10);
2. upgrades pip, installs the student's packages (``requirements-student.txt``: the lectures and the local
   assignment loop, no JupyterHub, Playwright or pytest) and the course's own package
   (``pip install --no-deps -e .``), again only when those files or the Python changed;
3. releases the six graded assignments into the course's own exchange
   (``nbgrader_exchange/``, or ``NBGRADER_EXCHANGE``) with nbgrader's ``generate_assignment``
   and ``release_assignment``, again only when ``source/`` or ``nbgrader_config.py`` changed
   (a course root only: the student bundle has ``release/`` but no ``source/``);
4. starts JupyterLab in Chinese (``.lab-settings/``) on the table of contents,
   ``course/README.md``, with the course's own extension (``course/labextensions/``: nbgrader's
   Submit and Validate save the assignment's open notebooks first). Everything after ``lab``
   goes to JupyterLab (``--port=8890``, ``--no-browser``, ...).

pip runs as a child process with the caller's environment, so a school's package mirror set
with ``PIP_INDEX_URL`` (or ``pip config set global.index-url ...``, pip's own config files) is
used as is. No shell, no POSIX-only step: paths are ``pathlib`` paths, the environment's
Python is ``Scripts\\python.exe`` on Windows (:func:`venv_python`).
"""

from __future__ import annotations

import getpass
import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path, PurePath

ROOT = Path(__file__).resolve().parents[1]
VENV = ".venv"
STUDENT_REQUIREMENTS = "requirements-student.txt"
#: The graded assignments, in the order of the course (make lab releases the same).
ASSIGNMENTS = ("laplace", "exponential", "randomized_response", "private_mean", "privacy_budget",
               "local_frequency")
#: Written into the exchange after a release: newer than every file of source/ means up to date.
RELEASED_MARK = ".dp-course-released"
#: Written into the environment after the student's packages went in: the digest of what went in.
INSTALLED_MARK = ".dp-course-student"
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
    "release": "发布作业到本地 exchange {path} / releasing the assignments into {path}",
    "old_python": "需要 Python 3.10 或更新版本，当前是 {version} / Python >= 3.10 is needed, this is {version}",
    "start": "启动 JupyterLab（内核使用 {transport}）/ starting JupyterLab (kernels over {transport})",
    "usage": ("用法 / usage: python3 -m course lab [JupyterLab 的选项 / JupyterLab's options, e.g. "
              "--port=8890 --no-browser]\n       python3 -m course install   (只安装 / install only)\n"
              "Windows: py -m course lab"),
}


def say(key: str, **values) -> None:
    print(SAY[key].format(**values), file=sys.stderr, flush=True)


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
    if sys.version_info < (3, 10):
        say("old_python", version=sys.version.split()[0])
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
    subprocess.run([str(python), "-m", "pip", "install", "--disable-pip-version-check", "--upgrade", "pip"],
                   cwd=root)
    for step in ([str(python), "-m", "pip", "install", "--disable-pip-version-check", "-r",
                  str(root / STUDENT_REQUIREMENTS)],
                 [str(python), "-m", "pip", "install", "--disable-pip-version-check", "--no-deps", "-e",
                  str(root)]):
        done = subprocess.run(step, cwd=root)
        if done.returncode != 0:
            say("pip_failed", code=done.returncode)
            raise SystemExit(done.returncode)
    mark.write_text(want + "\n", encoding="utf-8")
    return python


def exchange_dir(root: Path = ROOT) -> Path:
    """The course's exchange (``NBGRADER_EXCHANGE`` or ``nbgrader_exchange/``), created writable."""
    path = Path(os.environ.get("NBGRADER_EXCHANGE") or root / "nbgrader_exchange")
    path.mkdir(parents=True, exist_ok=True)
    try:
        path.chmod(0o777)     # nbgrader's inbound/feedback folders below set their own modes
    except OSError:
        if not os.access(path, os.W_OK):
            raise SystemExit(f"NBGRADER_EXCHANGE={path} is not a writable folder") from None
    return path


def tool_env(python: PurePath) -> dict[str, str]:
    """The environment for the course's tools: the venv's executables first on PATH (nbgrader
    runs ``alembic``); no MPLBACKEND, so that kernels get the live ipympl canvas."""
    env = dict(os.environ)
    env["PATH"] = str(python.parent) + os.pathsep + env.get("PATH", "")
    env.pop("MPLBACKEND", None)
    return env


def _newest(paths) -> float:
    return max((p.stat().st_mtime for p in paths if p.is_file()), default=0.0)


def release_assignments(root: Path, python: Path, env: dict[str, str]) -> None:
    """nbgrader's generate_assignment and release_assignment of the six, when ``source/`` changed."""
    if not (root / "nbgrader_config.py").is_file() or not (root / "source").is_dir():
        return    # the student bundle: release/ is there, nothing to generate
    exchange = exchange_dir(root)
    mark = exchange / RELEASED_MARK
    sources = [p for p in (root / "source").rglob("*")
               if ".ipynb_checkpoints" not in p.parts and "__pycache__" not in p.parts]
    if mark.is_file() and mark.stat().st_mtime >= _newest([*sources, root / "nbgrader_config.py"]):
        return
    say("release", path=exchange)
    nbgrader = [str(python), "-m", "nbgrader"]
    subprocess.run([*nbgrader, "generate_assignment", "*", "--force", "--log-level=ERROR"], cwd=root, env=env,
                   check=True)
    for assignment in ASSIGNMENTS:
        subprocess.run([*nbgrader, "release_assignment", assignment, "--force", "--log-level=WARN"], cwd=root,
                       env=env, check=True)
    mark.touch()


def add_local_student(root: Path, python: Path, env: dict[str, str]) -> None:
    """This computer's user in the gradebook, with a name (the Formgrader lists one without as
    "None, None"); already there is fine."""
    if not (root / "nbgrader_config.py").is_file():
        return
    user = getpass.getuser()
    subprocess.run([str(python), "-m", "nbgrader", "db", "student", "add", user, f"--last-name={user}",
                    "--first-name=(this computer)"], cwd=root, env=env, capture_output=True)


def kernel_transport(python: Path, env: dict[str, str]) -> str:
    """``ipc`` where the kernels' socket paths fit (no "running over TCP without encryption"
    warning at every kernel start), else ``tcp`` (Windows has no IPC transport)."""
    if os.name != "posix":
        return "tcp"
    done = subprocess.run([str(python), "-m", "jupyter", "--runtime-dir"], env=env, capture_output=True,
                          text=True)
    runtime = done.stdout.strip()
    return "ipc" if done.returncode == 0 and 0 < len(os.fsencode(runtime)) <= IPC_RUNTIME_MAX else "tcp"


def lab_command(root: Path, python: PurePath, transport: str, extra: list[str]) -> list[str]:
    """``jupyter lab`` as the course opens it, then the caller's own options."""
    command = [str(python), "-m", "jupyter", "lab", f"--ServerApp.root_dir={root}",
               "--LabApp.default_url=/lab/tree/course/README.md",
               f"--LabApp.app_settings_dir={root / '.lab-settings'}",
               # the course's own JupyterLab extension (course/labextensions/): Submit saves first
               f"--LabApp.extra_labextensions_path={root / 'course' / 'labextensions'}",
               f"--KernelManager.transport={transport}"]
    # Jupyter refuses to start as root without --allow-root (containers, CI).
    if getattr(os, "geteuid", lambda: 1)() == 0 and "--allow-root" not in extra:
        command.append("--allow-root")
    return command + list(extra)


def lab(extra: list[str], root: Path = ROOT) -> int:
    python = ensure_environment(root)
    env = tool_env(python)
    exchange_dir(root)
    release_assignments(root, python, env)
    add_local_student(root, python, env)
    transport = kernel_transport(python, env)
    say("start", transport=transport)
    server = subprocess.Popen(lab_command(root, python, transport, extra), cwd=root, env=env)
    while True:
        try:
            return server.wait()
        except KeyboardInterrupt:   # Ctrl+C reaches JupyterLab too: it asks, then stops
            continue


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["lab"]:
        return lab(argv[1:])
    if argv[:1] == ["install"] and len(argv) == 1:
        ensure_environment()
        return 0
    say("usage")
    return 2
