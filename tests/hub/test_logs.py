"""Where the class server's processes write (issue 38): files that outlive a restart of the hub, kept small."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "hub"))
from spawner import CourseSpawner, logged_command  # noqa: E402  (hub/spawner.py)


def settled(path: Path, text: str, timeout: float = 20) -> str:
    """``path``'s text once ``text`` is in it: its writer is a process of its own (hub/spawner.py's LOG_WRITER)."""
    deadline = time.monotonic() + timeout
    while text not in (path.read_text() if path.exists() else ""):
        assert time.monotonic() < deadline, f"{text!r} never reached {path}"
        time.sleep(0.05)
    return path.read_text()


def test_a_service_writes_to_its_own_file_and_is_the_process_signalled(tmp_path):
    log = tmp_path / "formgrader.log"
    code = "import signal, sys, time; print('started', flush=True); time.sleep(30)"
    proc = subprocess.Popen(logged_command([sys.executable, "-c", code], log))
    settled(log, "started")
    assert oct(log.stat().st_mode & 0o777) == oct(0o600)     # it names who logged in when (session 15)
    # exec: the hub's signal reaches the service itself, not a shell that would ignore it
    assert Path(f"/proc/{proc.pid}/cmdline").read_bytes().split(b"\0")[0] == sys.executable.encode()
    proc.send_signal(signal.SIGINT)
    assert proc.wait(10) != 0
    settled(log, "KeyboardInterrupt")


def test_a_big_service_log_is_kept_once_and_begun_anew(tmp_path):
    log = tmp_path / "idle-culler.log"
    log.write_bytes(b"old\n" * 300)
    subprocess.run(logged_command([sys.executable, "-c", "print('new')"], log, max_bytes=1000), check=True)
    assert settled(log, "new") == "new\n"
    assert (tmp_path / "idle-culler.log.1").read_bytes() == b"old\n" * 300
    subprocess.run(logged_command([sys.executable, "-c", "print('more')"], log, max_bytes=1000), check=True)
    assert settled(log, "more") == "new\nmore\n", "a small log is appended to"


#: 3,000 lines of 10 bytes, then one that says it was the last
FLOOD = "import sys\nfor i in range(3000): sys.stdout.write(f'line {i:04d}\\n')\nprint('the end', flush=True)"


def test_a_service_that_writes_without_end_keeps_two_files_of_its_cap(tmp_path):
    """Red team (session 13): requests with 15 KB paths from anyone grew the Formgrader's log by 4 MB/s,
    rotated only at its start."""
    log = tmp_path / "formgrader.log"
    subprocess.run(logged_command([sys.executable, "-c", FLOOD], log, max_bytes=4000), check=True)
    assert settled(log, "the end").endswith("line 2999\nthe end\n")
    assert log.stat().st_size <= 4000 and (tmp_path / "formgrader.log.1").stat().st_size <= 4000


def test_a_servers_log_is_private_capped_and_not_hers_to_hold(tmp_path):
    """The server (and every kernel and terminal it starts) gets a pipe, not the log file: red team
    (session 13), a kernel that inherited the file's descriptor wrote 1 GiB into it in 2.5 s."""
    spawner = SimpleNamespace(log_dir=str(tmp_path / "servers"), log_max_bytes=1000, user=SimpleNamespace(name="alice"),
                              cgroup=None)
    fd = CourseSpawner._open_log(spawner)
    assert stat.S_ISFIFO(os.fstat(fd).st_mode), "the server holds the log file itself"
    for i in range(350):                    # 3,500 bytes from the server's side
        os.write(fd, f"line {i:04d}\n".encode())
    os.write(fd, b"the end\n")
    os.close(fd)
    path = tmp_path / "servers" / "alice.log"
    assert settled(path, "the end").endswith("line 0349\nthe end\n")
    assert oct(path.stat().st_mode & 0o777) == oct(0o600)
    assert path.stat().st_size <= 1000 and (tmp_path / "servers" / "alice.log.1").stat().st_size <= 1000
    assert CourseSpawner._open_log(SimpleNamespace(log_dir="", log_max_bytes=1, user=spawner.user)) is None
