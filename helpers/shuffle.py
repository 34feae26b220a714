"""Shuffle model (ESA, Encode-Shuffle-Analyze; textbook §6.5.2).

Users randomize locally with an ε0-LDP randomizer; a shuffler forwards the
reports in a uniformly random order, so the analyst no longer knows which
report came from whom. The shuffled output then satisfies (ε, δ)-DP with ε
much smaller than ε0 ("privacy amplification by shuffling").

The bound implemented is the closed form of Feldman, McMillan and Talwar,
"Hiding Among the Clones" (FOCS 2021, Theorem 3.1 / Corollary): for
``ε0 <= ln(n / (16 ln(2/δ)))``,

    ε <= ln(1 + (e^ε0 - 1)/(e^ε0 + 1) * (8 sqrt(e^ε0 ln(4/δ)) / sqrt(n) + 8 e^ε0 / n)).

Neighbouring relation: the theorem compares datasets of the same n users in
which one user's data differ (replace one record; n fixed and public). Under
add/remove, the course's default, the shuffled multiset holds exactly n
reports and so reveals n: datasets of n and n + 1 users are told apart with
certainty and no finite ε holds. The bound then needs n protected too, e.g.
the shuffler pads with a random number of dummy reports (dummy users running
the same randomizer) drawn so that the total m is (ε_n, δ_n)-DP; given m,
one more real user and one dummy fewer is a replacement, and the total is
(ε + ε_n, δ + δ_n) by composition (``tests/helpers/test_shuffle.py`` audits the
unpadded case).

At n = 1e5, ε0 = 4, δ = 1e-6 this gives 0.5346. The closed-form function in
the authors' code uses a slightly different expression and gives 0.5379 (a
looser value, not a tighter one); their numerical analysis, which is not
reproduced here, is tighter than both.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from helpers._validation import check_epsilon, check_int, check_probability, check_rng, fail

__all__ = ["shuffle_reports", "fmt_validity_limit", "fmt_is_valid", "fmt_amplified_epsilon"]


def shuffle_reports(reports: ArrayLike, rng: np.random.Generator) -> np.ndarray:
    """Return a copy of the reports in a uniformly random order.

    Rows (axis 0) are permuted, so a matrix of bit reports (RAPPOR, OUE)
    keeps each report intact. The multiset of reports is unchanged: every
    count-based estimator gives the same answer before and after shuffling;
    only the link between position (user) and report is destroyed.
    """
    func = "shuffle_reports"
    rng = check_rng(rng, func=func)
    array = np.asarray(reports)
    if array.ndim == 0:
        raise fail(func, "reports", "an array of reports (at least 1-D)", reports)
    return array[rng.permutation(array.shape[0])]


def fmt_validity_limit(n: int, delta: float) -> float:
    """Largest ε0 for which the FMT closed form holds: ``ln(n / (16 ln(2/δ)))``.

    The limit is <= 0 (no ε0 > 0 qualifies) when n <= 16 ln(2/δ).
    """
    func = "fmt_validity_limit"
    n = check_int(n, func=func, name="n", minimum=1)
    delta = check_probability(delta, func=func, name="delta", low_open=True, high_open=True)
    ratio = n / (16 * math.log(2 / delta))
    return math.log(ratio)


def fmt_is_valid(eps0: float, n: int, delta: float) -> bool:
    """True when the closed-form bound applies: 0 < ε0 <= ln(n / (16 ln(2/δ)))."""
    eps0 = check_epsilon(eps0, func="fmt_is_valid", name="eps0")
    return eps0 <= fmt_validity_limit(n, delta)


def fmt_amplified_epsilon(eps0: float, n: int, delta: float, *, strict: bool = False) -> float:
    """Central ε after shuffling n reports of an ε0-LDP randomizer (FMT 2021), n fixed and public.

    The bound holds for neighbours that replace one user's data (n fixed and
    public). Under add/remove the number of reports reveals n; see the module
    docstring for what is needed then.

    ``ε = ln(1 + (e^ε0 - 1)/(e^ε0 + 1) * (8 sqrt(e^ε0 ln(4/δ))/sqrt(n) + 8 e^ε0/n))``,
    the shuffled output being (ε, δ)-DP.

    Parameters
    ----------
    eps0 : float > 0
        Local privacy budget of each report.
    n : int >= 1
        Number of users (reports) shuffled together.
    delta : float in (0, 1)
    strict : bool, default False
        What to do outside the validity range ``ε0 > ln(n/(16 ln(2/δ)))``:
        with ``strict=False`` return ``eps0`` itself (no amplification is
        claimed; shuffling is post-processing of ε0-LDP reports, so ε0 still
        holds with δ = 0); with ``strict=True`` raise ``ValueError``.

    Returns
    -------
    float
        ``min(eps0, bound)`` inside the validity range (shuffling never
        hurts), ``eps0`` outside it. Use :func:`fmt_is_valid` to tell which.

    Examples
    --------
    >>> round(fmt_amplified_epsilon(4.0, 100_000, 1e-6), 3)
    0.535
    """
    func = "fmt_amplified_epsilon"
    eps0 = check_epsilon(eps0, func=func, name="eps0")
    n = check_int(n, func=func, name="n", minimum=1)
    delta = check_probability(delta, func=func, name="delta", low_open=True, high_open=True)
    limit = fmt_validity_limit(n, delta)
    if eps0 > limit:
        if strict:
            raise fail(func, "eps0", f"<= ln(n/(16 ln(2/delta))) = {limit:.4g} for the bound to hold "
                       f"(n={n}, delta={delta})", eps0)
        return eps0
    e0 = math.exp(eps0)
    inner = (e0 - 1) / (e0 + 1) * (8 * math.sqrt(e0 * math.log(4 / delta)) / math.sqrt(n) + 8 * e0 / n)
    return min(eps0, math.log1p(inner))
