"""Parameter validation shared by every module of :mod:`helpers`.

One message template for every failure, so that students learn to read it once:

    ``<function>: parameter '<name>' must be <constraint>; got <value>.``

NaN is rejected wherever a number is required (``nan > 0`` is False, so a
naive ``if x <= 0`` check would let it through).
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any

import numpy as np

__all__ = [
    "InvalidParameterError",
    "fail",
    "check_real",
    "check_positive",
    "check_epsilon",
    "check_probability",
    "check_int",
    "check_rng",
    "check_size",
    "check_scores",
]


class InvalidParameterError(ValueError, TypeError):
    """A parameter outside its allowed range or of the wrong type.

    Subclasses both ``ValueError`` and ``TypeError`` (as scikit-learn's
    ``InvalidParameterError`` does), so ``except ValueError`` catches it.
    """


def fail(func: str, name: str, constraint: str, value: Any) -> InvalidParameterError:
    """Build the error for ``func``'s parameter ``name`` (the caller raises it)."""
    shown = value if isinstance(value, str) and len(value) < 60 else _short_repr(value)
    return InvalidParameterError(
        f"{func}: parameter '{name}' must be {constraint}; got {shown}."
    )


def _short_repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def check_real(value: Any, *, func: str, name: str) -> float:
    """Return ``value`` as a finite float or raise (0-d arrays count as numbers)."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Real, np.floating, np.integer)):
        raise fail(func, name, "a finite real number", value)
    value = float(value)
    if not math.isfinite(value):
        raise fail(func, name, "a finite real number", value)
    return value


def check_positive(value: Any, *, func: str, name: str, allow_zero: bool = False) -> float:
    """Return ``value`` as a float that is > 0 (or >= 0 with ``allow_zero``)."""
    value = check_real(value, func=func, name=name)
    if value < 0 or (value == 0 and not allow_zero):
        constraint = "a finite number >= 0" if allow_zero else "a finite number > 0"
        raise fail(func, name, constraint, value)
    return value


def check_epsilon(epsilon: Any, *, func: str, name: str = "epsilon", allow_zero: bool = False) -> float:
    """Privacy parameter: a finite float > 0 (>= 0 where ε = 0 has a meaning)."""
    if allow_zero:
        constraint = "a finite privacy budget >= 0"
    else:
        constraint = "a finite privacy budget > 0 (ε = 0 would need infinite noise)"
    try:
        value = check_real(epsilon, func=func, name=name)
    except InvalidParameterError:
        raise fail(func, name, constraint, epsilon) from None
    if value < 0 or (value == 0 and not allow_zero):
        raise fail(func, name, constraint, value)
    return value


def check_probability(
    p: Any, *, func: str, name: str = "p", low_open: bool = False, high_open: bool = False
) -> float:
    """A probability in [0, 1]; either end can be made open."""
    value = check_real(p, func=func, name=name)
    lo, hi = ("(" if low_open else "["), (")" if high_open else "]")
    if value < 0 or value > 1 or (low_open and value == 0) or (high_open and value == 1):
        raise fail(func, name, f"a probability in {lo}0, 1{hi}", value)
    return value


def check_int(value: Any, *, func: str, name: str, minimum: int | None = None) -> int:
    """An integer (Python or numpy, not bool), optionally >= ``minimum``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Integral, np.integer)):
        raise fail(func, name, "an integer" + ("" if minimum is None else f" >= {minimum}"), value)
    value = int(value)
    if minimum is not None and value < minimum:
        raise fail(func, name, f"an integer >= {minimum}", value)
    return value


def check_rng(rng: Any, *, func: str, name: str = "rng") -> np.random.Generator:
    """Insist on an explicit ``numpy.random.Generator`` (never global state)."""
    if not isinstance(rng, np.random.Generator):
        raise fail(
            func,
            name,
            "a numpy.random.Generator, e.g. numpy.random.default_rng(seed)",
            type(rng).__name__,
        )
    return rng


def check_size(size: Any, *, func: str, name: str = "size") -> int | tuple[int, ...] | None:
    """``None``, a non-negative int, or a tuple of them (numpy's ``size`` convention)."""
    if size is None:
        return None
    if isinstance(size, (Integral, np.integer)) and not isinstance(size, (bool, np.bool_)):
        if size < 0:
            raise fail(func, name, "None, an integer >= 0 or a tuple of them", size)
        return int(size)
    if isinstance(size, tuple) and all(
        isinstance(s, (Integral, np.integer)) and not isinstance(s, (bool, np.bool_)) and s >= 0
        for s in size
    ):
        return tuple(int(s) for s in size)
    raise fail(func, name, "None, an integer >= 0 or a tuple of them", size)


def check_scores(scores: Any, *, func: str, name: str = "scores") -> np.ndarray:
    """A non-empty 1-D array of finite real scores (utilities)."""
    try:
        array = np.asarray(scores, dtype=float)
    except (TypeError, ValueError):
        raise fail(func, name, "a non-empty 1-D sequence of finite numbers", scores) from None
    if array.ndim != 1 or array.size == 0:
        raise fail(
            func, name, "a non-empty 1-D sequence of finite numbers", f"shape {array.shape}"
        )
    if not np.all(np.isfinite(array)):
        raise fail(func, name, "a non-empty 1-D sequence of finite numbers (no NaN/inf)", scores)
    return array
