"""Input checks shared by the local protocols (values in 0..k-1, points of [-1, 1], bit matrices)."""

from __future__ import annotations

from typing import Any

import numpy as np

from helpers._validation import fail


def _check_categories(values: Any, k: int, *, func: str, name: str = "values") -> np.ndarray:
    try:
        array = np.asarray(values)
    except (TypeError, ValueError):
        raise fail(func, name, f"integers in {{0, ..., {k - 1}}}", values) from None
    if array.dtype == bool or not np.issubdtype(array.dtype, np.number):
        raise fail(func, name, f"integers in {{0, ..., {k - 1}}}", values)
    if array.size and not np.all(np.isfinite(array)):
        raise fail(func, name, f"integers in {{0, ..., {k - 1}}} (no NaN/inf)", values)
    if array.size and (np.any(array != np.round(array)) or array.min() < 0 or array.max() >= k):
        raise fail(func, name, f"integers in {{0, ..., {k - 1}}}", values)
    return array.astype(np.int64)


def _check_unit_interval(t: Any, *, func: str, name: str = "t") -> np.ndarray:
    try:
        array = np.asarray(t, dtype=float)
    except (TypeError, ValueError):
        raise fail(func, name, "real numbers in [-1, 1]", t) from None
    if array.size and (not np.all(np.isfinite(array)) or np.any(np.abs(array) > 1)):
        raise fail(func, name, "real numbers in [-1, 1] (rescale with (2v - L - U)/(U - L))", t)
    return array


def _check_bits(bits: Any, *, func: str, name: str) -> np.ndarray:
    try:
        array = np.asarray(bits)
    except (TypeError, ValueError):
        raise fail(func, name, "an array of 0/1 bits", bits) from None
    if array.dtype != bool and not np.issubdtype(array.dtype, np.number):
        raise fail(func, name, "an array of 0/1 bits", bits)
    if array.size and not np.all((array == 0) | (array == 1)):
        raise fail(func, name, "an array of 0/1 bits", bits)
    return array.astype(np.uint8)


def _scalar_out(t_in: np.ndarray, out: np.ndarray) -> Any:
    return float(out) if t_in.ndim == 0 else out
