"""The judge's side of a served generator: the draws a sandbox asks for during a call.

A ``numpy.random.Generator`` argument never crosses into the sandbox: the sandbox gets a
stand-in whose every method call is a request answered here (:class:`Served`) from the
real generator, which therefore ends the call in the state one process would have left;
a ``helpers.checks.RecordingGenerator`` is served only ``random``, and any other method is
refused and recorded by the judge. :class:`autograder.proxy.Proxy` uses it for every call.
"""

from __future__ import annotations

import inspect
import math

import numpy as np

from autograder.sandbox import wire
from helpers import checks
from helpers.checks.core import dtype_name


def _restriction(rng) -> frozenset | None:
    """The methods a ``helpers.checks.RecordingGenerator`` allows (``None``: any)."""
    if isinstance(rng, checks.RecordingGenerator):
        return frozenset(checks._ALLOWED_RNG)  # noqa: SLF001
    return None


def bit_generator(rng):
    return object.__getattribute__(rng, "bit_generator")


#: Generator methods the judge serves. Not served: the generator's state (``bit_generator``,
#: ``spawn``) and samplers whose cost the arguments can make unbounded.
SERVED = frozenset(n for n in dir(np.random.Generator) if not n.startswith("_")) - {
    "bit_generator", "spawn", "zipf", "multivariate_hypergeometric", "multivariate_normal",
    "noncentral_chisquare", "noncentral_f", "logseries"}
#: Most numbers one served request may ask for (and most uniforms sent ahead).
MAX_DRAW = 1 << 24
MAX_AHEAD = 1 << 16
#: Most numbers one served generator may hand out in one call (or one ``call_repeatedly`` or
#: ``call_sequence`` request), all requests together (uniforms sent ahead and given back unused do not
#: count): the judge keeps the uniforms a draws check replays (``RecordingGenerator(keep=True)``)
#: and its changed runs, so without a total a call asking ``rng.random(1 << 22)`` 32 times held 8.5 GB in
#: the trusted worker (red team, session 6); the checks' costliest honest call draws ~2 million.
MAX_CALL_DRAWS = 1 << 24
#: Largest result (bytes of array data) of a request that may be planned: small arrays such as
#: ``rng.laplace(0, [a, b])`` in every call of a batch; bigger results cost one exchange each.
PLAN_RESULT_BYTES = 256
#: Most bytes of array data one plan carries.
PLAN_BYTES = 1 << 18
#: Exchanges of one unrestricted generator in one call after which the judge hands the rest of the call
#: a generator of its own (seeded from the judge's): a beginner's loop whose draws depend on the data
#: (``if rng.random() < p: ... else: rng.integers(k - 1)``) follows no cycle a plan could answer, and
#: one exchange per user costs milliseconds on a loaded machine (1,000 users: 1,530 exchanges, 15.7 s).
OWN_AFTER = 256
#: Most draw requests of one served generator per call of the request (refused and empty ones too):
#: ``rng.random(0)`` and refused methods cost the judge an exchange each and drew nothing, so no draw
#: count limited them (red team s10: the judge spent 1.1 x the sandbox's CPU answering them). An
#: honest call makes a few hundred at most (OWN_AFTER; uniforms sent ahead). The judge's time spent
#: answering also counts in the call's CPU limit (``jail.client.Step.charge``).
MAX_REQUESTS = 4096
_SIGNATURES: dict = {}


def signature(method: str):
    if method not in _SIGNATURES:
        _SIGNATURES[method] = inspect.signature(getattr(np.random.Generator, method))
    return _SIGNATURES[method]


def _count(size) -> int:
    if size is None:
        return 1
    shape = size if isinstance(size, (tuple, list)) else (size,)
    if not all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) for n in shape):
        raise TypeError("size must be an int or a tuple of ints")
    return math.prod(max(int(n), 0) for n in shape)


#: Generator methods whose draws with array parameters are, element by element, the draws of
#: scalar calls in a row (one double-precision function per element, in C order): a plan of such
#: calls is drawn with one vectorised call (tests/autograder/test_steps.py checks each).
VECTOR_METHODS = {"laplace": 2, "normal": 2, "exponential": 1, "gumbel": 2, "logistic": 2, "uniform": 2}


def _vector_entries(cycle) -> list | None:
    """Per entry of ``cycle``: ``(shape, scalar, [flat parameter arrays])``, or ``None`` when the
    cycle cannot be drawn as one vectorised call."""
    method = cycle[0][1]
    if method not in VECTOR_METHODS or any(entry[1] != method for entry in cycle):
        return None
    names = list(signature(method).parameters)[1:1 + VECTOR_METHODS[method]]
    entries = []
    for _, _, args, kwargs in cycle:
        try:
            bound = signature(method).bind(None, *args, **kwargs)
            bound.apply_defaults()
            params = [np.asarray(bound.arguments[name], dtype=np.float64) for name in names]
            size = bound.arguments.get("size")
            if size is None:
                shape = np.broadcast_shapes(*(a.shape for a in params))
            else:
                shape = tuple(int(n) for n in size) if isinstance(size, (tuple, list)) else (int(size),)
            flat = [np.broadcast_to(a, shape).ravel() for a in params]
        except (TypeError, ValueError, OverflowError):
            return None
        entries.append((shape, size is None and all(a.ndim == 0 for a in params), flat))
    return entries


def draw_cycle(rng, cycle, count: int, payload: bytearray | None) -> list:
    """Draw the first ``count`` entries of ``cycle`` repeated, as that many calls in a row would;
    the wire trees of their values (arrays appended to ``payload``; ``None``: values dropped)."""
    period = len(cycle)
    entries = _vector_entries(cycle)
    if entries is None:
        trees, start = [], len(payload) if payload is not None else 0
        for i in range(count):
            if payload is not None and len(payload) - start > PLAN_BYTES:
                break
            _, method, args, kwargs = cycle[i % period]
            value = getattr(np.random.Generator, method)(rng, *args, **kwargs)
            if payload is not None:
                trees.append(wire.encode(value, payload, []))
        return trees
    sizes = [int(np.prod(shape, dtype=np.int64)) for shape, _, _ in entries]
    array_bytes = 8 * sum(n for n, (_, scalar, _) in zip(sizes, entries) if not scalar)
    if payload is not None and array_bytes:
        count = min(count, max(period, PLAN_BYTES * period // array_bytes))
    reps, extra = divmod(count, period)
    params = [np.concatenate([np.tile(np.concatenate([e[2][j] for e in entries]), reps)]
                             + [e[2][j] for e in entries[:extra]]) for j in range(len(entries[0][2]))]
    values = getattr(np.random.Generator, cycle[0][1])(rng, *params)
    if payload is None:
        return []
    values = np.asarray(values, dtype="<f8")
    if all(scalar for _, scalar, _ in entries) and bool(np.isfinite(values).all()):
        # finite scalars only (a loop of rng.laplace(0, b)): each entry's tree is its float, as below
        return values.tolist()
    base, listed = len(payload), values.tolist()
    if array_bytes:
        payload += values.tobytes()
    trees, pos = [], 0
    for i in range(count):
        shape, scalar, _ = entries[i % period]
        size = sizes[i % period]
        if scalar:
            value = listed[pos]
            trees.append(value if math.isfinite(value) else wire.encode(value, payload, []))
        else:
            trees.append({"$a": [base + 8 * pos, 8 * size], "dtype": "float64", "shape": list(shape)})
        pos += size
    return trees


class Served:
    """The judge's side of one generator passed to the student: it draws, records and refuses.

    A ``random`` request may be answered with ``ahead`` extra uniforms, which the
    stand-in uses for the next requests; at the next exchange it says how many
    it used, and the generator is set back to exactly that many draws (PCG64
    ``advance``), so its state is what one process would have left. Only what
    was sent can be claimed as used.

    Other methods called again and again with the same scalar arguments (a
    loop of ``rng.exponential(b)``, also in a cycle such as ``exp(b1), exp(b1),
    exp(b2), exp(b2)``; arguments may be short lists, results small arrays:
    ``rng.laplace(0, [a, b])``) are answered with a *plan*: the next values of that
    cycle, drawn here in order, with the generator's state before each; the
    stand-in hands them out while the student's requests follow the cycle, and
    the generator is set to the state before the first one it did not use.
    """

    def __init__(self, rng):
        self.rng, self.allowed = rng, _restriction(rng)
        self.pending = None  # (required, sent) of the last uniforms sent ahead, or ("plan", states, keys)
        self.undo = None
        self.history: list[tuple] = []  # (key, method, args, kwargs) of the last scalar-argument requests
        self.plan_size = 64
        self.exchanges = 0  # of the current call (step) of the request: OWN_AFTER counts per call, as a loop
        self.step, self.steps = 0, 1  # the call of a repeat or {"calls"} request the draws are for, and how many
        self.calls = self.draws = 0
        self.served = 0  # numbers asked for in this call, all requests together (MAX_CALL_DRAWS)
        self.forbidden: list[str] = []
        self.library: list[str] = []  # library randomness the sandbox's watch saw (autograder/sandbox/watch.py)
        self.requests = 0  # of the whole request, all its calls (MAX_REQUESTS per call)

    def begin(self, step) -> None:
        """Draws for call ``step`` of the request (``"step"`` of a draw request, never going back): a call
        gets its own generator after OWN_AFTER exchanges of its own, as in a loop of single calls, not
        after OWN_AFTER exchanges of the calls before it together (red team, session 7)."""
        if type(step) is not int or not self.step <= step < self.steps:
            raise wire.WireError("bad step")
        if step != self.step:
            self.step, self.exchanges = step, 0

    def settle(self, used, calls) -> None:
        if self.pending is None:
            if used != 0 or calls != 0:
                raise wire.WireError("draws used that were never sent")
            return
        if self.pending[0] == "plan":
            _, (start, planned), cycle = self.pending
            if not (type(used) is int and calls == 0 and 0 <= used <= planned):
                raise wire.WireError("bad count of used draws")
            if used < planned:  # the state before the first unused entry: the used ones drawn again
                bit_generator(self.rng).state = start
                draw_cycle(self.rng, cycle, used, None)
            if 2 * used < planned:
                # Most of the plan went unused (the cycle broke off): plan less next time, not ever more.
                self.plan_size = max(8, 2 * used)
            self.history = (self.history + [cycle[i % len(cycle)] for i in range(max(0, used - 32), used)])[-32:]
            self.pending = None
            return
        required, sent = self.pending
        if not (type(used) is int and type(calls) is int and 0 <= calls <= used <= sent - required):
            raise wire.WireError("bad count of used draws")
        self._give_back(sent - required - used)
        self.served -= sent - required - used  # numbers sent ahead and not used were never handed out
        self.pending = None
        self.calls += calls
        self.draws += required + used

    def _take(self, count: int) -> np.ndarray:
        """The next ``count`` uniforms (a RecordingGenerator's tape first)."""
        if self.allowed is not None:
            return object.__getattribute__(self.rng, "_take")(count)
        self.undo = (bit_generator(self.rng).state, count)
        return np.random.Generator.random(self.rng, count)

    def _give_back(self, unused: int) -> None:
        """As if the last ``_take``'s final ``unused`` numbers had never been drawn."""
        if self.allowed is not None:
            object.__getattribute__(self.rng, "_give_back")(unused)
            return
        state, count = self.undo
        bit = bit_generator(self.rng)
        bit.state = state
        bit.advance(count - unused)
        # advance() drops a buffered half of a 64-bit draw (integers of 32 bits); doubles never touch it.
        bit.state = {**bit.state, "has_uint32": state["has_uint32"], "uinteger": state["uinteger"]}

    def _plan(self, payload: bytearray):
        """The next values of the cycle the last requests repeat (``None``: no cycle); their arrays
        are appended to ``payload`` (the reply's, after its value's own)."""
        keys = [entry[0] for entry in self.history][-16:]  # a period must explain all of the recent requests
        period = next((p for p in range(1, 9) if len(keys) >= 2 * p
                       and all(keys[i] == keys[i - p] for i in range(p, len(keys)))), None)
        if period is None:
            return None
        cycle = self.history[-period:]
        count, self.plan_size = self.plan_size, min(4 * self.plan_size, 4096)
        start = bit_generator(self.rng).state
        trees = draw_cycle(self.rng, cycle, count, payload)
        # Only where the plan starts is kept: the state before any entry is found by drawing the entries
        # before it again (settle), which costs less than a state per entry.
        self.pending = ("plan", (start, len(trees)), cycle)
        if trees and set(map(type, trees)) == {float}:
            # Finite scalars only (the usual loop of rng.laplace(0, b)): one array, not a JSON number each
            # (formatting and parsing them cost the judge and the sandbox more than drawing them).
            offset = len(payload)
            payload += np.array(trees, dtype="<f8").tobytes()
            plan = {"$a": [offset, 8 * len(trees)], "dtype": "float64", "shape": [len(trees)]}
            return {"plan": plan, "cycle": [entry[0] for entry in cycle]}
        return {"plan": trees, "cycle": [entry[0] for entry in cycle]}

    def serve(self, method, args, kwargs, ahead, key=None):
        """``(reply, payload)`` for ``rng.method(*args, **kwargs)``."""
        if type(method) is not str or not method.isidentifier() or len(method) > 50:
            raise wire.WireError("bad method name")
        self.requests += 1
        if self.requests > MAX_REQUESTS * self.steps:
            raise wire.WireError(f"more than {MAX_REQUESTS:,} requests to the generator in one call")
        if self.allowed is not None and method not in self.allowed:
            self.forbidden.append(method)
            return {"refused": f"rng.{method} 不允许使用：只能用 rng.random(...) 生成均匀随机数，再自己变换。 / "
                               f"rng.{method} is not allowed here: draw uniforms with rng.random(...) and transform "
                               f"them yourself."}, b""
        if method not in SERVED:
            return {"refused": f"rng.{method} 在评分时不可用。 / rng.{method} is not available in grading."}, b""
        try:
            bound = signature(method).bind(self.rng, *args, **kwargs)
            bound.apply_defaults()
            params = bound.arguments
            if params.get("out") is not None:
                raise TypeError(f"rng.{method}: out= is not supported in grading")
            if "dtype" in params and isinstance(params["dtype"], str):
                if params["dtype"] not in wire.DTYPES:
                    raise TypeError(f"rng.{method}: dtype {params['dtype']!r} is not supported")
                params["dtype"] = wire.DTYPES[params["dtype"]]
            largest = max([np.size(v) for v in params.values() if isinstance(v, (np.ndarray, list, tuple))
                           and v is not params.get("size")] + [1])
            if _count(params.get("size")) * largest > MAX_DRAW or (
                    method in ("choice", "permutation") and isinstance(params.get("a", params.get("x")), int)
                    and params.get("a", params.get("x")) > MAX_DRAW) or (
                    method == "bytes" and not 0 <= int(params["length"]) <= MAX_DRAW):
                raise ValueError(f"rng.{method}: too many numbers asked for in grading (at most {MAX_DRAW})")
            self.served += _count(params.get("size")) * largest + (ahead if type(ahead) is int and ahead > 0 else 0)
            if self.served > MAX_CALL_DRAWS:
                raise ValueError(f"rng.{method}: too many random numbers in one call in grading (at most "
                                 f"{MAX_CALL_DRAWS:,} in all)")
            uniforms = method == "random" and params["dtype"] == np.float64
            if method == "random" and not uniforms and self.allowed is not None:
                # Only float64 uniforms are taped, replayed and changed by the draws checks.

                used = dtype_name(params["dtype"])
                self.forbidden.append(f"random(dtype={used})")
                return {"refused": f"rng.random(dtype={used}) 不允许使用：只能用默认的 float64 均匀随机数 "
                                   f"rng.random(size)。 / rng.random(dtype={used}) is not allowed here: draw "
                                   f"float64 uniforms, rng.random(size) (the default dtype)."}, b""
            if uniforms and type(ahead) is int and 0 < ahead <= MAX_AHEAD and type(params["size"]) is int:
                required = params["size"]
                value = self._take(required + ahead)
                self.pending = (required, required + ahead)
                self.calls += 1
            elif uniforms:
                size = params["size"]
                value = self._take(_count(size))
                value = float(value[0]) if size is None else value.reshape(size)
                self.calls += 1
                self.draws += int(np.size(value))
            else:
                if method == "shuffle":
                    target = params["x"]
                    np.random.Generator.shuffle(self.rng, target, params["axis"])
                    value = target
                else:
                    value = getattr(np.random.Generator, method)(*bound.args, **bound.kwargs)
                if method == "random":
                    self.calls += 1
                    self.draws += int(np.size(value))
        except (TypeError, ValueError, OverflowError, IndexError, KeyError) as exc:
            return {"error": str(exc)[:500], "type": "TypeError" if isinstance(exc, TypeError) else "ValueError"}, b""
        payload = bytearray()
        reply = {"value": wire.encode(value, payload, [])}
        # Scalar uniforms asked one by one (a loop mixing rng.random() with rng.integers(...)) join the cycle.
        plannable = method not in ("random", "shuffle") or (method == "random" and uniforms and ahead is None
                                                             and params["size"] is None)
        if key is not None and len(payload) <= PLAN_RESULT_BYTES and plannable and self.allowed is None:
            self.history = (self.history + [(key, method, args, kwargs)])[-32:]
            plan = self._plan(payload)
            if plan is not None:
                reply.update(plan)
        self.exchanges += 1
        if self.allowed is None and self.pending is None and self.exchanges >= OWN_AFTER and "plan" not in reply:
            # Same generator state in, same seed out: the call stays a function of the state it was given.
            reply["own"] = [int(w) for w in np.random.Generator.integers(self.rng, 0, 2**63, size=4)]
        return reply, bytes(payload)

    def record(self) -> None:
        """Add what was drawn and refused to a RecordingGenerator's record."""
        if self.allowed is None:
            return
        get = object.__getattribute__
        object.__setattr__(self.rng, "calls", get(self.rng, "calls") + self.calls)
        object.__setattr__(self.rng, "draws", get(self.rng, "draws") + self.draws)
        get(self.rng, "forbidden").extend(self.forbidden)
        library = get(self.rng, "library")
        library.extend(s for s in self.library if s not in library)
        self.library = []
