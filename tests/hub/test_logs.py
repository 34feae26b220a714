"""Where the class server's processes write (issue 38): files that outlive a restart of the hub, kept small."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "hub"))
from spawner import CourseSpawner, logged_command  # noqa: E402  (hub/spawner.py)


def test_a_service_writes_to_its_own_file_and_is_the_process_signalled(tmp_path):
    log = tmp_path / "formgrader.log"
    code = "import signal, sys, time; print('started', flush=True); time.sleep(30)"
    proc = subprocess.Popen(logged_command([sys.executable, "-c", code], log))
    deadline = time.monotonic() + 20
    while "started" not in (log.read_text() if log.exists() else ""):
        assert time.monotonic() < deadline, "the service's output never reached its log"
        time.sleep(0.05)
    # exec: the hub's signal reaches the service itself, not a shell that would ignore it
    assert Path(f"/proc/{proc.pid}/cmdline").read_bytes().split(b"\0")[0] == sys.executable.encode()
    proc.send_signal(signal.SIGINT)
    assert proc.wait(10) != 0
    assert "KeyboardInterrupt" in log.read_text()


def test_a_big_service_log_is_kept_once_and_begun_anew(tmp_path):
    log = tmp_path / "idle-culler.log"
    log.write_bytes(b"old\n" * 300)
    subprocess.run(logged_command([sys.executable, "-c", "print('new')"], log, max_bytes=1000), check=True)
    assert log.read_text() == "new\n"
    assert (tmp_path / "idle-culler.log.1").read_bytes() == b"old\n" * 300
    subprocess.run(logged_command([sys.executable, "-c", "print('more')"], log, max_bytes=1000), check=True)
    assert log.read_text() == "new\nmore\n", "a small log is appended to"


def test_a_servers_log_is_the_hubs_file_private_and_rotated(tmp_path):
    spawner = SimpleNamespace(log_dir=str(tmp_path / "servers"), log_max_bytes=100, user=SimpleNamespace(name="alice"))
    fd = CourseSpawner._open_log(spawner)
    os.write(fd, b"x" * 200)
    os.close(fd)
    path = tmp_path / "servers" / "alice.log"
    assert oct(path.stat().st_mode & 0o777) == oct(0o600)
    fd = CourseSpawner._open_log(spawner)          # the next start: past 100 bytes, kept as .1
    os.close(fd)
    assert path.stat().st_size == 0 and (tmp_path / "servers" / "alice.log.1").stat().st_size == 200
    assert CourseSpawner._open_log(SimpleNamespace(log_dir="", log_max_bytes=1, user=spawner.user)) is None
