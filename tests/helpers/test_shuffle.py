"""Tests of helpers.shuffle (textbook §6.5.2, Feldman–McMillan–Talwar 2021)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from helpers import ldp
from helpers.shuffle import fmt_amplified_epsilon, fmt_is_valid, fmt_validity_limit, shuffle_reports


def test_shuffle_is_a_permutation_and_keeps_rows():
    rng = np.random.default_rng(0)
    reports = np.arange(30).reshape(10, 3)
    out = shuffle_reports(reports, rng)
    assert out.shape == reports.shape
    assert sorted(map(tuple, out)) == sorted(map(tuple, reports))   # rows intact
    assert not np.shares_memory(out, reports)
    one_d = np.arange(100)
    assert np.array_equal(np.sort(shuffle_reports(one_d, rng)), one_d)


def test_shuffle_uses_rng_reproducibly():
    a = shuffle_reports(np.arange(50), np.random.default_rng(7))
    b = shuffle_reports(np.arange(50), np.random.default_rng(7))
    c = shuffle_reports(np.arange(50), np.random.default_rng(8))
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_shuffle_is_uniform_over_permutations():
    # chi-square over the 120 permutations of 5 items, 60,000 shuffles;
    # false failure 1e-7. Power: the classic "swap with any position" bug
    # (non-uniform) is rejected with p < 1e-10 already at 12,000 shuffles
    # (measured p-values 1e-87 to 1e-95 over 3 seeds).
    rng = np.random.default_rng(3)
    perms = {p: i for i, p in enumerate(itertools.permutations(range(5)))}
    counts = np.zeros(120)
    for _ in range(60_000):
        counts[perms[tuple(shuffle_reports(np.arange(5), rng))]] += 1
    assert stats.chisquare(counts).pvalue > 1e-7

    def naive_shuffle(x, rng):
        x = x.copy()
        for i in range(len(x)):
            j = rng.integers(0, len(x))
            x[i], x[j] = x[j], x[i]
        return x

    bad = np.zeros(120)
    for _ in range(12_000):
        bad[perms[tuple(naive_shuffle(np.arange(5), rng))]] += 1
    assert stats.chisquare(bad).pvalue < 1e-10


def test_shuffling_does_not_change_count_estimates():
    rng = np.random.default_rng(1)
    reports = ldp.grr_perturb(rng.integers(0, 4, 5000), 4, 1.0, rng)
    assert np.allclose(ldp.grr_estimate(reports, 4, 1.0), ldp.grr_estimate(shuffle_reports(reports, rng), 4, 1.0))


def test_fmt_reference_value():
    # dp-testing.md: n = 1e5, ε0 = 4, δ = 1e-6 -> about 0.535 (authors' numerical code: 0.538)
    value = fmt_amplified_epsilon(4.0, 100_000, 1e-6)
    assert value == pytest.approx(0.5346, abs=5e-4)
    e0 = math.exp(4.0)
    by_hand = math.log(1 + (e0 - 1) / (e0 + 1) * (8 * math.sqrt(e0 * math.log(4e6)) / math.sqrt(1e5) + 8 * e0 / 1e5))
    assert value == pytest.approx(by_hand, rel=1e-12)


def test_fmt_validity_range():
    limit = fmt_validity_limit(100_000, 1e-6)
    assert limit == pytest.approx(math.log(100_000 / (16 * math.log(2e6))))
    assert fmt_is_valid(limit - 1e-9, 100_000, 1e-6) and not fmt_is_valid(limit + 1e-9, 100_000, 1e-6)
    # outside: no amplification claimed (ε0 returned), or an error in strict mode
    assert fmt_amplified_epsilon(7.0, 100_000, 1e-6) == 7.0
    with pytest.raises(ValueError, match="eps0"):
        fmt_amplified_epsilon(7.0, 100_000, 1e-6, strict=True)
    # tiny n: no ε0 > 0 qualifies
    assert fmt_validity_limit(100, 1e-6) < 0
    assert fmt_amplified_epsilon(0.5, 100, 1e-6) == 0.5


def test_fmt_monotone_and_never_above_eps0():
    ns = [10_000, 100_000, 1_000_000, 10_000_000]
    vals = [fmt_amplified_epsilon(2.0, n, 1e-6) for n in ns]
    assert all(a > b for a, b in zip(vals, vals[1:]))           # more users, more amplification
    eps0s = [0.5, 1.0, 2.0, 4.0]
    vals = [fmt_amplified_epsilon(e, 1_000_000, 1e-6) for e in eps0s]
    assert all(a < b for a, b in zip(vals, vals[1:]))
    for e in eps0s:
        for n in ns:
            assert 0 < fmt_amplified_epsilon(e, n, 1e-6) <= e
    # smaller δ costs more ε
    assert fmt_amplified_epsilon(2.0, 10 ** 6, 1e-9) > fmt_amplified_epsilon(2.0, 10 ** 6, 1e-6)


@pytest.mark.parametrize("args,name", [
    ((0.0, 1000, 1e-6), "eps0"),
    ((float("nan"), 1000, 1e-6), "eps0"),
    ((1.0, 0, 1e-6), "'n'"),
    ((1.0, 1000.5, 1e-6), "'n'"),
    ((1.0, 1000, 0.0), "delta"),
    ((1.0, 1000, 1.0), "delta"),
])
def test_fmt_invalid_parameters(args, name):
    with pytest.raises(ValueError, match=name):
        fmt_amplified_epsilon(*args)


def test_shuffle_invalid_parameters():
    with pytest.raises(ValueError, match="rng"):
        shuffle_reports([1, 2, 3], 42)
    with pytest.raises(ValueError, match="reports"):
        shuffle_reports(5, np.random.default_rng(0))


def test_fmt_bound_needs_fixed_n_under_add_remove_the_count_reveals_n():
    """Issue 18 review item 1: the FMT bound is for replace-one neighbours (n fixed). Under add/remove the
    shuffled multiset of n reports reveals n: the course's auditor proves ε far above the FMT value
    (confidence 1 - 1e-6) on D (1,000 users) vs D' (one more), while replacing one user leaves the number of
    reports, the statistic the collector counts, identical."""
    from helpers.audit import epsilon_lower_bound
    from helpers.mechanisms import rr_perturb

    users = np.random.default_rng(1).integers(0, 2, size=1_000)
    fmt = fmt_amplified_epsilon(1.0, users.size, 1e-6)
    assert fmt_is_valid(1.0, users.size, 1e-6) and fmt < 1.0

    def shuffled_count(data, rng):
        return len(shuffle_reports(rr_perturb(data, 1.0, rng), rng))

    add = epsilon_lower_bound(shuffled_count, users, np.append(users, 1), np.random.default_rng(2),
                              n_select=200, n_final=2_000, confidence=1 - 1e-6, claimed_epsilon=fmt)
    assert add.violates() and add.epsilon > 4 * fmt, add
    replaced = users.copy()
    replaced[0] = 1 - replaced[0]
    rng = np.random.default_rng(3)
    assert {shuffled_count(users, rng) for _ in range(20)} == {shuffled_count(replaced, rng) for _ in range(20)}
