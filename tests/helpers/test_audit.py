"""Tests of helpers.audit: the empirical ε lower bound, in both directions.

* No false alarm: correct mechanisms (Laplace, randomized response, the
  exponential mechanism, and the LDP mechanisms Duchi / Piecewise) are
  audited at confidence 1 - 1e-6, so each "no violation" assertion fails
  with probability at most 1e-6 *by construction* (Clopper–Pearson on a
  fresh batch; the event is fixed before that batch is drawn).
* Detection: deliberately broken mechanisms must be caught. Their detection
  rate was measured (see each test); the bound's spread is a few hundredths
  of ε while the margin over the claim is about 0.4-0.9, so a miss was never
  seen.
* The "finds most of the true ε" assertions on correct mechanisms are power
  checks; their margins were measured over 20 seeds (bounds at confidence
  1 - 1e-6, n_final = 200,000): Laplace 0.952-0.973, RR 0.969-0.986,
  exponential 0.833-0.870 (true 0.948), Duchi 0.966-0.982, PM 0.964-0.976.
  Each assertion sits at least 10 observed standard deviations below these.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from helpers import ldp
from helpers.audit import AuditResult, Event, clopper_pearson, epsilon_lower_bound
from helpers.mechanisms import exponential_probabilities, laplace_mechanism, laplace_noise, rr_perturb

STRICT = 1 - 1e-6


def laplace_sampler(scale):
    return lambda d, rng, size: d + laplace_noise(scale, size, rng)


def exponential_sampler(epsilon, factor_two=True):
    """Exponential mechanism with Δ = 1; factor_two=False is the classic bug exp(ε q / Δ)."""
    def sample(scores, rng, size):
        eps_used = epsilon if factor_two else 2 * epsilon  # exp(2ε q/2Δ) = exp(ε q/Δ)
        p = exponential_probabilities(scores, eps_used, 1.0)
        return rng.choice(p.size, size=size, p=p)
    return sample


# neighbouring score vectors: candidate 0 gains 1, all others lose 1 (Δ = 1).
# True ε of the correct mechanism on this pair: 0.948 (claim 1); of the broken one: 1.886.
M = 20
SCORES_D = np.r_[1.0, np.zeros(M - 1)]
SCORES_D2 = np.r_[0.0, np.ones(M - 1)]


def true_exponential_epsilon(eps_used):
    p1 = exponential_probabilities(SCORES_D, eps_used, 1.0)[0]
    p2 = exponential_probabilities(SCORES_D2, eps_used, 1.0)[0]
    return math.log(p1 / p2)


# --------------------------------------------------------------------------- Clopper-Pearson

def test_clopper_pearson_edge_values():
    n, a = 1000, 0.05
    lo, hi = clopper_pearson(0, n, a)
    assert lo == 0.0 and hi == pytest.approx(1 - (a / 2) ** (1 / n))
    lo, hi = clopper_pearson(n, n, a)
    assert hi == 1.0 and lo == pytest.approx((a / 2) ** (1 / n))
    lo, hi = clopper_pearson(np.array([10, 500]), n, a)
    assert np.all(lo < np.array([0.01, 0.5])) and np.all(hi > np.array([0.01, 0.5]))


@pytest.mark.parametrize("p", [0.01, 0.3, 0.5, 0.93])
def test_clopper_pearson_exact_coverage(p):
    # deterministic: sum the binomial pmf over the k whose interval covers p
    n, a = 60, 0.1
    k = np.arange(n + 1)
    lo, hi = clopper_pearson(k, n, a)
    lower_ok = stats.binom.pmf(k, n, p)[lo <= p].sum()
    upper_ok = stats.binom.pmf(k, n, p)[hi >= p].sum()
    assert lower_ok >= 1 - a / 2 - 1e-12 and upper_ok >= 1 - a / 2 - 1e-12


# --------------------------------------------------------------------------- events and results

def test_event_contains_and_text():
    y = np.array([-2.0, -0.5, 0.0, 0.5, 3.0])
    assert Event("interval", hi=0.0).contains(y).tolist() == [True, True, True, False, False]
    assert Event("interval", lo=0.0).contains(y).tolist() == [False, False, False, True, True]
    assert Event("interval", lo=-1, hi=0.5).contains(y).tolist() == [False, True, True, True, False]
    assert Event("set", values=(0.0, 3.0)).contains(y).tolist() == [False, False, True, False, True]
    rows = np.array([[0, 1], [1, 1], [0, 1]])
    assert Event("set", values=((0, 1),)).contains(rows).tolist() == [True, False, True]
    assert Event("interval", hi=1.5, statistic="sum").contains(rows).tolist() == [True, False, True]
    assert Event("interval", lo=0.5, statistic=0).contains(rows).tolist() == [False, True, False]
    assert str(Event("interval", hi=-0.6)) == "y <= -0.6"
    assert str(Event("interval", lo=1)) == "y > 1"
    assert str(Event("set", values=(1,))) == "y in {1}"


def test_result_violates():
    r = AuditResult(epsilon=1.2, event=Event("interval", hi=0.0), k1=10, k2=1, n=100, confidence=0.95,
                    swapped=False, empirical_epsilon=2.3, p1_low=0.05, p2_high=0.015, n_candidates=1,
                    n_select=100, claimed_epsilon=1.0)
    assert r.violates() and r.violates(1.0) and not r.violates(1.5)
    from helpers import i18n
    previous = i18n.get_lang()
    try:
        i18n.set_lang("en")
        assert "VIOLATION of claimed ε = 1" in str(r) and "with confidence 0.95" in str(r)
        i18n.set_lang("zh")  # a Chinese notebook prints the result line in Chinese
        assert "违反声明的 ε = 1" in str(r) and "置信度 0.95" in str(r) and "with" not in str(r)
        r.claimed_epsilon = 2.0
        assert "与声明的 ε = 2 相容" in str(r)
        r.claimed_epsilon = 1.0
    finally:
        i18n.set_lang(previous)
    r.claimed_epsilon = None
    with pytest.raises(ValueError, match="claimed"):
        r.violates()


# --------------------------------------------------------------------------- no false alarm

def test_correct_laplace_no_false_alarm():
    rng = np.random.default_rng(101)
    r = epsilon_lower_bound(None, 0.0, 1.0, rng, sampler=laplace_sampler(1.0), confidence=STRICT,
                            claimed_epsilon=1.0)
    assert not r.violates()
    assert 0.85 < r.epsilon <= 1.0   # and it finds most of the true ε


def test_correct_randomized_response_no_false_alarm():
    rng = np.random.default_rng(102)
    sampler = lambda bit, rng, size: rr_perturb(np.full(size, bit), 1.0, rng)
    r = epsilon_lower_bound(None, 0, 1, rng, sampler=sampler, confidence=STRICT, claimed_epsilon=1.0)
    assert not r.violates()
    assert r.event.kind == "set" and r.epsilon > 0.9


def test_correct_exponential_no_false_alarm():
    rng = np.random.default_rng(103)
    assert true_exponential_epsilon(1.0) == pytest.approx(0.948, abs=1e-3)
    r = epsilon_lower_bound(None, SCORES_D, SCORES_D2, rng, sampler=exponential_sampler(1.0),
                            confidence=STRICT, claimed_epsilon=1.0)
    assert not r.violates() and r.epsilon > 0.7


@pytest.mark.parametrize("perturb", [ldp.duchi_perturb, ldp.piecewise_perturb], ids=["duchi", "pm"])
def test_correct_ldp_mean_mechanisms_no_false_alarm(perturb):
    rng = np.random.default_rng(104)
    sampler = lambda t, rng, size: perturb(np.full(size, t), 1.0, rng)
    r = epsilon_lower_bound(None, -1.0, 1.0, rng, sampler=sampler, confidence=STRICT, claimed_epsilon=1.0)
    assert not r.violates() and r.epsilon > 0.9


def test_bound_is_valid_at_stated_confidence():
    # Meta-test of validity: 300 small audits of RR (true ε = 1 exactly) at
    # confidence 0.8. Each bound exceeds 1 with probability <= 0.2, so the
    # number of exceedances is stochastically below Binomial(300, 0.2); the
    # test fails only if it is above that law's 1 - 1e-6 quantile.
    rng = np.random.default_rng(105)
    sampler = lambda bit, rng, size: rr_perturb(np.full(size, bit), 1.0, rng)
    over = sum(epsilon_lower_bound(None, 0, 1, rng, sampler=sampler, n_select=200, n_final=400,
                                   confidence=0.8).epsilon > 1.0 for _ in range(300))
    assert over <= stats.binom.ppf(1 - 1e-6, 300, 0.2)


# --------------------------------------------------------------------------- detection

def test_detects_laplace_with_half_the_scale():
    # True ε = 2 against a claim of 1. Measured over 20 seeds: bounds
    # 1.928-1.976 at confidence 1 - 1e-6 (n_final = 200,000): detected 20/20.
    rng = np.random.default_rng(201)
    r = epsilon_lower_bound(None, 0.0, 1.0, rng, sampler=laplace_sampler(0.5), confidence=STRICT,
                            claimed_epsilon=1.0)
    assert r.violates() and r.epsilon > 1.5
    assert r.k1 > r.k2


def test_detects_exponential_without_factor_two():
    # True ε 1.886 against a claim of 1; measured bounds 1.755-1.808 over 20 seeds, 20/20 detected.
    rng = np.random.default_rng(202)
    assert true_exponential_epsilon(2.0) == pytest.approx(1.886, abs=1e-3)
    r = epsilon_lower_bound(None, SCORES_D, SCORES_D2, rng, sampler=exponential_sampler(1.0, factor_two=False),
                            confidence=STRICT, claimed_epsilon=1.0)
    assert r.violates() and r.epsilon > 1.5
    assert r.event.values == (0,)


def test_seed_004_dct_violates_its_claim():
    # Algorithm 3's support [t-d, t+d] moves with t: for t = -1 vs 1 an output
    # below 0 is impossible under t = 1. With n_final = 200,000 the bound is
    # ln(p1_low / p2_high) with k2 = 0, about 9.5 for a claimed ε = 1. Both flip rules.
    rng = np.random.default_rng(203)
    for flip in ("algorithm3", "eq6_typo"):
        sampler = lambda t, rng, size: ldp.dct_perturb(np.full(size, t), 1.0, rng, flip=flip)
        r = epsilon_lower_bound(None, -1.0, 1.0, rng, sampler=sampler, confidence=STRICT, claimed_epsilon=1.0)
        assert r.violates() and r.epsilon > 9 and r.k2 == 0 and r.k1 == r.n


def test_vector_outputs_detect_broken_two_dim_laplace():
    # 2-D counts with L1 sensitivity 2 need scale 2/ε; the broken one uses 1/ε
    # (true ε = 2 on this pair). Measured over 20 seeds: bounds 1.43-1.54
    # (found through one coordinate or the sum), 20/20 detected; the correct
    # scale gave 0.67-0.73.
    rng = np.random.default_rng(204)
    def broken(d, rng, size):
        return np.asarray(d) + laplace_noise(1.0, (size, 2), rng)
    r = epsilon_lower_bound(None, np.array([0.0, 0.0]), np.array([1.0, 1.0]), rng, sampler=broken,
                            confidence=STRICT, claimed_epsilon=1.0, n_candidates=3)
    assert r.violates() and r.event.statistic in (0, 1, "sum")
    assert len(r.candidates) == 3


def test_per_call_mechanism_path_matches_sampler_path():
    # the required API: mechanism(data, rng) returning one output (slow path, small n)
    rng = np.random.default_rng(205)
    mech = lambda d, rng: laplace_mechanism(d, 1.0, 2.0, rng)   # scale 0.5: ε = 2 really
    r = epsilon_lower_bound(mech, 0.0, 1.0, rng, n_select=2000, n_final=20_000, confidence=0.99,
                            claimed_epsilon=1.0)
    assert r.n == 20_000 and r.violates()


def test_explicit_events():
    rng = np.random.default_rng(206)
    events = [Event("interval", hi=0.0), Event("interval", lo=1.0)]
    r = epsilon_lower_bound(None, 0.0, 1.0, rng, sampler=laplace_sampler(0.5), events=events,
                            n_select=5000, n_final=50_000, confidence=0.99, claimed_epsilon=1.0)
    assert r.event in events and r.violates()


# --------------------------------------------------------------------------- validation

@pytest.mark.parametrize("kwargs,name", [
    ({"n_select": 10}, "n_select"),
    ({"n_final": 0}, "n_final"),
    ({"confidence": 1.0}, "confidence"),
    ({"confidence": float("nan")}, "confidence"),
    ({"events": "thresholds"}, "events"),
    ({"events": [1, 2]}, "events"),
    ({"events": "discrete"}, "events"),          # continuous outputs: too many values for set events
    ({"claimed_epsilon": -1.0}, "claimed_epsilon"),
    ({"n_candidates": 0}, "n_candidates"),
    ({"sampler": 3}, "sampler"),
])
def test_invalid_parameters(kwargs, name):
    args = dict(sampler=laplace_sampler(1.0))
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        epsilon_lower_bound(None, 0.0, 1.0, np.random.default_rng(0), **args)


def test_invalid_mechanism_and_rng():
    with pytest.raises(ValueError, match="mechanism"):
        epsilon_lower_bound(None, 0.0, 1.0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="rng"):
        epsilon_lower_bound(lambda d, r: d, 0.0, 1.0, 0)
    with pytest.raises(ValueError, match="sampler"):
        epsilon_lower_bound(None, 0.0, 1.0, np.random.default_rng(0), sampler=lambda d, r, s: np.zeros(3))
    with pytest.raises(ValueError, match="alpha"):
        clopper_pearson(3, 10, 0.0)
    with pytest.raises(ValueError, match="'k'"):
        clopper_pearson(11, 10, 0.05)


def test_interval_events_on_discrete_outputs():
    # forcing interval events on RR still gives a valid bound (threshold y <= 0 is the best event)
    rng = np.random.default_rng(207)
    sampler = lambda bit, rng, size: rr_perturb(np.full(size, bit), 1.0, rng)
    r = epsilon_lower_bound(None, 0, 1, rng, sampler=sampler, events="interval", confidence=STRICT,
                            claimed_epsilon=1.0)
    assert r.event.kind == "interval" and not r.violates() and r.epsilon > 0.9
