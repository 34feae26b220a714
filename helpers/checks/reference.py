"""The reference answers the checks judge against, public for the lectures' explorers.

The explorers (:mod:`helpers.lectures.explorers`) draw what a correct solution gives, with the very
numbers the grader compares a submission with: one definition for both.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["TABLE_6_4_SCORES", "TABLE_6_4", "reference_exponential_probabilities", "reference_keep_probability",
           "CARROTS", "CARROTS_OVER_55"]

#: Table 6-4 of the textbook: scores, Δq = 1, and the printed probabilities.
TABLE_6_4_SCORES = (30.0, 25.0, 8.0, 2.0)
TABLE_6_4 = {0.0: (0.25, 0.25, 0.25, 0.25), 0.1: (0.424, 0.330, 0.141, 0.105), 1.0: (0.924, 0.075, 1.5e-05, 7.7e-07)}

#: Animals' daily carrots (experiment 6-1 asks how many eat more than 55); values at exactly 55 are not counted.
CARROTS = np.array([12.0, 55.0, 56.0, 70.5, 55.0, 80.0, 40.0, 55.5, 90.0, 30.0, 61.0, 55.0, 101.0, 3.0, 58.0,
                    75.0, 20.0, 55.01, 66.0, 44.0])
CARROTS_OVER_55 = int(np.sum(CARROTS > 55))
# Read-only: one warm grading worker checks many students, and changes a student's code makes to
# its arguments come back across the boundary; nothing may write into what the next student is
# checked against (the proxy leaves read-only arrays alone).
CARROTS.setflags(write=False)


def reference_exponential_probabilities(scores: np.ndarray, epsilon: float, sensitivity: float) -> np.ndarray:
    """P[r] ∝ exp(ε q(r) / (2Δq)) (exponential mechanism, §6.3), computed without overflow."""
    logits = epsilon * np.asarray(scores, dtype=float) / (2.0 * sensitivity)
    w = np.exp(logits - logits.max())
    return w / w.sum()


def reference_keep_probability(epsilon: float) -> float:
    """p = e^ε / (1 + e^ε): randomized response keeps the true answer with this probability (§6.4)."""
    return 1.0 / (1.0 + math.exp(-epsilon))
