"""Start at boot (issue 38): the unit and init script as installed, and the stop behaviour they rely on."""

from __future__ import annotations

import configparser
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "hub"))
import service  # noqa: E402  (hub/service.py)

HUB = Path(__file__).resolve().parents[2] / "hub"


def test_the_systemd_unit_keeps_the_students_servers_and_names_this_checkout(tmp_path):
    path = service.install("systemd", tmp_path)
    assert path == tmp_path / "etc/systemd/system/dp-course-hub.service"
    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.optionxform = str
    unit.read_string(path.read_text(encoding="utf-8"))
    run = unit["Service"]
    # systemd's default KillMode (control-group) would kill every server still in the unit's cgroup
    assert run["KillMode"] == "process"
    assert int(run["LimitNOFILE"]) >= 65536     # not systemd's 1024: the class's connections (session 15)
    assert run["ExecStart"] == f"{service.REPO}/.venv/bin/jupyterhub -f hub/jupyterhub_config.py"
    assert run["ExecStartPre"] == f"{service.REPO}/.venv/bin/python hub/provision.py"
    assert run["WorkingDirectory"] == str(service.REPO) and unit["Install"]["WantedBy"] == "multi-user.target"
    assert "@" not in path.read_text(encoding="utf-8")
    service.remove("systemd", tmp_path)
    assert not path.exists()


def test_the_sysv_script_is_valid_shell_and_signals_the_hub_only(tmp_path):
    path = service.install("sysv", tmp_path)
    assert os.access(path, os.X_OK)
    assert subprocess.run(["sh", "-n", str(path)], capture_output=True).returncode == 0
    text = path.read_text(encoding="utf-8")
    assert f"REPO={service.REPO}\n" in text and "--signal TERM" in text and "--background" in text
    broken = tmp_path / "broken"
    broken.write_text(text.replace("esac", ""), encoding="utf-8")
    assert subprocess.run(["sh", "-n", str(broken)], capture_output=True).returncode != 0


def test_started_in_the_background_the_hubs_children_still_stop_on_sigint(tmp_path):
    """`make hub &` starts the hub with SIGINT ignored; the config restores it before any child starts.

    The probe loads hub/jupyterhub_config.py as JupyterHub does, in a process whose SIGINT is ignored
    (what a shell's `&` does), then starts a child Python as the hub starts the Formgrader: the child
    must get Python's KeyboardInterrupt handler, not SIG_IGN (with it, JupyterHub's stop waited for
    each service's SIGINT timeout: 70 s).
    """
    probe = textwrap.dedent(f"""
        import subprocess, sys
        from traitlets.config import PyFileConfigLoader
        PyFileConfigLoader("jupyterhub_config.py", path={str(HUB)!r}).load_config()
        print(subprocess.run([sys.executable, "-c", "import signal; print(repr(signal.getsignal(signal.SIGINT)))"],
                             capture_output=True, text=True).stdout.strip())
    """)
    env = dict(os.environ, DP_HUB_SRV=str(tmp_path / "srv"), DP_HUB_STATE=str(tmp_path / "state"),
               DP_HUB_NETNS_SUBNET="", DP_HUB_AUTH="pam")

    def ignore_sigint():
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    def child_handler(code: str) -> str:
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                              preexec_fn=ignore_sigint, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout.strip().splitlines()[-1]

    assert "default_int_handler" in child_handler(probe)
    # the probe can fail: without the config's restore, a child of a background process ignores SIGINT
    assert "SIG_IGN" in child_handler(probe.replace(
        f'PyFileConfigLoader("jupyterhub_config.py", path={str(HUB)!r}).load_config()', "pass"))


def test_the_sysv_scripts_hub_output_is_capped(tmp_path):
    """Red team (session 13): the hub writes a line for every request it refuses, from anyone (15 KB paths:
    about 2.3 MB/s), and the init script sent its output to /var/log/dp-course-hub.out with no cap."""
    import shutil
    import time

    if not shutil.which("start-stop-daemon"):
        import pytest

        pytest.skip("start-stop-daemon not installed")
    repo = tmp_path / "repo"
    (repo / ".venv" / "bin").mkdir(parents=True)
    (repo / "hub").mkdir()
    (repo / ".venv" / "bin" / "python").symlink_to(sys.executable)
    shutil.copy(HUB / "logwriter.py", repo / "hub" / "logwriter.py")
    (repo / "hub" / "provision.py").write_text("print('provisioned')\n")
    hub = repo / ".venv" / "bin" / "jupyterhub"     # a hub that says 30,008 bytes and ends
    hub.write_text(f"#!/bin/sh\nexec {sys.executable} -c \"import sys\nfor i in range(3000): "
                   f"sys.stdout.write(f'line {{i:04d}}\\\\n')\nprint('the end')\"\n")
    hub.chmod(0o755)
    log, env = tmp_path / "hub.out", tmp_path / "env"
    env.write_text(f"LOG={log}\nPIDFILE={tmp_path / 'hub.pid'}\nLOG_MAX=4000\n")
    script = tmp_path / "dp-course-hub"
    script.write_text(service.render("sysv", repo).replace(service.ENVFILE, str(env)))
    assert subprocess.run(["sh", str(script), "start"], capture_output=True, timeout=60).returncode == 0
    deadline = time.monotonic() + 20
    while "the end" not in (log.read_text() if log.exists() else ""):
        assert time.monotonic() < deadline, "the hub's output never reached its log"
        time.sleep(0.05)
    assert log.read_text().endswith("line 2999\nthe end\n")
    assert log.stat().st_size <= 4000 and (tmp_path / "hub.out.1").stat().st_size <= 4000
