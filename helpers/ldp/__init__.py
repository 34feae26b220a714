"""Local differential privacy: frequency oracles, RAPPOR and mean estimation.

Textbook §6.4 (randomized response) and §6.5.1 (Google RAPPOR); seed 004
(mean estimation on [-1, 1]: Duchi et al., the Piecewise Mechanism and the
paper's own "classified transformation" mechanism, DCT).

Every user perturbs her own value before it leaves her device, so the
collector only sees reports. A protocol is ε-LDP when, for any two inputs
v, v' and any report y, ``P[M(v) = y] <= e^ε P[M(v') = y]`` (densities for
continuous outputs).

Frequency oracles here are *pure* protocols (Wang et al., USENIX Security
2017): a report "supports" value v with probability p if the user's value is
v and q otherwise. With C(v) supporting reports out of n,

    c(v) = (C(v) - n q) / (p - q)                       (unbiased)
    Var[c(v)] = n q(1-q)/(p-q)^2 + n f_v (1-p-q)/(p-q)

where f_v is the true fraction of users holding v.

Teaching code: see the package docstring about floating point.
"""

from __future__ import annotations

# One module per kind of protocol; the names stay those of the one module this was (notebooks import them).
from helpers.ldp.frequency import (grr_estimate, grr_perturb, grr_probabilities, grr_variance, oue_estimate,
                                   oue_perturb, oue_probabilities, oue_variance, pure_estimate, pure_variance)
from helpers.ldp.rappor import (bonferroni_z, rappor_bloom, rappor_bloom_matrix, rappor_decode,
                                rappor_epsilon_infinity, rappor_epsilon_one, rappor_estimate_bits,
                                rappor_hash_positions, rappor_instantaneous, rappor_permanent, rappor_significance,
                                RapporClient, RapporTest)
from helpers.ldp.mean import (dct_half_width, dct_keep_probability, dct_paper_variance, dct_perturb, dct_variance,
                              duchi_bound, duchi_perturb, duchi_variance, ldp_linear_regression,
                              piecewise_constant, piecewise_perturb, piecewise_variance)

__all__ = [
    "pure_estimate", "pure_variance",
    "grr_probabilities", "grr_perturb", "grr_estimate", "grr_variance",
    "oue_probabilities", "oue_perturb", "oue_estimate", "oue_variance",
    "rappor_hash_positions", "rappor_bloom", "rappor_bloom_matrix",
    "rappor_permanent", "rappor_instantaneous", "rappor_epsilon_infinity",
    "rappor_epsilon_one", "rappor_estimate_bits", "rappor_decode", "RapporClient",
    "bonferroni_z", "RapporTest", "rappor_significance",
    "duchi_bound", "duchi_perturb", "duchi_variance",
    "piecewise_constant", "piecewise_perturb", "piecewise_variance",
    "dct_half_width", "dct_keep_probability", "dct_perturb", "dct_variance",
    "dct_paper_variance",
    "ldp_linear_regression",
]


