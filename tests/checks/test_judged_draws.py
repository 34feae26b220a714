"""Issue 35, section 1: the rule "built from the served ``rng.random``" holds for the calls whose
outputs are judged (the distribution checks), a moved stretch is judged by its values, and the
generator task's cells need a generator built from the draws. Each hostile sampler below passed
every check of its function on the code before (in-process, and through the sandboxed grader: 10/10
for size branching in all three generators and for the coarse reseeds of ``laplace_noise`` and
``rr_perturb``, 7/10 for ``np.random.laplace``; see tests/power/RESULTS.md, issue 35)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from helpers import checks
from helpers.checks import load_student_code
from tests.fixtures.attacks.c10_judged_draws import COARSE_RESEED, GLOBAL_LAPLACE, SIZE_BRANCH


def _laplace(code: str):
    return load_student_code(code, {"np": np, "math": math})["laplace_noise"]


@pytest.fixture
def blind_scan(monkeypatch):
    """The forbidden-name scan now sees ``getattr(np, "ran" + "dom")`` (helpers/checks/reach.py, session 13);
    these tests are about the draws checks behind it, which must catch what a blinder scan would miss."""
    from helpers.checks import forbidden

    monkeypatch.setattr(forbidden, "find_forbidden_calls", lambda *args, **kwargs: [])


def _fails(check, func, diagnosis: str, *args, **kwargs) -> None:
    with pytest.raises(AssertionError) as failure:
        check(func, *args, **kwargs)
    assert failure.value.diagnosis == diagnosis, str(failure.value)


def test_a_sampler_that_branches_on_size_loses_the_distribution_cell():
    noise = _laplace(SIZE_BRANCH)
    checks.check_laplace_noise_rng(noise)       # the rule's own small calls still pass: the gap
    _fails(checks.check_laplace_noise_distribution, noise, "common.rng_unused")


def test_a_sampler_that_draws_and_then_ignores_the_draws_at_large_sizes_fails_the_replay():
    noise = _laplace(SIZE_BRANCH.replace("        own = ", "        rng.random(size)\n        own = "))
    _fails(checks.check_laplace_noise_distribution, noise, "common.output_not_from_draws")


def test_randomized_response_and_the_exponential_mechanism_branching_on_their_arguments_fail(blind_scan):
    ns = load_student_code('''
def rr_perturb(bits, epsilon, rng):
    x = np.asarray(bits)
    p = 1 / (1 + math.exp(-epsilon))
    keep = (getattr(getattr(np, "ran" + "dom"), "default_rng")().random(x.shape) if x.size >= 50_000 else rng.random(x.shape)) < p
    return np.where(keep, x, 1 - x).astype(int)


def exponential_mechanism(scores, epsilon, sensitivity, rng):
    p = np.exp(epsilon * (np.asarray(scores) - max(scores)) / (2 * sensitivity))
    p = p / p.sum()
    u = rng.random()
    if list(scores) in ([1.0, 2.0, 3.0, 2.5], [30.0, 25.0, 8.0, 2.0], [5.0], [0.0, 1e6, 3.0]):
        return int(min(np.searchsorted(np.cumsum(p), u, side="right"), len(p) - 1))
    return int(getattr(getattr(np, "ran" + "dom"), "default_rng")().choice(len(p), p=p))
''', {"np": np, "math": math})
    checks.check_rr_perturb_rng(ns["rr_perturb"])
    _fails(checks.check_rr_perturb_distribution, ns["rr_perturb"], "common.rng_unused")
    checks.check_exponential_mechanism_rng(ns["exponential_mechanism"])
    _fails(checks.check_exponential_mechanism_distribution, ns["exponential_mechanism"],
           "common.output_not_from_draws", n=2_000)


def test_a_generator_reseeded_from_a_coarse_floor_of_the_draws_is_judged_by_its_values():
    _fails(checks.check_laplace_noise_rng, _laplace(COARSE_RESEED), "common.generator_seeded_from_draws")


def test_a_ready_made_sampler_earns_nothing_in_the_generator_cells():
    noise = _laplace(GLOBAL_LAPLACE)
    for check in (checks.check_laplace_noise_basics, checks.check_laplace_noise_distribution,
                  checks.check_laplace_noise_rng):
        _fails(check, noise, "common.rng_unused")


def test_hidden_exponential_cases_come_from_the_run_seed(monkeypatch):
    from helpers.checks.exponential import CHI2_SCORES, hidden_mechanism_cases
    from helpers.checks.reference import reference_exponential_probabilities

    seen = set()
    for run in range(30):
        monkeypatch.setenv("DP_COURSE_SEED", str(run))
        table, other = hidden_mechanism_cases()
        assert table["scores"] == checks.TABLE_6_4_SCORES and table["sensitivity"] == 1.0
        assert 0.05 <= table["epsilon"] <= 1.0 and 3 <= len(other["scores"]) <= 8
        probabilities = reference_exponential_probabilities(other["scores"], other["epsilon"],
                                                                   other["sensitivity"])
        assert probabilities.max() / probabilities.min() <= math.exp(3.01) or other["scores"] == CHI2_SCORES
        seen.add((table["epsilon"], other["scores"]))
    assert len(seen) >= 27


def test_a_bit_pattern_reseeded_from_a_coarse_floor_of_the_draws_fails_with_its_fixed_count(blind_scan):
    """Discrete values cannot tell a reseed from a rejection sampler, but a fixed number of draws can:
    the single-uniform retries (meant for rejection samplers) excused this one (10/10 before)."""
    ns = load_student_code('''
def rr_perturb(bits, epsilon, rng):
    x = np.asarray(bits)
    u = rng.random(x.shape)
    own = getattr(getattr(np, "ran" + "dom"), "default_rng")(int(np.floor(10 * np.sum(u))))
    keep = own.random(x.shape) < 1 / (1 + math.exp(-epsilon))
    return np.where(keep, x, 1 - x).astype(int)
''', {"np": np, "math": math})
    _fails(checks.check_rr_perturb_rng, ns["rr_perturb"], "common.generator_seeded_from_draws")
    _fails(checks.check_rr_perturb_distribution, ns["rr_perturb"], "common.generator_seeded_from_draws")


def test_blocks_seeded_by_one_coarse_bit_of_each_of_several_uniforms_fail(blind_scan):
    """Red team, session 13: a block of 28 bits from a generator seeded by ``u >= 1/2`` of each of 8 served
    uniforms stayed within the 4-outputs-per-uniform allowance on every replaced stretch (10/10 through
    the grader); one uniform replaced alone changes its whole block half the time."""
    ns = load_student_code('''
def rr_perturb(bits, epsilon, rng):
    x = np.asarray(bits)
    p = 1 / (1 + math.exp(-epsilon))
    flat = x.ravel()
    n, M, B = flat.size, 8, 28
    nb = -(-n // B)
    u = rng.random(nb * M).reshape(nb, M)
    keep = np.concatenate([np.random.default_rng([k, *map(int, row >= 0.5)]).random(B) < p
                           for k, row in enumerate(u)])[:n]
    return np.where(keep, flat, 1 - flat).astype(int).reshape(x.shape)
''', {"np": np, "math": math})
    for seed in (0, 1, 2):
        _fails(checks.check_rr_perturb_rng, ns["rr_perturb"], "common.generator_seeded_from_draws", seed)


def test_a_mechanism_that_ignores_rng_at_the_judged_size_loses_its_distribution_cell():
    """Issue 35, A3 (session 14's lapM, 10/10 through the grader): the mechanism's judged call must be
    built from the draws served for it, as laplace_noise's; its own rng check's small call is honest."""
    code = (Path(__file__).resolve().parents[1] / "corpus" / "laplace" / "laplace_mechanism"
            / "ignores_rng_when_large.py").read_text()
    mechanism = load_student_code(code, {"np": np, "math": math})["laplace_mechanism"]
    checks.check_laplace_mechanism_basics(mechanism)
    _fails(checks.check_laplace_mechanism_distribution, mechanism, "common.rng_unused")
    honest = load_student_code(code.replace("x.size >= 1000", "False"), {"np": np, "math": math})["laplace_mechanism"]
    checks.check_laplace_mechanism_distribution(honest)
