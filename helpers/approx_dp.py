r"""What ε and δ mean, and Laplace against Gaussian noise (Definition 6-1, §6.1.2, §6.2.1).

* :func:`posterior_bound`: an ε-DP release multiplies an attacker's odds that one person's record
  is in the data (against not, the other records fixed) by at most ``e^ε`` (Bayes' rule with the
  likelihood ratio of Definition 6-1), so a prior probability p becomes at most
  ``p e^ε / (p e^ε + 1 − p)``. This assumes the person's presence is unrelated to the other
  records; with correlated records the bound does not apply directly.
* :func:`name_and_shame`: the standard example that (ε, δ)-DP is weaker than "ε-DP except
  with probability δ". Publishing **each record independently with probability δ** is
  (0, δ)-DP under add/remove neighbours, yet it exposes nδ people completely per run on
  average, each person with probability δ. Hence δ must be much smaller than 1/n.
* :func:`per_coordinate_sd`: the noise standard deviation per coordinate of a d-dimensional
  query whose every coordinate one record can change by 1, so ``Δ1 = d`` and ``Δ2 = √d``:
  Laplace ``√2 d/ε`` against Gaussian ``σ(√d, ε, δ)``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from helpers._validation import check_epsilon, check_int, check_probability, check_rng, fail
from helpers.gaussian import analytic_gaussian_sigma, classic_gaussian_sigma

__all__ = ["posterior_bound", "name_and_shame", "exposure_probability", "per_coordinate_sd"]


def posterior_bound(prior: ArrayLike, epsilon: float) -> np.ndarray | float:
    r"""Largest posterior ``p e^ε / (p e^ε + 1 − p)`` an ε-DP release allows from a prior p.

    Posterior odds = prior odds × likelihood ratio, and Definition 6-1 with δ = 0 bounds the
    likelihood ratio of any output by ``e^ε`` (on neighbouring datasets: with or without
    the person's record, under add/remove). Accepts an array of priors in [0, 1].
    """
    func = "posterior_bound"
    epsilon = check_epsilon(epsilon, func=func, allow_zero=True)
    p = np.asarray(prior, dtype=float)
    if not np.all(np.isfinite(p)) or np.any(p < 0) or np.any(p > 1):
        raise fail(func, "prior", "probabilities in [0, 1]", prior)
    factor = math.exp(epsilon)
    out = p * factor / (p * factor + 1.0 - p)
    return float(out) if out.ndim == 0 else out


def name_and_shame(n_records: int, delta: float, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
    r"""Which of n records a (0, δ)-DP mechanism publishes *in full* (each independently w.p. δ).

    Under add/remove neighbours D′ = D ∪ {x}: the output on D′ is the output on D plus x's
    record with probability δ, so ``Pr[M(D′) ∈ S] <= Pr[M(D) ∈ S] + δ`` and vice versa: the
    mechanism is (0, δ)-DP. Yet whenever it publishes a record, that person's privacy is gone.

    Returns a boolean array of shape ``(n_records,)`` (or ``(size, n_records)``): True = published.
    """
    func = "name_and_shame"
    n_records = check_int(n_records, func=func, name="n_records", minimum=1)
    delta = check_probability(delta, func=func, name="delta")
    rng = check_rng(rng, func=func)
    shape = (n_records,) if size is None else (check_int(size, func=func, name="size", minimum=1), n_records)
    return rng.random(shape) < delta


def exposure_probability(n_records: int, delta: float) -> float:
    r"""``1 − (1 − δ)^n``: probability that :func:`name_and_shame` exposes at least one person."""
    func = "exposure_probability"
    n_records = check_int(n_records, func=func, name="n_records", minimum=1)
    delta = check_probability(delta, func=func, name="delta")
    return -math.expm1(n_records * math.log1p(-delta)) if delta < 1 else 1.0


def per_coordinate_sd(d: ArrayLike, epsilon: float, delta: float, method: str = "analytic") -> dict:
    r"""Noise sd per coordinate for a d-dimensional query with ``Δ1 = d``, ``Δ2 = √d``.

    Example: d counting queries on the same people, each person counted in every one.
    Laplace: scale ``b = Δ1/ε = d/ε``, sd ``√2 d/ε`` (ε-DP). Gaussian: σ from
    :func:`helpers.gaussian.analytic_gaussian_sigma` (or the classic formula, ε < 1 only)
    at ``Δ2 = √d`` ((ε, δ)-DP). Returns ``{"d", "laplace", "gaussian"}`` arrays.
    """
    func = "per_coordinate_sd"
    epsilon = check_epsilon(epsilon, func=func)
    dims = np.atleast_1d(np.asarray(d))
    if dims.ndim != 1 or not np.issubdtype(dims.dtype, np.integer) or np.any(dims < 1):
        raise fail(func, "d", "integers >= 1", d)
    if method not in ("analytic", "classic"):
        raise fail(func, "method", "'analytic' or 'classic'", method)
    sigma_of = analytic_gaussian_sigma if method == "analytic" else classic_gaussian_sigma
    # σ is linear in Δ2 for both calibrations (δ(σ) depends on Δ/σ only): compute it once.
    unit = sigma_of(1.0, epsilon, delta)
    return {"d": dims, "laplace": math.sqrt(2.0) * dims / epsilon, "gaussian": unit * np.sqrt(dims)}
