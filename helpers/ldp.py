"""Local differential privacy: frequency oracles, RAPPOR and mean estimation.

Textbook §6.4 (randomized response) and §6.5.1 (Google RAPPOR); seed 004
(mean estimation on [-1, 1]: Duchi et al., the Piecewise Mechanism and the
paper's own "classified transformation" mechanism, DCT).

Every user perturbs her own value before it leaves her device, so the
collector only sees reports. A protocol is ε-LDP when, for any two inputs
v, v' and any report y, ``P[M(v) = y] <= e^ε P[M(v') = y]`` (densities for
continuous outputs).

Frequency oracles here are *pure* protocols (Wang et al., USENIX Security
2017): a report "supports" value v with probability p if the user's value is
v and q otherwise. With C(v) supporting reports out of n,

    c(v) = (C(v) - n q) / (p - q)                       (unbiased)
    Var[c(v)] = n q(1-q)/(p-q)^2 + n f_v (1-p-q)/(p-q)

where f_v is the true fraction of users holding v.

Teaching code: see the package docstring about floating point.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from helpers._validation import (
    check_epsilon,
    check_int,
    check_positive,
    check_probability,
    check_rng,
    fail,
)

__all__ = [
    "pure_estimate", "pure_variance",
    "grr_probabilities", "grr_perturb", "grr_estimate", "grr_variance",
    "oue_probabilities", "oue_perturb", "oue_estimate", "oue_variance",
    "rappor_hash_positions", "rappor_bloom", "rappor_bloom_matrix",
    "rappor_permanent", "rappor_instantaneous", "rappor_epsilon_infinity",
    "rappor_epsilon_one", "rappor_estimate_bits", "rappor_decode", "RapporClient",
    "bonferroni_z", "RapporTest", "rappor_significance",
    "duchi_bound", "duchi_perturb", "duchi_variance",
    "piecewise_constant", "piecewise_perturb", "piecewise_variance",
    "dct_half_width", "dct_keep_probability", "dct_perturb", "dct_variance",
    "dct_paper_variance",
    "ldp_linear_regression",
]


# ---------------------------------------------------------------------------
# validation helpers local to this module
# ---------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------
# RAPPOR (textbook §6.5.1; Erlingsson, Pihur, Korolova, CCS 2014)
# ---------------------------------------------------------------------------

def _value_bytes(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, (np.integer,)):
        value = int(value)
    return str(value).encode("utf-8")


def rappor_hash_positions(value: Any, k_bits: int, h: int, *, cohort: int = 0) -> np.ndarray:
    """The h Bloom-filter positions of ``value`` (reproducible across processes).

    Hash function i is ``blake2b(str(value), key="rappor:<cohort>:<i>")``
    reduced modulo k_bits. Python's built-in ``hash()`` is salted per
    process, so it would give different filters in every kernel. Note that
    ``1`` and ``"1"`` hash alike (both become the text "1").
    """
    func = "rappor_hash_positions"
    k_bits = check_int(k_bits, func=func, name="k_bits", minimum=1)
    h = check_int(h, func=func, name="h", minimum=1)
    cohort = check_int(cohort, func=func, name="cohort", minimum=0)
    data = _value_bytes(value)
    positions = []
    for i in range(h):
        digest = hashlib.blake2b(data, digest_size=8, key=f"rappor:{cohort}:{i}".encode()).digest()
        positions.append(int.from_bytes(digest, "big") % k_bits)
    return np.array(positions, dtype=np.int64)


def rappor_bloom(values: Any, k_bits: int, h: int, *, cohort: int = 0) -> np.ndarray:
    """Bloom filters B of the values: an ``(n, k_bits)`` uint8 matrix.

    Step (1) of textbook Fig. 6-12: each value is hashed by h functions into
    a k-bit Bloom filter (positions from :func:`rappor_hash_positions`).
    A single value (str, int) gives one row of shape ``(k_bits,)``.
    """
    func = "rappor_bloom"
    k_bits = check_int(k_bits, func=func, name="k_bits", minimum=1)
    h = check_int(h, func=func, name="h", minimum=1)
    single = isinstance(values, (str, bytes, int, np.integer))
    items = [values] if single else list(values)
    bloom = np.zeros((len(items), k_bits), dtype=np.uint8)
    cache: dict[bytes, np.ndarray] = {}
    for row, value in enumerate(items):
        key = _value_bytes(value)
        if key not in cache:
            cache[key] = rappor_hash_positions(value, k_bits, h, cohort=cohort)
        bloom[row, cache[key]] = 1
    return bloom[0] if single else bloom


def rappor_bloom_matrix(candidates: Any, k_bits: int, h: int, *, cohort: int = 0) -> np.ndarray:
    """Design matrix X (k_bits × m): column j is the Bloom filter of candidate j."""
    return rappor_bloom(list(candidates), k_bits, h, cohort=cohort).T.astype(float)


def rappor_permanent(bloom: ArrayLike, f: float, rng: np.random.Generator) -> np.ndarray:
    """Permanent randomized response B -> B' (textbook Fig. 6-12 step (2)).

    Each bit is kept with probability 1 - f, set to 1 with probability f/2
    and to 0 with probability f/2 (so a bit survives with probability
    1 - f/2). B' is computed once per (user, value) and memoized; see
    :class:`RapporClient`.
    """
    func = "rappor_permanent"
    f = check_probability(f, func=func, name="f")
    rng = check_rng(rng, func=func)
    b = _check_bits(bloom, func=func, name="bloom")
    u = rng.random(b.shape)
    return np.where(u < f / 2, 1, np.where(u < f, 0, b)).astype(np.uint8)


def rappor_instantaneous(b_prime: ArrayLike, p: float, q: float, rng: np.random.Generator) -> np.ndarray:
    """Instantaneous randomized response B' -> S (step (3)).

    Report 1 with probability q if B'_i = 1 and with probability p if
    B'_i = 0. Fresh randomness on every report.
    """
    func = "rappor_instantaneous"
    p = check_probability(p, func=func, name="p")
    q = check_probability(q, func=func, name="q")
    rng = check_rng(rng, func=func)
    b = _check_bits(b_prime, func=func, name="b_prime")
    u = rng.random(b.shape)
    return np.where(b == 1, u < q, u < p).astype(np.uint8)


def rappor_epsilon_infinity(f: float, h: int) -> float:
    """ε_∞ = 2h ln((1 - f/2)/(f/2)): the guarantee of the permanent response.

    It bounds what *any number* of reports about the same value reveal, since
    they are all post-processing of B'. f = 0 gives ε_∞ = ∞.
    """
    func = "rappor_epsilon_infinity"
    f = check_probability(f, func=func, name="f")
    h = check_int(h, func=func, name="h", minimum=1)
    if f == 0:
        return math.inf
    return 2 * h * math.log((1 - f / 2) / (f / 2))


def rappor_epsilon_one(f: float, p: float, q: float, h: int) -> float:
    """ε_1 of one report: ``h ln(q*(1-p*)/(p*(1-q*)))`` (RAPPOR paper §4).

    q* = P(S_i = 1 | B_i = 1) = f(p+q)/2 + (1-f) q and
    p* = P(S_i = 1 | B_i = 0) = f(p+q)/2 + (1-f) p.
    """
    func = "rappor_epsilon_one"
    f = check_probability(f, func=func, name="f")
    p = check_probability(p, func=func, name="p")
    q = check_probability(q, func=func, name="q")
    h = check_int(h, func=func, name="h", minimum=1)
    q_star = 0.5 * f * (p + q) + (1 - f) * q
    p_star = 0.5 * f * (p + q) + (1 - f) * p
    if min(p_star, 1 - q_star) == 0:
        return math.inf
    return abs(h * math.log(q_star * (1 - p_star) / (p_star * (1 - q_star))))


def rappor_estimate_bits(reports: ArrayLike, f: float, p: float, q: float, *, n: int | None = None) -> np.ndarray:
    """Collector side: unbiased estimate of how many users' Bloom bit i is 1.

    ``t_i = (c_i - p01 N) / ((1 - f)(q - p))`` with ``p01 = p(1 - f/2) + q f/2``
    (the probability of reporting 1 when the true bit is 0) and c_i the
    number of reports with bit i set.

    Parameters
    ----------
    reports : (N, k_bits) 0/1 matrix, or the column sums c (1-D) with ``n=N``.
    """
    func = "rappor_estimate_bits"
    f = check_probability(f, func=func, name="f", high_open=True)
    p = check_probability(p, func=func, name="p")
    q = check_probability(q, func=func, name="q")
    if p == q:
        raise fail(func, "q", "different from p (p == q reports carry no information)", q)
    if n is None:
        bits = _check_bits(reports, func=func, name="reports")
        if bits.ndim != 2 or bits.shape[0] == 0:
            raise fail(func, "reports", "an (N, k_bits) 0/1 matrix with N >= 1 (or counts with n=)", f"shape {bits.shape}")
        counts, n_reports = bits.sum(axis=0).astype(float), bits.shape[0]
    else:
        n_reports = check_int(n, func=func, name="n", minimum=1)
        counts = np.asarray(reports, dtype=float)
        if counts.ndim != 1 or not np.all(np.isfinite(counts)) or np.any(counts < 0) or np.any(counts > n_reports):
            raise fail(func, "reports", f"1-D bit counts in [0, n={n_reports}]", reports)
    p01 = p * (1 - f / 2) + q * f / 2
    return (counts - p01 * n_reports) / ((1 - f) * (q - p))


def rappor_decode(bit_counts_est: ArrayLike, candidates: Any, k_bits: int, h: int, *, cohort: int = 0) -> np.ndarray:
    """Candidate counts from estimated bit counts by non-negative least squares.

    Solves ``min ||X x - t||_2`` subject to x >= 0, where X is the Bloom
    design matrix of the candidate strings (:func:`rappor_bloom_matrix`) and
    t the output of :func:`rappor_estimate_bits` (scipy.optimize.nnls). The
    RAPPOR paper fits a lasso first and then least squares; NNLS is the
    simple, common teaching variant. Candidates whose Bloom filters collide
    cannot be told apart (use more bits or several cohorts).

    Returns
    -------
    numpy.ndarray of float, length len(candidates)
        Estimated number of users holding each candidate.
    """
    from scipy.optimize import nnls

    func = "rappor_decode"
    k_bits = check_int(k_bits, func=func, name="k_bits", minimum=1)
    h = check_int(h, func=func, name="h", minimum=1)
    t = np.asarray(bit_counts_est, dtype=float)
    if t.shape != (k_bits,) or not np.all(np.isfinite(t)):
        raise fail(func, "bit_counts_est", f"a finite vector of length k_bits={k_bits}", f"shape {t.shape}")
    candidates = list(candidates)
    if not candidates:
        raise fail(func, "candidates", "a non-empty list of candidate values", candidates)
    x, _ = nnls(rappor_bloom_matrix(candidates, k_bits, h, cohort=cohort), t)
    return x


def bonferroni_z(m: int, alpha: float = 0.05) -> float:
    r"""One-sided z threshold of a Bonferroni-corrected test of ``m`` hypotheses.

    ``z = Φ^{-1}(1 - α/m)``: declaring "candidate j is present" when its estimate exceeds
    ``z · sd_j`` has family-wise false-positive probability at most α over the ``m`` absent
    candidates (normal approximation). RAPPOR (Erlingsson et al. 2014, §4) uses α = 0.05.

    >>> round(bonferroni_z(12), 3), round(bonferroni_z(10**6), 3)
    (2.638, 5.327)
    """
    from scipy.stats import norm

    func = "bonferroni_z"
    m = check_int(m, func=func, name="m", minimum=1)
    alpha = check_probability(alpha, func=func, name="alpha", low_open=True, high_open=True)
    return float(norm.isf(alpha / m))


class RapporTest(NamedTuple):
    """Result of :func:`rappor_significance`, one entry per candidate."""

    estimate: np.ndarray      # least-squares count estimate (may be negative)
    sd: np.ndarray            # its standard deviation
    z: float                  # Bonferroni threshold in standard deviations
    threshold: np.ndarray     # z * sd: the smallest estimate declared significant
    significant: np.ndarray   # estimate > threshold


def rappor_significance(reports: ArrayLike, candidates: Any, k_bits: int, h: int, f: float, p: float,
                        q: float, *, n: int | None = None, alpha: float = 0.05,
                        cohort: int = 0) -> RapporTest:
    r"""RAPPOR decoding with a per-candidate standard deviation and a Bonferroni test.

    Following Erlingsson et al. (2014, §4): estimate the bit counts ``t``
    (:func:`rappor_estimate_bits`), fit them by ordinary least squares on the candidates'
    Bloom design matrix X, ``x̂ = X⁺ t``, and keep only the candidates whose estimate exceeds
    ``z · sd`` with ``z = Φ^{-1}(1 - α/m)`` (:func:`bonferroni_z`, m candidates).

    Given the users' values, the reports' bits are independent, so ``Cov(t) = diag(v)`` with
    ``v_i = Var(c_i) / ((1-f)(q-p))^2``. ``Var(c_i)`` is a sum of Bernoulli variances, at
    most ``N r_i (1 - r_i)`` where ``r_i = c_i / N`` is the observed rate of bit i (a
    heterogeneous Bernoulli sum varies less than a binomial of the same mean), so the plug-in

        sd_j = sqrt( (X⁺ diag(v) X⁺ᵀ)_jj ),   v_i = N r_i (1 - r_i) / ((1-f)(q-p))^2

    is slightly conservative. (The paper selects candidates with a lasso first; with a short
    candidate list we fit all of them.)

    Parameters
    ----------
    reports : (N, k_bits) 0/1 matrix, or the column sums (1-D) with ``n=N``.
    candidates : the candidate values (strings).
    k_bits, h, f, p, q : RAPPOR parameters, as for :func:`rappor_estimate_bits`.
    alpha : family-wise false-positive rate, default 0.05.

    Returns
    -------
    RapporTest
    """
    func = "rappor_significance"
    k_bits = check_int(k_bits, func=func, name="k_bits", minimum=1)
    h = check_int(h, func=func, name="h", minimum=1)
    candidates = list(candidates)
    if not candidates:
        raise fail(func, "candidates", "a non-empty list of candidate values", candidates)
    if n is None:
        bits = _check_bits(reports, func=func, name="reports")
        if bits.ndim != 2 or bits.shape[0] == 0 or bits.shape[1] != k_bits:
            raise fail(func, "reports", f"an (N, k_bits={k_bits}) 0/1 matrix with N >= 1", f"shape {bits.shape}")
        counts, n = bits.sum(axis=0).astype(float), bits.shape[0]
    else:
        counts = np.asarray(reports, dtype=float)
    t = rappor_estimate_bits(counts, f, p, q, n=n)
    if t.shape != (k_bits,):
        raise fail(func, "reports", f"bit counts of length k_bits={k_bits}", f"shape {t.shape}")
    rate = counts / n
    var_t = n * rate * (1 - rate) / ((1 - f) * (q - p)) ** 2
    pinv = np.linalg.pinv(rappor_bloom_matrix(candidates, k_bits, h, cohort=cohort))
    estimate = pinv @ t
    sd = np.sqrt(np.einsum("ji,i,ji->j", pinv, var_t, pinv))
    z = bonferroni_z(len(candidates), alpha)
    threshold = z * sd
    return RapporTest(estimate, sd, z, threshold, estimate > threshold)


# ---------------------------------------------------------------------------
# mean estimation on [-1, 1] (seed 004, §2-§3)
# ---------------------------------------------------------------------------

def duchi_bound(epsilon: float) -> float:
    """B = (e^ε + 1)/(e^ε - 1), the magnitude of Duchi et al.'s outputs."""
    epsilon = check_epsilon(epsilon, func="duchi_bound")
    return 1.0 / math.tanh(epsilon / 2)


def duchi_perturb(t: ArrayLike, epsilon: float, rng: np.random.Generator) -> Any:
    """Duchi et al.'s one-dimensional mechanism (seed 004, Algorithm 1).

    Output +B with probability ``1/2 + t (e^ε - 1)/(2e^ε + 2)``, else -B,
    where B = (e^ε + 1)/(e^ε - 1). E[output] = t (unbiased); the ratio of
    the two output probabilities over inputs in [-1, 1] is at most e^ε.
    Scalar t gives a float, an array gives an array.
    """
    func = "duchi_perturb"
    epsilon = check_epsilon(epsilon, func=func)
    rng = check_rng(rng, func=func)
    ta = _check_unit_interval(t, func=func)
    b = duchi_bound(epsilon)
    prob_plus = 0.5 + ta * math.tanh(epsilon / 2) / 2  # (e^ε-1)/(2e^ε+2) = tanh(ε/2)/2
    out = np.where(rng.random(ta.shape) < prob_plus, b, -b)
    return _scalar_out(ta, out)


def duchi_variance(t: ArrayLike, epsilon: float) -> Any:
    """Var[duchi_perturb(t)] = B^2 - t^2."""
    func = "duchi_variance"
    epsilon = check_epsilon(epsilon, func=func)
    ta = _check_unit_interval(t, func=func)
    return _scalar_out(ta, duchi_bound(epsilon) ** 2 - ta ** 2)


def piecewise_constant(epsilon: float) -> float:
    """C = (e^{ε/2} + 1)/(e^{ε/2} - 1): PM outputs lie in [-C, C]."""
    epsilon = check_epsilon(epsilon, func="piecewise_constant")
    return 1.0 / math.tanh(epsilon / 4)


def piecewise_perturb(t: ArrayLike, epsilon: float, rng: np.random.Generator) -> Any:
    """Piecewise Mechanism of Wang et al. (ICDE 2019; seed 004, Algorithm 2).

    ``l = (C+1)t/2 - (C-1)/2``, ``r = l + C - 1``. With probability
    e^{ε/2}/(e^{ε/2}+1) output a uniform value in [l, r], otherwise a
    uniform value in [-C, l) ∪ (r, C]. The density is p on [l, r] and p/e^ε
    elsewhere (p = (e^ε - e^{ε/2})/(2e^{ε/2} + 2)), so it is ε-LDP; the
    output is unbiased.
    """
    func = "piecewise_perturb"
    epsilon = check_epsilon(epsilon, func=func)
    rng = check_rng(rng, func=func)
    ta = _check_unit_interval(t, func=func)
    c = piecewise_constant(epsilon)
    left = (c + 1) * ta / 2 - (c - 1) / 2
    right = left + c - 1
    p_centre = 1.0 / (1.0 + math.exp(-epsilon / 2))
    x = rng.random(ta.shape)
    w = rng.random(ta.shape)
    centre = left + w * (c - 1)
    # the two tails have total length (C + 1); walk along them
    s = w * (c + 1)
    tails = np.where(s < left + c, -c + s, right + (s - (left + c)))
    out = np.where(x < p_centre, centre, tails)
    return _scalar_out(ta, out)


def piecewise_variance(t: ArrayLike, epsilon: float) -> Any:
    """Var = t^2/(e^{ε/2} - 1) + (e^{ε/2} + 3)/(3(e^{ε/2} - 1)^2)."""
    func = "piecewise_variance"
    epsilon = check_epsilon(epsilon, func=func)
    ta = _check_unit_interval(t, func=func)
    e = math.exp(epsilon / 2)
    return _scalar_out(ta, ta ** 2 / (e - 1) + (e + 3) / (3 * (e - 1) ** 2))


def dct_half_width(epsilon: float, alpha: float = 5.0) -> float:
    """d = 1/(α ε): half-width of the DCT "transformation range" (seed 004 §3.1)."""
    func = "dct_half_width"
    epsilon = check_epsilon(epsilon, func=func)
    alpha = check_positive(alpha, func=func, name="alpha")
    return 1.0 / (alpha * epsilon)


_DCT_FLIPS = ("algorithm3", "eq6_typo")


def dct_keep_probability(epsilon: float, flip: str = "algorithm3") -> float:
    """Probability that DCT's randomized response keeps the bit unchanged.

    * ``flip="algorithm3"`` (default): ``(e^ε - 1)/(e^ε + 1)`` as printed in
      Algorithm 3, step ⑧. This equals 1 - f with f = 2/(1 + e^ε), the
      *corrected* flip probability.
    * ``flip="eq6_typo"``: ``1 - f`` with ``f = 2/(1 + ε)`` as printed in
      §3.2 (eq. 6 and Property 1). It is only a probability for ε >= 1.

    Either way a non-kept bit is replaced by a fair coin (1 or 0 w.p. f/2 each).
    """
    func = "dct_keep_probability"
    epsilon = check_epsilon(epsilon, func=func)
    if flip not in _DCT_FLIPS:
        raise fail(func, "flip", f"one of {_DCT_FLIPS}", flip)
    if flip == "algorithm3":
        return math.tanh(epsilon / 2)
    if epsilon < 1:
        raise fail(func, "epsilon", "at least 1 with flip='eq6_typo' (f = 2/(1+ε) exceeds 1 below)", epsilon)
    return 1.0 - 2.0 / (1.0 + epsilon)


def dct_perturb(t: ArrayLike, epsilon: float, rng: np.random.Generator, *, alpha: float = 5.0,
                flip: str = "algorithm3") -> Any:
    """Seed 004's "classified transformation" mechanism (DCT), Algorithm 3 as published.

    With d = 1/(α ε) and m = d/2 (§3.1):

    1. draw the category bit v' = 1 or 0 with probability 1/2 each (steps ①-⑥:
       the value sits at the centre of its range, so the paper draws it at random);
    2. randomized response: keep v' with probability ``dct_keep_probability(ε, flip)``,
       otherwise draw it uniformly from {0, 1} (steps ⑦-⑫);
    3. if the bit is 1 output a uniform value in [t - m, t + m], else a uniform
       value in [t - d, t - m) ∪ (t + m, t + d] (steps ⑬-⑰, eq. 13).

    Because the bit in step 1 does not depend on t, the bit after step 2 is
    a fair coin whatever ``flip`` is, and the output is exactly
    ``t + Uniform[-d, d]``: unbiased with variance d²/3. Its support
    [t - d, t + d] moves with t, so for any t != t' some outputs are possible
    under t and impossible under t' (for |t - t'| > 2d the supports are even
    disjoint): **the mechanism is not ε-LDP for any finite ε** (Lemma 1's
    proof only compares densities inside a common support). It is implemented here to be audited, not used; see
    :func:`helpers.audit.epsilon_lower_bound`.

    Parameters
    ----------
    t : array_like in [-1, 1]
    epsilon : claimed privacy budget (> 0)
    rng : numpy.random.Generator
    alpha : distance parameter α > 0 (the paper uses 5)
    flip : "algorithm3" (published step ⑧, = corrected f = 2/(1+e^ε)) or
        "eq6_typo" (f = 2/(1+ε) from eq. 6; needs ε >= 1)
    """
    func = "dct_perturb"
    epsilon = check_epsilon(epsilon, func=func)
    rng = check_rng(rng, func=func)
    ta = _check_unit_interval(t, func=func)
    alpha = check_positive(alpha, func=func, name="alpha")
    if flip not in _DCT_FLIPS:
        raise fail(func, "flip", f"one of {_DCT_FLIPS}", flip)
    keep = dct_keep_probability(epsilon, flip)
    d = dct_half_width(epsilon, alpha)
    m = d / 2
    bit = rng.random(ta.shape) < 0.5                       # steps 1-6
    kept = rng.random(ta.shape) < keep                     # steps 7-8
    bit = np.where(kept, bit, rng.random(ta.shape) < 0.5)  # step 11
    w = rng.random(ta.shape)
    middle = ta - m + w * (2 * m)
    s = w * (2 * (d - m))  # total length of the two outer segments
    outer = np.where(s < d - m, ta - d + s, ta + m + (s - (d - m)))
    return _scalar_out(ta, np.where(bit, middle, outer))


def dct_variance(t: ArrayLike, epsilon: float, alpha: float = 5.0) -> Any:
    """Variance of Algorithm 3's output: d²/3 with d = 1/(α ε), for every t.

    (Its output is t + Uniform[-d, d]; compare :func:`dct_paper_variance`.)
    """
    func = "dct_variance"
    ta = _check_unit_interval(t, func=func)
    epsilon = check_epsilon(epsilon, func=func)
    alpha = check_positive(alpha, func=func, name="alpha")
    d = dct_half_width(epsilon, alpha)
    return _scalar_out(ta, np.full(ta.shape, d * d / 3))


def dct_paper_variance(t: ArrayLike, epsilon: float) -> Any:
    """The noise variance printed in seed 004 §5.1 for α = 5:
    ``(15 ε t² (5ε - 1) + 2) / (3 (5ε)³)`` (kept for comparison with
    :func:`dct_variance`; it does not match the algorithm's d²/3)."""
    func = "dct_paper_variance"
    epsilon = check_epsilon(epsilon, func=func)
    ta = _check_unit_interval(t, func=func)
    return _scalar_out(ta, (15 * epsilon * ta ** 2 * (5 * epsilon - 1) + 2) / (3 * (5 * epsilon) ** 3))


_MEAN_MECHANISMS = {"duchi": duchi_perturb, "pm": piecewise_perturb, "dct": dct_perturb}


def ldp_linear_regression(x: ArrayLike, y: ArrayLike, epsilon: float, rng: np.random.Generator, *,
                          mechanism: str = "pm", group_size: int | None = None, lr: float = 0.01,
                          lam: float = 1e-4, beta0: ArrayLike | None = None) -> dict:
    """LDP mini-batch gradient descent for linear regression (seed 004 §4).

    Users are split, without replacement, into groups G of ``group_size``;
    each user takes part in exactly one step (so each spends ε once). In a
    step every user of G computes the gradient of
    ``(x_i^T β - y_i)^2 + λ/2 ||β||^2``, clips it to [-1, 1]^k, samples ONE
    coordinate j uniformly (Wang et al. 2019's sampling, which seed 004
    refers to) and reports ``k * M(g_j)`` in that coordinate and 0 elsewhere,
    where M is a one-dimensional ε-LDP mechanism (``"duchi"``, ``"pm"``;
    ``"dct"`` only to show what the paper did — it is not LDP). The average
    report is an unbiased estimate of the clipped mean gradient and
    ``β ← β - lr * average`` (eq. 18).

    Returns a dict with ``beta`` (final parameters), ``history`` (β after
    each step, shape (steps + 1, k)) and ``steps``.
    """
    func = "ldp_linear_regression"
    epsilon = check_epsilon(epsilon, func=func)
    rng = check_rng(rng, func=func)
    if mechanism not in _MEAN_MECHANISMS:
        raise fail(func, "mechanism", f"one of {tuple(_MEAN_MECHANISMS)}", mechanism)
    lr = check_positive(lr, func=func, name="lr")
    lam = check_positive(lam, func=func, name="lam", allow_zero=True)
    xa = np.asarray(x, dtype=float)
    ya = np.asarray(y, dtype=float)
    if xa.ndim != 2 or xa.shape[0] == 0 or not np.all(np.isfinite(xa)) or np.any(np.abs(xa) > 1):
        raise fail(func, "x", "an (n, k) array with entries in [-1, 1]", f"shape {xa.shape}")
    n, k = xa.shape
    if ya.shape != (n,) or not np.all(np.isfinite(ya)) or np.any(np.abs(ya) > 1):
        raise fail(func, "y", f"a length-{n} array with entries in [-1, 1]", f"shape {ya.shape}")
    if group_size is None:
        # |G| = Ω(k log k / ε²) in the paper; cap so that there are >= 10 steps
        group_size = max(1, min(n // 10, int(math.ceil(k * max(math.log(k), 1.0) / epsilon ** 2 * 10))))
    group_size = check_int(group_size, func=func, name="group_size", minimum=1)
    if group_size > n:
        raise fail(func, "group_size", f"at most the number of users n={n}", group_size)
    beta = np.zeros(k) if beta0 is None else np.asarray(beta0, dtype=float).copy()
    if beta.shape != (k,) or not np.all(np.isfinite(beta)):
        raise fail(func, "beta0", f"a finite vector of length {k}", beta0)
    perturb = _MEAN_MECHANISMS[mechanism]
    order = rng.permutation(n)
    steps = n // group_size
    history = [beta.copy()]
    for s in range(steps):
        idx = order[s * group_size:(s + 1) * group_size]
        xb, yb = xa[idx], ya[idx]
        grad = 2 * (xb @ beta - yb)[:, None] * xb + lam * beta
        grad = np.clip(grad, -1.0, 1.0)
        coord = rng.integers(0, k, size=idx.size)
        noisy = perturb(grad[np.arange(idx.size), coord], epsilon, rng)
        estimate = np.zeros(k)
        np.add.at(estimate, coord, k * np.asarray(noisy))
        beta = beta - lr * estimate / idx.size
        history.append(beta.copy())
    return {"beta": beta, "history": np.array(history), "steps": steps}


# ---------------------------------------------------------------------------
# classes
# ---------------------------------------------------------------------------

class RapporClient:
    """One user's RAPPOR client.

    The permanent response B' is drawn the first time a value is reported
    and memoized *per value* (RAPPOR §3, step 2): reporting the same value
    again reuses B', so repeated collection never reveals more than ε_∞
    about it. Each report applies fresh instantaneous RR to B'.

    Parameters
    ----------
    k_bits, h : Bloom filter size and number of hash functions.
    f : permanent RR parameter in [0, 1).
    p, q : instantaneous RR probabilities (report 1 when B'=0 / B'=1).
    rng : this user's generator (e.g. ``np.random.default_rng([seed, user_id])``).
    cohort : hash-function family of this user.

    Examples
    --------
    >>> client = RapporClient(32, 2, 0.5, 0.5, 0.75, np.random.default_rng(1))
    >>> s1 = client.report("apple"); s2 = client.report("apple")  # same B', new noise
    >>> bool(np.array_equal(client.permanent("apple"), client.permanent("apple")))
    True
    """

    def __init__(self, k_bits: int, h: int, f: float, p: float, q: float,
                 rng: np.random.Generator, *, cohort: int = 0) -> None:
        func = "RapporClient"
        self.k_bits = check_int(k_bits, func=func, name="k_bits", minimum=1)
        self.h = check_int(h, func=func, name="h", minimum=1)
        self.f = check_probability(f, func=func, name="f", high_open=True)
        self.p = check_probability(p, func=func, name="p")
        self.q = check_probability(q, func=func, name="q")
        self.rng = check_rng(rng, func=func)
        self.cohort = check_int(cohort, func=func, name="cohort", minimum=0)
        self._memo: dict[bytes, np.ndarray] = {}

    def permanent(self, value: Any) -> np.ndarray:
        """The memoized permanent response B' for ``value`` (drawn on first use)."""
        key = _value_bytes(value)
        if key not in self._memo:
            bloom = rappor_bloom([value], self.k_bits, self.h, cohort=self.cohort)[0]
            self._memo[key] = rappor_permanent(bloom, self.f, self.rng)
        return self._memo[key].copy()

    def report(self, value: Any) -> np.ndarray:
        """One report S for ``value``: instantaneous RR applied to the memoized B'."""
        return rappor_instantaneous(self.permanent(value), self.p, self.q, self.rng)

    @property
    def epsilon_infinity(self) -> float:
        return rappor_epsilon_infinity(self.f, self.h)

    @property
    def epsilon_one(self) -> float:
        return rappor_epsilon_one(self.f, self.p, self.q, self.h)
