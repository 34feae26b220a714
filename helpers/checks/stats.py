"""The statistical tests of the checks: Kolmogorov–Smirnov, chi-square (small bins merged),
exact binomial; each at level :data:`helpers.checks.core.ALPHA`.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

# --- the three tests ---------------------------------------------------------------
# scipy.special only: importing scipy.stats costs ~0.5 s in every graded kernel.


class TestResult(tuple):
    """``(statistic, pvalue)`` with named access, like scipy's results."""

    statistic = property(lambda self: self[0])
    pvalue = property(lambda self: self[1])


def ks_test(x: np.ndarray, cdf: Callable[[np.ndarray], np.ndarray]) -> TestResult:
    """Two-sided one-sample Kolmogorov–Smirnov test with the asymptotic p-value.

    ``p = K(√n · D)`` where ``K`` is the survival function of Kolmogorov's
    limiting distribution (``scipy.special.kolmogorov``, as
    ``scipy.stats.kstest(..., method="asymp")``). For finite ``n`` it
    overstates the p-value slightly, so a test at level α rejects a correct
    sampler with probability at most about α.
    """
    from scipy.special import kolmogorov

    x = np.sort(np.ravel(x))
    n = x.size
    f = cdf(x)
    d_plus = np.max(np.arange(1, n + 1) / n - f)
    d_minus = np.max(f - np.arange(n) / n)
    d = float(max(d_plus, d_minus))
    return TestResult((d, float(kolmogorov(math.sqrt(n) * d))))


def ks_2_test(x: np.ndarray, y: np.ndarray) -> TestResult:
    """Two-sided two-sample Kolmogorov–Smirnov test, asymptotic p-value ``K(√(nm/(n+m)) · D)``
    (``scipy.stats.ks_2samp(..., method="asymp")`` without the finite-sample correction): whether
    ``x`` and ``y`` can come from one continuous distribution."""
    from scipy.special import kolmogorov

    x, y = np.sort(np.ravel(x)), np.sort(np.ravel(y))
    n, m = x.size, y.size
    both = np.concatenate([x, y])
    d = float(np.max(np.abs(np.searchsorted(x, both, side="right") / n - np.searchsorted(y, both, side="right") / m)))
    return TestResult((d, float(kolmogorov(math.sqrt(n * m / (n + m)) * d))))


def chi_square_test(observed: np.ndarray, expected: np.ndarray) -> TestResult:
    """Pearson's chi-square goodness of fit, ``k - 1`` degrees of freedom (as ``scipy.stats.chisquare``)."""
    from scipy.special import chdtrc

    observed = np.asarray(observed, dtype=float)
    expected = np.asarray(expected, dtype=float)
    stat = float(np.sum((observed - expected) ** 2 / expected))
    return TestResult((stat, float(chdtrc(observed.size - 1, stat))))


def binomial_test(k: int, n: int, p: float) -> float:
    """Two-sided exact binomial p-value: twice the smaller tail, capped at 1.

    Never smaller than scipy's ``binomtest`` p-value (which sums the outcomes
    no more likely than ``k``), so the level is exact or conservative.
    """
    from scipy.special import bdtr, bdtrc

    lower = float(bdtr(k, n, p))                      # P(X <= k)
    upper = float(bdtrc(k - 1, n, p)) if k > 0 else 1.0  # P(X >= k)
    return min(1.0, 2.0 * min(lower, upper))




def _merge_bins(observed: np.ndarray, expected: np.ndarray, minimum: float = 5.0) -> tuple[np.ndarray, np.ndarray]:
    """Merge bins (smallest expected first) until every expected count is >= ``minimum``."""
    obs = [float(o) for o in observed]
    exp = [float(e) for e in expected]
    while len(exp) > 1 and min(exp) < minimum:
        i = int(np.argmin(exp))
        j = i + 1 if i + 1 < len(exp) else i - 1
        if 0 < i < len(exp) - 1 and exp[i - 1] < exp[i + 1]:
            j = i - 1
        exp[j] += exp[i]
        obs[j] += obs[i]
        del exp[i], obs[i]
    return np.array(obs), np.array(exp)
