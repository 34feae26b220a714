"""Can this computer sandbox student code, and if not, what works instead (issue 33 §4)?

The sandbox is bubblewrap, which needs Linux namespaces: it does not exist on macOS or on
Windows, and WSL 1 has no namespaces either. :func:`platform_problem` answers before anything
is imported that only Linux has; :func:`no_sandbox_message` turns the reason bubblewrap could
not start on Linux into the same bilingual advice. Both name the two routes that work: a Linux
machine (on Windows: WSL 2, steps in ``autograder/README.md``, section "Grading on your own
computer") or the class server. Student code is never run unsandboxed unless the lecturer
passes ``--no-sandbox`` (throw-away machines only).
"""

from __future__ import annotations

import sys
from pathlib import Path

GUIDE = "autograder/README.md, section “Grading on your own computer / 在自己的电脑上评分”"
GUIDE_ZH = "autograder/README.md 的“在自己的电脑上评分”（Grading on your own computer）一节"
SYSTEMS = {"darwin": "macOS", "win32": "Windows", "cygwin": "Windows (Cygwin)"}


def wsl_version(proc_version: str | None = None) -> int | None:
    """1 or 2 inside WSL (``/proc/version`` names Microsoft), ``None`` elsewhere."""
    if proc_version is None:
        try:
            proc_version = Path("/proc/version").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
    text = proc_version.lower()
    if "microsoft" not in text:
        return None
    return 2 if "wsl2" in text or "microsoft-standard" in text else 1


def _routes_zh() -> str:
    return ("可行的两条路：\n"
            "  1. 在一台 Linux 机器上评分（Ubuntu/Debian：sudo apt-get install bubblewrap）；"
            "Windows 电脑可以安装 WSL 2，在其中的 Ubuntu 里评分。逐步说明见 " + GUIDE_ZH + "。\n"
            "  2. 在班级服务器上评分（sudo make hub，见 hub/README.md；Formgrader 的 Autograde 按钮调用的"
            "就是这个评分程序）。\n"
            "不要在自己的电脑上用 --no-sandbox 评分：那样学生的代码以你的权限运行，能读写你的所有文件。")


def _routes_en() -> str:
    return ("Two routes work:\n"
            "  1. Grade on a Linux machine (Ubuntu/Debian: sudo apt-get install bubblewrap); on a Windows "
            "computer, install WSL 2 and grade inside its Ubuntu. Step by step: " + GUIDE + ".\n"
            "  2. Grade on the class server (sudo make hub, see hub/README.md; the Formgrader's Autograde "
            "button runs this same grader).\n"
            "Do not grade with --no-sandbox on your own computer: student code would run with your rights "
            "and could read and change all your files.")


#: The last line of every message: callers that keep one line (the Formgrader's Autograde error) keep this.
SUMMARY = ("这台电脑不能用沙箱评分：请在 Linux（Windows 上用 WSL 2）或班级服务器上评分 / this computer cannot "
           "sandbox student code: grade on Linux (WSL 2 on Windows) or on the class server")


def platform_problem(platform: str | None = None, proc_version: str | None = None) -> str | None:
    """The bilingual explanation when this system cannot run the sandbox at all, else ``None``."""
    platform = sys.platform if platform is None else platform
    if platform.startswith("linux"):
        if wsl_version(proc_version) == 1:
            return ("这是 WSL 1：它没有 Linux 的命名空间，沙箱无法运行。在 PowerShell 中运行 "
                    "wsl --set-version Ubuntu 2（发行版的名字用 wsl -l -v 查看）把它升级到 WSL 2，再评分。\n" + _routes_zh() + "\n\n"
                    "This is WSL 1, which has no Linux namespaces: the sandbox cannot run. In PowerShell, run "
                    "wsl --set-version Ubuntu 2 (wsl -l -v lists the distribution's name) to move it to WSL 2, "
                    "then grade.\n" + _routes_en()
                    + "\n" + SUMMARY)
        return None
    system = SYSTEMS.get(platform, platform)
    return (f"评分程序在沙箱（bubblewrap）里运行学生代码，而沙箱只能在 Linux 上运行；这台电脑是 {system}，"
            "不能在这里安全地评分。\n" + _routes_zh() + "\n\n"
            f"The grader runs student code in a sandbox (bubblewrap), which exists only on Linux; this computer "
            f"runs {system}, so it cannot grade safely here.\n" + _routes_en() + "\n" + SUMMARY)


def no_sandbox_message(why: str, proc_version: str | None = None) -> str:
    """Bilingual advice when bubblewrap could not start on Linux (``why``: the probe's reason)."""
    wsl = wsl_version(proc_version)
    where = "（WSL 2 中的 Ubuntu 同样适用）" if wsl == 2 else ""
    return (f"沙箱无法启动（{why}）。学生代码必须在沙箱中运行。安装 bubblewrap{where}："
            "sudo apt-get install bubblewrap；Ubuntu 24.04 限制普通用户的命名空间，用 sudo 运行评分"
            "（见 " + GUIDE_ZH + "）。--no-sandbox 以评分程序的权限运行学生代码，只能在用完即弃的机器上使用。\n" + _routes_zh() + "\n\n"
            f"The sandbox cannot start: {why}. Student code must run in a sandbox: install bubblewrap "
            "(sudo apt-get install bubblewrap); Ubuntu 24.04 restricts user namespaces for ordinary users, "
            "so grade with sudo (see " + GUIDE + "). (--no-sandbox runs student code with the grader's rights: "
            "only on a throw-away machine; every row then says unsandboxed.)\n" + _routes_en() + "\n" + SUMMARY)
