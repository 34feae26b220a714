"""RAPPOR (textbook §6.5.1; Erlingsson, Pihur, Korolova, CCS 2014): Bloom filters, the two randomizations, decoding."""

from __future__ import annotations

import hashlib
import math
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from helpers._validation import check_int, check_probability, check_rng, fail
from helpers.ldp._common import _check_bits


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
