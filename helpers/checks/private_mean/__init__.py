"""Checks behind the graded assignment ``source/private_mean`` (§6.2.1 sensitivity, §6.1.3 composition).

The student writes ``clip(values, lower, upper)``, the ℓ1 sensitivities
``sum_sensitivity(lower, upper, relation)`` and ``count_sensitivity(relation)``
for ``relation`` in {"add_remove", "replace"}, and an ε-DP mean under
add/remove neighbours, ``private_mean(values, lower, upper, epsilon, rng)``,
that spends ε₁ on a Laplace-noised clipped sum and ε₂ on a Laplace-noised
count (ε₁ + ε₂ = ε, split chosen by the student) and returns
``clip(noisy_sum / max(noisy_count, 1), lower, upper)``.

Like :mod:`helpers.checks`, every ``check_*`` returns ``None`` or raises
:class:`AssertionError` with a bilingual message, and calls the student's
functions only with plain data (floats, lists, float arrays) and
``numpy.random.Generator`` objects, so that it works unchanged when the
functions are proxies into a sandbox (trusted grading).

What is judged, and how
-----------------------
* **Sensitivities**, exactly (deterministic), against values computed from
  Definition 6-2 by enumerating neighbouring datasets
  (:func:`sensitivities_from_definition`), for both neighbour relations on
  ranges that contain 0, lie on one side of it, or touch it. (This module
  ships to students with the visible tests, so it states no formula.)
* **rng discipline** (deterministic): the same generator state gives the
  same output, another state another output, and the call advances the
  generator. Noise from ``np.random.*``, the ``random`` module, ``secrets``,
  a generator with a fixed seed or any other source than ``rng`` fails.
  Any method of ``rng`` may be used (``rng.laplace`` included): this
  assignment is about sensitivity and composition, not sampling.
* **Accuracy**: on a dataset drawn by :func:`accuracy_dataset` from the
  check's seed, a binomial test that the median absolute error is at most
  ``ACCURACY_FACTOR`` = 1.5 times that of the best split
  ε₁ = ρε, ε₂ = (1 - ρ)ε (ρ to 0.01, found by simulating the specified
  mechanism, :func:`best_split`). A mechanism whose median error is within the
  factor passes with probability at least 1 - 1e-6.
* **Privacy**: :func:`helpers.audit.epsilon_lower_bound` at confidence
  1 - 1e-6 on worst-case neighbouring datasets; the check fails when the
  lower bound on ε exceeds the claimed ε (a proven violation; a correct
  mechanism fails with probability at most 1e-6 per audit). The pairs:

  - ``composition``: range [-1, 1], d = 20 records at or below -1 (clipped
    mean = the lower bound), d' = d plus one record at 1000 (clipped to 1).
    Sum and count both push the mean of d' up, so the output carries the
    privacy loss of both releases (up to ε₁ + ε₂ in its tail when ε₂ <= ε₁,
    2ε₁ otherwise): spending ε on each release (2ε in total), releasing the
    exact count, or not clipping is caught; this audit is visible.
  - ``upper_bound_mean``: the mirror image of ``composition``, d = 20 records at or above 1
    (clipped mean = the upper bound) and d' = d plus a record at -1000. One
    noise draw reused for sum and count (equal split) gives a noise-free
    output when the mean equals the bound that defines the sensitivity: the
    composition pair (mean = lower) catches the sign convention
    ``S - aL, n + bL``, this one ``S + aL, n + bL``.
  - ``noise_scales`` (not a pair; :func:`noise_scale_bound`): three
    datasets drawn by :func:`accuracy_dataset`, 23,000 outputs each. For
    the specified mechanism the probability of a tail event {Y > y} is an
    exact function of the two Laplace scales (:func:`exceedance`), so the
    tails' frequencies (exact binomial tests) reject every split with
    ε₁ + ε₂ <= ε when the noise is too small for all of them. This is what
    catches an overspend the mean's privacy loss hides: a sum scale 1.5×
    too small (ε₁ = 0.75ε, ε₂ = 0.5ε) has a largest loss of the output
    below 0.97ε in every pair the DP audits tried, but is proven to spend
    at least 1.1ε here.
  - ``interior``: d drawn by :func:`accuracy_dataset`, the accuracy checks'
    distribution (range, ε, 50-200 values with outliers), d' = d plus a
    record beyond the bound farther from d's clipped mean: whatever a
    solution does on data like the accuracy checks' is audited.
  - ``small_interior``: as ``interior``, but d is the first n values of such
    a draw, n in 2..49 from the seed (the size of the notebook's and the
    textbook's examples; the other pairs have 0, 1, 20 or 50-200 records):
    a mechanism that skips the noise on small datasets gives an unbounded
    loss and fails (red team, session 11).
  - ``one-sided range``: [-20, -19], d = [] vs d' = [-1000]. A sum
    sensitivity of ``upper - lower`` (= 1 instead of 20) or a missing clip
    is caught.
  - ``mostly negative range``: [-20, 1], d = [] vs d' = [-1000]. A sum
    sensitivity of ``upper`` (forgetting negative values) is caught.

  Every number of a pair other than ``interior`` and ``small_interior`` (records and bounds) is
  multiplied by a scale in [1/2, 2] drawn from the check's seed (:func:`audit_config`), which leaves
  the privacy loss unchanged. Measured detection rates:
  ``tests/power/RESULTS.md``.

Cost: the outputs of one dataset are batches of calls
(:func:`helpers.checks.call_repeatedly`, one process crossing per 1,000 in trusted
grading). The privacy cell makes about 147,000 calls (178,000 before issue 17): 28,000 for the visible
``composition``, 69,000 for ``noise_scales``, 10,000 for ``upper_bound_mean``,
16,000 for ``interior``, 8,000 for ``small_interior`` and for each range pair; each accuracy check 1,000
(measured time: ``tests/power/RESULTS.md``).
"""


from __future__ import annotations

# One module per job: the checks (checks.py), the reference simulator (simulator.py: best split,
# exact tail probabilities), the privacy audits (audits.py), the visible worked example of the
# sensitivities (worked_example.py, imported by its own name). This package's names stay those of
# the one module it was, which released notebooks import.
from helpers.checks.private_mean._shared import ACCURACY_FACTOR, AUDIT_CONFIDENCE, AUDITS, BATCH, RELATIONS
from helpers.checks.private_mean.audits import (AUDIT_CHUNK, NOISE_AUDIT, NoiseScaleResult, _privacy_mistake,
                                                audit_config, audit_private_mean, check_private_mean_privacy,
                                                noise_scale_bound)
from helpers.checks.private_mean.checks import (SUM_CASES, check_clip_invalid, check_clip_values,
                                                check_count_sensitivity_basics, check_count_sensitivity_values,
                                                check_private_mean_accuracy, check_private_mean_basics,
                                                check_private_mean_invalid, check_private_mean_rng,
                                                check_sum_sensitivity_basics, check_sum_sensitivity_values)
from helpers.checks.private_mean.simulator import (accuracy_dataset, best_split, exceedance,
                                                   sensitivities_from_definition)

__all__ = [
    "ACCURACY_FACTOR",
    "AUDITS",
    "RELATIONS",
    "check_clip_values",
    "check_clip_invalid",
    "check_sum_sensitivity_basics",
    "check_sum_sensitivity_values",
    "check_count_sensitivity_basics",
    "check_count_sensitivity_values",
    "check_private_mean_basics",
    "check_private_mean_invalid",
    "check_private_mean_rng",
    "check_private_mean_accuracy",
    "check_private_mean_privacy",
    "best_split",
    "sensitivities_from_definition",
]

