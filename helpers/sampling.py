r"""The textbook's own random-number recipe (§6.2.2), so it can be run and examined.

Textbook §6.2.2 builds Laplace noise in two steps:

1. a *linear congruential generator* (LCG) for uniforms,
   :math:`X_{n+1} = (a X_n + c) \bmod m`, :math:`u = X / m`, with ``a = 2045``, ``c = 1``,
   ``m = 2**20`` (:func:`lcg_uniforms`, :class:`TextbookLCG`);
2. the *composition method*: choose a side of the Laplace density, then draw from that side.

This module keeps the recipe for teaching only:

* The LCG has period exactly ``2**20 = 1 048 576``. This follows from the Hull–Dobell theorem:
  ``c = 1`` is coprime to ``m``, and ``a − 1 = 2044`` is divisible by 4. It does not follow
  from 2045 being prime, as the book says, because 2045 = 5 × 409. Its outputs lie on a grid of
  step ``2**-20`` and are predictable from a single value. Use it for a demonstration, never
  for privacy. Real code takes uniforms from ``numpy.random.Generator``.
* The Laplace formula *as printed* adds a second uniform ``u2`` to the inverse CDF, so its
  output is not Laplace distributed (its mean is 1/2).
  :func:`textbook_printed_laplace` reproduces it as a cautionary example.
  :func:`composition_laplace` is the corrected composition method.
  :func:`helpers.mechanisms.laplace_noise` is the inverse-CDF method that the course grades.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from helpers._validation import check_int, check_positive, check_real, check_size, fail

__all__ = [
    "LCG_A",
    "LCG_C",
    "LCG_M",
    "lcg_states",
    "lcg_uniforms",
    "lcg_period",
    "lcg_line_family",
    "TextbookLCG",
    "textbook_printed_laplace",
    "composition_laplace",
]

#: Multiplier, increment and modulus of the textbook LCG (§6.2.2, ``laplace.c``).
LCG_A = 2045
LCG_C = 1
LCG_M = 2**20


def _jump(k: int) -> tuple[int, int]:
    """Coefficients (A, C) with ``X_{n+k} = (A X_n + C) mod m`` (k-step jump-ahead)."""
    a_k, c_k = 1, 0
    base_a, base_c = LCG_A, LCG_C
    while k:
        if k & 1:
            a_k, c_k = (base_a * a_k) % LCG_M, (base_a * c_k + base_c) % LCG_M
        base_a, base_c = (base_a * base_a) % LCG_M, (base_a * base_c + base_c) % LCG_M
        k >>= 1
    return a_k, c_k


def lcg_states(seed: int, size: int) -> np.ndarray:
    r"""The integer states :math:`X_1, \dots, X_{size}` of the textbook LCG from :math:`X_0 =` ``seed``.

    :math:`X_{n+1} = (2045 X_n + 1) \bmod 2^{20}` (textbook §6.2.2). The recursion is serial,
    but the work is vectorized by doubling. With the block :math:`X_1..X_L` known, the next
    block is :math:`(A_L X + C_L) \bmod m`, where :math:`A_L, C_L` are the coefficients of an
    L-step jump. Every product is below :math:`2^{40}`, so int64 arithmetic is exact.

    Parameters
    ----------
    seed : int
        Starting state :math:`X_0`, an integer ``>= 0``. It is reduced modulo :math:`2^{20}`,
        as the C code's ``seed - (seed / m) * m`` does. The book's main program uses
        ``rand() % 10000 + 10000``.
    size : int
        Number of states to return, ``>= 0``.

    Returns
    -------
    numpy.ndarray of int64, shape (size,)
    """
    seed = check_int(seed, func="lcg_states", name="seed", minimum=0) % LCG_M
    size = check_int(size, func="lcg_states", name="size", minimum=0)
    out = np.empty(size, dtype=np.int64)
    if size == 0:
        return out
    out[0] = (LCG_A * seed + LCG_C) % LCG_M
    filled = 1
    while filled < size:
        step = min(filled, size - filled)
        a_k, c_k = _jump(filled)
        out[filled : filled + step] = (a_k * out[:step] + c_k) % LCG_M
        filled += step
    return out


def lcg_uniforms(seed: int, size: int) -> np.ndarray:
    r"""Uniforms :math:`u_n = X_n / 2^{20}` in ``[0, 1)`` from the textbook LCG (§6.2.2).

    The same numbers as ``uniform_data(0.0, 1.0, &seed)`` called ``size`` times in the book's
    ``laplace.c``. The first value comes from :math:`X_1`, not from the seed itself.

    Examples
    --------
    >>> lcg_uniforms(10000, 3)
    array([0.50264072, 0.90028191, 0.07649899])
    """
    return lcg_states(seed, size) / float(LCG_M)


def lcg_period(seed: int = 0) -> int:
    """Length of the cycle that the LCG enters from ``seed``: ``2**20`` for every seed.

    Computed by brute force (one vectorized pass over ``2**20 + 1`` states), not assumed. The
    function returns the distance to the first repeat of ``X_1``.
    """
    states = lcg_states(seed, LCG_M + 1)
    repeats = np.flatnonzero(states[1:] == states[0])
    if repeats.size == 0:  # pragma: no cover - impossible: m + 1 states must repeat
        raise RuntimeError("lcg_period: no repeat within m + 1 states")
    return int(repeats[0]) + 1


def lcg_line_family(a: int = LCG_A, m: int = LCG_M) -> tuple[int, int]:
    r"""The family of parallel lines that covers every pair :math:`(u_n, u_{n+1})` with fewest lines.

    For integers :math:`h_1, h_2` with :math:`h_1 + a h_2 \equiv 0 \pmod m`,
    :math:`h_1 X_n + h_2 X_{n+1} \equiv h_2 c \pmod m`, so every pair lies on one of the lines
    :math:`h_1 x + h_2 y = k + h_2 c/m` (k an integer); about :math:`|h_1| + |h_2|` of them cross
    the unit square, :math:`1/\sqrt{h_1^2 + h_2^2}` apart (Knuth, TAOCP vol. 2, §3.3.4, the
    spectral test). Brute force over :math:`h_2 = 1, \dots, m-1`; returns the :math:`(h_1, h_2)`
    with the smallest :math:`|h_1| + |h_2|`. For the textbook LCG (a = 2045, m = 2^20) it is
    (-509, 513): about a thousand lines, not "a few" (§6.2.2).

    >>> lcg_line_family()
    (-509, 513)
    """
    a = check_int(a, func="lcg_line_family", name="a", minimum=1)
    m = check_int(m, func="lcg_line_family", name="m", minimum=2)
    h2 = np.arange(1, m, dtype=np.int64)
    h1 = (-a * h2) % m
    h1 = np.where(h1 > m // 2, h1 - m, h1)
    best = int(np.argmin(np.abs(h1) + h2))
    return int(h1[best]), int(h2[best])


class TextbookLCG:
    """The textbook LCG as a tiny stateful uniform source with a ``random(size)`` method.

    It stands in for ``rng.random`` in a *demonstration* of §6.2.2, for example when feeding
    :func:`composition_laplace`. It is not a ``numpy.random.Generator``, so the mechanisms in
    :mod:`helpers.mechanisms` refuse it, on purpose.

    Examples
    --------
    >>> g = TextbookLCG(seed=10000)
    >>> u = g.random(4)          # the next four uniforms; g.state moves on by 4
    """

    def __init__(self, seed: int) -> None:
        self.state = check_int(seed, func="TextbookLCG", name="seed", minimum=0) % LCG_M

    def random(self, size: int | tuple[int, ...] | None = None) -> Any:
        """Next uniform(s) in ``[0, 1)``: a float for ``size=None``, else an array of that shape."""
        shape = check_size(size, func="TextbookLCG.random")
        count = 1 if shape is None else int(np.prod(shape, dtype=np.int64))
        states = lcg_states(self.state, count)
        if count:
            self.state = int(states[-1])
        values = states / float(LCG_M)
        return float(values[0]) if shape is None else values.reshape(shape)

    def uniform(self, low: float = 0.0, high: float = 1.0, size: int | tuple[int, ...] | None = None) -> Any:
        """``low + (high - low) * u``, as the book's ``uniform_data(a, b, &seed)``."""
        low = check_real(low, func="TextbookLCG.uniform", name="low")
        high = check_real(high, func="TextbookLCG.uniform", name="high")
        if not high > low:
            raise fail("TextbookLCG.uniform", "high", f"greater than low = {low:g}", high)
        return low + (high - low) * self.random(size)

    def __repr__(self) -> str:
        return f"TextbookLCG(state={self.state})"


def _uniform_array(u: ArrayLike, *, func: str, name: str) -> np.ndarray:
    try:
        array = np.asarray(u, dtype=float)
    except (TypeError, ValueError):
        raise fail(func, name, "uniform numbers in [0, 1)", u) from None
    if not np.all((array >= 0.0) & (array < 1.0)):  # NaN fails both comparisons
        raise fail(func, name, "uniform numbers in [0, 1)", u)
    return array


def textbook_printed_laplace(u1: ArrayLike, u2: ArrayLike, beta: float) -> Any:
    r"""The Laplace generator formula **as printed** in §6.2.2. It is WRONG: do not use it for noise.

    .. math::

        x = \begin{cases} \beta \ln(2u_1) + u_2 & u_1 \le 0.5 \\
                          u_2 - \beta \ln(2(1 - u_1)) & u_1 > 0.5 \end{cases}

    Without the ``+ u2`` terms this is the inverse CDF of Lap(β), applied to ``u1``. Adding an
    independent ``u2 ~ U(0, 1)`` gives Lap(β) + U(0, 1) instead. Its mean is 1/2, not 0, and
    its variance is 2β² + 1/12, not 2β². With β = 0.1 (ε = 10) the shift is five times the noise
    scale. The course keeps the formula as a cautionary example. Compare with
    :func:`composition_laplace` and :func:`helpers.mechanisms.laplace_noise`.

    Parameters
    ----------
    u1, u2 : array_like of float in [0, 1)
        Independent uniforms, for example consecutive outputs of :class:`TextbookLCG`.
        ``u1 = 0`` gives ``-inf``, as the printed ``ln(2 u1)`` does.
    beta : float
        Scale ``β > 0`` (``β = Δf / ε``; the book's main program uses ``1 / ε``).

    Returns
    -------
    float for scalar inputs, else an ndarray (broadcast shape).
    """
    func = "textbook_printed_laplace"
    beta = check_positive(beta, func=func, name="beta")
    u1 = _uniform_array(u1, func=func, name="u1")
    u2 = _uniform_array(u2, func=func, name="u2")
    with np.errstate(divide="ignore"):
        x = np.where(
            u1 <= 0.5,
            beta * np.log(2.0 * u1) + u2,
            u2 - beta * np.log(2.0 * (1.0 - u1)),
        )
    return float(x) if x.ndim == 0 else x


def composition_laplace(u1: ArrayLike, u2: ArrayLike, b: float) -> Any:
    r"""Laplace(0, b) by the composition method of §6.2.2, done correctly.

    The Laplace density is a 50/50 mixture of an exponential density on each side of 0. So the
    method first chooses the side with ``u1`` and then draws the magnitude from Exp(scale b)
    with ``u2``:

    .. math::

        s = \begin{cases} -1 & u_1 \le 0.5 \\ +1 & u_1 > 0.5 \end{cases}, \qquad
        x = s \cdot \bigl(-b \ln(1 - u_2)\bigr)

    The magnitude uses ``1 − u2`` rather than ``u2``. Both are uniform, but ``1 − u2`` lies in
    ``(0, 1]`` when ``u2`` lies in ``[0, 1)``, so the logarithm is always finite.

    Parameters
    ----------
    u1, u2 : array_like of float in [0, 1)
        Independent uniforms (from ``rng.random`` or :class:`TextbookLCG`).
    b : float
        Scale ``b > 0``; ``b = Δf / ε`` gives the Laplace mechanism (Theorem 6-4).

    Returns
    -------
    float for scalar inputs, else an ndarray (broadcast shape).
    """
    func = "composition_laplace"
    b = check_positive(b, func=func, name="b")
    u1 = _uniform_array(u1, func=func, name="u1")
    u2 = _uniform_array(u2, func=func, name="u2")
    sign = np.where(u1 <= 0.5, -1.0, 1.0)
    x = sign * (-b * np.log1p(-u2))
    return float(x) if x.ndim == 0 else x
