"""Checks behind the graded assignment ``source/privacy_budget`` (§6.1.3, experiment 6-1 scheme 1, Table 6-3).

The student writes a *functional* privacy-budget accountant: the ledger is
plain data (a dict) that every call receives and returns updated, so it
crosses a process boundary like any other argument.

* ``make_accountant(total_epsilon) -> state``
* ``answer_count(state, values, threshold, epsilon, rng) -> (noisy_count, new_state)``:
  #{values > threshold} + Lap(1/ε), charged ε (sequential composition,
  Theorem 6-2); a query that does not fit raises ``ValueError`` (the caller
  keeps the old state, so a refusal spends nothing);
* ``answer_histogram(state, labels, k, epsilon, rng) -> (noisy_counts, new_state)``:
  an ε-DP histogram with the least noise and the least charge the composition
  theorems allow (the task says so): one count per label 0..k−1 with
  independent Lap(1/ε) noise, charged ε once (parallel composition, Theorem
  6-3: the bins are disjoint). Charging k·ε, or charging ε with Lap(k/ε) per
  bin, is private but wasteful and fails with its own diagnosis
  (``histogram_overcharged``, ``histogram_noise_larger_than_needed``); charging
  less than the noise requires is not private (``histogram_undercharged``,
  ``histogram_noise_too_small``);
* ``averaging_attack(answers) -> int``: the repeated-query attack of §6.2.3
  against a server without an accountant (average, round).

What is judged

* **refusals at the exact boundary** (deterministic): budgets that add up
  exactly in decimal — 0.1 + 0.2 + 0.7 = 1, ten times 0.1 = 1, 0.1 + 0.2 = 0.3,
  0.1 + 0.2 + 0.3 = 0.6, 3 × 1.1 = 3.3, 100 × 0.01 = 1 — must be accepted, although naive float
  sums, ``math.fsum`` without a tolerance and exact binary fractions
  (``Fraction(0.1)``) refuse some of them; a request exceeding the budget by
  10⁻⁶ or more must be refused (the rule stated in the notebook: accept when
  the decimal sum is at most the total; any tolerance between 10⁻¹² and 10⁻⁹
  relative to the total, or exact decimal arithmetic, satisfies it);
* **the budget actually spent matches the noise actually added**: the number
  of queries an accountant accepts equals total/ε, and the noise of the
  accepted answers (answer − true count, the true count being known to the
  check) passes a Kolmogorov–Smirnov test against Lap(1/ε) at α = 1e-6 — at
  two ε in one ledger, so noise drawn for the wrong ε (total, remaining,
  ε instead of 1/ε, k/ε per bin) is caught;
* **parallel composition**: a histogram costs ε whatever k; its per-bin noise
  is Lap(1/ε) and independent across bins;
* **the attack**: exact guesses on fixed answers, and the success rate over
  simulated attacks against the exact probability of Table 6-3
  (:func:`helpers.queries.danger_probability`), two-sided binomial tests.

Every student function is called with plain data (floats, int64/float64
arrays, dicts/lists the student produced, deep-copied before every call as
they would be across a process boundary) and ``numpy.random.Generator``
objects only; results are treated as plain data (BRIEF: trusted-grading
contract). Messages are bilingual (Chinese, then English).
"""


from __future__ import annotations

# One module per job: what the checks share (_shared.py), the accountant (accountant.py), the
# histogram (histogram.py), the averaging attack (attack.py). This package's names stay those of the
# one module it was, which released notebooks import.
from helpers.checks.privacy_budget._shared import EXACT_DANGER
from helpers.checks.privacy_budget.accountant import (check_accountant_basics, check_budget_boundary,
                                                      check_noise_matches_budget)
from helpers.checks.privacy_budget.attack import check_attack_success_rate, check_attack_values
from helpers.checks.privacy_budget.histogram import check_histogram_parallel

__all__ = [
    "EXACT_DANGER",
    "check_accountant_basics",
    "check_budget_boundary",
    "check_noise_matches_budget",
    "check_histogram_parallel",
    "check_attack_values",
    "check_attack_success_rate",
]
