"""Mean estimation on [-1, 1] (seed 004, §2-§3): Duchi et al., the Piecewise Mechanism, DCT, and LDP regression."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from helpers._validation import check_epsilon, check_int, check_positive, check_rng, fail
from helpers.ldp._common import _check_unit_interval, _scalar_out


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
