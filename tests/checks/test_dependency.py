"""Session 14 (issue 35): outputs that depend on coarse cells of many served uniforms fail at the judged
calls (helpers/checks/dependency.py), and correct samplers that the earlier checks refused keep their
points: Laplace from polar-method normals (a reflected stretch keeps the disc's acceptances) and five bits
served by one uniform through its residual (the coarse-nudge bound grows with the outputs per uniform).
Every test here failed on 861acab, the code before (run against it in-process; tests/power/RESULTS.md)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from helpers import checks
from helpers.checks import load_student_code

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
HELPERS = '''
def rr_keep_probability(epsilon):
    return 1.0 / (1.0 + math.exp(-epsilon))


def exponential_probabilities(scores, epsilon, sensitivity):
    z = epsilon * np.asarray(scores, dtype=float) / (2 * sensitivity)
    w = np.exp(z - z.max())
    return w / w.sum()
'''


def _load(assignment: str, function: str, variant: str):
    code = HELPERS + (CORPUS / assignment / function / f"{variant}.py").read_text(encoding="utf-8")
    return load_student_code(code, {"np": np, "math": math})[function]


def _fails(check, func, *args, **kwargs) -> None:
    with pytest.raises(AssertionError) as failure:
        check(func, *args, **kwargs)
    assert failure.value.diagnosis == "common.output_from_coarse_digest", str(failure.value)


@pytest.mark.parametrize("seed", [0, 1])
def test_outputs_hashed_from_coarse_cells_of_many_uniforms_fail_the_judged_calls(seed):
    """Second attacker, session 13: one output per uniform (or fewer), so no stretch or single uniform
    exceeds its allowance, and 2⁸-4¹⁰ cells per block, too many for the pairs test (every check passed,
    seeds 0-9)."""
    _fails(checks.check_laplace_noise_distribution,
           _load("laplace", "laplace_noise", "hash_of_quarter_cells"), seed)
    _fails(checks.check_rr_perturb_distribution,
           _load("randomized_response", "rr_perturb", "hash_of_coin_cells"), seed)
    _fails(checks.check_exponential_mechanism_distribution,
           _load("exponential", "exponential_mechanism", "hash_of_coin_cells"), seed)


@pytest.mark.parametrize("seed", [0, 1])
def test_laplace_from_polar_normals_and_five_residual_bits_keep_their_points(seed):
    """An independent reviewer's correct samplers (session 13): 4-8/10 and 7/10 before."""
    for variant in ("polar_products", "polar_scale_mixture"):
        noise = _load("laplace", "laplace_noise", variant)
        checks.check_laplace_noise_rng(noise, seed)
        checks.check_laplace_noise_distribution(noise, seed)
    perturb = _load("randomized_response", "rr_perturb", "residual_reuse5")
    checks.check_rr_perturb_rng(perturb, seed)
    checks.check_rr_perturb_distribution(perturb, seed)


def test_the_coarse_nudge_bound_counts_the_thresholds_of_a_reused_residual():
    from helpers.checks.digest import residual_thresholds

    assert residual_thresholds(2, 1) == 1 and residual_thresholds(7, 1) == 6  # an inverse CDF: k - 1
    assert residual_thresholds(2, 5) == pytest.approx(11.4)
    rng = np.random.default_rng(5)
    p, s, n = 0.6, 5, 300_000
    u = rng.random(n // s)
    v = np.clip(u + 2.0 ** -12 * rng.choice([-1.0, 1.0], u.size), 0.0, 1.0 - 1e-16)

    def bits(w):
        out = []
        for _ in range(s):
            out.append(w < p)
            w = np.where(out[-1], w / p, (w - p) / (1 - p))
        return np.stack(out, axis=1)

    changed = float(np.mean(bits(u) != bits(v))) / 2.0 ** -12
    assert 0.9 * residual_thresholds(2, s) < changed < 1.1 * residual_thresholds(2, s)


def test_a_decoy_rejection_round_does_not_switch_off_the_count_for_laplace():
    """Session 14's attacker (A1, lapR: 10/10 through the grader at seeds 1-3): the hash of quarter cells plus
    a fake rejection round (a value whose own uniform is below 0.05 takes its small term from a uniform drawn
    at the end) made the number of draws vary, and only fixed-count samplers were counted. A count-varying
    sampler's judged call now gets single uniforms replaced: where the count is kept, a rejection sampler
    changes one value, the decoy rehashes a block of ten (helpers/checks/single_uniform.py)."""
    text = (CORPUS / "laplace" / "laplace_noise" / "hash_of_quarter_cells.py").read_text(encoding="utf-8")
    honest_term = "0.005 * b * (u - 0.5)"
    assert honest_term in text
    decoy = text.replace(f"    x = -b * np.sign(d) * np.log1p(-2 * np.abs(d)) + {honest_term}",
                         "    w = u.copy()\n    low = u < 0.05\n    w[low] = rng.random(int(low.sum()))\n"
                         "    x = -b * np.sign(d) * np.log1p(-2 * np.abs(d)) + 0.005 * b * (w - 0.5)")
    assert decoy != text
    _fails(checks.check_laplace_noise_distribution, load_student_code(HELPERS + decoy, {"np": np, "math": math})[
        "laplace_noise"], 0)
