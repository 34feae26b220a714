"""Trusted side of a call: the stand-in that a check receives instead of the student's function.

A :class:`Proxy` sends its arguments to the sandbox as plain data and
rebuilds the result as plain data (:mod:`autograder.sandbox.wire`). A
``numpy.random.Generator`` argument is *served*: no state crosses; the
sandbox gets a stand-in whose every method call is a request answered here
(:class:`autograder.served.Served`) from the real generator, which therefore ends the call in
the state one process would have left. A ``helpers.checks.RecordingGenerator``
is served only ``random``: the judge counts the calls and draws and refuses
and records any other method, so its record is the judge's, not the
student's. Lists, dicts and arrays that a single call modified come back
(validated as plain data) and are applied to the caller's objects. A student exception is raised again as the same built-in
type (``ValueError`` stays ``ValueError``), otherwise as a class of the same name derived from
the built-in bases the runner names (a ``class BudgetError(ValueError)`` is a ``ValueError``
here); nothing the sandbox sends is imported or run.

The served generator's side of the judge is :mod:`autograder.served`; the source stand-ins
that a proxy wraps for the checks that read source, :mod:`autograder.standins`.
"""

from __future__ import annotations

import builtins
import contextlib
import json
import time

import numpy as np

from autograder.jail import GRACE, SandboxError
from autograder.sandbox import wire
from autograder.served import Served, bit_generator
from helpers import checks
from helpers.checks import ForbiddenRngMethod

Output = checks.core.Output

MAX_CALLS = 2_000_000
#: Most calls in one ``call_repeatedly`` batch (the checks need at most 30,000).
MAX_REPEAT = 200_000
#: Most steps of a ``call_sequence`` sent in one request (their arguments travel together).
MAX_SEQUENCE = 1_000



def _builtin_exception(name) -> type | None:
    cls = getattr(builtins, name, None) if isinstance(name, str) and name.isidentifier() else None
    return cls if isinstance(cls, type) and issubclass(cls, Exception) else None


def student_exception(kind: str, message: str, restricted: bool, bases=()) -> BaseException:
    """The exception to raise for a student exception ``kind: message``.

    A built-in name is that built-in. Any other class is rebuilt by name as a subclass of the
    built-in exceptions ``bases`` names (the runner sends those of its MRO, nearest first), so that
    a student's ``class BudgetError(ValueError)`` is caught by the judge's ``except ValueError``
    (issue 35: rebuilt as a plain ``Exception``, a correct accountant scored 3/10). Only names
    are read; a name that is not a built-in ``Exception`` subclass is ignored.
    """
    kind = kind if isinstance(kind, str) and kind.isidentifier() and len(kind) <= 100 else "Exception"
    message = str(message)[:2000]
    if kind == "ForbiddenRngMethod" and restricted:
        return ForbiddenRngMethod(message)
    cls = _builtin_exception(kind)
    if cls is not None:
        try:
            return cls(message)
        except Exception:  # noqa: BLE001 - e.g. UnicodeDecodeError needs 5 arguments
            pass
    found = [] if type(bases) not in (list, tuple) else [_builtin_exception(b) for b in list(bases)[:8]]
    found = list(dict.fromkeys(c for c in found if c is not None))
    # All the most derived ones together (numpy's AxisError is a ValueError and an IndexError), else
    # the nearest that takes a message alone (UnicodeDecodeError needs 5 arguments: UnicodeError).
    derived = tuple(c for c in found if not any(o is not c and issubclass(o, c) for o in found))
    for parents in ([derived] if derived else []) + [(c,) for c in found] + [(Exception,)]:
        try:
            return type(kind, parents, {"__module__": "student"})(message)
        except Exception:  # noqa: BLE001 - a layout conflict, or a base needing other arguments
            continue
    return Exception(message)


class CellBudget:
    """The CPU seconds that the calls of one test cell may use together, counted in the sandboxes'
    own CPU time (without a cgroup: wall time). ``seconds`` is infinite until :meth:`restart`."""

    def __init__(self, seconds: float = float("inf")):
        self.seconds, self.used = seconds, 0.0
        self.last: dict = {}  # sandbox -> its CPU time at the start of the last call made to it

    def restart(self, seconds: float) -> None:
        self.seconds, self.used, self.last = float(seconds), 0.0, {}

    def reading(self, sandbox, now: float | None) -> None:
        """The CPU time of ``sandbox`` read at the start of a call: what it used since the start of the
        previous call to it (that call, since it sits idle between calls) is spent."""
        before = self.last.get(id(sandbox))
        if now is not None and before is not None:
            self.spend(now - before)
        self.last[id(sandbox)] = now

    def left(self) -> float:
        return self.seconds - self.used

    def spend(self, seconds: float) -> None:
        self.used += max(0.0, seconds)


def _argument_text(value) -> str:
    """An argument as a timeout message shows it: an array by its size, a scalar by its value."""
    if isinstance(value, np.ndarray):
        return f"array of {value.size:,} values" if value.ndim == 1 else f"array of shape {value.shape}"
    if isinstance(value, (list, tuple)) and len(value) > 8:
        return f"{type(value).__name__} of {len(value):,} values"
    if isinstance(value, np.random.Generator):
        return "rng"
    text = repr(value)
    return text if len(text) <= 30 else text[:27] + "..."


def call_timeout_message(name: str, args, kwargs, repeat, used, limit: float) -> str:
    """Bilingual: which call ran out of CPU time, how much it used for what input, the limit, the fix."""
    shown = ", ".join([_argument_text(a) for a in args] + [f"{k}={_argument_text(v)}" for k, v in kwargs.items()])
    call = f"{name}({shown})"
    calls_zh = call if repeat is None else f"{repeat} 次 {call}"
    calls_en = call if repeat is None else f"{repeat} calls of {call}"
    spent = f"{used:.3g}" if used is not None else f"> {limit:.3g}"
    return (f"{calls_zh} 用了 {spent} 秒 CPU 时间，超过上限 {limit:.3g} 秒（按你的代码自己用掉的 CPU 时间计算，与机器的负载无关）。"
            f"逐个元素的 Python 循环在这里太慢：请用 numpy 向量化，一次处理整个数组（例如 rng.random(n) 一次取 n 个随机数，"
            f"用 np.where 代替 if）。 / {calls_en} used {spent} s of CPU time, over the limit of {limit:.3g} s (counted "
            f"in your code's own CPU time, whatever the machine's load). A Python loop over the elements is too slow "
            f"here: vectorise with numpy and work on the whole array at once (e.g. rng.random(n) draws n numbers in "
            f"one call; np.where instead of if).")


def cell_timeout_message(name: str, seconds: float) -> str:
    return (f"{name}：这个测试单元格中对你的函数的调用一共用完了 {seconds:.3g} 秒 CPU 时间的上限。请用 numpy 向量化你的代码。 / "
            f"{name}: the calls of your functions in this test cell used up their {seconds:.3g} s of CPU time "
            f"together. Vectorise your code with numpy.")


class Proxy:
    """Callable stand-in for the student's function ``name`` in the sandbox."""

    def __init__(self, sandbox, name: str, call_timeout: float, standin=None, cell_budget=None, twin=None):
        self._sandbox, self._timeout, self._twin = sandbox, float(call_timeout), twin
        self._cell = cell_budget if cell_budget is not None else CellBudget()
        self.__name__ = self.__qualname__ = name
        self.__module__ = "__main__"
        if standin is not None:  # what inspect.getsource and find_forbidden_calls read
            self.__wrapped__ = standin
            self.__code__ = standin.__code__
            self.__globals__ = standin.__globals__
        self.calls = 0
        self._encoding = None

    def __repr__(self) -> str:
        return f"<function {self.__name__}>"

    def __call__(self, *args, **kwargs):
        return self._request(None, args, kwargs)

    @contextlib.contextmanager
    def elsewhere(self):
        """Calls inside the ``with`` go to another sandbox that ran the same cells (``twin``).

        A check that changes the draws of a run and compares the outputs
        (:func:`helpers.checks.forbidden._check_built_from_draws`) sends the
        changed runs there: a process that never saw the original draws cannot
        answer them from memory (red team: a sampler that remembered its first
        output and gave it back for every later call with nearby draws passed
        every such check in one process). Yields whether the calls moved.
        """
        other = self._twin() if self._twin is not None else None
        if other is None:
            yield False
            return
        mine, self._sandbox = self._sandbox, other
        try:
            yield True
        finally:
            self._sandbox = mine

    def call_repeatedly(self, n: int, *args, **kwargs) -> list:
        """``[self(*args, **kwargs) for _ in range(n)]`` in one round trip to the sandbox.

        Same results, generator states and exceptions as the loop: the runner
        decodes fresh copies of the arguments for every call (nothing a call
        modifies comes back), the generators' draws run on from call to call,
        and the first exception ends the batch (raised here, the generators
        left as the failing call left them). The time limit is ``n`` call
        limits, within the test cell's.
        """
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 0 <= n <= MAX_REPEAT:
            raise ValueError(f"call_repeatedly: n must be an int in 0..{MAX_REPEAT}, got {n!r}")
        n = int(n)
        return [] if n == 0 else self._request(n, args, kwargs)

    def _request(self, repeat, args, kwargs):
        name = self.__name__
        count = 1 if repeat is None else repeat
        self._count_calls(count)
        self._encoding = time.process_time()
        payload, generators, containers = bytearray(), [], []
        tree_args = wire.encode(tuple(args), payload, generators, containers)["$t"]
        tree_kwargs = wire.encode(dict(kwargs), payload, generators, containers)
        served = self._served(generators, count)
        # The runner interrupts the call itself at ``limit``; the sandbox is killed only at ``limit + GRACE``.
        # Limits count the sandbox's CPU time (never the machine's load, never the judge's time).
        limit = max(0.01, min(self._timeout * count, self._cell.left()))
        request = {"call": name, "args": {"$t": tree_args}, "kwargs": tree_kwargs,
                   "rngs": [{"allowed": None if s.allowed is None else sorted(s.allowed)} for s in served],
                   "timeout": limit}
        _watched(request, served)
        if repeat is not None:
            request["repeat"] = repeat
        what = f"a call of {name}" if repeat is None else f"{repeat} calls of {name}"
        outcome, used = self._exchange(request, payload, served, what, limit,
                                       lambda reply, data: self._apply(reply, data, served, containers, repeat))
        if isinstance(outcome, BaseException):
            if type(outcome).__name__ == "CellTimeoutError" and "slept" not in str(outcome):
                raise TimeoutError(call_timeout_message(name, args, kwargs, repeat, used, limit)) from None
            raise outcome
        return outcome

    def call_sequence(self, steps, keep=None) -> tuple[list, Exception | None]:
        """``steps`` (``[(proxy, args, kwargs)]``, proxies of this sandbox) called in order as a loop
        calls them, in a few round trips: see :func:`helpers.checks.core.call_sequence`.

        An argument ``helpers.checks.core.Output(i, j)`` is the result of step i (its item j),
        passed on as plain data, as the loop would pass the result it received. Returns the
        results and the exception of the step that raised one (``None`` if all returned). The
        sandbox sends results back in parts of at most ``CALLS_BYTES``; a step it cannot resolve
        is made here from the results received. ``keep``: the indices of the results the caller
        reads; the others (but the last of each reply, which a later step may take) stay in the
        sandbox and are ``None`` here (``helpers.checks.core.call_sequence`` checked that no step
        takes one of them).
        """
        results: list = []
        while len(results) < len(steps):
            start = len(results)
            chunk, error = [], None
            for proxy, args, kwargs in steps[start:start + MAX_SEQUENCE]:
                if getattr(proxy, "_sandbox", None) is not self._sandbox:
                    raise ValueError("call_sequence: every step must call a function of the same submission")
                try:
                    chunk.append((proxy.__name__, tuple([_output_ref(a, results, start) if isinstance(a, Output)
                                                         else a for a in args]),
                                  {k: _output_ref(v, results, start) for k, v in kwargs.items()} if kwargs else {},
                                  args, kwargs))
                except (IndexError, KeyError, TypeError) as exc:  # as the loop fails to take an item
                    error = exc
                    break
            if chunk:
                kept = None if keep is None else [i - start for i in sorted(keep) if start <= i < start + len(chunk)]
                try:
                    done, failed, stopped = self._request_calls(chunk, kept)
                except Exception as exc:  # noqa: BLE001 - what a single call raises, for the step it stopped at
                    return results, exc
                # Steps the sandbox stopped before are sent again: counted when made, not at every sending
                # (MAX_CALLS), so a sequence of large results is not cut off as too many calls.
                self.calls -= len(chunk) - len(done) - (failed is not None)
                results += done
                if failed is not None:
                    return results, failed
                if stopped and not done:  # the sandbox could not resolve it: made here, as a single call
                    name, _, _, args, kwargs = chunk[0]
                    try:
                        results.append(steps[start][0](*(_resolved(a, results) for a in args),
                                                       **{k: _resolved(v, results) for k, v in kwargs.items()}))
                    except Exception as exc:  # noqa: BLE001
                        return results, exc
                if len(done) == len(chunk) and error is not None:
                    return results, error
            elif error is not None:
                return results, error
        return results, None

    def _request_calls(self, chunk, kept=None):
        self._count_calls(len(chunk))
        self._encoding = time.process_time()
        payload, generators = bytearray(), []
        calls = _encode_steps(chunk, payload, generators)
        served = self._served(generators, len(chunk))
        limit = max(0.01, min(self._timeout * len(chunk), self._cell.left()))
        request = {"calls": calls, "rngs": [{"allowed": None if s.allowed is None else sorted(s.allowed)}
                                            for s in served], "timeout": limit}
        if kept is not None:
            request["keep"] = kept
        _watched(request, served)
        names = sorted({name for name, *_ in chunk})
        what = f"{len(chunk)} calls of {', '.join(names)}"
        (done, error, stopped), used = self._exchange(request, payload, served, what, limit,
                                                      lambda reply, data: self._apply_calls(reply, data, served,
                                                                                            len(chunk), kept))
        if error is not None and type(error).__name__ == "CellTimeoutError" and "slept" not in str(error):
            name, _, _, args, kwargs = chunk[len(done)]
            error = TimeoutError(call_timeout_message(name, args, kwargs, len(chunk), used, limit))
        return done, error, stopped

    def _count_calls(self, count: int) -> None:
        if self._cell.left() <= 0:
            raise TimeoutError(cell_timeout_message(self.__name__, self._cell.seconds))
        self.calls += count
        if self.calls > MAX_CALLS:
            raise RuntimeError(f"{self.__name__}: too many calls")

    def _served(self, generators, steps: int = 1) -> list:
        for rng in generators:
            if not isinstance(bit_generator(rng), np.random.PCG64):
                raise TypeError(f"{self.__name__}: only PCG64 generators can be passed to student code")
        served = [Served(rng) for rng in generators]
        for server in served:
            server.steps = max(1, steps)
        return served

    def _exchange(self, request, payload, served, what, limit, apply):
        """Send ``request``, serve its draws, and return ``(apply(reply, data), CPU seconds used)``."""
        sandbox = self._sandbox
        # The judge's own work on the call's data (encoding its arguments, decoding and checking its
        # result) counts in the test cell's CPU budget: a result the sandbox sends cheaply (its runner
        # patched) but the judge must walk cost the trusted side 90 s at --timeout 20 (red team s11 A8).
        judge = 0.0 if self._encoding is None else time.process_time() - self._encoding
        now = sandbox.cpu_seconds() if hasattr(sandbox, "cpu_seconds") else None
        step, started = sandbox.step(limit + GRACE, now), time.monotonic()
        sandbox.send(request, bytes(payload), step, what=what)  # within the call's limits: see Sandbox.send
        try:
            while True:
                reply, data = sandbox.recv(limit + GRACE, what, step)
                if not (isinstance(reply, dict) and "draw" in reply):
                    break
                judged = time.process_time()
                answer = self._draw(reply, data, served)
                sandbox.send(*answer, step, what=f"the draws asked for by {what}")
                if hasattr(step, "charge"):  # the judge's work for the call counts in its limit
                    step.charge(time.process_time() - judged)
            decoding = time.process_time()
            outcome = apply(reply, data)
            judge += time.process_time() - decoding
        except (wire.WireError, KeyError, TypeError, ValueError, OverflowError) as exc:
            sandbox.kill(f"malformed reply from the sandbox to {what}: {str(exc)[:100]}")
            raise SandboxError(sandbox.problem) from None
        finally:
            for server in served:  # what was drawn and refused stays on record, whatever the outcome
                server.record()
            if now is None:  # no CPU accounting: the cell's limit counts wall time
                self._cell.spend(time.monotonic() - started)
            else:
                self._cell.reading(sandbox, now)
                self._cell.spend(judge)
        return outcome, step.used()

    @staticmethod
    def _draw(request, data, served):
        """The answer to one ``rng.<method>(...)`` asked by the student's code."""
        if set(request) - {"draw", "method", "args", "kwargs", "used", "calls", "ahead", "step"}:
            raise wire.WireError("bad draw request")
        index = request["draw"]
        if type(index) is not int or not 0 <= index < len(served) or type(request["args"]) is not list:
            raise wire.WireError("bad draw request")
        server = served[index]
        server.begin(request.get("step", 0))
        server.settle(request["used"], request["calls"])
        arrays = wire.array_budget(data)  # one message: its payload's bytes decoded once at most
        args = wire.decode({"$t": request["args"]}, data, None, arrays=arrays)
        kwargs = wire.decode(request["kwargs"], data, None, arrays=arrays)
        if type(kwargs) is not dict:
            raise wire.WireError("bad draw request")
        # Requests with scalar arguments only are named by their text: the stand-in names them alike.
        key = None if data else json.dumps([request["method"], request["args"], request["kwargs"]], sort_keys=True)
        return server.serve(request["method"], args, kwargs, request.get("ahead"), key)

    def _apply(self, reply, data, served, containers, repeat=None):
        if not isinstance(reply, dict) or set(reply) - {"ok", "error", "rngs", "mutated", "watch"} \
                or ("ok" in reply) == ("error" in reply):
            raise wire.WireError("bad reply")
        _settle_all(reply["rngs"], served)
        _watch_report(reply, served)
        changes = []
        mutated = reply.get("mutated", [])
        if type(mutated) is not list or (mutated and repeat is not None) or len(mutated) > len(containers):
            raise wire.WireError("bad mutations")
        generators = [server.rng for server in served]
        arrays = wire.array_budget(data)  # one message: its payload's bytes decoded once at most
        for item in mutated:
            if type(item) is not list or len(item) != 2 or type(item[0]) is not int \
                    or not 0 <= item[0] < len(containers):
                raise wire.WireError("bad mutation")
            changes.append((containers[item[0]], wire.decode(item[1], data, generators, None, containers,
                                                             arrays=arrays)))
        for target, new in changes:
            if type(new) is not type(target) and not (isinstance(target, np.ndarray) and type(new) is np.ndarray):
                raise wire.WireError("a mutated argument changed its type")
            if isinstance(target, np.ndarray) and (new.shape != target.shape or new.dtype != target.dtype):
                raise wire.WireError("a mutated array changed its shape or dtype")
        if "ok" in reply and repeat is not None:
            results = reply["ok"]
            if type(results) is not list or len(results) != repeat:
                raise wire.WireError(f"expected a list of {repeat} results")
            if set(map(type, results)) == {float}:  # floats: what decoding each one gives (1 node each)
                outcome = list(results)
            else:
                outcome = [wire.decode(tree, data, None, arrays=arrays) for tree in results]  # each checked as one
        elif "ok" in reply:
            outcome = wire.decode(reply["ok"], data, None, arrays=arrays)
        else:
            error = reply["error"]
            if type(error) is not dict or type(error.get("type")) is not str or type(error.get("message")) is not str:
                raise wire.WireError("bad error")
            outcome = student_exception(error["type"], error["message"],
                                        any(server.allowed is not None for server in served), error.get("bases", ()))
        # Only once everything is valid: the caller's objects change as the student's code changed them
        # (an argument's container inside another stays the same object).
        for target, new in changes:
            if isinstance(target, np.ndarray):
                if target.flags.writeable:
                    target[...] = new
            elif isinstance(target, list):
                target[:] = new
            else:
                target.clear()
                target.update(new)
        return outcome

    @staticmethod
    def _apply_calls(reply, data, served, count, kept=None):
        """``(results, exception or None, stopped)`` of a ``{"calls"}`` reply (``kept``: the results
        to decode, with the last; the others must be ``null`` and are ``None``)."""
        if not isinstance(reply, dict) or set(reply) - {"done", "error", "rngs", "stopped", "watch"} \
                or "done" not in reply:
            raise wire.WireError("bad reply")
        _settle_all(reply["rngs"], served)
        _watch_report(reply, served)
        done, stopped = reply["done"], reply.get("stopped", False)
        if type(done) is not list or len(done) > count or type(stopped) is not bool \
                or (len(done) == count and ("error" in reply or stopped)) \
                or (len(done) < count and ("error" in reply) == stopped):
            raise wire.WireError("bad list of results")
        arrays = wire.array_budget(data)  # one message: its payload's bytes decoded once at most
        if kept is not None:
            kept = frozenset(kept) | {len(done) - 1}
            if any(tree is not None for i, tree in enumerate(done) if i not in kept):
                raise wire.WireError("a result that was not asked for")
        results = [wire.decode(tree, data, None, arrays=arrays) if kept is None or i in kept else None
                   for i, tree in enumerate(done)]  # each checked as one
        error = None
        if "error" in reply:
            error = reply["error"]
            if type(error) is not dict or type(error.get("type")) is not str or type(error.get("message")) is not str:
                raise wire.WireError("bad error")
            error = student_exception(error["type"], error["message"],
                                      any(server.allowed is not None for server in served), error.get("bases", ()))
        return results, error, stopped


def _encode_steps(chunk, payload: bytearray, generators: list) -> list:
    """The ``{"calls"}`` entries of ``chunk``: what encoding each step's arguments gives, an argument met
    in an earlier step (the same values array, ε, generator: the same object) encoded once.

    Nothing runs between the steps' encodings, so an object's tree stays what it was. A step names
    the payload bytes of one earlier tree at most once (an object twice in one step is encoded
    again): each step's arrays still fit the payload once, as the sandbox's decoding requires
    (``wire.array_budget``). privacy_budget sends the same 20 values with each of 14,000 steps.
    """
    memo: dict = {}
    calls = []
    for name, args, kwargs, _, _ in chunk:
        used, trees = set(), []
        for value in args:
            if type(value) is wire.Output:
                trees.append({"$o": [value.index] + ([] if value.item is None else [value.item])})
                continue
            key = id(value)
            tree = memo.get(key)
            if tree is None or key in used:
                tree = wire.encode(value, payload, generators, depth=1)  # an item of the arguments' tuple
                memo[key] = tree  # value stays alive in chunk: its id is not reused meanwhile
            used.add(key)
            trees.append(tree)
        calls.append({"call": name, "args": {"$t": trees},
                      "kwargs": wire.encode(kwargs, payload, generators) if kwargs else {"$d": {}}})
    return calls


def _watched(request: dict, served) -> None:
    """Ask the sandbox to watch for library randomness (``autograder/sandbox/watch.py``) during a call
    whose generators are restricted to ``random`` (the generator assignments): their points need a
    sampler built from the served draws (issue 35). Calls with unrestricted generators (the audit
    assignments, which may use any ``rng`` method) are not watched and cost nothing more."""
    if any(server.allowed is not None for server in served):
        request["watch"] = True


#: What a watched call's reply said when it had no report: the sandbox's runner was changed.
NO_REPORT = "no report from the grader's watch (the grading process was changed)"


def _watch_report(reply: dict, served) -> None:
    """The library randomness a watched call's reply reports, recorded by the judge in each restricted
    generator (``RecordingGenerator.library``, which ``helpers.checks.core._after_call`` fails on). A
    reply without the report, or with a malformed one, is recorded as :data:`NO_REPORT`."""
    watched = [server for server in served if server.allowed is not None]
    if not watched:
        if "watch" in reply:
            raise wire.WireError("a report that was not asked for")
        return
    seen = reply.get("watch")
    if type(seen) is not list or len(seen) > 16 or not all(type(s) is str for s in seen):
        seen = [NO_REPORT]
    for server in watched:
        server.library.extend(str(s)[:300] for s in seen)


def _settle_all(states, served) -> None:
    """Each served generator set to what its stand-in says it used (a reply's ``"rngs"``)."""
    if type(states) is not list or len(states) != len(served):
        raise wire.WireError("bad generator entries")
    for server, entry in zip(served, states):
        if type(entry) is not dict or set(entry) != {"used", "calls"}:
            raise wire.WireError("bad generator entry")
        server.settle(entry["used"], entry["calls"])


def _output_ref(value, results, start):
    """A step's argument as sent: ``Output(i)`` of a step of this request as ``wire.Output``, of an
    earlier request as the result received (``IndexError``/``KeyError``/``TypeError`` as taking it would)."""
    if isinstance(value, checks.core.Output):
        if value.index >= start:
            return wire.Output(value.index - start, value.item)
        return _resolved(value, results)
    return value


def _resolved(value, results):
    if isinstance(value, checks.core.Output):
        found = results[value.index]
        return found if value.item is None else found[value.item]
    return value
