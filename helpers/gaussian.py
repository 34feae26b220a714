r"""The Gaussian mechanism for (ε, δ)-differential privacy (textbook §6.1.2, §6.2.1).

Definition 6-1 (§6.1.2) allows a small failure probability δ: (ε, δ)-DP, or *approximate*
DP. The Gaussian mechanism adds ``N(0, σ²)`` noise to every coordinate of a query answer.
Its noise is calibrated to the **l2** sensitivity ``Δ2 = max ||f(D) − f(D')||_2``, not the l1
sensitivity used by the Laplace mechanism (§6.2.1, Definition 6-2 with p = 2). For a query
with ``d`` outputs, ``Δ2`` can be as small as ``Δ1 / √d``.

Two ways to choose σ:

* :func:`classic_gaussian_sigma` gives ``σ = Δ2 √(2 ln(1.25/δ)) / ε`` (Dwork & Roth 2014,
  Theorem A.1). The proof only holds for ``0 < ε < 1``, so the function refuses ε ≥ 1.
* :func:`analytic_gaussian_sigma` gives the smallest σ that is (ε, δ)-DP, for any ε > 0
  (Balle & Wang, ICML 2018, Theorem 8). The mechanism is (ε, δ)-DP if and only if

  .. math:: \Phi\!\Bigl(\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Bigr)
            - e^{\varepsilon}\,\Phi\!\Bigl(-\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Bigr)
            \le \delta .

  :func:`gaussian_delta` computes the left-hand side. It decreases in σ, so bisection
  finds the smallest σ that satisfies the condition. That σ is never larger than the classic
  one.

Like the Laplace code, this is teaching code. Floating-point Gaussian samples have the same
porosity problem as floating-point Laplace samples (Mironov 2012). Real deployments use a
discrete Gaussian (Canonne, Kamath & Steinke 2020).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from helpers._validation import check_epsilon, check_positive, check_real, check_rng, fail

__all__ = [
    "classic_gaussian_sigma",
    "gaussian_delta",
    "analytic_gaussian_sigma",
    "gaussian_mechanism",
]


def _check_delta(delta: Any, func: str) -> float:
    value = check_real(delta, func=func, name="delta")
    if not 0.0 < value < 1.0:
        raise fail(func, "delta", "a probability in (0, 1), typically much smaller than 1/n", value)
    return value


def classic_gaussian_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    r"""Classic calibration ``σ = Δ2 √(2 ln(1.25/δ)) / ε`` (Dwork & Roth 2014, Theorem A.1).

    Valid only for ``0 < ε < 1``: the proof needs ε < 1, and for larger ε the formula is not
    known to give (ε, δ)-DP. Use :func:`analytic_gaussian_sigma` for ε ≥ 1. That function is
    also tighter for ε < 1.

    Raises
    ------
    ValueError
        If ``sensitivity <= 0``, ``epsilon`` is not in (0, 1), or ``delta`` is not in (0, 1).
    """
    func = "classic_gaussian_sigma"
    sensitivity = check_positive(sensitivity, func=func, name="sensitivity")
    epsilon = check_epsilon(epsilon, func=func)
    if epsilon >= 1.0:
        raise fail(
            func,
            "epsilon",
            "< 1 for the classic bound (its proof needs ε < 1); "
            "use analytic_gaussian_sigma for any ε > 0",
            epsilon,
        )
    delta = _check_delta(delta, func)
    return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def _log_ndtr(x: float) -> float:
    return float(special.log_ndtr(x))


def gaussian_delta(sigma: float, sensitivity: float, epsilon: float) -> float:
    r"""Smallest δ for which ``N(0, σ²)`` noise is (ε, δ)-DP at l2 sensitivity Δ (Balle & Wang 2018).

    .. math:: \delta(\varepsilon) = \Phi\!\Bigl(\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Bigr)
              - e^{\varepsilon}\,\Phi\!\Bigl(-\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Bigr)

    This is the hockey-stick divergence between ``N(0, σ²)`` and ``N(Δ, σ²)``. The second
    term is computed as ``exp(ε + log Φ(·))``, so a large ε neither overflows nor loses the
    tiny difference to cancellation.
    """
    func = "gaussian_delta"
    sigma = check_positive(sigma, func=func, name="sigma")
    sensitivity = check_positive(sensitivity, func=func, name="sensitivity")
    epsilon = check_epsilon(epsilon, func=func, allow_zero=True)
    a = sensitivity / (2.0 * sigma)
    s = epsilon * sigma / sensitivity
    first = math.exp(_log_ndtr(a - s))
    second = math.exp(epsilon + _log_ndtr(-a - s))
    return max(first - second, 0.0)


def analytic_gaussian_sigma(
    sensitivity: float, epsilon: float, delta: float, rtol: float = 1e-12
) -> float:
    r"""Smallest σ with ``gaussian_delta(σ, Δ, ε) <= δ``: the analytic Gaussian mechanism.

    Balle & Wang (ICML 2018), "Improving the Gaussian mechanism for differential privacy:
    analytical calibration and optimal denoising", Theorem 8. The function finds σ by
    bisection on ``log σ``. The returned σ is the upper end of the final bracket, so the
    (ε, δ) condition holds at it. It is within a relative ``rtol`` of the exact smallest σ.
    Valid for every ε > 0, unlike :func:`classic_gaussian_sigma`.

    Parameters
    ----------
    sensitivity : float
        l2 sensitivity ``Δ2 > 0``.
    epsilon : float
        ``ε > 0``.
    delta : float
        ``δ`` in (0, 1).
    rtol : float
        Relative width of the final bracket, in ``[1e-15, 1e-3]``.
    """
    func = "analytic_gaussian_sigma"
    sensitivity = check_positive(sensitivity, func=func, name="sensitivity")
    epsilon = check_epsilon(epsilon, func=func)
    delta = _check_delta(delta, func)
    rtol = check_positive(rtol, func=func, name="rtol")
    if not 1e-15 <= rtol <= 1e-3:
        raise fail(func, "rtol", "a relative tolerance in [1e-15, 1e-3]", rtol)
    # δ(σ) decreases from 1 (σ -> 0) to 0 (σ -> ∞); bracket the root, then bisect.
    lo = hi = sensitivity
    while gaussian_delta(hi, sensitivity, epsilon) > delta:
        lo, hi = hi, hi * 2.0
    while gaussian_delta(lo, sensitivity, epsilon) <= delta:
        lo, hi = lo / 2.0, lo
    while hi - lo > rtol * hi:
        mid = math.sqrt(lo * hi)
        if gaussian_delta(mid, sensitivity, epsilon) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


def gaussian_mechanism(
    value: ArrayLike,
    sensitivity: float,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    method: str = "analytic",
) -> Any:
    r"""Release ``value`` with (ε, δ)-DP: ``value + N(0, σ²)`` on every coordinate.

    Parameters
    ----------
    value : float or array_like of float
        True answer ``f(D)``.
    sensitivity : float
        The **l2** sensitivity ``Δ2 > 0`` of ``f`` (§6.2.1).
    epsilon, delta : float
        Privacy parameters, ``ε > 0``, ``0 < δ < 1``.
    rng : numpy.random.Generator
    method : {"analytic", "classic"}
        How σ is chosen (:func:`analytic_gaussian_sigma` or :func:`classic_gaussian_sigma`;
        the classic one refuses ε ≥ 1).

    Returns
    -------
    float for a scalar ``value``; an ndarray of the same shape otherwise.
    """
    func = "gaussian_mechanism"
    if method == "analytic":
        sigma = analytic_gaussian_sigma(sensitivity, epsilon, delta)
    elif method == "classic":
        sigma = classic_gaussian_sigma(sensitivity, epsilon, delta)
    else:
        raise fail(func, "method", "'analytic' or 'classic'", method)
    rng = check_rng(rng, func=func)
    if np.ndim(value) == 0:
        return check_real(value, func=func, name="value") + float(rng.normal(0.0, sigma))
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise fail(func, "value", "a number or an array of finite numbers", value) from None
    if not np.all(np.isfinite(array)):
        raise fail(func, "value", "finite numbers (no NaN or inf)", value)
    return array + rng.normal(0.0, sigma, size=array.shape)
