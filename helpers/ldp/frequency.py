"""Frequency oracles: pure protocols, generalized randomized response (GRR) and optimized unary encoding (OUE).

Frequency oracles here are *pure* protocols (Wang et al., USENIX Security
2017): a report "supports" value v with probability p if the user's value is
v and q otherwise. With C(v) supporting reports out of n,

    c(v) = (C(v) - n q) / (p - q)                       (unbiased)
    Var[c(v)] = n q(1-q)/(p-q)^2 + n f_v (1-p-q)/(p-q)

where f_v is the true fraction of users holding v. Textbook §6.4.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from helpers._validation import check_epsilon, check_int, check_probability, check_rng, fail
from helpers.ldp._common import _check_bits, _check_categories


# ---------------------------------------------------------------------------
# pure protocols (generic)
# ---------------------------------------------------------------------------

def pure_estimate(support_counts: ArrayLike, n: int, p: float, q: float) -> np.ndarray:
    """Unbiased count estimate of a pure LDP protocol.

    ``c(v) = (C(v) - n q) / (p - q)`` where C(v) is the number of reports
    that support v (Wang et al. 2017, "Locally differentially private
    protocols for frequency estimation"; textbook §6.4.2 is the case k = 2).

    Parameters
    ----------
    support_counts : array_like of float
        C(v) for each value v.
    n : int >= 1
        Number of reports.
    p, q : float in [0, 1], p != q
        Probability that a report supports the user's own value (p) and a
        given other value (q).

    Returns
    -------
    numpy.ndarray of float
        Estimated counts; E[c(v)] = n f_v exactly. They may be negative.
    """
    func = "pure_estimate"
    n = check_int(n, func=func, name="n", minimum=1)
    p = check_probability(p, func=func, name="p")
    q = check_probability(q, func=func, name="q")
    if p == q:
        raise fail(func, "q", "different from p (p == q carries no information)", q)
    counts = np.asarray(support_counts, dtype=float)
    if counts.size and not np.all(np.isfinite(counts)):
        raise fail(func, "support_counts", "finite counts", support_counts)
    return (counts - n * q) / (p - q)


def pure_variance(n: int, p: float, q: float, f: ArrayLike = 0.0) -> Any:
    """Variance of :func:`pure_estimate` for a value of true fraction f.

    ``Var[c(v)] = n q(1-q)/(p-q)^2 + n f (1-p-q)/(p-q)``. With f = 0 this is
    the "approximate variance" Var* used to compare protocols.
    """
    func = "pure_variance"
    n = check_int(n, func=func, name="n", minimum=1)
    p = check_probability(p, func=func, name="p")
    q = check_probability(q, func=func, name="q")
    if p == q:
        raise fail(func, "q", "different from p", q)
    f_arr = np.asarray(f, dtype=float)
    if not np.all(np.isfinite(f_arr)) or np.any((f_arr < 0) | (f_arr > 1)):
        raise fail(func, "f", "a fraction in [0, 1]", f)
    var = n * q * (1 - q) / (p - q) ** 2 + n * f_arr * (1 - p - q) / (p - q)
    return float(var) if var.ndim == 0 else var


# ---------------------------------------------------------------------------
# generalized (k-ary) randomized response, a.k.a. direct encoding
# ---------------------------------------------------------------------------

def grr_probabilities(k: int, epsilon: float) -> tuple[float, float]:
    """(p, q) of generalized randomized response over k values.

    ``p = e^ε / (e^ε + k - 1)`` (report the true value),
    ``q = 1 / (e^ε + k - 1)`` (report one given other value). p/q = e^ε, so
    GRR is ε-LDP. k = 2 is the textbook's binary RR (Theorem 6-6, §6.4.2).
    """
    func = "grr_probabilities"
    k = check_int(k, func=func, name="k", minimum=2)
    epsilon = check_epsilon(epsilon, func=func)
    # exp(-ε) form stays finite for huge ε
    q = math.exp(-epsilon) / (1.0 + (k - 1) * math.exp(-epsilon))
    p = 1.0 / (1.0 + (k - 1) * math.exp(-epsilon))
    return p, q


def grr_perturb(values: ArrayLike, k: int, epsilon: float, rng: np.random.Generator) -> Any:
    """Generalized randomized response (ε-LDP), vectorized.

    Each value v in {0, ..., k-1} is reported unchanged with probability
    p = e^ε/(e^ε+k-1), otherwise replaced by one of the k-1 *other* values
    chosen uniformly (each with probability q = 1/(e^ε+k-1)).

    Returns an int array of the shape of ``values`` (an int for a scalar).
    """
    func = "grr_perturb"
    k = check_int(k, func=func, name="k", minimum=2)
    epsilon = check_epsilon(epsilon, func=func)
    rng = check_rng(rng, func=func)
    v = _check_categories(values, k, func=func)
    p, _ = grr_probabilities(k, epsilon)
    keep = rng.random(v.shape) < p
    other = rng.integers(0, k - 1, size=v.shape)
    other = other + (other >= v)  # skip the true value: uniform over the other k-1
    out = np.where(keep, v, other)
    return int(out) if v.ndim == 0 else out


def grr_estimate(reports: ArrayLike, k: int, epsilon: float) -> np.ndarray:
    """Unbiased counts (length k) from GRR reports: (C(v) - n q)/(p - q)."""
    func = "grr_estimate"
    k = check_int(k, func=func, name="k", minimum=2)
    epsilon = check_epsilon(epsilon, func=func)
    r = _check_categories(reports, k, func=func, name="reports").ravel()
    if r.size == 0:
        raise fail(func, "reports", "a non-empty array of reports", "an empty array")
    p, q = grr_probabilities(k, epsilon)
    return pure_estimate(np.bincount(r, minlength=k), r.size, p, q)


def grr_variance(n: int, k: int, epsilon: float, f: ArrayLike = 0.0) -> Any:
    """Variance of a GRR count estimate (pure-protocol formula with GRR's p, q).

    ``f = 0`` gives Var* = n (e^ε + k - 2)/(e^ε - 1)^2.
    """
    func = "grr_variance"
    n = check_int(n, func=func, name="n", minimum=1)
    p, q = grr_probabilities(k, check_epsilon(epsilon, func=func))
    return pure_variance(n, p, q, f)


# ---------------------------------------------------------------------------
# optimized unary encoding
# ---------------------------------------------------------------------------

def oue_probabilities(epsilon: float) -> tuple[float, float]:
    """(p, q) = (1/2, 1/(e^ε + 1)) of optimized unary encoding (OUE)."""
    epsilon = check_epsilon(epsilon, func="oue_probabilities")
    q = math.exp(-epsilon) / (1.0 + math.exp(-epsilon))  # 1/(e^ε+1) without overflow
    return 0.5, q


def oue_perturb(values: ArrayLike, k: int, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """Optimized unary encoding (ε-LDP).

    Value v is one-hot encoded as k bits; bit v is reported as 1 with
    probability p = 1/2, every other bit is reported as 1 with probability
    q = 1/(e^ε+1). Two inputs differ in two bits, so the likelihood ratio is
    at most (p(1-q))/((1-p)q) = e^ε.

    Returns an ``(n, k)`` uint8 matrix (n = number of values).
    """
    func = "oue_perturb"
    k = check_int(k, func=func, name="k", minimum=2)
    epsilon = check_epsilon(epsilon, func=func)
    rng = check_rng(rng, func=func)
    v = _check_categories(values, k, func=func).ravel()
    p, q = oue_probabilities(epsilon)
    u = rng.random((v.size, k))
    bits = (u < q).astype(np.uint8)
    rows = np.arange(v.size)
    bits[rows, v] = (u[rows, v] < p).astype(np.uint8)
    return bits


def oue_estimate(reports: ArrayLike, epsilon: float) -> np.ndarray:
    """Unbiased counts (length k) from an (n, k) OUE report matrix."""
    func = "oue_estimate"
    epsilon = check_epsilon(epsilon, func=func)
    bits = _check_bits(reports, func=func, name="reports")
    if bits.ndim != 2 or bits.shape[0] == 0 or bits.shape[1] < 2:
        raise fail(func, "reports", "an (n, k) 0/1 matrix with n >= 1, k >= 2", f"shape {bits.shape}")
    p, q = oue_probabilities(epsilon)
    return pure_estimate(bits.sum(axis=0), bits.shape[0], p, q)


def oue_variance(n: int, epsilon: float, f: ArrayLike = 0.0) -> Any:
    """Variance of an OUE count estimate; Var* = 4 n e^ε/(e^ε - 1)^2 at f = 0."""
    func = "oue_variance"
    n = check_int(n, func=func, name="n", minimum=1)
    p, q = oue_probabilities(check_epsilon(epsilon, func=func))
    return pure_variance(n, p, q, f)
