r"""Counting queries and histograms, and their Laplace releases (textbook §6.2.3–§6.2.4).

* :func:`count_query` / :func:`count_greater` compute the exact count, for example "how many
  animals eat more than 55 carrots a day" (experiment 6-1). One animal more or less changes
  the count by at most 1, so the l1 sensitivity is 1.
* :func:`histogram_counts` computes counts per category. The bins are disjoint, so one person
  changes one bin by 1. The whole histogram therefore has l1 sensitivity 1, and it can be
  released with ε in total rather than ε per bin (parallel composition, Theorem 6-3,
  experiment 6-2).
* :func:`noisy_count` / :func:`noisy_histogram` release these counts with
  :func:`helpers.mechanisms.laplace_mechanism`.
* The repeated-query attack of Table 6-3 (§6.2.3). Asking the same noisy count ``k`` times and
  averaging shrinks the noise. :func:`danger_probability` is the exact probability that the
  average is within 0.5 of the truth, so that rounding reveals the true count.
  :func:`simulated_danger_probability` estimates the same probability by running the attack,
  and :func:`abs_noise_quantile` gives the left half of the table.

Neighbouring datasets here differ by *adding or removing* one person, as with ``zoo_nb.csv``
(Dugong removed) and ``md_nb.csv`` (one patient left). If neighbours instead *replace* one
person's record, a histogram can change in two bins, so pass ``sensitivity=2``.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike
from scipy import integrate, stats

from helpers._validation import (
    check_epsilon,
    check_int,
    check_positive,
    check_real,
    check_rng,
    fail,
)
from helpers.mechanisms import laplace_mechanism, laplace_noise

__all__ = [
    "count_query",
    "count_greater",
    "histogram_counts",
    "noisy_count",
    "noisy_histogram",
    "abs_noise_quantile",
    "averaged_noisy_answers",
    "danger_probability",
    "simulated_danger_probability",
]


def _values_1d(values: ArrayLike, *, func: str) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != 1:
        raise fail(func, "values", "a 1-D sequence (one value per record)", f"shape {array.shape}")
    return array


def count_query(values: ArrayLike, predicate: Callable[[np.ndarray], ArrayLike]) -> int:
    """Number of records whose value satisfies ``predicate`` (a counting query, §6.2.1).

    ``predicate`` receives the whole 1-D array and must return one boolean per record, e.g.
    ``count_query(zoo.carrots, lambda c: c > 55)``. Sensitivity: 1.
    """
    func = "count_query"
    array = _values_1d(values, func=func)
    if not callable(predicate):
        raise fail(func, "predicate", "a function of the value array returning booleans", predicate)
    mask = np.asarray(predicate(array))
    if mask.shape != array.shape or mask.dtype != bool:
        raise fail(
            func,
            "predicate",
            f"a function returning one boolean per record (shape {array.shape})",
            f"dtype {mask.dtype}, shape {mask.shape}",
        )
    return int(np.count_nonzero(mask))


def count_greater(values: ArrayLike, threshold: float) -> int:
    """``#{i : values[i] > threshold}``: experiment 6-1 counts animals eating more than 55 carrots.

    The comparison is strict, following the wording "超过55根" ("more than 55"). The book's C
    code tests ``>= 55`` on noisy data. The course's ``zoo.csv`` has no animal at exactly 55,
    so both readings give 90 (see ``course/data/README.md``).
    """
    func = "count_greater"
    threshold = check_real(threshold, func=func, name="threshold")
    array = _values_1d(values, func=func)
    try:
        array = array.astype(float)
    except (TypeError, ValueError):
        raise fail(func, "values", "numbers", values) from None
    if np.any(np.isnan(array)):
        raise fail(func, "values", "numbers without NaN", values)
    return int(np.count_nonzero(array > threshold))


def histogram_counts(values: ArrayLike, categories: Sequence[Any]) -> np.ndarray:
    """Count how many records fall in each category, in the order of ``categories``.

    Example (Table 6-5, §6.5.3): ``histogram_counts([12, 13, 15, 13, 15, 12], [12, 13, 14, 15])``
    gives ``[2, 2, 0, 2]``. Every record must belong to exactly one category. A record outside
    the categories raises an error instead of being dropped silently.

    Returns
    -------
    numpy.ndarray of int64, one count per category.
    """
    func = "histogram_counts"
    array = _values_1d(values, func=func)
    cats = np.asarray(categories)
    if cats.ndim != 1 or cats.size == 0:
        raise fail(func, "categories", "a non-empty 1-D sequence of distinct categories", categories)
    if np.unique(cats).size != cats.size:
        raise fail(func, "categories", "distinct categories (bins must be disjoint)", categories)
    index = {c.item() if hasattr(c, "item") else c: i for i, c in enumerate(cats)}
    counts = np.zeros(cats.size, dtype=np.int64)
    for value in array.tolist():
        try:
            counts[index[value]] += 1
        except (KeyError, TypeError):
            raise fail(func, "values", f"values among the categories {cats.tolist()}", value) from None
    return counts


def noisy_count(
    true_count: float, epsilon: float, rng: np.random.Generator, sensitivity: float = 1.0
) -> float:
    r"""ε-DP release of a count: ``true_count + Lap(Δ/ε)`` with ``Δ = 1`` (Theorem 6-4, §6.2.3).

    Each call spends ε. Asking ``k`` times spends ``kε`` (sequential composition, Theorem 6-2),
    which is why averaging repeated answers works (Table 6-3).
    """
    true_count = check_real(true_count, func="noisy_count", name="true_count")
    return laplace_mechanism(true_count, sensitivity, epsilon, rng)


def noisy_histogram(
    counts: ArrayLike, epsilon: float, rng: np.random.Generator, sensitivity: float = 1.0
) -> np.ndarray:
    r"""ε-DP histogram: independent ``Lap(Δ/ε)`` noise on every bin, ``Δ = 1`` (§6.2.4).

    The bins are disjoint, so adding or removing one person changes one bin by 1. The l1
    sensitivity of the whole vector is therefore 1, and the histogram costs ε in total, not ε
    per bin (parallel composition, Theorem 6-3). The noisy counts may be negative or
    fractional. Rounding or clipping them afterwards is post-processing (Theorem 6-1) and costs
    no privacy.

    Raises
    ------
    ValueError
        For an empty or non-1-D ``counts``, non-finite counts, or invalid ε / sensitivity / rng.
    """
    func = "noisy_histogram"
    try:
        array = np.asarray(counts, dtype=float)
    except (TypeError, ValueError):
        raise fail(func, "counts", "a non-empty 1-D array of finite counts", counts) from None
    if array.ndim != 1 or array.size == 0:
        raise fail(func, "counts", "a non-empty 1-D array of finite counts (one per bin)",
                   f"shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise fail(func, "counts", "finite counts (no NaN or inf)", counts)
    return laplace_mechanism(array, sensitivity, epsilon, rng)


def abs_noise_quantile(q: ArrayLike, epsilon: float, sensitivity: float = 1.0) -> Any:
    r"""Exact ``q``-quantile of ``|Lap(Δ/ε)|``: ``-ln(1 - q) Δ / ε`` (left half of Table 6-3).

    ``|Lap(b)|`` is exponential with scale ``b``, so ``P(|Y| <= t) = 1 - e^{-t/b}``. At ε = 1
    the 90%, 95%, 99% and 99.9% quantiles are 2.303, 2.996, 4.605 and 6.908. The book prints
    sample quantiles (2.29, 2.98, 4.50, 6.43).
    """
    func = "abs_noise_quantile"
    epsilon = check_epsilon(epsilon, func=func)
    sensitivity = check_positive(sensitivity, func=func, name="sensitivity")
    qs = np.asarray(q, dtype=float)
    if not np.all((qs >= 0) & (qs < 1)):
        raise fail(func, "q", "probabilities in [0, 1)", q)
    out = -np.log1p(-qs) * sensitivity / epsilon
    return float(out) if out.ndim == 0 else out


def averaged_noisy_answers(
    true_value: float,
    epsilon: float,
    k: int,
    rng: np.random.Generator,
    trials: int | None = None,
    sensitivity: float = 1.0,
) -> Any:
    r"""The repeated-query attack (§6.2.3): ask the same ε-DP count ``k`` times and average.

    Each answer is ``true_value + Lap(Δ/ε)``. The average has the same mean and a standard
    deviation ``√2 Δ / (ε √k)``, so for large ``k`` rounding it recovers ``true_value``. Together
    the ``k`` answers cost ``kε`` (Theorem 6-2).

    Parameters
    ----------
    true_value : float
    epsilon : float
        Budget of *each* answer, ``> 0``.
    k : int
        Number of repeated queries, ``>= 1``.
    rng : numpy.random.Generator
    trials : int or None
        ``None``: one attack, returns a float. An int ``r >= 1``: ``r`` independent attacks,
        returns an array of ``r`` averages. The work is chunked, so memory stays below about
        ``2**22`` floats.
    """
    func = "averaged_noisy_answers"
    true_value = check_real(true_value, func=func, name="true_value")
    epsilon = check_epsilon(epsilon, func=func)
    k = check_int(k, func=func, name="k", minimum=1)
    rng = check_rng(rng, func=func)
    sensitivity = check_positive(sensitivity, func=func, name="sensitivity")
    b = sensitivity / epsilon
    if trials is None:
        return true_value + float(np.mean(laplace_noise(b, k, rng)))
    trials = check_int(trials, func=func, name="trials", minimum=1)
    out = np.empty(trials)
    rows_per_chunk = max(1, (1 << 22) // k)
    for start in range(0, trials, rows_per_chunk):
        rows = min(rows_per_chunk, trials - start)
        if rows == 1:
            out[start] = np.mean(laplace_noise(b, k, rng))
        else:
            out[start : start + rows] = laplace_noise(b, (rows, k), rng).mean(axis=1)
    return true_value + out


def danger_probability(epsilon: float, k: int, half_width: float = 0.5, sensitivity: float = 1.0) -> float:
    r"""Exact ``P(|mean of k Lap(Δ/ε)| < half_width)`` (right half of Table 6-3).

    This is the probability that the average of ``k`` noisy answers lies within 0.5 of the true
    count, so that rounding the average reveals the count (the "danger interval").

    A ``Lap(b)`` variable is ``b(E_1 − E_2)`` with ``E_i`` standard exponentials. So the sum of
    ``k`` of them is ``b(G_1 − G_2)`` with ``G_i ~ Gamma(k, 1)`` independent, and

    .. math:: P\Bigl(\bigl|\tfrac1k\textstyle\sum Y_i\bigr| < h\Bigr)
              = \int_0^\infty f_k(g)\,\bigl[F_k(g + c) - F_k(g - c)\bigr]\,dg,
              \qquad c = \frac{k h}{b},

    where ``f_k`` and ``F_k`` are the Gamma(k, 1) density and CDF (``F_k = 0`` below 0). The
    integral is computed with ``scipy.integrate.quad`` over the central mass of ``f_k``
    (tails below 1e-15). The result is accurate to about 1e-9 for every ``k``.
    """
    func = "danger_probability"
    epsilon = check_epsilon(epsilon, func=func)
    k = check_int(k, func=func, name="k", minimum=1)
    half_width = check_positive(half_width, func=func, name="half_width")
    sensitivity = check_positive(sensitivity, func=func, name="sensitivity")
    c = k * half_width * epsilon / sensitivity
    gamma = stats.gamma(k)

    def integrand(g: float) -> float:
        return float(gamma.pdf(g) * (gamma.cdf(g + c) - gamma.cdf(max(g - c, 0.0))))

    lo, hi = float(gamma.ppf(1e-15)), float(gamma.isf(1e-15))
    sd = math.sqrt(k)
    points = sorted({min(max(k + j * sd, lo), hi) for j in (-3, -1, 0, 1, 3)} - {lo, hi})
    value, _ = integrate.quad(integrand, lo, hi, points=points or None, limit=200,
                              epsabs=1e-12, epsrel=1e-10)
    return float(min(max(value, 0.0), 1.0))


def simulated_danger_probability(
    epsilon: float, k: int, trials: int, rng: np.random.Generator, half_width: float = 0.5
) -> float:
    """Monte Carlo estimate of :func:`danger_probability`: run ``trials`` attacks and count successes.

    Its standard error is ``sqrt(p (1 - p) / trials)``. The cost is ``k * trials`` Laplace draws.
    """
    func = "simulated_danger_probability"
    half_width = check_positive(half_width, func=func, name="half_width")
    means = averaged_noisy_answers(0.0, epsilon, k, rng, trials=trials)
    return float(np.mean(np.abs(means) < half_width))
