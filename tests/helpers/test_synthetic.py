"""Tests of helpers.synthetic (textbook §6.5.3, Tables 6-5 / 6-6)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from helpers import InvalidParameterError
from helpers.synthetic import (DEMO_COLUMNS, DEMO_LEVELS, DEMO_DOMAINS, TABLE_6_5_AGES, TABLE_6_5_DOMAIN, all_marginals, demo_dataset,
                               fit_marginal_model, marginal, noisy_column_histogram, sample_model, synthesize,
                               synthesize_column, workload_error)


# --------------------------------------------------------------------------- one column (Tables 6-5 / 6-6)

def test_table_6_5_histogram_steps():
    steps = noisy_column_histogram(TABLE_6_5_AGES, TABLE_6_5_DOMAIN, 1.0, np.random.default_rng(0))
    assert steps["counts"].tolist() == [2, 2, 0, 2]
    assert np.array_equal(steps["clipped"], np.maximum(steps["noisy"], 0))
    assert steps["probabilities"].sum() == pytest.approx(1.0) and np.all(steps["probabilities"] >= 0)
    if not steps["fallback_uniform"]:
        assert np.allclose(steps["probabilities"], steps["clipped"] / steps["clipped"].sum())


def test_histogram_noise_is_laplace_one_over_epsilon():
    # KS test of the pooled noise (4 x 5,000 draws) against Lap(1/ε), p > 1e-6
    rng = np.random.default_rng(1)
    eps = 0.7
    noise = np.concatenate([noisy_column_histogram(TABLE_6_5_AGES, TABLE_6_5_DOMAIN, eps, rng)["noisy"] - [2, 2, 0, 2]
                            for _ in range(5000)])
    assert stats.kstest(noise, stats.laplace(scale=1 / eps).cdf).pvalue > 1e-6


def test_all_zero_after_clipping_falls_back_to_uniform():
    # find (deterministically) a seed where every noisy count is negative
    for seed in range(200):
        steps = noisy_column_histogram([12], TABLE_6_5_DOMAIN, 0.05, np.random.default_rng(seed))
        if steps["fallback_uniform"]:
            break
    else:  # pragma: no cover - P(no such seed in 200) is about (1 - 0.06)^200 = 4e-6
        pytest.fail("no all-negative draw found")
    assert np.all(steps["clipped"] == 0)
    assert np.allclose(steps["probabilities"], 0.25)
    synth = synthesize_column([12], TABLE_6_5_DOMAIN, 0.05, np.random.default_rng(seed), n=50)
    assert set(synth) <= set(TABLE_6_5_DOMAIN)


def test_synthesize_column_follows_the_steps_exactly():
    # same seed: the synthetic column is rng.choice(domain, p=probabilities) after the histogram steps
    steps_rng = np.random.default_rng(5)
    steps = noisy_column_histogram(TABLE_6_5_AGES, TABLE_6_5_DOMAIN, 1.0, steps_rng)
    # the size is the noisy total (post-processing), not the exact n = 6
    expected = steps_rng.choice(TABLE_6_5_DOMAIN, size=steps["noisy_total"], p=steps["probabilities"])
    out = synthesize_column(TABLE_6_5_AGES, TABLE_6_5_DOMAIN, 1.0, np.random.default_rng(5))
    assert np.array_equal(out, expected) and out.shape == (steps["noisy_total"],)
    assert steps["noisy_total"] == max(0, round(steps["noisy"].sum())) == 7 != len(TABLE_6_5_AGES)
    assert synthesize_column(TABLE_6_5_AGES, TABLE_6_5_DOMAIN, 1.0, np.random.default_rng(5), n=100).shape == (100,)


def test_synthesize_column_distribution():
    # large sample from one release: chi-square against that release's probabilities (p > 1e-6)
    rng = np.random.default_rng(6)
    values = np.repeat([12, 13, 14, 15], [300, 500, 100, 100])
    steps_rng = np.random.default_rng(7)
    probs = noisy_column_histogram(values, TABLE_6_5_DOMAIN, 2.0, steps_rng)["probabilities"]
    out = synthesize_column(values, TABLE_6_5_DOMAIN, 2.0, np.random.default_rng(7), n=40_000)
    counts = np.array([(out == v).sum() for v in TABLE_6_5_DOMAIN])
    assert stats.chisquare(counts, 40_000 * probs).pvalue > 1e-6


# --------------------------------------------------------------------------- demo data and marginals

def test_demo_dataset_shape_domains_and_correlation():
    data = demo_dataset(5000, np.random.default_rng(0))
    assert data.shape == (5000, 4) and data.dtype == np.int64
    assert np.all(data.max(axis=0) < DEMO_DOMAINS) and np.all(data.min(axis=0) >= 0)
    assert np.array_equal(data, demo_dataset(5000, np.random.default_rng(0)))
    # education and income are dependent: over 20 seeds the chi-square p-value was 0.0 every time
    assert stats.chi2_contingency(marginal(data, DEMO_DOMAINS, (1, 2))).pvalue < 1e-10


def test_marginal_counts_and_axis_order():
    data = np.array([[0, 1, 2], [0, 1, 0], [1, 0, 2]])
    doms = (2, 2, 3)
    m = marginal(data, doms, (0, 2))
    assert m.shape == (2, 3) and m[0, 2] == 1 and m[0, 0] == 1 and m[1, 2] == 1 and m.sum() == 3
    assert np.array_equal(marginal(data, doms, (2, 0)), m.T)
    assert all_marginals(4, 2) == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    assert len(all_marginals(4, 3)) == 4


def test_workload_error_extremes():
    a = np.array([[0, 0], [1, 1]])
    b = np.array([[0, 1], [1, 0]])
    q = [(0, 1)]
    assert workload_error(a, a, q, (2, 2)) == 0.0
    assert workload_error(a, b, q, (2, 2)) == pytest.approx(2.0)     # disjoint supports
    assert workload_error(a, b, [(0,)], (2, 2)) == 0.0               # same 1-way marginal
    assert workload_error(a, np.vstack([a, a]), q, (2, 2)) == 0.0    # size does not matter


# --------------------------------------------------------------------------- select-measure-estimate

def test_budget_accounting_sequential_composition():
    data = demo_dataset(2000, np.random.default_rng(1))
    model = fit_marginal_model(data, DEMO_DOMAINS, 1.0, np.random.default_rng(2), rounds=4)
    acc = model.accountant
    assert model.epsilon_spent == pytest.approx(1.0) and acc.remaining == pytest.approx(0.0, abs=1e-12)
    assert len(acc.history) == 4 + 2 * 4                       # 1-way marginals + (select, measure) per round
    assert math.fsum(r.epsilon for r in acc.history[:4]) == pytest.approx(0.2)
    assert all(r.epsilon == pytest.approx(0.1) for r in acc.history[4:])
    assert len(model.selected) == 4 and len(model.measurements) == 8
    assert model.joint.shape == DEMO_DOMAINS and model.joint.sum() == pytest.approx(1.0) and np.all(model.joint >= 0)


def test_gaussian_measurement_accounting():
    data = demo_dataset(2000, np.random.default_rng(1))
    model = fit_marginal_model(data, DEMO_DOMAINS, 1.0, np.random.default_rng(2), rounds=3,
                               mechanism="gaussian", delta=1e-6)
    assert model.epsilon_spent == pytest.approx(1.0) and model.delta_spent == pytest.approx(1e-6)
    assert [m["mechanism"] for m in model.measurements].count("gaussian") == 3


def test_selection_picks_the_worst_marginal_at_high_epsilon():
    # same seed => identical initialization; with ε = 1e4 the exponential
    # mechanism picks the argmax score with probability 1 - O(e^{-1000})
    data = demo_dataset(3000, np.random.default_rng(3))
    m0 = fit_marginal_model(data, DEMO_DOMAINS, 1e4, np.random.default_rng(4), rounds=0)
    m1 = fit_marginal_model(data, DEMO_DOMAINS, 1e4, np.random.default_rng(4), rounds=1)
    work = all_marginals(4, 2)
    scores = [np.abs(marginal(data, DEMO_DOMAINS, q) - m0.n_hat * m0.marginal(q)).sum() for q in work]
    assert m1.selected == [work[int(np.argmax(scores))]]


def test_high_epsilon_recovers_measured_marginals():
    # ε = 1e4: noise is negligible, IPF on all six 2-way marginals matches them
    data = demo_dataset(3000, np.random.default_rng(5))
    model = fit_marginal_model(data, DEMO_DOMAINS, 1e4, np.random.default_rng(6), rounds=6, ipf_iters=200)
    for q in set(model.selected):
        assert np.abs(model.marginal(q) - marginal(data, DEMO_DOMAINS, q) / 3000).sum() < 0.01


def test_model_beats_independence_baseline():
    # ε = 1, n = 5,000. Measured over 20 seeds: 2-way error 0.041 on average
    # (max 0.070) vs 0.211 (min 0.199) for the independent (1-way only)
    # model; held-out 3-way error 0.075 (max 0.099) vs 0.434 (min 0.417).
    # The seed is fixed, so the test is deterministic; the margins are wide.
    rng = np.random.default_rng(7)
    data = demo_dataset(5000, rng)
    synth = synthesize(data, DEMO_DOMAINS, 1.0, rng)
    indep = synthesize(data, DEMO_DOMAINS, 1.0, rng, rounds=0)
    two, three = all_marginals(4, 2), all_marginals(4, 3)
    assert workload_error(data, synth, two, DEMO_DOMAINS) < 0.12 < workload_error(data, indep, two, DEMO_DOMAINS)
    assert workload_error(data, synth, three, DEMO_DOMAINS) < 0.2 < workload_error(data, indep, three, DEMO_DOMAINS)
    assert abs(len(synth) - 5000) < 200        # n is the noisy n_hat


def test_sample_model_matches_joint():
    # chi-square of 60,000 samples against the joint (cells with expectation >= 5), p > 1e-6
    data = demo_dataset(2000, np.random.default_rng(8))
    model = fit_marginal_model(data, DEMO_DOMAINS, 2.0, np.random.default_rng(9))
    samples = sample_model(model, 60_000, np.random.default_rng(10))
    assert samples.shape == (60_000, 4)
    counts = marginal(samples, DEMO_DOMAINS, (0, 1, 2, 3)).ravel()
    expected = 60_000 * model.joint.ravel()
    keep = expected >= 5
    obs, exp = counts[keep], expected[keep]
    exp = exp * obs.sum() / exp.sum()
    assert stats.chisquare(obs, exp).pvalue > 1e-6
    assert sample_model(model, 0, np.random.default_rng(0)).shape == (0, 4)


# --------------------------------------------------------------------------- validation

RNG = np.random.default_rng(0)
DATA = demo_dataset(100, np.random.default_rng(0))


@pytest.mark.parametrize("func,args,kwargs,name", [
    (noisy_column_histogram, ([12, 16], TABLE_6_5_DOMAIN, 1.0, RNG), {}, "values"),
    (noisy_column_histogram, ([12], [12, 12], 1.0, RNG), {}, "domain"),
    (noisy_column_histogram, ([12], TABLE_6_5_DOMAIN, 0.0, RNG), {}, "epsilon"),
    (synthesize_column, ([12], TABLE_6_5_DOMAIN, 1.0, RNG), {"n": -1}, "'n'"),
    (synthesize_column, ([12], TABLE_6_5_DOMAIN, 1.0, None), {}, "rng"),
    (demo_dataset, (0, RNG), {}, "'n'"),
    (marginal, (DATA, DEMO_DOMAINS, (0, 0)), {}, "attrs"),
    (marginal, (DATA, DEMO_DOMAINS, (4,)), {}, "attrs"),
    (marginal, (DATA + 5, DEMO_DOMAINS, (0,)), {}, "data"),
    (marginal, (DATA.astype(float), DEMO_DOMAINS, (0,)), {}, "data"),
    (all_marginals, (3, 4), {}, "way"),
    (workload_error, (DATA, DATA, [], DEMO_DOMAINS), {}, "queries"),
    (fit_marginal_model, (DATA, DEMO_DOMAINS, -1.0, RNG), {}, "epsilon"),
    (fit_marginal_model, (DATA, DEMO_DOMAINS, 1.0, RNG), {"initial_fraction": 1.0}, "initial_fraction"),
    (fit_marginal_model, (DATA, DEMO_DOMAINS, 1.0, RNG), {"mechanism": "staircase"}, "mechanism"),
    (fit_marginal_model, (DATA, DEMO_DOMAINS, 1.0, RNG), {"rounds": -1}, "rounds"),
    (fit_marginal_model, (DATA, DEMO_DOMAINS, 1.0, RNG), {"mechanism": "gaussian", "delta": 0.0}, "delta"),
    (fit_marginal_model, (DATA, (4, 3, 3), 1.0, RNG), {}, "data"),
    (sample_model, ("model", 10, RNG), {}, "model"),
])
def test_invalid_parameters(func, args, kwargs, name):
    with pytest.raises(ValueError, match=name):
        func(*args, **kwargs)


# ---------------------------------------------------------------------------------------------
# issue 10: the synthetic size is the noisy total; batch vs iterative; names; dependency graphs
# ---------------------------------------------------------------------------------------------


def test_synthetic_column_size_is_the_noisy_total_not_n():
    sizes = [len(synthesize_column(TABLE_6_5_AGES, TABLE_6_5_DOMAIN, 1.0, np.random.default_rng(s))) for s in range(200)]
    assert len(set(sizes)) > 3 and np.mean(np.array(sizes) == 6) < 0.5
    # sd of the noisy total: √(2·4)/ε = 2.83/ε (6.5b §1, self-check 1). 20,000 draws: the sd
    # estimate has relative standard error ≈ √((κ − 1)/(4N)) ≈ 0.6 % (κ = 3.75 for a sum of 4
    # Laplaces); 5 % is > 8 standard errors (false failure < 1e-15)
    rng = np.random.default_rng(0)
    totals = [noisy_column_histogram(TABLE_6_5_AGES, TABLE_6_5_DOMAIN, 1.0, rng)["noisy"].sum() for _ in range(20_000)]
    assert np.std(totals) == pytest.approx(math.sqrt(8), rel=0.05)
    assert round(math.sqrt(8), 2) == 2.83 and round(math.sqrt(8) / 10, 2) == 0.28  # "about 0.28" at ε = 10
    assert round(math.sqrt(2) / 0.1) == 14  # per-count sd "about 14" at ε = 0.1


def test_synthesize_and_widget_use_the_noisy_head_count():
    from helpers.lectures.lab_widgets import synthetic_utility_widget

    data = demo_dataset(3000, np.random.default_rng(1))
    sizes = {len(synthesize(data, DEMO_DOMAINS, 1.0, np.random.default_rng(s))) for s in range(5)}
    assert 3000 not in sizes and all(abs(s - 3000) < 200 for s in sizes)
    live = synthetic_utility_widget(data, DEMO_DOMAINS, epsilon=1.0)
    assert 3000 not in live.last["sizes"]


@pytest.mark.parametrize("selection", ["iterative", "batch"])
def test_batch_and_iterative_spend_exactly_the_same_budget(selection):
    data = demo_dataset(2000, np.random.default_rng(0))
    model = fit_marginal_model(data, DEMO_DOMAINS, 1.0, np.random.default_rng(1), rounds=3, selection=selection)
    charges = sorted(r.epsilon for r in model.accountant.history)
    assert charges == pytest.approx([0.05] * 4 + [0.8 / 3 / 2] * 6, rel=1e-12)
    assert model.epsilon_spent == pytest.approx(1.0, rel=1e-12) and model.selection == selection
    assert round(0.8 / 3 / 2, 4) == 0.1333  # self-check 2 of 6.5b
    assert len(model.selected) == 3
    if selection == "batch":
        assert len(set(model.selected)) == 3  # without replacement
    with pytest.raises(InvalidParameterError, match="parameter 'selection'"):
        fit_marginal_model(data, DEMO_DOMAINS, 1.0, np.random.default_rng(1), selection="greedy")


def test_iterative_avoids_redundant_marginals_batch_does_not():
    """6.5b §6: on redundant_dataset with T = 4, iterative measures exercise × health and batch
    never does (5 fixed seeds at each ε); the mean errors are smaller for iterative."""
    from helpers.synthetic import REDUNDANT_DOMAINS, redundant_dataset

    hub = redundant_dataset(5000, np.random.default_rng(2024))
    for eps in (0.3, 1.0, 3.0):
        err = {}
        for mode in ("batch", "iterative"):
            rows = []
            for seed in range(5):
                rng = np.random.default_rng(100 + seed)
                m = fit_marginal_model(hub, REDUNDANT_DOMAINS, eps, rng, rounds=4, selection=mode)
                assert ((4, 5) in m.selected) == (mode == "iterative")
                fake = sample_model(m, int(round(m.n_hat)), rng)
                rows.append([workload_error(hub, fake, all_marginals(6, 2), REDUNDANT_DOMAINS),
                             workload_error(hub, fake, [(4, 5)], REDUNDANT_DOMAINS)])
            err[mode] = np.mean(rows, axis=0)
        assert err["iterative"][0] < 0.8 * err["batch"][0]
        assert err["iterative"][1] < 0.2 < 0.7 < err["batch"][1]


def test_independence_distance_of_exercise_and_health_is_0_8():
    """P(equal) = 0.6 + 0.4/3 ≈ 0.733; the L1 distance to the independent table is exactly 0.8."""
    joint = np.full((3, 3), (1 - (0.6 + 0.4 / 3)) / 6)
    np.fill_diagonal(joint, (0.6 + 0.4 / 3) / 3)
    assert joint.sum() == pytest.approx(1) and round(0.6 + 0.4 / 3, 3) == 0.733
    assert np.abs(joint - 1 / 9).sum() == pytest.approx(0.8)


def test_demo_names_in_both_languages():
    from helpers.synthetic import DEMO_COLUMNS_ZH, DEMO_LEVELS_ZH, REDUNDANT_COLUMNS, demo_names

    cols, levels = demo_names("zh")
    assert cols == DEMO_COLUMNS_ZH and levels == DEMO_LEVELS_ZH
    assert demo_names("en") == (DEMO_COLUMNS, DEMO_LEVELS)
    assert all(len(DEMO_LEVELS_ZH[c]) == k for c, k in zip(DEMO_COLUMNS, DEMO_DOMAINS))
    assert not any(ch.isascii() and ch.isalpha() for name in DEMO_COLUMNS_ZH + REDUNDANT_COLUMNS["zh"] for ch in name)
    with pytest.raises(InvalidParameterError, match="parameter 'lang'"):
        demo_names("fr")


def test_graph_edges_recover_the_generating_network():
    from helpers import graphical

    assert graphical.mutual_information(np.eye(3) / 3) == pytest.approx(math.log(3))
    assert graphical.mutual_information(np.full((2, 3), 1 / 6)) == pytest.approx(0.0, abs=1e-15)
    data = demo_dataset(5000, np.random.default_rng(2024))
    model = fit_marginal_model(data, DEMO_DOMAINS, 1.0, np.random.default_rng(7))
    edges = graphical.model_edges(model)
    true_pairs = {tuple(sorted(e)) for e in graphical.DEMO_NETWORK}
    assert len(edges) == 6
    assert min(edges[p] for p in true_pairs) > 0.004 > 0.002 > max(w for p, w in edges.items() if p not in true_pairs)
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    ax = Figure().subplots()
    pos = graphical.draw_graph(ax, list(DEMO_COLUMNS), edges, edge_labels=True)
    assert len(pos) == 4 and len(ax.texts) == 4 + 6 + 6  # names, edge labels, edge annotations
