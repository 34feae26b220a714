"""Trusted side of a call: the stand-in that a check receives instead of the student's function.

A :class:`Proxy` sends its arguments to the sandbox as plain data and
rebuilds the result as plain data (:mod:`autograder.sandbox.wire`). A
``numpy.random.Generator`` argument crosses as its PCG64 state and is set
to the state the student's code ended with (validated); a
``helpers.checks.RecordingGenerator`` also crosses its restriction (only
``rng.random``) and gets back its call counts and the forbidden methods the
student asked for. A student exception is raised again as the same built-in
type (``ValueError`` stays ``ValueError``), otherwise as an ``Exception``
subclass of the same name; nothing the sandbox sends is imported or run.

For the checks that read a function's source (``find_forbidden_calls``,
``inspect.getsource``), :func:`standins` builds, from the student's code as
text, function objects whose code object is compiled (never run: every body
starts with ``raise``) and whose globals describe the student's imports.
"""

from __future__ import annotations

import ast
import builtins
import linecache
import time
import types

import numpy as np

from autograder.jail import GRACE, SandboxError
from autograder.sandbox import wire

MAX_CALLS = 2_000_000
#: Most calls in one ``call_repeatedly`` batch (the checks need at most 30,000).
MAX_REPEAT = 200_000


def _restriction(rng) -> list[str] | None:
    try:
        from helpers import checks
    except ImportError:  # pragma: no cover - the trusted side always has helpers
        return None
    if isinstance(rng, checks.RecordingGenerator):
        return sorted(checks._ALLOWED_RNG)  # noqa: SLF001
    return None


def _bit_generator(rng):
    return object.__getattribute__(rng, "bit_generator")


def student_exception(kind: str, message: str, restricted: bool) -> BaseException:
    """The exception to raise for a student exception ``kind: message``."""
    kind = kind if isinstance(kind, str) and kind.isidentifier() and len(kind) <= 100 else "Exception"
    message = str(message)[:2000]
    if kind == "ForbiddenRngMethod" and restricted:
        from helpers.checks import ForbiddenRngMethod

        return ForbiddenRngMethod(message)
    cls = getattr(builtins, kind, None)
    if isinstance(cls, type) and issubclass(cls, Exception):
        try:
            return cls(message)
        except Exception:  # noqa: BLE001 - e.g. UnicodeDecodeError needs 5 arguments
            pass
    return type(kind, (Exception,), {"__module__": "student"})(message)


class Proxy:
    """Callable stand-in for the student's function ``name`` in the sandbox."""

    def __init__(self, sandbox, name: str, call_timeout: float, standin=None, cell_deadline=None):
        self._sandbox, self._timeout = sandbox, float(call_timeout)
        self._cell_deadline = cell_deadline or (lambda: float("inf"))
        self.__name__ = self.__qualname__ = name
        self.__module__ = "__main__"
        if standin is not None:  # what inspect.getsource and find_forbidden_calls read
            self.__wrapped__ = standin
            self.__code__ = standin.__code__
            self.__globals__ = standin.__globals__
        self.calls = 0

    def __repr__(self) -> str:
        return f"<function {self.__name__}>"

    def __call__(self, *args, **kwargs):
        return self._request(None, args, kwargs)

    def call_repeatedly(self, n: int, *args, **kwargs) -> list:
        """``[self(*args, **kwargs) for _ in range(n)]`` in one round trip to the sandbox.

        Same results, generator states and exceptions as the loop: the runner
        decodes fresh copies of the arguments for every call, the generators'
        state runs on from call to call, and the first exception ends the batch
        (raised here, the generators left as the failing call left them). The
        time limit is ``n`` call limits, within the test cell's.
        """
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 0 <= n <= MAX_REPEAT:
            raise ValueError(f"call_repeatedly: n must be an int in 0..{MAX_REPEAT}, got {n!r}")
        n = int(n)
        return [] if n == 0 else self._request(n, args, kwargs)

    def _request(self, repeat, args, kwargs):
        name = self.__name__
        count = 1 if repeat is None else repeat
        if time.monotonic() > self._cell_deadline():
            raise TimeoutError(f"{name}: the test cell exceeded its time limit")
        self.calls += count
        if self.calls > MAX_CALLS:
            raise RuntimeError(f"{name}: too many calls")
        payload, generators = bytearray(), []
        tree_args = wire.encode(tuple(args), payload, generators)["$t"]
        tree_kwargs = wire.encode(dict(kwargs), payload, generators)
        specs = []
        for rng in generators:
            if not isinstance(_bit_generator(rng), np.random.PCG64):
                raise TypeError(f"{name}: only PCG64 generators can be passed to student code")
            allowed = _restriction(rng)
            specs.append({"state": _bit_generator(rng).state, "allowed": allowed})
        # The runner interrupts the call itself at ``limit``; the sandbox is killed only at ``limit + GRACE``.
        limit = max(0.01, min(self._timeout * count, self._cell_deadline() - time.monotonic()))
        request = {"call": name, "args": {"$t": tree_args}, "kwargs": tree_kwargs, "rngs": specs, "timeout": limit}
        if repeat is not None:
            request["repeat"] = repeat
        self._sandbox.send(request, bytes(payload))
        what = f"a call of {name}" if repeat is None else f"{repeat} calls of {name}"
        reply, data = self._sandbox.recv(limit + GRACE, what)
        try:
            outcome = self._apply(reply, data, generators, specs, repeat)
        except (wire.WireError, KeyError, TypeError, ValueError, OverflowError) as exc:
            self._sandbox.kill(f"malformed reply from the sandbox to {what}: {str(exc)[:100]}")
            raise SandboxError(self._sandbox.problem) from None
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    def _apply(self, reply, data, generators, specs, repeat=None):
        if not isinstance(reply, dict) or set(reply) - {"ok", "error", "rngs"} or ("ok" in reply) == ("error" in reply):
            raise wire.WireError("bad reply")
        states = reply["rngs"]
        if type(states) is not list or len(states) != len(generators):
            raise wire.WireError("bad generator states")
        updates = []
        for rng, spec, entry in zip(generators, specs, states):
            if type(entry) is not dict:
                raise wire.WireError("bad generator entry")
            state = wire.pcg64_state(entry.get("state"))
            record = None
            if spec["allowed"] is not None:
                calls, draws, forbidden = entry.get("calls"), entry.get("draws"), entry.get("forbidden")
                if not (type(calls) is int and type(draws) is int and 0 <= calls <= 1 << 40
                        and 0 <= draws <= 1 << 50 and type(forbidden) is list and len(forbidden) <= 100
                        and all(type(f) is str and f.isidentifier() and len(f) <= 50 for f in forbidden)):
                    raise wire.WireError("bad generator record")
                record = (calls, draws, forbidden)
            updates.append((rng, state, record))
        if "ok" in reply and repeat is not None:
            results = reply["ok"]
            if type(results) is not list or len(results) != repeat:
                raise wire.WireError(f"expected a list of {repeat} results")
            outcome = [wire.decode(tree, data, None) for tree in results]  # each checked as a single result
        elif "ok" in reply:
            outcome = wire.decode(reply["ok"], data, None)
        else:
            error = reply["error"]
            if type(error) is not dict or type(error.get("type")) is not str or type(error.get("message")) is not str:
                raise wire.WireError("bad error")
            outcome = student_exception(error["type"], error["message"],
                                        any(spec["allowed"] is not None for spec in specs))
        for rng, state, record in updates:  # only once everything is valid
            _bit_generator(rng).state = state
            if record is not None:
                get = object.__getattribute__
                object.__setattr__(rng, "calls", get(rng, "calls") + record[0])
                object.__setattr__(rng, "draws", get(rng, "draws") + record[1])
                get(rng, "forbidden").extend(record[2])
        return outcome


# --- source stand-ins ----------------------------------------------------------------

class _Origin:
    """What a name imported by the student stands for: only its module's name."""

    def __init__(self, module: str):
        self.__module__ = module


class _RaiseFirst(ast.NodeTransformer):
    def _guard(self, node):
        self.generic_visit(node)
        guard = ast.Raise(exc=ast.Call(func=ast.Name("RuntimeError", ast.Load()),
                                       args=[ast.Constant("stand-in: never run")], keywords=[]), cause=None)
        node.body.insert(0, ast.copy_location(guard, node.body[0]))
        node.decorator_list = []
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = _guard


def standins(sources: list[str], tag: str) -> tuple[dict, list[str]]:
    """``({name: function}, linecache keys)`` for the student's top-level ``def``s.

    Each function's code object is compiled from the student's text with a
    ``raise`` placed before its body, so calling it can never run student
    code; its ``__globals__`` maps imported names to module stand-ins. The
    text is registered in :mod:`linecache` (remove the returned keys later).
    """
    globs: dict = {"__name__": "__main__", "__builtins__": {"RuntimeError": RuntimeError}}
    functions: dict = {}
    keys = []
    for index, source in enumerate(sources):
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for node in tree.body:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        globs[alias.asname] = types.ModuleType(alias.name)
                    else:
                        top = alias.name.split(".")[0]
                        globs[top] = types.ModuleType(top)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    if alias.name != "*":
                        globs[alias.asname or alias.name] = _Origin(f"{node.module}.{alias.name}")
        filename = f"<student {tag} cell {index + 1}>"
        try:
            code = compile(ast.fix_missing_locations(_RaiseFirst().visit(tree)), filename, "exec",
                           dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError, TypeError):
            continue
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        keys.append(filename)
        for const in code.co_consts:
            if isinstance(const, types.CodeType) and const.co_name.isidentifier():
                defined = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
                if const.co_name in defined:
                    functions[const.co_name] = types.FunctionType(const, globs, const.co_name)
    for name, func in functions.items():
        globs[name] = func
    return functions, keys
