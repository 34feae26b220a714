"""Reference implementations of the mechanisms the graded exercises ask for.

Textbook chapter 6 (差分隐私): the Laplace mechanism (§6.2), the exponential
mechanism (§6.3) and binary randomized response (§6.4). The graded notebooks
in ``source/`` use exactly these names and signatures.

The small formula functions (:func:`laplace_scale`, :func:`laplace_pdf`,
:func:`laplace_cdf`) are named after the mathematics so that each mechanism
body reads like the chapter.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from helpers._validation import (
    check_epsilon,
    check_positive,
    check_probability,
    check_real,
    check_rng,
    check_scores,
    check_size,
    fail,
)

__all__ = [
    "laplace_noise",
    "laplace_mechanism",
    "exponential_probabilities",
    "exponential_mechanism",
    "rr_keep_probability",
    "rr_perturb",
    "rr_correct",
]


# --- formula functions -------------------------------------------------------


def laplace_scale(sensitivity: float, epsilon: float) -> float:
    """Scale ``b = Δf / ε`` of the Laplace mechanism (textbook Theorem 6-4, §6.2.1)."""
    sensitivity = check_positive(sensitivity, func="laplace_scale", name="sensitivity")
    epsilon = check_epsilon(epsilon, func="laplace_scale")
    return sensitivity / epsilon


def laplace_pdf(x: ArrayLike, b: float) -> np.ndarray:
    """Density ``Lap(x | b) = exp(-|x| / b) / (2b)`` (§6.2.1, Fig. 6-3).

    The chapter prints this formula with ``h`` in place of ``b``: a typo.
    """
    b = check_positive(b, func="laplace_pdf", name="b")
    x = np.asarray(x, dtype=float)
    return np.exp(-np.abs(x) / b) / (2.0 * b)


def laplace_cdf(x: ArrayLike, b: float) -> np.ndarray:
    """CDF ``F(x) = ½ e^{x/b}`` for ``x < 0`` and ``1 − ½ e^{−x/b}`` for ``x ≥ 0``."""
    b = check_positive(b, func="laplace_cdf", name="b")
    x = np.asarray(x, dtype=float)
    tail = 0.5 * np.exp(-np.abs(x) / b)
    return np.where(x < 0, tail, 1.0 - tail)


# --- Laplace mechanism (§6.2) ------------------------------------------------

# Largest double below 1/2: |u - 1/2| is clamped to it so that ln(1 - 2|u - 1/2|) > -inf.
_HALF_BELOW = float(np.nextafter(0.5, 0.0))


def laplace_noise(b: float, size: int | tuple[int, ...] | None, rng: np.random.Generator) -> Any:
    r"""Laplace(0, b) samples made from uniform numbers drawn with ``rng.random``.

    Inverse-CDF method (the corrected form of the generator of §6.2.2). With
    ``u ~ U[0, 1)``:

    .. math::

        x = F^{-1}(u) = \begin{cases} b \ln(2u) & u < 1/2 \\
                                     -b \ln(2(1 - u)) & u \ge 1/2 \end{cases}
          = \operatorname{sign}(u - \tfrac12)\, (-b) \ln(1 - 2|u - \tfrac12|)

    The second form is what the code computes (one vectorized pass, no
    branches). ``rng.random`` can return exactly 0, where ``ln(2u) = −∞``; that
    single value (probability 2^-53) is moved to the next representable
    magnitude, giving ``x ≈ −36.7 b`` instead of ``−∞``. The formula printed in
    §6.2.2 also *adds* a second uniform ``u2`` to each branch, which shifts the
    mean to 1/2: see :func:`helpers.sampling.textbook_printed_laplace`.

    Parameters
    ----------
    b : float
        Scale, ``b > 0``. Mean 0, variance ``2 b²``.
    size : int, tuple of int or None
        Output shape; ``None`` returns a single float.
    rng : numpy.random.Generator
        Source of the uniforms. Exactly one ``rng.random(size)`` call is made,
        so the same seed always gives the same noise.

    Returns
    -------
    float or numpy.ndarray of float

    Raises
    ------
    ValueError
        If ``b`` is not a finite number > 0, ``size`` is invalid, or ``rng``
        is not a ``numpy.random.Generator``.

    Examples
    --------
    >>> import numpy as np
    >>> laplace_noise(1.0, 3, np.random.default_rng(0)).shape
    (3,)
    """
    func = "laplace_noise"
    b = check_positive(b, func=func, name="b")
    size = check_size(size, func=func)
    rng = check_rng(rng, func=func)
    u = np.array(rng.random(size), dtype=float, ndmin=1)
    # In-place passes: about twice as fast as rng.laplace for 10**7 samples.
    x = np.subtract(u, 0.5, out=u)
    magnitude = np.abs(x)
    np.minimum(magnitude, _HALF_BELOW, out=magnitude)  # keeps ln finite at u = 0
    magnitude *= -2.0
    np.log1p(magnitude, out=magnitude)
    magnitude *= -b
    np.copysign(magnitude, x, out=magnitude)
    return float(magnitude[0]) if size is None else magnitude


def laplace_mechanism(
    value: ArrayLike, sensitivity: float, epsilon: float, rng: np.random.Generator
) -> Any:
    r"""Release ``value`` with ε-differential privacy (Theorem 6-4, §6.2.1).

    .. math::  M(D) = f(D) + (Y_1, \dots, Y_k), \quad Y_i \sim \mathrm{Lap}(\Delta f / \varepsilon)

    Parameters
    ----------
    value : float or array_like of float
        The true answer ``f(D)``; each coordinate gets independent noise.
    sensitivity : float
        The l1 global sensitivity ``Δf > 0`` of the query (Definition 6-2).
    epsilon : float
        Privacy budget ``ε > 0``.
    rng : numpy.random.Generator

    Returns
    -------
    float for a scalar ``value``; an ndarray of the same shape otherwise.

    Raises
    ------
    ValueError
        For a non-finite ``value``, ``sensitivity <= 0``, ``epsilon <= 0`` (or
        NaN/inf), or an ``rng`` that is not a Generator.
    """
    func = "laplace_mechanism"
    sensitivity = check_positive(sensitivity, func=func, name="sensitivity")
    epsilon = check_epsilon(epsilon, func=func)
    rng = check_rng(rng, func=func)
    scale = sensitivity / epsilon
    if not np.isfinite(scale):
        raise fail(func, "epsilon", f"large enough that sensitivity/epsilon is finite (sensitivity = {sensitivity:g})", epsilon)
    if np.ndim(value) == 0:
        true_value = check_real(value, func=func, name="value")
        return true_value + laplace_noise(scale, None, rng)
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise fail(func, "value", "a number or an array of finite numbers", value) from None
    if not np.all(np.isfinite(array)):
        raise fail(func, "value", "finite numbers (no NaN or inf)", value)
    return array + laplace_noise(scale, array.shape, rng)


# --- Exponential mechanism (§6.3) --------------------------------------------


def exponential_probabilities(scores: ArrayLike, epsilon: float, sensitivity: float) -> np.ndarray:
    r"""Output probabilities of the exponential mechanism (Theorem 6-5, §6.3.2).

    .. math::  \Pr[r] \propto \exp\!\left(\frac{\varepsilon\, q(D, r)}{2 \Delta q}\right)

    Computed as a softmax of the logits ``ε q / (2Δq)`` after subtracting their
    maximum, so scores as large as 1e6 with ε = 10 do not overflow.
    ``ε = 0`` gives the uniform distribution (column ε = 0 of Table 6-4).

    Parameters
    ----------
    scores : array_like of float, shape (m,)
        Utility ``q(D, r)`` of each candidate; non-empty, finite.
    epsilon : float
        Privacy budget ``ε >= 0``.
    sensitivity : float
        Sensitivity ``Δq > 0`` of the score function.

    Returns
    -------
    numpy.ndarray, shape (m,)
        Non-negative probabilities summing to 1.

    Examples
    --------
    Table 6-4 (scores 30, 25, 8, 2; Δq = 1; ε = 1):

    >>> exponential_probabilities([30, 25, 8, 2], 1.0, 1.0).round(3)
    array([0.924, 0.076, 0.   , 0.   ])
    """
    func = "exponential_probabilities"
    q = check_scores(scores, func=func)
    epsilon = check_epsilon(epsilon, func=func, allow_zero=True)
    sensitivity = check_positive(sensitivity, func=func, name="sensitivity")
    logits = epsilon * q / (2.0 * sensitivity)
    weights = np.exp(logits - logits.max())
    return weights / weights.sum()


def exponential_mechanism(
    scores: ArrayLike, epsilon: float, sensitivity: float, rng: np.random.Generator
) -> int:
    """Sample the index of one candidate with the exponential mechanism (§6.3.2).

    Inverse-CDF sampling: one uniform ``u`` from ``rng.random()``, then the
    first index whose cumulative probability exceeds ``u``. Candidates of
    probability 0 (underflow) are never returned.

    Parameters
    ----------
    scores, epsilon, sensitivity
        As in :func:`exponential_probabilities`.
    rng : numpy.random.Generator

    Returns
    -------
    int
        The sampled index into ``scores``.
    """
    rng = check_rng(rng, func="exponential_mechanism")
    probabilities = exponential_probabilities(scores, epsilon, sensitivity)
    cumulative = np.cumsum(probabilities)
    # Scaling u by the last cumulative value absorbs rounding in the sum.
    u = rng.random() * cumulative[-1]
    index = int(np.searchsorted(cumulative, u, side="right"))
    return min(index, probabilities.size - 1)


# --- Randomized response (§6.4) ----------------------------------------------


def rr_keep_probability(epsilon: float) -> float:
    r"""Probability ``p = e^ε / (e^ε + 1)`` of answering truthfully (Theorem 6-6).

    The inverse is ``ε = ln(p / (1 − p))`` (§6.4.2). Computed as
    ``1 / (1 + e^{−ε})`` so that large ε does not overflow.
    """
    epsilon = check_epsilon(epsilon, func="rr_keep_probability")
    return float(1.0 / (1.0 + np.exp(-epsilon)))


def rr_perturb(bits: ArrayLike, epsilon: float, rng: np.random.Generator) -> Any:
    """Binary randomized response: keep each bit w.p. ``p``, flip it otherwise (§6.4.2).

    Parameters
    ----------
    bits : int or array_like of {0, 1}
        Each user's true answer (``bool`` arrays are accepted).
    epsilon : float
        Local privacy budget ``ε > 0``; ``p = e^ε / (e^ε + 1)``.
    rng : numpy.random.Generator
        One ``rng.random(shape)`` call decides all flips.

    Returns
    -------
    int for a scalar bit, otherwise an ``int8`` array of 0/1 of the same shape
    (a free view of the boolean result; sums accumulate in int64).

    Raises
    ------
    ValueError
        If a bit is not 0 or 1, or ``epsilon`` / ``rng`` are invalid.
    """
    func = "rr_perturb"
    p = rr_keep_probability(epsilon)
    rng = check_rng(rng, func=func)
    array = np.asarray(bits)
    if array.dtype != bool:
        if not np.issubdtype(array.dtype, np.number) or not np.all((array == 0) | (array == 1)):
            raise fail(func, "bits", "0/1 values (or booleans)", bits)
        array = array == 1
    flipped = rng.random(array.shape) >= p
    reported = np.not_equal(array, flipped).view(np.int8)
    return int(reported) if reported.ndim == 0 else reported


def rr_correct(n: float, n1: ArrayLike, p: float) -> Any:
    r"""Corrected (unbiased) count from randomized-response answers (§6.4.2).

    With ``n`` answers of which ``n1`` said "yes", each answer truthful with
    probability ``p``:

    .. math::  N = \hat\pi\, n = \frac{(p - 1)\, n + n_1}{2p - 1}

    Worked example (§6.4.2): 20 people, ``p = 0.8``, 14 reported male:
    ``(20·(0.8 − 1) + 14) / 0.6 ≈ 16.7``.

    Parameters
    ----------
    n : float
        Number of answers, ``n > 0``.
    n1 : float or array_like
        Number of "yes" answers, ``0 <= n1 <= n``.
    p : float
        Truth probability in [0, 1], not 1/2 (at ``p = 1/2`` the answers carry
        no information and the estimator divides by zero).

    Returns
    -------
    float, or ndarray for array ``n1``. The estimate may fall outside [0, n]:
    it is unbiased, not clipped.
    """
    func = "rr_correct"
    n = check_positive(n, func=func, name="n")
    p = check_probability(p, func=func, name="p")
    if p == 0.5:
        raise fail(func, "p", "a probability in [0, 1] other than 0.5 (the answers would carry no information)", p)
    if np.ndim(n1):
        try:
            counts = np.asarray(n1, dtype=float)
        except (TypeError, ValueError):
            raise fail(func, "n1", f"a count between 0 and n = {n:g}", n1) from None
    else:
        counts = check_real(n1, func=func, name="n1")
    if not np.all(np.isfinite(counts)) or np.any(counts < 0) or np.any(counts > n):
        raise fail(func, "n1", f"a count between 0 and n = {n:g}", n1)
    estimate = ((p - 1.0) * n + counts) / (2.0 * p - 1.0)
    return float(estimate) if np.ndim(estimate) == 0 else estimate
