"""Floating-point leaks of textbook Laplace sampling, and the snapping fix (Mironov, CCS 2012).

The textbook sampler computes ``f(D) + b·S·ln(U)`` (S = ±1) in floating
point. Its output is a deterministic function of finitely many random
bits, so it takes only finitely many values, and they are not spread evenly
over the floats: the set of reachable outputs is *porous*. Shifting the
input from f(D) = 0 to f(D') = 1 shifts and re-rounds that set, so many
outputs reachable from 0 are unreachable from 1. Seeing one of them tells
the attacker that the input was 0: the privacy loss is infinite, whatever ε
the noise was calibrated for.

Real doubles (53-bit uniforms, 64-bit arithmetic) have far too many outputs
to list. This module uses a **scaled-down model** that shows the same
phenomenon in a second: U on the grid j/2^bits and arithmetic rounded to
a small float type after every operation. The default, float16 (10-bit
mantissa) with an 11-bit U, keeps the proportions of the real case (53-bit
U, 52-bit mantissa). The numbers it prints are about that model, not about
numpy's float64 sampler; Mironov showed that the effect is real for float64
libraries too. Part of the effect is the finite support of any sampler fed
by finitely many random bits, part is rounding of the sum: both are there in
doubles.

Mironov's fix, the *snapping mechanism*, clamps the input to [-B, B],
adds the noise, rounds the result to a multiple of Λ (the smallest power of
two >= λ = Δ/ε) and clamps again: every input then has the same finite
set of outputs, and the mechanism is (ε + 2^-49·Bε/Δ)-DP for λ < B < 2^46·λ
(Mironov 2012, Theorem 1, stated there for Δ = 1). Production libraries
either snap or sample exactly on a discrete grid (discrete Laplace /
Gaussian, Canonne, Kamath, Steinke 2020).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from helpers._validation import check_epsilon, check_int, check_positive, check_real, check_rng, fail

__all__ = [
    "uniform_grid", "float_laplace", "reachable_outputs", "porosity_report",
    "snapping_grid", "snapping_mechanism",
]

_DTYPES = (np.float16, np.float32, np.float64)


def _check_dtype(dtype: Any, func: str) -> type:
    dt = np.dtype(dtype).type if not isinstance(dtype, type) else dtype
    if dt not in _DTYPES:
        raise fail(func, "dtype", "numpy.float16, numpy.float32 or numpy.float64", dtype)
    return dt


def uniform_grid(bits: int) -> np.ndarray:
    """All uniforms ``j / 2^bits`` for j = 1 .. 2^bits - 1: a ``bits``-bit random number generator.

    Each value is equally likely, so the grid *is* the distribution of U in
    the scaled-down model.
    """
    bits = check_int(bits, func="uniform_grid", name="bits", minimum=1)
    if bits > 24:
        raise fail("uniform_grid", "bits", "at most 24 (2^24 values is already 16 million)", bits)
    return np.arange(1, 2 ** bits, dtype=np.float64) / 2.0 ** bits


def float_laplace(value: float, scale: float, u: ArrayLike, sign: ArrayLike, *, dtype: Any = np.float16) -> np.ndarray:
    """Textbook Laplace sample ``value + sign·scale·ln(u)`` rounded to ``dtype`` after every operation.

    Deterministic: the randomness is in ``u`` (in (0, 1]) and ``sign`` (±1),
    so the same inputs always give the same outputs.
    """
    func = "float_laplace"
    dt = _check_dtype(dtype, func)
    value = check_real(value, func=func, name="value")
    scale = check_positive(scale, func=func, name="scale")
    ua = np.asarray(u, dtype=np.float64)
    if ua.size and (np.any(~(ua > 0)) or np.any(ua > 1)):
        raise fail(func, "u", "uniforms in (0, 1]", u)
    sa = np.asarray(sign)
    if sa.size and not np.all((sa == 1) | (sa == -1)):
        raise fail(func, "sign", "+1 or -1", sign)
    log_u = np.log(ua.astype(dt)).astype(dt)
    noise = (dt(scale) * log_u).astype(dt) * sa.astype(dt)
    return (dt(value) + noise).astype(dt)


def reachable_outputs(value: float, scale: float, *, bits: int = 11, dtype: Any = np.float16) -> np.ndarray:
    """Sorted distinct outputs of :func:`float_laplace` over every uniform of the grid and both signs."""
    u = uniform_grid(bits)
    plus = float_laplace(value, scale, u, np.ones_like(u), dtype=dtype)
    minus = float_laplace(value, scale, u, -np.ones_like(u), dtype=dtype)
    return np.unique(np.concatenate([plus, minus]))


def porosity_report(scale: float = 1.0, *, bits: int = 11, dtype: Any = np.float16,
                    window: tuple[float, float] = (-2.0, 3.0)) -> dict:
    """Compare the outputs reachable from f(D) = 0 and from f(D') = 1.

    Returns a dict with, inside ``window``:

    * ``n_reachable_0``, ``n_reachable_1``: distinct outputs of each input;
    * ``n_floats``: how many ``dtype`` numbers the window contains (the
      reachable sets are a small, uneven fraction of them: porous);
    * ``only_0``, ``only_1``, ``both``: sizes of the set differences and intersection;
    * ``prob_only_0``: probability (over U and the sign) that M(0) outputs a
      value inside the window that M(1) can never output, i.e. that the
      output proves the input was 0 (``prob_only_1`` likewise for M(1)). For
      an ε-DP mechanism both would be 0;
    * ``examples_only_0``: a few such outputs.
    """
    func = "porosity_report"
    scale = check_positive(scale, func=func, name="scale")
    dt = _check_dtype(dtype, func)
    lo, hi = (check_real(w, func=func, name="window") for w in window)
    if not lo < hi:
        raise fail(func, "window", "(lo, hi) with lo < hi", window)
    u = uniform_grid(bits)
    outs0 = np.concatenate([float_laplace(0.0, scale, u, np.ones_like(u), dtype=dt),
                            float_laplace(0.0, scale, u, -np.ones_like(u), dtype=dt)])
    set0 = np.unique(outs0)
    set1 = reachable_outputs(1.0, scale, bits=bits, dtype=dt)
    in0 = set0[(set0 >= lo) & (set0 <= hi)]
    in1 = set1[(set1 >= lo) & (set1 <= hi)]
    only0 = np.setdiff1d(in0, in1, assume_unique=True)
    only1 = np.setdiff1d(in1, in0, assume_unique=True)
    both = np.intersect1d(in0, in1, assume_unique=True)
    mask = (outs0 >= lo) & (outs0 <= hi)
    prob_only0 = float(np.mean(mask & ~np.isin(outs0, set1)))
    outs1 = np.concatenate([float_laplace(1.0, scale, u, np.ones_like(u), dtype=dt),
                            float_laplace(1.0, scale, u, -np.ones_like(u), dtype=dt)])
    prob_only1 = float(np.mean((outs1 >= lo) & (outs1 <= hi) & ~np.isin(outs1, set0)))
    # number of dtype values in [lo, hi]: count through the ordered integer view
    ints = {np.float16: np.int16, np.float32: np.int32, np.float64: np.int64}[dt]

    def ordinal(x: float) -> int:
        i = int(np.array(x, dtype=dt).view(ints))
        return i if i >= 0 else -(i & (2 ** (8 * np.dtype(ints).itemsize - 1) - 1))

    n_floats = ordinal(hi) - ordinal(lo) + 1
    return {"window": (lo, hi), "bits": bits, "dtype": np.dtype(dt).name,
            "n_reachable_0": int(in0.size), "n_reachable_1": int(in1.size), "n_floats": int(n_floats),
            "only_0": int(only0.size), "only_1": int(only1.size), "both": int(both.size),
            "prob_only_0": prob_only0, "prob_only_1": prob_only1, "examples_only_0": only0[:: max(1, only0.size // 5)][:5].astype(float)}


def snapping_grid(sensitivity: float, epsilon: float) -> float:
    """Λ: the smallest power of two >= λ = sensitivity/ε (the snapping grid spacing)."""
    func = "snapping_grid"
    sensitivity = check_positive(sensitivity, func=func, name="sensitivity")
    epsilon = check_epsilon(epsilon, func=func)
    lam = sensitivity / epsilon
    return 2.0 ** math.ceil(math.log2(lam))


def snapping_mechanism(value: ArrayLike, sensitivity: float, epsilon: float, bound: float,
                       rng: np.random.Generator) -> Any:
    """Mironov's snapping mechanism (reference implementation, teaching only).

    ``clamp_B( Λ · round( (clamp_B(value) + S·λ·ln(U)) / Λ ) )`` with
    λ = Δ/ε, Λ = :func:`snapping_grid`, S = ±1 with probability 1/2 and U
    uniform on (0, 1]. All outputs lie on the grid Λℤ ∩ [-B, B] whatever
    the input, which removes the porous-output attack. Guarantee (Mironov
    2012, Thm. 1, for Δ = 1 after rescaling): (ε + 2^-49·B·ε/Δ)-DP when
    λ < B < 2^46·λ; the bound B must be public. numpy's ``log`` is not
    guaranteed to be correctly rounded, which the theorem assumes, hence
    "reference" and not production code.
    """
    func = "snapping_mechanism"
    sensitivity = check_positive(sensitivity, func=func, name="sensitivity")
    epsilon = check_epsilon(epsilon, func=func)
    bound = check_positive(bound, func=func, name="bound")
    rng = check_rng(rng, func=func)
    lam = sensitivity / epsilon
    if not lam < bound < 2.0 ** 46 * lam:
        raise fail(func, "bound", f"with λ < B < 2^46·λ where λ = sensitivity/epsilon = {lam:g}", bound)
    v = np.asarray(value, dtype=float)
    if v.size and not np.all(np.isfinite(v)):
        raise fail(func, "value", "finite numbers", value)
    grid = snapping_grid(sensitivity, epsilon)
    u = 1.0 - rng.random(v.shape)          # (0, 1]: ln(u) finite
    sign = np.where(rng.random(v.shape) < 0.5, -1.0, 1.0)
    noisy = np.clip(v, -bound, bound) + sign * lam * np.log(u)
    out = np.clip(np.round(noisy / grid) * grid, -bound, bound) + 0.0  # + 0.0 turns -0.0 into 0.0
    return float(out) if v.ndim == 0 else out
