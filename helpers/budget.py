r"""A privacy-budget accountant (textbook §6.1.3, §6.2.3; budget-management article, seed 001).

Every query answered with ε-DP spends part of a total budget:

* **Sequential composition** (Theorem 6-2). Mechanisms run on the *same* data with budgets
  ``(ε_i, δ_i)`` together give ``(Σ ε_i, Σ δ_i)``. :meth:`BudgetAccountant.spend` adds them.
* **Parallel composition** (Theorem 6-3). Mechanisms run on *disjoint* parts of the data give
  ``(max ε_i, max δ_i)``. :meth:`BudgetAccountant.parallel` charges the maximum. An example is
  one noisy count per age bucket of a histogram (§6.2.4).

The accountant is a *privacy filter*. It refuses a query that would take the total above the
budget, by raising :class:`BudgetExceededError`, and a refused query spends nothing. Seed 001
splits ε = 1 into 0.5 (sum) + 0.3 (mean) + 0.2 (clustering). That split fits exactly, and one
more query of any size is refused.

Floating point: decimal budgets such as 0.1 are not exact binary fractions. The spent budget
is therefore summed with :func:`math.fsum` (exactly rounded), and a query is accepted when the
new total is at most ``total × (1 + 1e-12)``. That tolerance accepts ``0.5 + 0.3 + 0.2 = 1``
and ``10 × 0.1 = 1``. The largest overrun it can allow is ``1e-12 · ε``, a factor of at most
``e^{1e-12 ε}`` on probabilities, which is far below anything measurable. It refuses any
request larger than that, for example one of 1e-9.

Examples
--------
>>> import numpy as np
>>> acc = BudgetAccountant(1.0)
>>> for eps, label in [(0.5, "sum"), (0.3, "mean"), (0.2, "clusters")]:
...     _ = acc.spend(eps, label=label)
>>> acc.remaining
0.0
>>> acc.spend(1e-3, label="one more")  # doctest: +ELLIPSIS
Traceback (most recent call last):
    ...
helpers.budget.BudgetExceededError: BudgetAccountant.spend: query 'one more' refused: ...
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple, Sequence

import numpy as np
from numpy.typing import ArrayLike

from helpers._validation import check_epsilon, check_int, check_positive, check_real, check_rng, fail
from helpers.gaussian import gaussian_delta
from helpers.i18n import tr
from helpers.mechanisms import exponential_mechanism, laplace_mechanism

__all__ = ["BudgetExceededError", "BudgetRecord", "BudgetAccountant", "RELATIVE_TOLERANCE"]

#: Relative slack allowed above the total budget, to absorb decimal-to-binary rounding.
RELATIVE_TOLERANCE = 1e-12


class BudgetExceededError(ValueError):
    """A query would take the spent budget above the total. Nothing was spent."""


class BudgetRecord(NamedTuple):
    """One accepted charge: what it cost and how it was composed."""

    label: str
    epsilon: float
    delta: float
    composition: str  # "sequential" or "parallel"
    parts: tuple[float, ...]  # the ε of each parallel part (just (ε,) for sequential)


def _check_delta(delta: Any, *, func: str, name: str = "delta") -> float:
    value = check_real(delta, func=func, name=name)
    if not 0.0 <= value < 1.0:
        raise fail(func, name, "a probability in [0, 1)", value)
    return value


class BudgetAccountant:
    """Track and enforce a total privacy budget ``(ε_total, δ_total)``.

    Parameters
    ----------
    total_epsilon : float
        Total budget ``ε > 0``.
    total_delta : float, default 0
        Total ``δ`` in [0, 1). With the default 0, only pure ε-DP queries fit (Laplace,
        exponential mechanism, randomized response).

    Attributes
    ----------
    history : list of BudgetRecord
        The accepted charges, in order. Refused queries are not recorded.
    """

    def __init__(self, total_epsilon: float, total_delta: float = 0.0) -> None:
        func = "BudgetAccountant"
        self.total_epsilon = check_epsilon(total_epsilon, func=func, name="total_epsilon")
        self.total_delta = _check_delta(total_delta, func=func, name="total_delta")
        self.history: list[BudgetRecord] = []

    # --- state -------------------------------------------------------------------------

    @property
    def spent(self) -> float:
        """ε spent so far: ``fsum`` of the accepted charges (Theorem 6-2)."""
        return math.fsum(r.epsilon for r in self.history)

    @property
    def spent_delta(self) -> float:
        """δ spent so far (Theorem 6-2: δ add up too)."""
        return math.fsum(r.delta for r in self.history)

    @property
    def remaining(self) -> float:
        """ε still available (never negative)."""
        return max(0.0, self.total_epsilon - self.spent)

    @property
    def remaining_delta(self) -> float:
        """δ still available (never negative)."""
        return max(0.0, self.total_delta - self.spent_delta)

    def __repr__(self) -> str:
        # printed in the lecture notebooks, so in the notebook's language (helpers.i18n)
        return tr(
            zh=(f"BudgetAccountant(已消耗 ε = {self.spent:g} / {self.total_epsilon:g}，"
                f"δ = {self.spent_delta:g} / {self.total_delta:g}，共 {len(self.history)} 个查询)"),
            en=(f"BudgetAccountant(spent ε = {self.spent:g} of {self.total_epsilon:g}, "
                f"δ = {self.spent_delta:g} of {self.total_delta:g}, {len(self.history)} queries)"),
        )

    # --- charging ------------------------------------------------------------------------

    def _fits(self, epsilon: float, delta: float) -> tuple[bool, bool]:
        new_eps = math.fsum([*(r.epsilon for r in self.history), epsilon])
        new_delta = math.fsum([*(r.delta for r in self.history), delta])
        eps_ok = new_eps <= self.total_epsilon * (1.0 + RELATIVE_TOLERANCE)
        delta_ok = new_delta <= self.total_delta * (1.0 + RELATIVE_TOLERANCE)
        return eps_ok, delta_ok

    def check(self, epsilon: float, delta: float = 0.0, label: str = "query", *, func: str = "BudgetAccountant.check") -> None:
        """Raise :class:`BudgetExceededError` if ``(epsilon, delta)`` would not fit; spend nothing."""
        epsilon = check_epsilon(epsilon, func=func)
        delta = _check_delta(delta, func=func)
        eps_ok, delta_ok = self._fits(epsilon, delta)
        if not eps_ok:
            raise BudgetExceededError(tr(
                zh=(f"{func}：拒绝查询 {label!r}：它要消耗 ε = {epsilon:g}，但总预算 {self.total_epsilon:g} "
                    f"中已消耗 {self.spent:g}，只剩 {self.remaining:g}。本次没有消耗任何预算。"),
                en=(f"{func}: query {label!r} refused: it requests ε = {epsilon:g}, but "
                    f"ε = {self.spent:g} of {self.total_epsilon:g} is already spent and only "
                    f"{self.remaining:g} remains. Nothing was spent."),
            ))
        if not delta_ok:
            raise BudgetExceededError(tr(
                zh=(f"{func}：拒绝查询 {label!r}：它要消耗 δ = {delta:g}，但总 δ {self.total_delta:g} "
                    f"中已消耗 {self.spent_delta:g}，只剩 {self.remaining_delta:g}。本次没有消耗任何预算。"),
                en=(f"{func}: query {label!r} refused: it requests δ = {delta:g}, but "
                    f"δ = {self.spent_delta:g} of {self.total_delta:g} is already spent and only "
                    f"{self.remaining_delta:g} remains. Nothing was spent."),
            ))

    def _label(self, label: Any, func: str) -> str:
        if not isinstance(label, str):
            raise fail(func, "label", "a string naming the query", label)
        return label

    def spend(self, epsilon: float, delta: float = 0.0, label: str = "query") -> BudgetRecord:
        """Charge one ``(ε, δ)``-DP query on the whole dataset (sequential composition).

        Raises
        ------
        BudgetExceededError
            If the total would exceed the budget. Nothing is spent in that case.
        ValueError
            For ``epsilon <= 0`` (or NaN/inf) or ``delta`` outside [0, 1).
        """
        func = "BudgetAccountant.spend"
        label = self._label(label, func)
        self.check(epsilon, delta, label, func=func)
        record = BudgetRecord(label, float(epsilon), float(delta), "sequential", (float(epsilon),))
        self.history.append(record)
        return record

    def parallel(
        self, epsilons: Sequence[float], deltas: Sequence[float] | None = None, label: str = "parallel queries"
    ) -> BudgetRecord:
        """Charge queries on *disjoint* parts of the data: ``(max ε_i, max δ_i)`` (Theorem 6-3).

        Example: a histogram with one noisy count per age bucket, each with ε = 0.1, costs 0.1.
        The parts must really be disjoint (each person in exactly one part). The accountant
        cannot check this; it is the caller's claim.
        """
        func = "BudgetAccountant.parallel"
        label = self._label(label, func)
        eps_list = list(np.atleast_1d(np.asarray(epsilons, dtype=object)))
        if len(eps_list) == 0:
            raise fail(func, "epsilons", "a non-empty sequence of budgets > 0", epsilons)
        eps_values = tuple(check_epsilon(e, func=func, name="epsilons") for e in eps_list)
        if deltas is None:
            delta_values: tuple[float, ...] = (0.0,) * len(eps_values)
        else:
            delta_list = list(np.atleast_1d(np.asarray(deltas, dtype=object)))
            if len(delta_list) != len(eps_values):
                raise fail(func, "deltas", f"one δ per part ({len(eps_values)} values)", deltas)
            delta_values = tuple(_check_delta(d, func=func, name="deltas") for d in delta_list)
        epsilon, delta = max(eps_values), max(delta_values)
        self.check(epsilon, delta, label, func=func)
        record = BudgetRecord(label, epsilon, delta, "parallel", eps_values)
        self.history.append(record)
        return record

    # --- spending through a mechanism ------------------------------------------------------

    def laplace(
        self,
        value: ArrayLike,
        sensitivity: float,
        epsilon: float,
        rng: np.random.Generator,
        label: str = "laplace query",
    ) -> Any:
        """Spend ε, then release ``value`` with :func:`helpers.mechanisms.laplace_mechanism`.

        The budget is checked first. A refused query raises :class:`BudgetExceededError` and
        draws no noise. If the mechanism rejects its arguments (for example a negative
        sensitivity), nothing is spent either.
        """
        func = "BudgetAccountant.laplace"
        label = self._label(label, func)
        self.check(epsilon, 0.0, label, func=func)
        check_rng(rng, func=func)
        release = laplace_mechanism(value, sensitivity, epsilon, rng)
        self.history.append(BudgetRecord(label, float(epsilon), 0.0, "sequential", (float(epsilon),)))
        return release

    def exponential(
        self,
        scores: ArrayLike,
        sensitivity: float,
        epsilon: float,
        rng: np.random.Generator,
        label: str = "exponential mechanism",
    ) -> int:
        """Spend ε, then pick an index with :func:`helpers.mechanisms.exponential_mechanism`."""
        func = "BudgetAccountant.exponential"
        label = self._label(label, func)
        self.check(epsilon, 0.0, label, func=func)
        check_rng(rng, func=func)
        choice = exponential_mechanism(scores, epsilon, sensitivity, rng)
        self.history.append(BudgetRecord(label, float(epsilon), 0.0, "sequential", (float(epsilon),)))
        return choice


# --- composition theorems beyond Theorem 6-2 (§6.1.3: advanced composition, moments accountant) ---


__all__ += ["basic_composition", "advanced_composition", "gaussian_rdp_optimal_order",
            "gaussian_rdp_epsilon", "gaussian_exact_epsilon"]


def basic_composition(epsilon: float, delta: float, k: int) -> tuple[float, float]:
    r"""k-fold sequential composition (Theorem 6-2): ``(k ε, k δ)``.

    Parameters
    ----------
    epsilon : float
        ε > 0 of each mechanism.
    delta : float
        δ in [0, 1) of each mechanism.
    k : int
        Number of mechanisms, ``k >= 1``.
    """
    func = "basic_composition"
    epsilon = check_epsilon(epsilon, func=func)
    delta = _check_delta(delta, func=func)
    k = check_int(k, func=func, name="k", minimum=1)
    return k * epsilon, min(k * delta, 1.0)


def advanced_composition(epsilon: float, delta: float, k: int, delta_prime: float) -> tuple[float, float]:
    r"""Advanced composition theorem (Dwork, Rothblum & Vadhan 2010; Dwork & Roth 2014, Thm 3.20).

    k mechanisms, each (ε, δ)-DP, run adaptively on the same data are (ε′, kδ + δ′)-DP with

    .. math:: \varepsilon' = \varepsilon\sqrt{2k\ln(1/\delta')} + k\varepsilon(e^{\varepsilon} - 1).

    This is the "advanced composition" the textbook names in §6.1.3: it pays a little more δ
    (the extra ``δ′``) for an ε′ that grows like ``√k`` instead of ``k``. For large ε or small
    k the plain sum ``kε`` (Theorem 6-2) can be smaller; both bounds hold, so one may use the
    smaller. The function returns the formula itself.

    Parameters
    ----------
    epsilon : float
        ε > 0 of each mechanism.
    delta : float
        δ in [0, 1) of each mechanism.
    k : int
        Number of mechanisms, ``k >= 1``.
    delta_prime : float
        The extra failure probability δ′ in (0, 1).

    Returns
    -------
    (epsilon_total, delta_total) : tuple of float
        ``(ε√(2k ln(1/δ′)) + kε(e^ε − 1), kδ + δ′)``; ``delta_total`` is capped at 1.
    """
    func = "advanced_composition"
    epsilon = check_epsilon(epsilon, func=func)
    delta = _check_delta(delta, func=func)
    k = check_int(k, func=func, name="k", minimum=1)
    delta_prime = check_real(delta_prime, func=func, name="delta_prime")
    if not 0.0 < delta_prime < 1.0:
        raise fail(func, "delta_prime", "a probability in (0, 1)", delta_prime)
    eps_total = epsilon * math.sqrt(2.0 * k * math.log(1.0 / delta_prime)) + k * epsilon * math.expm1(epsilon)
    return eps_total, min(k * delta + delta_prime, 1.0)


def _rdp_inputs(sigma: Any, sensitivity: Any, k: Any, delta: Any, func: str) -> tuple[float, float]:
    sigma = check_positive(sigma, func=func, name="sigma")
    sensitivity = check_positive(sensitivity, func=func, name="sensitivity")
    k = check_int(k, func=func, name="k", minimum=1)
    delta = check_real(delta, func=func, name="delta")
    if not 0.0 < delta < 1.0:
        raise fail(func, "delta", "a probability in (0, 1)", delta)
    rho = k * sensitivity ** 2 / (2.0 * sigma ** 2)  # ε(α) = ρ·α: the RDP curve of k Gaussians
    return rho, math.log(1.0 / delta)


def gaussian_rdp_optimal_order(sigma: float, sensitivity: float, k: int, delta: float) -> float:
    r"""The Rényi order α* > 1 that minimises the bound of :func:`gaussian_rdp_epsilon`.

    With ``ρ = kΔ²/(2σ²)`` and ``L = ln(1/δ)``, ``ε(α) = ρα + L/(α − 1)`` is convex on α > 1
    and its derivative ``ρ − L/(α − 1)²`` vanishes at ``α* = 1 + √(L/ρ)``.
    """
    rho, log_term = _rdp_inputs(sigma, sensitivity, k, delta, "gaussian_rdp_optimal_order")
    return 1.0 + math.sqrt(log_term / rho)


def gaussian_rdp_epsilon(sigma: float, sensitivity: float, k: int, delta: float) -> float:
    r"""ε of k Gaussian mechanisms ``N(0, σ²)`` at l2 sensitivity Δ, via Rényi DP (Mironov 2017).

    The Gaussian mechanism is (α, αΔ²/(2σ²))-RDP for every order α > 1 (Mironov 2017,
    Proposition 7); RDP composes by adding (Proposition 1), so k of them are (α, kαΔ²/(2σ²))-RDP;
    and (α, ε_α)-RDP implies (ε_α + ln(1/δ)/(α − 1), δ)-DP (Proposition 3). This function
    minimises over α > 1

    .. math:: \varepsilon(\alpha) = \frac{k\alpha\Delta^2}{2\sigma^2} + \frac{\ln(1/\delta)}{\alpha - 1}.

    With ``ρ = kΔ²/(2σ²)`` the minimiser is ``α* = 1 + √(ln(1/δ)/ρ)`` and the minimum is

    .. math:: \varepsilon = \rho + 2\sqrt{\rho\ln(1/\delta)}.

    This is the "moments accountant" of the textbook's §6.1.3 (Abadi et al. 2016) in its
    Rényi-DP form, restricted to the plain Gaussian mechanism (no subsampling). Orders are not
    restricted to integers, as in Mironov's conversion.

    Parameters
    ----------
    sigma : float
        Noise standard deviation σ > 0 of each mechanism.
    sensitivity : float
        l2 sensitivity Δ > 0 of each query.
    k : int
        Number of mechanisms, ``k >= 1``.
    delta : float
        Target δ in (0, 1) of the composition.

    Returns
    -------
    float
        The (ε, δ)-DP ε of the k-fold composition.
    """
    rho, log_term = _rdp_inputs(sigma, sensitivity, k, delta, "gaussian_rdp_epsilon")
    return rho + 2.0 * math.sqrt(rho * log_term)


def gaussian_exact_epsilon(sigma: float, sensitivity: float, k: int, delta: float) -> float:
    r"""The exact (smallest) ε of k Gaussian mechanisms at δ, for comparison with the bounds.

    k Gaussian releases with noise σ on queries of l2 sensitivity Δ are exactly as private as
    one Gaussian release at sensitivity ``√k Δ`` (the sum of k squared shifts; Dong, Roth & Su
    2019, μ-GDP with μ = √kΔ/σ). Its smallest ε at δ solves
    ``gaussian_delta(σ, √k Δ, ε) = δ`` (Balle & Wang 2018), found here by bisection on ε.
    Returns 0.0 when already ``gaussian_delta(σ, √kΔ, 0) <= δ``.
    """
    func = "gaussian_exact_epsilon"
    _rdp_inputs(sigma, sensitivity, k, delta, func)
    shift = math.sqrt(k) * float(sensitivity)
    if gaussian_delta(sigma, shift, 0.0) <= delta:
        return 0.0
    lo, hi = 0.0, 1.0
    while gaussian_delta(sigma, shift, hi) > delta:
        lo, hi = hi, 2.0 * hi
    while hi - lo > 1e-12 * hi:
        mid = 0.5 * (lo + hi)
        if gaussian_delta(sigma, shift, mid) > delta:
            lo = mid
        else:
            hi = mid
    return hi
