"""Start the class server at boot: install (or remove) its systemd unit, or a SysV init script.

    sudo .venv/bin/python hub/service.py install [--init systemd|sysv] [--root /]
    sudo .venv/bin/python hub/service.py remove  [--init systemd|sysv] [--root /]

``install`` writes ``hub/service/dp-course-hub.service`` (or ``.init``) with this checkout's path,
enables it (``systemctl enable``, or ``update-rc.d``) and says how to start it; DP_HUB_* settings go
into ``/etc/default/dp-course-hub``. The init system is systemd when it is PID 1, else SysV.
``--root DIR`` writes under DIR and runs nothing (packaging, tests). ``remove`` undoes ``install``.
What the unit relies on (``KillMode=process``: stopping it leaves the students' servers running;
the hub and its services stop on SIGINT or SIGTERM alike, in the foreground or in the background)
is in hub/README.md, "Start at boot", and tested in tests/hub/test_service.py.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
NAME = "dp-course-hub"
ENVFILE = f"/etc/default/{NAME}"


def init_system() -> str:
    """``systemd`` when systemd is PID 1 (``/run/systemd/system`` exists), else ``sysv``."""
    return "systemd" if Path("/run/systemd/system").is_dir() else "sysv"


def target(init: str, root: Path) -> Path:
    return root / ("etc/systemd/system" if init == "systemd" else "etc/init.d") / (
        f"{NAME}.service" if init == "systemd" else NAME)


def render(init: str, repo: Path = REPO) -> str:
    """The unit or script with this checkout's path filled in."""
    template = HERE / "service" / (f"{NAME}.service" if init == "systemd" else f"{NAME}.init")
    text = template.read_text(encoding="utf-8").replace("@REPO@", str(repo)).replace("@ENVFILE@", ENVFILE)
    if "@" in text.replace("@reboot", ""):
        raise ValueError(f"{template}: a placeholder was left unfilled")
    return text


def _run(cmd: list[str]) -> None:
    if shutil.which(cmd[0]):
        subprocess.run(cmd, check=True)
    else:
        print(f"{cmd[0]} not found: run `{' '.join(cmd)}` yourself")


def install(init: str, root: Path) -> Path:
    path = target(init, root)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(init), encoding="utf-8")
    os.chmod(path, 0o755 if init == "sysv" else 0o644)
    live = root == Path("/")
    if live and init == "systemd":
        _run(["systemctl", "daemon-reload"])
        _run(["systemctl", "enable", NAME])
        print(f"installed {path}: start it with `sudo systemctl start {NAME}`; logs in SRV/logs and `journalctl -u {NAME}`")
    elif live:
        _run(["update-rc.d", NAME, "defaults"])
        print(f"installed {path}: start it with `sudo service {NAME} start`")
    else:
        print(f"wrote {path}")
    return path


def remove(init: str, root: Path) -> None:
    path = target(init, root)
    live = root == Path("/")
    if live and init == "systemd":
        _run(["systemctl", "disable", "--now", NAME])
    elif live:
        _run(["update-rc.d", "-f", NAME, "remove"])
    if path.exists():
        path.unlink()
        print(f"removed {path}")
    if live and init == "systemd":
        _run(["systemctl", "daemon-reload"])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=("install", "remove"))
    parser.add_argument("--init", choices=("systemd", "sysv"), default=None,
                        help="default: systemd when it is PID 1, else sysv")
    parser.add_argument("--root", type=Path, default=Path("/"), help="write under this folder and run nothing")
    args = parser.parse_args(argv)
    init = args.init or init_system()
    if args.root == Path("/") and os.geteuid() != 0:
        parser.error("run as root (it writes into /etc)")
    (install if args.action == "install" else remove)(init, args.root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
