"""Sandbox side: run the student's cells, then answer function calls.

``python -I -S runner.py IN_FD OUT_FD UID SITE_DIR LIMITS_JSON`` (inside bubblewrap).

1. Drop to ``UID`` when started as root (bubblewrap keeps only CAP_SETUID and
   CAP_SETGID for this; the switch clears them), import numpy, read the job
   (cells already turned into plain Python, data files) from ``IN_FD``.
2. Set hard = soft resource limits, then run each cell with fds 1/2 sent to a
   file (capped), reporting ``{"cell", "stdout", "stderr", "error"}``.
3. Report which graded names are callable, then serve ``{"call"}`` requests
   until ``{"quit"}`` or end of input: arguments and results are plain data
   (:mod:`wire`); a ``Generator`` argument becomes a :class:`generator.ServedGenerator`,
   whose draws are asked of the judge during the call (``{"draw"}`` messages);
   the lists, dicts and arrays a call modified go back with the answer.
   ``{"call", "repeat": n}`` makes n calls with the same arguments in one round
   trip (the checks' sampling loops); ``{"calls": [...]}`` makes different calls in
   order, an argument ``{"$o": [i, j]}`` standing for item j of call i's result.

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
import generator  # noqa: E402  (replaces numpy.random.Generator before any student code runs)
from generator import ServedGenerator, _Link  # noqa: E402
# Library randomness during the generator assignments' calls (issue 35): installed before any student code.
from watch import start as _watch_start, stop as _watch_stop  # noqa: E402

sys.modules.pop("watch", None)  # not found by name (importing it again installs a second watch: a finding)


class CellTimeoutError(BaseException):
    """Raised in student code when a cell or call overruns its time limit."""




def _send(header, payload=b""):
    wire.send(OUT_FD, header, bytes(payload))


def _alarm(signum, frame):
    raise CellTimeoutError("time limit exceeded / 超过时间限制")


#: Backstop against a cell or call that sleeps or blocks, in multiples of its CPU limit (the job's
#: ``wall_factor``).
_WALL = [3.0]
#: The armed step: its sleep limit (s), when it began, this process's runnable time then, and the
#: wall time it spent waiting for the judge's answers to its draws (the judge's time, not its own).
_STEP = {"limit": 0.0, "wall": 0.0, "run": None, "judge": 0.0}
generator.connect(IN_FD, OUT_FD, _STEP)


def _runnable() -> float | None:
    """Seconds this process ran or waited for a CPU (``/proc/self/schedstat``: run + run-queue delay)."""
    try:
        with open("/proc/self/schedstat", "rb") as f:
            run, wait = f.read().split()[:2]
        return (int(run) + int(wait)) / 1e9
    except (OSError, ValueError):
        return None


def _slept() -> float:
    """Wall time of the armed step in which this process neither ran nor waited for a CPU, nor waited
    for the judge: the time it slept or blocked (without schedstat: all its wall time but the judge's)."""
    step = _STEP
    run = _runnable()
    busy = run - step["run"] if run is not None and step["run"] is not None else 0.0
    return time.monotonic() - step["wall"] - step["judge"] - max(0.0, busy)


def _sleep_alarm(signum, frame):
    """SIGALRM: interrupt the step if it slept past its limit, else look again when it could have."""
    limit = _STEP["limit"]
    if limit <= 0:
        return
    slept = _slept()
    if slept >= limit:
        raise CellTimeoutError("time limit exceeded (the code slept or waited) / 超过时间限制（代码在休眠或等待）")
    signal.setitimer(signal.ITIMER_REAL, max(0.05, limit - slept))


def _arm(seconds):
    """Interrupt the cell or call after ``seconds`` of this process's CPU time (0: disarm).

    CPU, not wall time: neither a classmate's busy sandbox nor the machine's load may use up the
    limit (the trusted side counts the whole sandbox's CPU, children included). A cell that sleeps
    or blocks is caught by a wall-clock timer that counts only the time this process was neither
    running nor waiting for a CPU (nor waiting for the judge): ``_WALL`` times ``seconds``.
    """
    signal.setitimer(signal.ITIMER_PROF, seconds)
    # disarmed (0), nothing reads the clock: /proc/self/schedstat is read only when arming
    _STEP.update(limit=seconds * _WALL[0] if seconds else 0.0, wall=time.monotonic(),
                 run=_runnable() if seconds else None, judge=0.0)
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


def _bases(exc) -> list:
    """The built-in exception classes that ``exc``'s class derives from, nearest first (names).

    The judge rebuilds a student's own exception class as a subclass of these, so that
    ``class BudgetError(ValueError)`` is still caught by ``except ValueError`` there."""
    import builtins

    names = []
    try:
        for cls in type(exc).__mro__[1:]:
            if getattr(builtins, getattr(cls, "__name__", ""), None) is cls and cls not in (Exception, BaseException,
                                                                                            object):
                names.append(cls.__name__)
    except BaseException:  # noqa: BLE001 - a student's metaclass may raise
        return []
    return names[:8]


def _call_error(exc) -> dict:
    """A call's exception as the judge rebuilds it: class name, message, built-in bases."""
    error = {"type": type(exc).__name__[:100], "message": _text(exc)}
    bases = _bases(exc)
    if bases:
        error["bases"] = bases
    return error


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
    signal.signal(signal.SIGALRM, _sleep_alarm)
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
        if "calls" in request:
            _serve_calls(request, data, namespace, call_timeout)
        else:
            _serve(request, data, namespace, call_timeout)


def _serve(request, data, namespace, call_timeout):
    """Answer one ``{"call"}`` request; with ``"repeat": n``, n calls in a row, as a loop would make them.

    Generators are :class:`ServedGenerator` stand-ins, the same for every call
    of the request (their draws run on). Each call gets freshly decoded
    arguments (so an argument modified in place does not leak into the next
    call). A single call (no ``repeat``) reports the lists, dicts and arrays of
    its arguments that it modified (``"mutated"``: index and new content), so
    that the judge applies the change to the caller's objects, as in one process.
    The time limit covers the whole batch. The first exception (or unsendable
    result) ends the batch and is the reply; otherwise ``"ok"`` is the result
    (the list of the n results).
    """
    link = _Link()
    generators = [ServedGenerator(index, link) for index in range(len(request["rngs"]))]
    repeat = request.get("repeat")
    count = 1 if repeat is None else int(repeat)
    reply, payload, results = {}, bytearray(), []
    containers, before = [], None
    func = namespace.get(request["call"])
    watched = request.get("watch") is True
    if watched:
        _watch_start()
    _arm(min(call_timeout * count, float(request.get("timeout", call_timeout))))
    try:
        if repeat is not None:  # decoded once; every call gets its own copy (see _copier)
            fresh = _copier((wire.decode(request["args"], data, generators),
                             wire.decode(request["kwargs"], data, generators)))
        for step in range(count):
            _begin_step(generators, step)
            if repeat is None:
                found = []
                args = wire.decode(request["args"], data, generators, found)
                kwargs = wire.decode(request["kwargs"], data, generators, found)
                known = {id(c): index for index, c in enumerate(found)}
                containers, before = found, [_snapshot(c, generators, known) for c in found]
            else:
                args, kwargs = fresh()
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
        reply["error"] = _call_error(exc)
    if watched:
        reply["watch"] = _watch_stop()
    link.live = False
    if "error" not in reply:
        reply["ok"] = results[0] if repeat is None else results
    reply["rngs"] = [dict(zip(("used", "calls"), rng._settle())) for rng in generators]
    if before is not None:
        mutated = []
        for index, (container, old) in enumerate(zip(containers, before)):
            extra = bytearray()
            try:
                now = _snapshot(container, generators, known, extra)
            except (TypeError, RecursionError) as exc:
                reply.pop("ok", None)
                reply["error"] = {"type": "TypeError", "message": f"{request['call']} put a value that cannot "
                                  f"be graded into an argument: {_text(exc)}"}
                mutated = []
                break
            if now != old:
                mutated.append([index, _shift(now[0], len(payload))])
                payload += extra
        if mutated:
            reply["mutated"] = mutated
    try:
        _send(reply, payload)
    except wire.WireError as exc:  # e.g. a result larger than the channel allows
        reply.pop("ok", None)
        reply.pop("mutated", None)
        reply["error"] = {"type": "ValueError", "message": f"{request['call']} returned too much data: {exc}"}
        _send(reply)


def _copier(value):
    """A function that returns a fresh copy of decoded plain data ``value``, as a new decoding would
    give it (new lists, dicts and arrays; numbers, strings and generators shared, as they cannot be
    changed in place), or ``None`` where ``value`` itself can be shared.

    Decoding the arguments afresh for each of a repeat's calls cost most of a small function's time
    (20 floats: 22 µs a call, 12 µs with this); the decoded original is never handed to student code.
    """
    kind = type(value)
    if kind is np.ndarray:
        return value.copy
    if kind is list or kind is tuple:
        parts = [_copier(v) for v in value]
        if not any(parts):
            return value.copy if kind is list else (lambda: value)
        if kind is tuple and len(value) == 2 and all(parts):  # (args, kwargs)
            first, second = parts
            return lambda: (first(), second())
        if kind is tuple and sum(1 for p in parts if p) == 1:  # one array among numbers and generators
            i = next(i for i, p in enumerate(parts) if p)
            head, part, tail = value[:i], parts[i], value[i + 1:]
            return lambda: head + (part(),) + tail
        if kind is list:
            return lambda: [p() if p else v for p, v in zip(parts, value)]
        return lambda: tuple([p() if p else v for p, v in zip(parts, value)])
    if kind is dict:
        parts = {k: _copier(v) for k, v in value.items()}
        if not any(parts.values()):
            return value.copy
        return lambda: {k: (p() if p else value[k]) for k, p in parts.items()}
    return None


def _begin_step(generators, step):
    """Call ``step`` of a repeat or ``{"calls"}`` request begins: its draws are asked of the judge again
    (a generator of its own, handed over in an earlier call after many exchanges, ends with that call,
    as in a loop of single calls); the judge counts the exchanges of each call on its own."""
    for rng in generators:
        d = rng.__dict__
        d["_step"], d["_own"] = step, None


#: Bytes of results (arrays and JSON) after which a ``{"calls"}`` request stops early: the judge
#: sends the rest again, so no honest result list ever meets the channel's own limits.
CALLS_BYTES = 2 << 20
#: ``json.dumps(tree, allow_nan=False)`` without building an encoder for each result.
_JSON = json.JSONEncoder(allow_nan=False).encode


class _Unresolved(Exception):
    """An ``{"$o"}`` argument names a result that is not there (or has no such item)."""


def _outputs(tree, own, refs):
    """``tree`` with each ``{"$o": [i]}`` / ``{"$o": [i, j]}`` (result i of this request, or its item j)
    replaced by ``{"$r": k}``, ``refs[k]`` a fresh decoding of that result: what the judge would pass on."""
    if type(tree) is list:
        return [_outputs(v, own, refs) for v in tree]
    if type(tree) is not dict:
        return tree
    if len(tree) != 1:  # an array, a numpy scalar: nothing inside to replace
        return tree
    if "$o" in tree:
        where = tree["$o"]
        if type(where) is not list or not 1 <= len(where) <= 2 or not all(type(i) is int for i in where) \
                or not 0 <= where[0] < len(own):
            raise _Unresolved()
        found, data = own[where[0]]
        if len(where) == 2:
            items = found["$t"] if type(found) is dict and set(found) == {"$t"} else found
            if type(items) is not list or not 0 <= where[1] < len(items):
                raise _Unresolved()
            found = items[where[1]]
        refs.append(wire.decode(found, data, None))
        return {"$r": len(refs) - 1}
    if "$t" in tree:
        return {"$t": _outputs(tree["$t"], own, refs)}
    if "$d" in tree and type(tree["$d"]) is dict:
        return {"$d": {k: _outputs(v, own, refs) for k, v in tree["$d"].items()}}
    return tree


def _serve_calls(request, data, namespace, call_timeout):
    """Answer a ``{"calls": [{"call", "args", "kwargs"}, ...]}`` request: the calls in order, as a loop
    in one process makes them.

    An argument ``{"$o": [i]}`` is the result of call i of this request (``[i, j]``: its item j),
    decoded afresh, as the judge passes on what it received. Generators are shared by all calls
    (their draws run on). ``"done"`` holds the results of the calls made; the first exception ends
    the request (``"error"``, for call ``len(done)``). The request stops early (``"stopped"``)
    before a call whose ``$o`` cannot be found or once the results hold :data:`CALLS_BYTES`: the
    judge then makes the rest (it has every result), so stopping never changes an outcome (one known exception: a last result of 6-8 MiB after up to 2 MiB of
    earlier ones is refused, though it would fit alone; tests/autograder/test_steps.py, strict xfail).
    """
    link = _Link()
    generators = [ServedGenerator(index, link) for index in range(len(request["rngs"]))]
    steps = request["calls"]
    # "keep": the results the judge reads; the others stay here (null in "done") but the last one made
    keep = None if request.get("keep") is None else frozenset(request["keep"])
    reply, payload, done, own, size = {}, bytearray(), [], [], 0
    watched = request.get("watch") is True
    if watched:
        _watch_start()
    _arm(min(call_timeout * max(1, len(steps)), float(request.get("timeout", call_timeout))))
    try:
        for index, step in enumerate(steps):
            _begin_step(generators, index)
            if size > CALLS_BYTES:
                reply["stopped"] = True
                break
            refs = []
            try:
                args = wire.decode(_outputs(step["args"], own, refs), data, generators, None, refs)
                kwargs = wire.decode(_outputs(step["kwargs"], own, refs), data, generators, None, refs)
            except (_Unresolved, wire.WireError):
                reply["stopped"] = True
                break
            func = namespace.get(step["call"])
            result = func(*args, **kwargs)
            mine, returned_generators = bytearray(), []
            try:
                tree = wire.encode(result, mine, returned_generators)
                if returned_generators:
                    raise TypeError("a random generator cannot be returned")
                if keep is None or index in keep:
                    size += len(_JSON(tree)) + len(mine)
            except (TypeError, ValueError, RecursionError) as exc:
                reply["error"] = {"type": "TypeError", "message": f"{step['call']} returned a value that "
                                  f"cannot be graded: {_text(exc)}"[:MESSAGE_CAP]}
                break
            own.append((tree, bytes(mine)))
        _arm(0)
    except BaseException as exc:  # noqa: BLE001
        _arm(0)
        reply["error"] = _call_error(exc)
    if watched:
        reply["watch"] = _watch_stop()
    link.live = False
    reply["done"], payload = _results(own, keep)
    reply["rngs"] = [dict(zip(("used", "calls"), rng._settle())) for rng in generators]
    try:
        _send(reply, payload)
    except wire.WireError as exc:  # the last result was too large for the channel (the others hold <= CALLS_BYTES)
        last = steps[len(own) - 1]["call"] if own else "?"
        done, payload = _results(own[:-1], keep)
        reply.update(done=done, error={"type": "ValueError", "message": f"{last} returned too much data: {exc}"})
        reply.pop("stopped", None)
        _send(reply, payload)


def _results(own, keep):
    """``(done, payload)`` of a ``{"calls"}`` reply: the results made, ``None`` for those the judge
    does not keep, except the last one."""
    done, payload = [], bytearray()
    for index, (tree, mine) in enumerate(own):
        if keep is None or index in keep or index == len(own) - 1:
            done.append(_shift(tree, len(payload)) if mine else tree)  # no bytes: no array offset to move
            payload += mine
        else:
            done.append(None)
    return done, payload


def _snapshot(container, generators, known, payload=None):
    """``(tree, bytes)`` of an argument's own content, compared before and after the call.

    Items that are themselves argument containers stand as ``{"$r": index}``
    (they are compared on their own), so a change deep inside reports only
    the container that changed, and the judge keeps every object's identity.
    """
    own = bytearray() if payload is None else payload
    gens = list(generators)

    def item(value):
        index = known.get(id(value))
        return {"$r": index} if index is not None else wire.encode(value, own, gens)

    if isinstance(container, np.ndarray):
        tree = wire.encode(container, own, gens)
    elif type(container) is list:
        tree = [item(v) for v in container]
    else:
        if not all(type(k) is str for k in container):
            raise TypeError("dict keys must be str")
        tree = {"$d": {k: item(v) for k, v in container.items()}}
    return tree, bytes(own)


def _shift(tree, offset):
    """``tree`` with its arrays' payload offsets moved by ``offset`` (it joins the reply's payload)."""
    if type(tree) is list:
        return [_shift(v, offset) for v in tree]
    if type(tree) is dict and "$d" in tree:
        return {"$d": {k: _shift(v, offset) for k, v in tree["$d"].items()}}
    if type(tree) is dict and "$t" in tree:
        return {"$t": _shift(tree["$t"], offset)}
    if type(tree) is dict and "$a" in tree:
        return {**tree, "$a": [tree["$a"][0] + offset, tree["$a"][1]]}
    return tree


if __name__ == "__main__":
    main()
