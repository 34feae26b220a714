"""Kernel launcher used by the grading kernelspec: limits first, then ipykernel.

The worker writes a kernelspec whose ``argv`` is
``[python, -m, autograder.kernel, -f, {connection_file}]``. This launcher

* records its pid (``AUTOGRADER_KERNEL_PIDFILE``) so that the worker's
  watchdog can kill a notebook that overruns its time limit;
* when ``AUTOGRADER_ZYGOTE`` names the socket of a *zygote* (a clean process
  that imported ipykernel, numpy, scipy and helpers once and never runs any
  notebook code), asks it to fork the kernel: the forked child caps its
  address space (``RLIMIT_AS``), takes the launcher's working folder and
  environment (``DP_COURSE_SEED``...) and runs ipykernel. The launcher stays
  as the process jupyter_client knows: it forwards interrupts and exits with
  the kernel; when the launcher is killed, the zygote kills the kernel.
  This saves about a second of imports per notebook;
* otherwise caps its own address space and runs ipykernel in-process.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys

from autograder.limits import PIDFILE_ENV, apply_limits_from_env

ZYGOTE_ENV = "AUTOGRADER_ZYGOTE"
PRELOAD = ("ipykernel.kernelapp", "numpy", "scipy.stats", "helpers.checks")


def _run_ipykernel(argv) -> None:
    sys.argv = ["ipykernel_launcher", *argv]
    from ipykernel import kernelapp

    kernelapp.launch_new_instance()


def _via_zygote(path: str) -> int | None:
    """Run the kernel as a zygote child; its exit code, or None if no zygote answered."""
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(path)
        conn.sendall((json.dumps({"argv": sys.argv[1:], "cwd": os.getcwd(),
                                  "env": dict(os.environ)}) + "\n").encode())
        reader = conn.makefile("rb")
        pid = json.loads(reader.readline())["pid"]
    except (OSError, ValueError, KeyError):
        return None

    def forward(signum, frame):
        try:
            os.kill(pid, signum)
        except OSError:
            pass

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGQUIT, signal.SIGUSR1):
        signal.signal(signum, forward)
    line = reader.readline()
    try:
        return int(json.loads(line)["exit"])
    except (ValueError, KeyError, TypeError):
        return 1


def main() -> None:
    pidfile = os.environ.get(PIDFILE_ENV)
    if pidfile:
        with open(pidfile, "w", encoding="ascii") as handle:
            handle.write(str(os.getpid()))
    zygote = os.environ.get(ZYGOTE_ENV)
    if zygote:
        code = _via_zygote(zygote)
        if code is not None:
            sys.exit(code)
    apply_limits_from_env()
    _run_ipykernel(sys.argv[1:])


def _child(request: dict) -> None:
    """In the forked child: become the kernel (never returns)."""
    code = 1
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        apply_limits_from_env()
        _run_ipykernel(request["argv"])
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def zygote(path: str) -> None:
    """Serve kernel forks on the Unix socket ``path`` until stdin closes."""
    import importlib
    import selectors

    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception:
            pass
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(8)
    sel = selectors.DefaultSelector()
    sel.register(server, selectors.EVENT_READ, "accept")
    sel.register(sys.stdin, selectors.EVENT_READ, "stdin")
    children: dict[int, socket.socket] = {}  # kernel pid -> launcher connection
    print("ready", flush=True)
    running = True
    while running or children:
        for key, _ in sel.select(timeout=0.05):
            if key.data == "accept":
                conn, _ = server.accept()
                try:
                    request = json.loads(conn.makefile("rb").readline())
                except ValueError:
                    conn.close()
                    continue
                pid = os.fork()
                if pid == 0:
                    server.close()
                    conn.close()
                    for other in children.values():
                        other.close()
                    _child(request)
                conn.sendall((json.dumps({"pid": pid}) + "\n").encode())
                children[pid] = conn
                sel.register(conn, selectors.EVENT_READ, pid)
            elif key.data == "stdin":
                if not os.read(sys.stdin.fileno(), 4096):
                    sel.unregister(sys.stdin)
                    running = False
                    for pid in list(children):
                        _kill(pid)
            else:  # the launcher went away (killed): kill its kernel
                if not key.fileobj.recv(4096):
                    _kill(key.data)
        for pid in list(children):
            try:
                done, status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done, status = pid, 0
            if done:
                conn = children.pop(pid)
                sel.unregister(conn)
                try:
                    conn.sendall((json.dumps({"exit": os.waitstatus_to_exitcode(status)}) + "\n").encode())
                except OSError:
                    pass
                conn.close()
    server.close()


def _kill(pid: int) -> None:
    for target in (-pid, pid):
        try:
            os.kill(target, signal.SIGKILL)
        except OSError:
            pass


if __name__ == "__main__":
    if sys.argv[1:2] == ["--zygote"]:
        zygote(sys.argv[2])
    else:
        main()
