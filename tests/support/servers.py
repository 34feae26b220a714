"""Starting and stopping the servers the tests run (``make lab``, JupyterHub): one free port, one stop."""

from __future__ import annotations

import os
import signal
import socket
import subprocess


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now (the server binds it a moment later)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(proc: subprocess.Popen, sig: int = signal.SIGTERM, timeout: float = 30) -> None:
    """Stop a server started with ``start_new_session=True`` and everything it started.

    ``sig`` goes to its whole process group (``make`` and JupyterLab and their kernels; JupyterHub
    and its proxy); after ``timeout`` seconds the group gets SIGKILL. Returns once the server has
    exited. A server that already exited is left as it is.
    """
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, sig)
        proc.wait(timeout=timeout)
    except ProcessLookupError:
        proc.wait()
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
