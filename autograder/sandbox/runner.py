"""Sandbox side: run the student's cells, then answer function calls.

``python -I -S runner.py IN_FD OUT_FD UID SITE_DIR LIMITS_JSON`` (inside bubblewrap).

1. Drop to ``UID`` when started as root (bubblewrap keeps only CAP_SETUID and
   CAP_SETGID for this; the switch clears them), import numpy, read the job
   (cells already turned into plain Python, data files) from ``IN_FD``.
2. Set hard = soft resource limits, then run each cell with fds 1/2 sent to a
   file (capped), reporting ``{"cell", "stdout", "stderr", "error"}``.
3. Report which graded names are callable, then serve ``{"call"}`` requests
   until ``{"quit"}`` or end of input: arguments and results are plain data
   (:mod:`wire`); a ``Generator`` argument becomes a :class:`ServedGenerator`,
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
import math  # noqa: E402
import resource  # noqa: E402
import site  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
site.addsitedir(sys.argv[4])
import numpy as np  # noqa: E402

import wire  # noqa: E402


class CellTimeoutError(BaseException):
    """Raised in student code when a cell or call overruns its time limit."""


class ForbiddenRngMethod(AttributeError):
    """A generator method that the judge refused (same name as helpers.checks')."""


class GraderRngError(RuntimeError):
    """A served generator used outside the call it was passed to."""


#: Most uniforms sent ahead of a ``random`` request (the stand-in serves the next requests from
#: them; the judge rewinds its generator to what was really used at the next exchange).
PREFETCH_MAX = 1 << 16
#: How a scalar ``rng.random()`` asked on its own is named in a plan's cycle.
_SCALAR_RANDOM = json.dumps(["random", [None], {}], sort_keys=True)
_OUT_METHODS = frozenset({"random", "standard_normal", "standard_exponential", "standard_gamma"})


class _Link:
    """The exchange of one request: generators answer only while it is live."""

    def __init__(self):
        self.live = True


_SCALARS = (float, int, bool, str, type(None))


def _scalar_key(method, args, kwargs):
    """A dictionary key for a request made only of plain scalars (``None`` otherwise): equal keys
    encode alike (a float's sign of zero is part of it; a NaN never equals another)."""
    try:
        parts = [method]
        for value in args:
            if type(value) not in _SCALARS:
                return None
            parts.append((type(value), value, math.copysign(1.0, value) if type(value) is float else 0))
        for name, value in kwargs.items():
            if type(value) not in _SCALARS:
                return None
            parts.append((name, type(value), value, math.copysign(1.0, value) if type(value) is float else 0))
        return tuple(parts)
    except TypeError:
        return None


class ServedGenerator:
    """What student code receives for a ``numpy.random.Generator`` in grading.

    It holds no generator state: every method call asks the trusted side,
    which draws from its own generator, records the method and the number of
    draws, refuses what the assignment forbids, and sends the numbers back.
    ``isinstance(rng, np.random.Generator)`` is true (:class:`Generator`), but
    it is no numpy Generator: numpy's compiled methods refuse it (``TypeError``).
    Uniforms of ``random`` come in blocks (the judge sends some ahead) so that
    Python loops of scalar ``rng.random()`` cost one exchange per block, and the
    next exchange tells the judge how many were used.
    """

    def __init__(self, index: int, link: _Link):
        self.__dict__.update(_served_index=index, _link=link, _buffer=None, _pos=0, _local=0, _ahead=64,
                             _plan=None, _cycle=None, _plan_data=b"", _mixed=False,
                             _own=None, _keys={}, _step=0)

    def __repr__(self):
        return "Generator(served by the grader)"

    def _settle(self):
        d = self.__dict__
        if d["_own"] is not None:  # the judge's generator was left when the seed of this one was drawn
            return 0, 0
        if d["_plan"] is not None:
            used = d["_pos"]
            d.update(_plan=None, _cycle=None, _pos=0, _plan_data=b"")
            return used, 0
        buf = d["_buffer"]
        used = 0 if buf is None else d["_pos"]
        if buf is not None and buf.size - used > used:
            # Most of what was sent ahead goes back (other methods came between the uniforms): send
            # less next time, not ever more (a loop of rng.random(5), rng.exponential(b, 5) in one batch
            # of calls moved 512 kB per call once the amount had doubled up to PREFETCH_MAX).
            d["_ahead"] = max(64, 2 * used)
        calls = d["_local"]
        d.update(_buffer=None, _pos=0, _local=0)
        return used, calls

    def _ask(self, method, args, kwargs, prefetch=0):
        d = self.__dict__
        if not d["_link"].live:
            raise GraderRngError("这个 rng 属于之前的一次调用，不能再用。 / this rng belonged to an earlier call "
                                 "and cannot be used any more.")
        plan = d["_plan"]
        if plan is not None and d["_pos"] < len(plan) and not prefetch:
            # The usual request inside a plan (rng.laplace(0.0, b) again): its name, found without
            # encoding it, from the plain scalars it was made of (types and signs of zero included).
            fast = _scalar_key(method, args, kwargs)
            key = d["_keys"].get(fast) if fast is not None else None
            if key is not None and key == d["_cycle"][d["_pos"] % len(d["_cycle"])]:
                d["_pos"] += 1
                value = plan[d["_pos"] - 1]
                return value if type(value) is float else wire.decode(value, d["_plan_data"])
        kwargs = dict(kwargs)
        if "dtype" in kwargs and kwargs["dtype"] is not None and not isinstance(kwargs["dtype"], str):
            try:
                kwargs["dtype"] = np.dtype(kwargs["dtype"]).name
            except TypeError:
                pass
        payload, gens = bytearray(), []
        try:
            tree_args = wire.encode(tuple(args), payload, gens)["$t"]
            tree_kwargs = wire.encode(kwargs, payload, gens)
        except TypeError as exc:
            raise TypeError(f"rng.{method}: {exc}") from None
        if gens:
            raise TypeError(f"rng.{method}: a generator cannot be an argument here")
        plan = d["_plan"]
        if plan is not None and not payload and d["_pos"] < len(plan):
            cycle = d["_cycle"]
            key = json.dumps([str(method), tree_args, tree_kwargs], sort_keys=True)
            fast = _scalar_key(method, args, kwargs)
            if fast is not None and len(d["_keys"]) < 64:
                d["_keys"][fast] = key
            if key == cycle[d["_pos"] % len(cycle)]:
                d["_pos"] += 1
                return wire.decode(plan[d["_pos"] - 1], d["_plan_data"])
        if method != "random":
            d["_mixed"] = True
        used, calls = self._settle()
        message = {"draw": d["_served_index"], "method": str(method), "args": tree_args, "kwargs": tree_kwargs,
                   "used": used, "calls": calls}
        if prefetch:
            message["ahead"] = prefetch
        if d["_step"]:
            message["step"] = d["_step"]
        # No timeout (wall or CPU timer) between the request and its answer: the channel must stay in
        # step; the trusted side keeps its own deadline on the read.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM, signal.SIGPROF})
        asked = time.monotonic()
        try:
            _send(message, payload)
            reply, data = wire.recv(IN_FD)
        finally:
            _STEP["judge"] += time.monotonic() - asked
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGALRM, signal.SIGPROF})
        if "refused" in reply:
            raise ForbiddenRngMethod(str(reply["refused"]))
        if "error" in reply:
            kind = {"TypeError": TypeError, "ValueError": ValueError}.get(reply.get("type"), ValueError)
            raise kind(str(reply["error"]))
        if "plan" in reply:
            d.update(_plan=reply["plan"], _cycle=reply["cycle"], _pos=0, _plan_data=data)
        value = wire.decode(reply["value"], data)
        if "own" in reply:
            # Many exchanges in one call (a loop whose draws depend on the data): the rest of the call
            # draws from a generator of its own, seeded by the judge from its generator.
            words = reply["own"]
            if type(words) is not list or len(words) != 4 or not all(type(w) is int and 0 <= w < 2**63 for w in words):
                raise GraderRngError("rng: bad answer from the grader")
            d["_own"] = _NumpyGenerator(np.random.PCG64(np.random.SeedSequence(words)))
        return value

    def _own_generator(self):
        """The call's own generator once the judge handed one over (``None`` before)."""
        d = self.__dict__
        if d["_own"] is not None and not d["_link"].live:
            raise GraderRngError("这个 rng 属于之前的一次调用，不能再用。 / this rng belonged to an earlier call "
                                 "and cannot be used any more.")
        return d["_own"]

    def random(self, size=None, dtype=np.float64, out=None):
        """Uniform numbers in [0, 1), drawn by the judge."""
        own = self._own_generator()
        if own is not None:
            return own.random(size, dtype, out)
        if out is not None:
            if not isinstance(out, np.ndarray):
                raise TypeError("rng.random: out must be a numpy array")
            out[...] = self.random(out.shape, out.dtype)
            return out
        try:
            double = np.dtype(dtype) == np.float64
        except TypeError:
            double = False
        shape = (size,) if isinstance(size, (int, np.integer)) and not isinstance(size, bool) else size
        if not double or not (size is None or (isinstance(shape, tuple) and all(
                isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 0 for n in shape))):
            return self._ask("random", (size,), {"dtype": dtype})
        count = 1 if size is None else int(np.prod(shape, dtype=np.int64))
        d = self.__dict__
        plan = d["_plan"]
        if size is None and d["_mixed"] and (plan is None or (
                d["_pos"] < len(plan) and d["_cycle"][d["_pos"] % len(d["_cycle"])] == _SCALAR_RANDOM)):
            # A loop mixing rng.random() with other draws (rng.integers(k), ...): asked one by one, so
            # that the judge sees the cycle and answers it with a plan (one exchange per block of users).
            return self._ask("random", (None,), {})
        buf = d["_buffer"]
        if buf is not None and count <= buf.size - d["_pos"]:
            values = buf[d["_pos"]:d["_pos"] + count]
            d["_pos"] += count
            if count:
                d["_local"] += 1
        else:
            ahead = d["_ahead"]
            d["_ahead"] = min(2 * ahead, PREFETCH_MAX)
            sent = self._ask("random", (count,), {}, prefetch=ahead)
            if not isinstance(sent, np.ndarray) or sent.dtype != np.float64 or sent.ndim != 1 \
                    or not count <= sent.size <= count + ahead:
                raise GraderRngError("rng.random: bad answer from the grader")
            values = sent[:count]
            d.update(_buffer=sent[count:], _pos=0)
        if size is None:
            return float(values[0])
        return values.reshape(shape).copy()


def _served_method(name):
    def method(self, *args, **kwargs):
        own = self._own_generator()
        if own is not None:
            return getattr(own, name)(*args, **kwargs)
        if name in _OUT_METHODS and kwargs.get("out") is not None:
            out = kwargs.pop("out")
            if not isinstance(out, np.ndarray):
                raise TypeError(f"rng.{name}: out must be a numpy array")
            kwargs.update(size=out.shape, dtype=out.dtype)
            out[...] = self._ask(name, args, kwargs)
            return out
        if name == "shuffle":  # in place, as numpy's
            x = args[0] if args else kwargs.get("x")
            shuffled = self._ask(name, args, kwargs)
            if isinstance(x, np.ndarray):
                x[...] = shuffled
            elif isinstance(x, list):
                x[:] = shuffled
            return None
        return self._ask(name, args, kwargs)
    method.__name__ = method.__qualname__ = name
    return method


for _name in (n for n in dir(np.random.Generator) if not n.startswith("_") and n != "random"):
    if _name == "bit_generator":
        continue
    setattr(ServedGenerator, _name, _served_method(_name))


@property
def _no_bit_generator(self):
    raise ForbiddenRngMethod("rng.bit_generator 在评分时不可用：随机数由评分程序提供。 / rng.bit_generator is not "
                             "available in grading: the grader serves the random numbers.")


ServedGenerator.bit_generator = _no_bit_generator

_NumpyGenerator = np.random.Generator


class _GeneratorType(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, (_NumpyGenerator, ServedGenerator))

    def __subclasscheck__(cls, sub):
        return isinstance(sub, type) and issubclass(sub, (_NumpyGenerator, ServedGenerator))


class Generator(metaclass=_GeneratorType):
    """``numpy.random.Generator`` as student code sees it in grading.

    ``isinstance(rng, np.random.Generator)`` holds for numpy's generators and for
    the served stand-in; ``np.random.Generator(bit_generator)`` makes a numpy
    Generator; ``np.random.Generator.<method>(rng, ...)`` is ``rng.<method>(...)``,
    so on the stand-in it is a request that the judge refuses or serves. (A
    ``__class__`` trick on the stand-in would let numpy's compiled methods take
    it for a Generator and read memory that is not one.)
    """

    def __new__(cls, *args, **kwargs):
        return _NumpyGenerator(*args, **kwargs)


def _unbound(name):
    def method(self, *args, **kwargs):
        return getattr(self, name)(*args, **kwargs)
    method.__name__ = method.__qualname__ = name
    return method


for _name in (n for n in dir(_NumpyGenerator) if not n.startswith("_") and n != "bit_generator"):
    setattr(Generator, _name, _unbound(_name))
Generator.__module__ = "numpy.random"
np.random.Generator = Generator


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
    _STEP.update(limit=seconds * _WALL[0] if seconds else 0.0, wall=time.monotonic(), run=_runnable(), judge=0.0)
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
    _arm(min(call_timeout * count, float(request.get("timeout", call_timeout))))
    try:
        for step in range(count):
            _begin_step(generators, step)
            found = [] if repeat is None else None
            args = wire.decode(request["args"], data, generators, found)
            kwargs = wire.decode(request["kwargs"], data, generators, found)
            if found is not None:
                known = {id(c): index for index, c in enumerate(found)}
                containers, before = found, [_snapshot(c, generators, known) for c in found]
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


def _begin_step(generators, step):
    """Call ``step`` of a repeat or ``{"calls"}`` request begins: its draws are asked of the judge again
    (a generator of its own, handed over in an earlier call after many exchanges, ends with that call,
    as in a loop of single calls); the judge counts the exchanges of each call on its own."""
    for rng in generators:
        rng.__dict__.update(_step=step, _own=None)


#: Bytes of results (arrays and JSON) after which a ``{"calls"}`` request stops early: the judge
#: sends the rest again, so no honest result list ever meets the channel's own limits.
CALLS_BYTES = 2 << 20


class _Unresolved(Exception):
    """An ``{"$o"}`` argument names a result that is not there (or has no such item)."""


def _outputs(tree, own, refs):
    """``tree`` with each ``{"$o": [i]}`` / ``{"$o": [i, j]}`` (result i of this request, or its item j)
    replaced by ``{"$r": k}``, ``refs[k]`` a fresh decoding of that result: what the judge would pass on."""
    if type(tree) is list:
        return [_outputs(v, own, refs) for v in tree]
    if type(tree) is not dict:
        return tree
    if set(tree) == {"$o"}:
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
    if set(tree) == {"$t"}:
        return {"$t": _outputs(tree["$t"], own, refs)}
    if set(tree) == {"$d"} and type(tree["$d"]) is dict:
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
    reply, payload, done, own, size = {}, bytearray(), [], [], 0
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
                size += len(json.dumps(tree, allow_nan=False)) + len(mine)
            except (TypeError, ValueError, RecursionError) as exc:
                reply["error"] = {"type": "TypeError", "message": f"{step['call']} returned a value that "
                                  f"cannot be graded: {_text(exc)}"[:MESSAGE_CAP]}
                break
            own.append((tree, bytes(mine)))
            done.append(_shift(tree, len(payload)))
            payload += mine
        _arm(0)
    except BaseException as exc:  # noqa: BLE001
        _arm(0)
        reply["error"] = {"type": type(exc).__name__[:100], "message": _text(exc)}
    link.live = False
    reply["done"] = done
    reply["rngs"] = [dict(zip(("used", "calls"), rng._settle())) for rng in generators]
    try:
        _send(reply, payload)
    except wire.WireError as exc:  # the last result was too large for the channel (the others hold <= CALLS_BYTES)
        last = steps[len(done) - 1]["call"] if done else "?"
        reply.update(done=done[:-1], error={"type": "ValueError", "message": f"{last} returned too much data: {exc}"})
        reply.pop("stopped", None)
        _send(reply, payload[:_end(done[:-1])])


def _end(trees) -> int:
    """Where the arrays of ``trees`` end in the payload (0: none)."""
    end = 0

    def walk(tree):
        nonlocal end
        if type(tree) is list:
            for v in tree:
                walk(v)
        elif type(tree) is dict:
            if "$a" in tree:
                end = max(end, tree["$a"][0] + tree["$a"][1])
            for v in tree.values():
                if type(v) in (list, dict):
                    walk(v)
    walk(trees)
    return end


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
