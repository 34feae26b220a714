"""Sandbox side: the ``numpy.random.Generator`` that student code receives in grading.

A :class:`ServedGenerator` holds no generator state: each method call is a ``{"draw"}``
request that the judge answers from its own generator during the call (see
:mod:`autograder.served`); :class:`Generator` replaces ``numpy.random.Generator`` so that
``isinstance`` and ``np.random.Generator(...)`` behave as students expect. Imported by the
runner after numpy, before any student code; :func:`connect` gives it the runner's channel.

Everything here can be changed by the student's code once it runs; the trusted side
validates every message and believes nothing else.
"""

import json
import math
import signal
import time

import numpy as np

import wire

#: The channel to the judge and the runner's step clock (``"judge"``: seconds spent waiting for
#: the judge's answers), set by :func:`connect` before student code runs.
IN_FD = OUT_FD = -1
STEP = {"judge": 0.0}


def connect(in_fd: int, out_fd: int, step: dict) -> None:
    """Send draw requests on ``out_fd``, read answers on ``in_fd``, count waiting time in ``step``."""
    global IN_FD, OUT_FD, STEP
    IN_FD, OUT_FD, STEP = in_fd, out_fd, step


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


def _plain(value, depth: int = 0):
    """``value`` as plain data that numpy's methods take alike: what ``np.asarray`` makes of a
    ``range``, a subclass of a Python number, or another sequence of numbers (issue 35: the
    reference ``rng.choice(range(k - 1), size)`` could not cross and scored 5/10). Anything else is
    left as it is, for the wire to refuse; the judge validates what it receives."""
    kind = type(value)
    if value is None or kind in (bool, int, float, str, np.ndarray) or isinstance(value, (np.generic, np.dtype)) \
            or depth > 32:
        return value
    if kind in (list, tuple):
        return kind(_plain(v, depth + 1) for v in value)
    if isinstance(value, np.random.Generator):
        return value
    try:
        arr = np.asarray(value)
    except Exception:  # noqa: BLE001 - not numpy's kind of data either
        return value
    if arr.dtype.kind not in "biufc":
        return value
    return arr[()] if arr.ndim == 0 else arr


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
                             _own=None, _keys={}, _raw={}, _step=0)

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
            # The usual request inside a plan (rng.laplace(0.0, b) again): first, is it the one the plan
            # expects next, made of the same plain scalars as a request of that name (types, values and
            # signs of zero: what its name encodes)? Then, by its own name, found without encoding it.
            cycle = d["_cycle"]
            raw = d["_raw"].get(cycle[d["_pos"] % len(cycle)])
            if raw is not None and not kwargs and method == raw[0] and tuple(map(type, args)) == raw[1] \
                    and args == raw[2]:
                for i, sign in raw[3]:
                    if math.copysign(1.0, args[i]) != sign:
                        break
                else:
                    d["_pos"] += 1
                    value = plan[d["_pos"] - 1]
                    return value if type(value) is float else wire.decode(value, d["_plan_data"])
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
        args, kwargs = _plain(tuple(args)), {k: v if k == "dtype" else _plain(v) for k, v in kwargs.items()}
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
                if not kwargs and key not in d["_raw"]:  # a request of that name, for the first test above
                    d["_raw"][key] = (str(method), tuple(map(type, args)), tuple(args), tuple(
                        (i, math.copysign(1.0, v)) for i, v in enumerate(args) if type(v) is float and v == 0))
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
            wire.send(OUT_FD, message, bytes(payload))
            reply, data = wire.recv(IN_FD)
        finally:
            STEP["judge"] += time.monotonic() - asked
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGALRM, signal.SIGPROF})
        if "refused" in reply:
            raise ForbiddenRngMethod(str(reply["refused"]))
        if "error" in reply:
            kind = {"TypeError": TypeError, "ValueError": ValueError}.get(reply.get("type"), ValueError)
            raise kind(str(reply["error"]))
        if "plan" in reply:
            plan = reply["plan"]
            if type(plan) is dict:  # finite scalars sent as one float64 array: handed out as Python floats
                plan = wire.decode(plan, data)
                if not isinstance(plan, np.ndarray) or plan.dtype != np.float64 or plan.ndim != 1:
                    raise GraderRngError("rng: bad answer from the grader")
                plan = plan.tolist()
            d.update(_plan=plan, _cycle=reply["cycle"], _pos=0, _plan_data=data)
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

_numpy_default_rng = np.random.default_rng


def default_rng(seed=None):
    """``numpy.random.default_rng`` as student code sees it in grading: like numpy's, it returns a
    generator it is given unchanged, the served stand-in too (numpy's compiled function takes only its
    own Generator for one, so ``rng = np.random.default_rng(rng)``, numpy's idiom, raised ``TypeError``
    and a correct submission scored 0). Anything else is numpy's."""
    if isinstance(seed, ServedGenerator):
        return seed
    return _numpy_default_rng(seed)


default_rng.__module__ = "numpy.random"
default_rng.__doc__ = _numpy_default_rng.__doc__
np.random.default_rng = default_rng
