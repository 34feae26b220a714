"""Sandbox side: run the student's cells, then answer function calls.

``python -I -S runner.py IN_FD OUT_FD UID SITE_DIR LIMITS_JSON`` (inside bubblewrap).

1. Drop to ``UID`` when started as root (bubblewrap keeps only CAP_SETUID and
   CAP_SETGID for this; the switch clears them), import numpy, read the job
   (cells already turned into plain Python, data files) from ``IN_FD``.
2. Set hard = soft resource limits, then run each cell with fds 1/2 sent to a
   file (capped), reporting ``{"cell", "stdout", "stderr", "error"}``.
3. Report which graded names are callable, then serve ``{"call"}`` requests
   until ``{"quit"}`` or end of input: arguments and results are plain data
   (:mod:`wire`), a ``Generator`` arrives as its PCG64 state and goes back
   with the state it ended in. ``{"call", "repeat": n}`` makes n calls with the
   same arguments in one round trip (the checks' sampling loops).

Everything here can be changed by the student's code once it runs; the
trusted side validates every message and believes nothing else.
"""

import os
import signal
import sys
import time
import traceback
import types

IN_FD, OUT_FD = int(sys.argv[1]), int(sys.argv[2])
TEXT_CAP = 32_000
MESSAGE_CAP = 2_000

if os.getuid() == 0 and int(sys.argv[3]) != 0:
    os.setgroups([])
    os.setgid(int(sys.argv[3]))
    os.setuid(int(sys.argv[3]))

import json  # noqa: E402
import resource  # noqa: E402
import site  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
site.addsitedir(sys.argv[4])
import numpy as np  # noqa: E402

import wire  # noqa: E402


class CellTimeoutError(BaseException):
    """Raised in student code when a cell or call overruns its time limit."""


class ForbiddenRngMethod(AttributeError):
    """A method other than the allowed ones was asked of a restricted generator."""


_GENERATOR_PUBLIC = frozenset(n for n in dir(np.random.Generator) if not n.startswith("_"))


_RESTRICTED = {}


def restricted_generator(state: dict, allowed: frozenset):
    """A Generator that allows only ``allowed`` methods (as helpers.checks' RecordingGenerator)."""
    cls = _RESTRICTED.get(allowed)
    if cls is None:
        class RecordingGenerator(np.random.Generator):
            def random(self, size=None, dtype=np.float64, out=None):
                result = np.random.Generator.random(self, size, dtype, out)
                record = object.__getattribute__(self, "_record")
                record["calls"] += 1
                record["draws"] += int(np.size(result))
                return result

            def __getattribute__(self, name):
                if name in _GENERATOR_PUBLIC and name not in allowed:
                    object.__getattribute__(self, "_record")["forbidden"].append(name)
                    raise ForbiddenRngMethod(
                        f"rng.{name} 不允许使用：只能用 rng.random(...) 生成均匀随机数，再自己变换。 / "
                        f"rng.{name} is not allowed here: draw uniforms with rng.random(...) and transform them yourself.")
                return object.__getattribute__(self, name)

        cls = _RESTRICTED[allowed] = RecordingGenerator
    rng = cls(_bit_generator(state))
    object.__setattr__(rng, "_record", {"calls": 0, "draws": 0, "forbidden": []})
    return rng


def _bit_generator(state: dict):
    bit = np.random.PCG64(0)
    bit.state = state
    return bit


def _send(header, payload=b""):
    wire.send(OUT_FD, header, bytes(payload))


def _alarm(signum, frame):
    raise CellTimeoutError("time limit exceeded / 超过时间限制")


#: Wall-clock backstop of a cell or call, in multiples of its limit (the job's ``wall_factor``).
_WALL = [3.0]


def _arm(seconds):
    """Interrupt the cell or call after ``seconds`` of this process's CPU time (0: disarm).

    CPU, not wall time: a classmate's busy sandbox beside this one must not use up the limit
    (the trusted side counts the whole sandbox's CPU, children included). A wall-clock timer
    ``_WALL`` times as long catches a cell that sleeps or blocks.
    """
    signal.setitimer(signal.ITIMER_PROF, seconds)
    signal.setitimer(signal.ITIMER_REAL, seconds * _WALL[0])


def _limits(spec: dict) -> None:
    names = {"as": resource.RLIMIT_AS, "cpu": resource.RLIMIT_CPU, "nproc": resource.RLIMIT_NPROC,
             "fsize": resource.RLIMIT_FSIZE, "nofile": resource.RLIMIT_NOFILE, "core": resource.RLIMIT_CORE}
    for key, value in spec.items():
        resource.setrlimit(names[key], (int(value), int(value)))


def _text(exc) -> str:
    try:
        return str(exc)[:MESSAGE_CAP]
    except BaseException:  # noqa: BLE001 - a student's __str__ may raise
        return "(unprintable message)"


def _error(exc) -> dict:
    try:
        lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
    except BaseException:  # noqa: BLE001
        lines = [f"{type(exc).__name__}\n"]
    # Drop the runner's own frames (the first "File" line is this module's exec).
    text = "".join(lines[:1] + lines[2:]) if len(lines) > 2 else "".join(lines)
    return {"type": type(exc).__name__[:100], "message": _text(exc),
            "traceback": text[-TEXT_CAP:]}


class _Capture:
    """fds 1 and 2 (and sys.stdout/stderr) into two files, read back capped."""

    def __init__(self, folder):
        self.paths = [os.path.join(folder, ".out"), os.path.join(folder, ".err")]

    def __enter__(self):
        self.saved = [os.dup(1), os.dup(2)]
        for fd, path in zip((1, 2), self.paths):
            f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(f, fd)
            os.close(f)
        sys.stdout = open(1, "w", encoding="utf-8", errors="replace", closefd=False, buffering=1)
        sys.stderr = open(2, "w", encoding="utf-8", errors="replace", closefd=False, buffering=1)
        return self

    def __exit__(self, *exc):
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - the student may have closed it
                pass
        for fd, saved in zip((1, 2), self.saved):
            os.dup2(saved, fd)
            os.close(saved)
        self.text = []
        for path in self.paths:
            try:
                with open(path, "rb") as f:
                    self.text.append(f.read(TEXT_CAP).decode("utf-8", "replace"))
            except OSError:
                self.text.append("")
        return False


def _stub_ipython():
    class _IPython:
        def __getattr__(self, name):
            return lambda *args, **kwargs: None
    return _IPython()


def _display(*objects, **kwargs):
    for obj in objects:
        print(repr(obj)[:TEXT_CAP])


def main():
    job, payload = wire.recv(IN_FD)
    workdir = os.getcwd()
    for name, span in job.get("files", {}).items():
        with open(os.path.join(workdir, os.path.basename(name)), "wb") as f:
            f.write(payload[span[0]:span[0] + span[1]])
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a too-large write fails instead of killing us
    signal.signal(signal.SIGALRM, _alarm)
    signal.signal(signal.SIGPROF, _alarm)
    _WALL[0] = float(job.get("wall_factor", _WALL[0]))
    _limits(job["limits"])
    # The student's cells get a module of their own: honest names such as ``_send`` or ``wire`` must
    # not replace the runner's (whose functions keep their own globals).
    student_main = types.ModuleType("__main__")
    student_main.__dict__.update({"__builtins__": __builtins__, "get_ipython": _stub_ipython,
                                  "display": _display})
    sys.modules["__main__"] = student_main
    namespace = student_main.__dict__
    import linecache
    for index, source in enumerate(job["cells"]):
        filename = f"<cell {index + 1}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        error = None
        with _Capture(workdir) as out:
            _arm(job["cell_timeout"])
            try:
                exec(compile(source, filename, "exec"), namespace)
            except BaseException as exc:  # noqa: BLE001 - SystemExit too: the cell failed
                error = _error(exc)
            finally:
                _arm(0)
        _send({"cell": index, "stdout": out.text[0], "stderr": out.text[1], "error": error})
    names = {}
    for name in job["graded"]:
        value = namespace.get(name)
        names[name] = "missing" if value is None else ("callable" if callable(value) else "other")
    _send({"ready": True, "names": names})
    # Output of calls is not shown: fds 1 and 2 go nowhere, the channel has its own fds.
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    sys.stdout = open(1, "w", encoding="utf-8", errors="replace", closefd=False)
    sys.stderr = open(2, "w", encoding="utf-8", errors="replace", closefd=False)
    call_timeout = job["call_timeout"]
    while True:
        try:
            request, data = wire.recv(IN_FD)
        except EOFError:
            return
        if request.get("quit"):
            return
        _serve(request, data, namespace, call_timeout)


def _serve(request, data, namespace, call_timeout):
    """Answer one ``{"call"}`` request; with ``"repeat": n``, n calls in a row, as a loop would make them.

    Each call gets freshly decoded arguments (so an argument modified in place
    does not leak into the next call) and the same generators (so their state
    runs on). The time limit covers the whole batch. The first exception (or
    unsendable result) ends the batch and is the reply, with the generators'
    state as that call left it; otherwise ``"ok"`` is the list of the n results.
    """
    generators = []
    for spec in request["rngs"]:
        if spec.get("allowed") is not None:
            generators.append(restricted_generator(spec["state"], frozenset(spec["allowed"])))
        else:
            generators.append(np.random.Generator(_bit_generator(spec["state"])))
    repeat = request.get("repeat")
    count = 1 if repeat is None else int(repeat)
    reply, payload, results = {}, bytearray(), []
    func = namespace.get(request["call"])
    _arm(min(call_timeout * count, float(request.get("timeout", call_timeout))))
    try:
        for _ in range(count):
            args = wire.decode(request["args"], data, generators)
            kwargs = wire.decode(request["kwargs"], data, generators)
            result = func(*args, **kwargs)
            try:
                returned_generators = []
                results.append(wire.encode(result, payload, returned_generators))
                if returned_generators:
                    raise TypeError("a random generator cannot be returned")
            except TypeError as exc:
                payload = bytearray()
                reply["error"] = {"type": "TypeError", "message": f"{request['call']} returned a value that "
                                  f"cannot be graded: {exc}"[:MESSAGE_CAP]}
                break
            if repeat is not None and len(payload) > wire.MAX_PAYLOAD:
                payload = bytearray()
                reply["error"] = {"type": "ValueError",
                                  "message": f"{request['call']} returned too much data in {count} calls"}
                break
        _arm(0)
    except BaseException as exc:  # noqa: BLE001
        _arm(0)
        payload = bytearray()
        reply["error"] = {"type": type(exc).__name__[:100], "message": _text(exc)}
    if "error" not in reply:
        reply["ok"] = results[0] if repeat is None else results
    states = []
    for rng in generators:
        entry = {"state": object.__getattribute__(rng, "bit_generator").state}
        record = rng.__dict__.get("_record") if hasattr(rng, "__dict__") else None
        if record is not None:
            entry.update(calls=record["calls"], draws=record["draws"], forbidden=record["forbidden"][:100])
        states.append(entry)
    reply["rngs"] = states
    try:
        _send(reply, payload)
    except wire.WireError as exc:  # e.g. a result larger than the channel allows
        reply.pop("ok", None)
        reply["error"] = {"type": "ValueError", "message": f"{request['call']} returned too much data: {exc}"}
        _send(reply)

if __name__ == "__main__":
    main()
