r"""Choosing one candidate privately: the exponential mechanism's utility and its samplers (§6.3).

The exponential mechanism (Theorem 6-5) outputs candidate r with probability proportional to
``exp(ε q(D, r) / (2Δq))`` (:func:`helpers.mechanisms.exponential_probabilities`).

* **Utility** (McSherry & Talwar 2007; Dwork & Roth 2014, Theorem 3.11): with ``OPT = max_r q(D, r)``
  and ``|O|`` candidates, for every t > 0

  .. math:: \Pr\Bigl[q(D, M(D)) \le \mathrm{OPT} - \frac{2\Delta q}{\varepsilon}\bigl(\ln|O| + t\bigr)\Bigr] \le e^{-t}.

  :func:`utility_threshold` gives the threshold and :func:`exact_tail` the exact probability
  of falling below any threshold, so the two can be compared.
* **Samplers.** Adding i.i.d. noise to every score and reporting the arg max
  (:func:`report_noisy_max`) gives:

  - ``noise="gumbel"`` with scale ``2Δq/ε``: *exactly* the exponential mechanism (the
    Gumbel-max trick: ``argmax_r (s_r + b G_r)`` with standard Gumbel ``G_r`` picks r with
    probability ``∝ exp(s_r / b)``);
  - ``noise="laplace"`` with scale ``2Δq/ε``: "report noisy max" (Dwork & Roth 2014, §3.3),
    ε-DP but a *different* distribution;
  - ``noise="exponential"`` (one-sided) with scale ``2Δq/ε``: also ε-DP and also different; it
    is the permute-and-flip mechanism (McKenna & Sheldon 2020; Ding et al. 2021).

  :func:`two_candidate_probability` gives the three probabilities in closed form for two
  candidates, which shows that only the Gumbel version matches.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from helpers._validation import check_epsilon, check_positive, check_real, check_rng, check_scores, fail

__all__ = ["NOISES", "report_noisy_max", "utility_threshold", "exact_tail", "two_candidate_probability"]

NOISES = ("gumbel", "laplace", "exponential")


def report_noisy_max(scores: ArrayLike, epsilon: float, sensitivity: float, rng: np.random.Generator,
                     noise: str = "gumbel", size: int | None = None) -> int | np.ndarray:
    r"""Index of ``max_r (q_r + Z_r)`` with i.i.d. noise ``Z_r`` of scale ``b = 2Δq/ε``.

    Parameters
    ----------
    scores : array_like of float
        ``q(D, r)`` for every candidate r (1-D, finite).
    epsilon, sensitivity : float
        ε > 0 and Δq > 0.
    rng : numpy.random.Generator
    noise : {"gumbel", "laplace", "exponential"}
        ``"gumbel"`` is distributed exactly as the exponential mechanism; the other two are
        ε-DP selections with other distributions (see the module docstring).
    size : int, optional
        Number of independent draws (returns an array); ``None`` for one draw (an int).
    """
    func = "report_noisy_max"
    q = check_scores(scores, func=func)
    epsilon = check_epsilon(epsilon, func=func)
    sensitivity = check_positive(sensitivity, func=func, name="sensitivity")
    rng = check_rng(rng, func=func)
    if noise not in NOISES:
        raise fail(func, "noise", f"one of {NOISES}", noise)
    if size is not None and (isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0):
        raise fail(func, "size", "None or an integer >= 0", size)
    b = 2.0 * sensitivity / epsilon
    shape = (1 if size is None else int(size), q.size)
    if noise == "gumbel":
        z = rng.gumbel(0.0, b, size=shape)
    elif noise == "laplace":
        z = rng.laplace(0.0, b, size=shape)
    else:
        z = rng.exponential(b, size=shape)
    picks = np.argmax(q[None, :] + z, axis=1)
    return int(picks[0]) if size is None else picks


def utility_threshold(opt: float, n_candidates: int, epsilon: float, sensitivity: float, t: ArrayLike) -> np.ndarray | float:
    r"""``OPT − 2Δq(ln|O| + t)/ε``: the score the exponential mechanism beats with probability ≥ 1 − e^{−t}."""
    func = "utility_threshold"
    opt = check_real(opt, func=func, name="opt")
    if isinstance(n_candidates, bool) or not isinstance(n_candidates, (int, np.integer)) or n_candidates < 1:
        raise fail(func, "n_candidates", "an integer >= 1", n_candidates)
    epsilon = check_epsilon(epsilon, func=func)
    sensitivity = check_positive(sensitivity, func=func, name="sensitivity")
    t_arr = np.asarray(t, dtype=float)
    if not np.all(np.isfinite(t_arr)) or np.any(t_arr <= 0):
        raise fail(func, "t", "numbers > 0", t)
    out = opt - 2.0 * sensitivity * (math.log(n_candidates) + t_arr) / epsilon
    return float(out) if out.ndim == 0 else out


def exact_tail(scores: ArrayLike, probabilities: ArrayLike, threshold: ArrayLike) -> np.ndarray | float:
    """``Pr[q(M) <= threshold]`` for a selection that picks candidate r with ``probabilities[r]``."""
    func = "exact_tail"
    q = check_scores(scores, func=func)
    p = np.asarray(probabilities, dtype=float)
    if p.shape != q.shape or np.any(p < 0) or not math.isclose(float(p.sum()), 1.0, rel_tol=1e-9):
        raise fail(func, "probabilities", f"{q.size} probabilities summing to 1", probabilities)
    thr = np.asarray(threshold, dtype=float)
    out = (p[None, :] * (q[None, :] <= thr.reshape(-1, 1))).sum(axis=1)
    return float(out[0]) if thr.ndim == 0 else out.reshape(thr.shape)


def two_candidate_probability(gap: float, epsilon: float, sensitivity: float, noise: str) -> float:
    r"""Probability of picking the better of two candidates whose scores differ by ``gap >= 0``.

    With ``b = 2Δq/ε`` and ``d = gap``:

    * exponential mechanism = Gumbel noise: ``1 / (1 + e^{−d/b})`` (the difference of two
      Gumbels is logistic);
    * Laplace noise: ``1 − ½ e^{−d/b}(1 + d/(2b))`` (the difference of two Laplaces);
    * exponential noise: ``1 − ½ e^{−d/b}`` (the difference of two exponentials is Laplace).
    """
    func = "two_candidate_probability"
    d = check_real(gap, func=func, name="gap")
    if d < 0:
        raise fail(func, "gap", "a score difference >= 0", gap)
    epsilon = check_epsilon(epsilon, func=func)
    sensitivity = check_positive(sensitivity, func=func, name="sensitivity")
    if noise not in NOISES:
        raise fail(func, "noise", f"one of {NOISES}", noise)
    x = d * epsilon / (2.0 * sensitivity)
    if noise == "gumbel":
        return 1.0 / (1.0 + math.exp(-x))
    if noise == "laplace":
        return 1.0 - 0.5 * math.exp(-x) * (1.0 + x / 2.0)
    return 1.0 - 0.5 * math.exp(-x)
