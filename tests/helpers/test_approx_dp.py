"""helpers.approx_dp, helpers.lectures.approx_widgets and helpers.lectures.selfcheck: the numbers lab-approximate-dp
states, the (0, δ)-DP property of "name and shame", and the self-check cells."""

from __future__ import annotations

import math

import numpy as np
import pytest

from helpers import InvalidParameterError, approx_dp
from helpers.i18n import set_lang


@pytest.fixture(autouse=True)
def _agg(monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")
    import matplotlib

    matplotlib.use("Agg")


def test_posterior_bound_table_of_the_lab():
    assert approx_dp.posterior_bound(0.5, 0.1) == pytest.approx(0.525, abs=5e-4)
    assert approx_dp.posterior_bound(0.5, 1.0) == pytest.approx(0.731, abs=5e-4)
    assert approx_dp.posterior_bound(0.01, 5.0) == pytest.approx(0.600, abs=5e-4)
    assert approx_dp.posterior_bound(0.1, 1.0) == pytest.approx(0.232, abs=5e-4)
    # odds multiply by exactly e^ε
    p = np.linspace(0.01, 0.99, 50)
    post = approx_dp.posterior_bound(p, 0.7)
    assert np.allclose(post / (1 - post), p / (1 - p) * math.exp(0.7))
    assert approx_dp.posterior_bound(0.3, 0.0) == pytest.approx(0.3)


def test_name_and_shame_is_zero_delta_dp_and_exposes_n_delta():
    """Under add/remove, M(D ∪ {x}) = M(D) plus x w.p. δ: for the event S = "x is published" the
    gap is exactly δ, and no event has a larger gap (coupling) — so (0, δ) and no smaller δ."""
    delta, n = 1e-3, 1000
    runs = approx_dp.name_and_shame(10, delta, np.random.default_rng(0), size=200_000)
    p_x_published = runs[:, -1].mean()  # record x is the last one; on D (without x) this probability is 0
    # binomial sd √(δ/200000) ≈ 7e-5: 6 sd gives false failure < 1e-8
    assert abs(p_x_published - delta) < 6 * math.sqrt(delta / 200_000)
    assert approx_dp.exposure_probability(n, 1 / n) == pytest.approx(1 - (1 - 1 / n) ** n)
    assert round(approx_dp.exposure_probability(1000, 1e-3), 4) == 0.6323  # "about 63 %"
    assert round(approx_dp.exposure_probability(1000, 1e-4), 4) == 0.0952
    assert approx_dp.name_and_shame(5, 0.0, np.random.default_rng(0)).sum() == 0
    assert approx_dp.name_and_shame(5, 1.0, np.random.default_rng(0)).all()


def test_random_record_variant_is_zero_delta_over_n_plus_one():
    """Stated in the lab: 'publish one random record w.p. δ' has gap (total variation) δ/(n+1)
    between neighbours of n and n+1 records, and δ in the worst case (the empty dataset against
    one record), so it is (0, δ)-DP and no better."""
    delta = 0.3
    for n in (0, 1, 6):
        p_d = np.r_[np.full(n, delta / n) if n else [], 0.0, 1 - delta if n else 1.0]   # records 1..n, x, ⊥
        p_d2 = np.r_[np.full(n, delta / (n + 1)), delta / (n + 1), 1 - delta]
        assert 0.5 * np.abs(p_d - p_d2).sum() == pytest.approx(delta / (n + 1))


def test_per_coordinate_sd_and_crossover():
    from helpers.gaussian import analytic_gaussian_sigma

    sd = approx_dp.per_coordinate_sd(np.array([1, 10, 100, 1000]), 1.0, 1e-6)
    assert np.allclose(sd["laplace"], math.sqrt(2) * np.array([1, 10, 100, 1000]))
    assert np.allclose(sd["gaussian"], [analytic_gaussian_sigma(math.sqrt(d), 1.0, 1e-6) for d in (1, 10, 100, 1000)], rtol=1e-9)
    crossovers = {eps: (approx_dp.per_coordinate_sd([1], eps, 1e-6)["gaussian"][0] * eps) ** 2 / 2 for eps in (0.5, 1.0, 2.0)}
    assert [round(crossovers[e], 1) for e in (0.5, 1.0, 2.0)] == [8.1, 8.9, 10.0]
    classic = approx_dp.per_coordinate_sd([4], 0.5, 1e-5, method="classic")["gaussian"][0]
    assert classic == pytest.approx(2 * math.sqrt(2 * math.log(1.25e5)) / 0.5)
    # the clipped-vector remark: a random unit direction in d = 100 has E‖x‖1 ≈ √(2/π)·√d ≈ 8
    assert math.sqrt(2 / math.pi) * 10 == pytest.approx(7.98, abs=0.005)


def test_lab_gaussian_table():
    from helpers.gaussian import analytic_gaussian_sigma, classic_gaussian_sigma

    assert round(analytic_gaussian_sigma(1, 0.5, 1e-5), 3) == 7.032
    assert round(classic_gaussian_sigma(1, 0.5, 1e-5), 3) == 9.690
    assert round(analytic_gaussian_sigma(1, 1.0, 1e-5), 3) == 3.731


def test_widgets_update_and_report():
    from helpers.lectures.approx_widgets import composition_widget, dimension_widget, posterior_widget

    live = posterior_widget(epsilon=1.0, prior=0.1)
    assert live.last["posterior_max"] == pytest.approx(0.2320, abs=1e-4)
    live.sliders["prior"].value = 0.5
    assert live.last["posterior_max"] == pytest.approx(math.e / (math.e + 1))
    assert live.artists["segment"].get_ydata()[1] == pytest.approx(math.e / (math.e + 1))
    live = dimension_widget(epsilon=1.0, delta=1e-6, d=10)
    assert live.last["crossover"] == pytest.approx(8.92, abs=0.01) and live.last["gaussian"] < live.last["laplace"]
    live.sliders["d"].value = 1
    assert live.last["gaussian"] > live.last["laplace"]
    live.sliders["epsilon"].value = 2.0
    assert np.all(np.isnan(live.artists["classic"].get_ydata()))  # classic σ only for ε < 1
    live = composition_widget(eps0=0.1, delta0=1e-8, delta_prime=1e-5, k=100)
    assert live.last["basic"] == pytest.approx(10.0) and live.last["advanced"] == pytest.approx(5.8502, abs=1e-4)
    assert live.last["exact"] < live.last["rdp"] < live.last["advanced"] < live.last["basic"]
    live.sliders["k"].value = 1
    assert live.last["advanced"] > live.last["basic"]  # advanced composition is worse for small k
    with pytest.raises(InvalidParameterError, match="parameter 'prior'"):
        posterior_widget(prior=1.0)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_self_checks_accept_right_and_reject_wrong_answers(lang, capsys):
    from helpers.budget import gaussian_rdp_epsilon
    from helpers.lectures.selfcheck import QUESTIONS, SelfCheckFailed, check_answer, expected_answer

    set_lang(lang)
    try:
        numeric = {key: expected_answer(key) for key, q in QUESTIONS.items() if not q[4]}
        assert numeric == pytest.approx({"6.3-guarantee": 193.046, "6.3-gumbel-scale": 4.0, "6.5b-total-sd": 5.657,
                                         "6.5b-selection-epsilon": 0.1333, "lab-posterior": 0.0695, "lab-exposed": 10.0},
                                        abs=5e-4)
        for key, value in numeric.items():
            assert check_answer(key, None) is None
            assert ("还没作答" if lang == "zh" else "Not answered") in capsys.readouterr().out
            assert check_answer(key, round(value, 4)) is None     # no stray True under "正确！"
            assert ("正确！" if lang == "zh" else "Correct!") in capsys.readouterr().out
            with pytest.raises(SelfCheckFailed, match="提示" if lang == "zh" else "Hint") as failed:
                check_answer(key, value * 1.5 + 1)
            # IPython shows _render_traceback_() instead of a traceback: one message, no checker source
            shown = "\n".join(failed.value._render_traceback_())
            assert f"{value * 1.5 + 1:g}" in shown and ("期望" if lang == "zh" else "expected") in shown
            assert "File " not in shown and "selfcheck.py" not in shown
            with pytest.raises(AssertionError):
                check_answer(key, "abc")
        assert check_answer("lab-rdp-function", lambda s, k, d: gaussian_rdp_epsilon(s, 1.0, k, d)) is None
        wrong = lambda s, k, d: k / (2 * s * s) + math.log(1 / d)  # α = 2 instead of the optimum
        with pytest.raises(AssertionError, match="提示" if lang == "zh" else "Hint"):
            check_answer("lab-rdp-function", wrong)
        with pytest.raises(AssertionError):
            check_answer("lab-rdp-function", 3.0)
        with pytest.raises(AssertionError):
            check_answer("lab-rdp-function", lambda s, k, d: 1 / 0)
    finally:
        set_lang("zh")


#: (phrase in course/README.md, notebooks whose Chinese text carries the erratum, phrase there)
NEW_ERRATA = [
    ("形状\"一致(即列数和行数相同)", ["6.5b-synthetic-data"], "形状一致（即列数和行数相同）"),
    ("完全一致的查询结果", ["6.5b-synthetic-data"], "完全一致的查询"),
    ("猜测出攻击者到底投了哪一个项目", ["6.3-exponential"], "猜测出攻击者到底投了哪一个项目"),
    ("the expectation (first moment) of ε", ["lab-approximate-dp"], "期望（一阶矩）"),
]


def test_errata_of_the_new_notebooks_are_listed_and_terminology():
    """course/README.md lists the errata that 6.3, 6.5b and lab-approximate-dp state, and their
    Chinese text uses the course's terms (灵敏度, 本地化差分隐私; no calques)."""
    import re

    from pathlib import Path

    import nbformat

    course = Path(__file__).resolve().parents[2] / "course"
    readme = (course / "README.md").read_text(encoding="utf-8")
    for readme_phrase, stems, notebook_phrase in NEW_ERRATA:
        assert readme_phrase in readme, readme_phrase
        for stem in stems:
            zh = "\n".join(c.source for c in nbformat.read(course / f"{stem}.ipynb", as_version=4).cells)
            assert notebook_phrase in zh and "勘误" in zh, (stem, notebook_phrase)
    for stem in ("6.3-exponential", "6.5b-synthetic-data", "lab-approximate-dp"):
        zh = "\n".join(c.source for c in nbformat.read(course / f"{stem}.ipynb", as_version=4).cells)
        own_words = re.sub(r'"[^"\n]*"|“[^”\n]*”', "", zh)  # quotations of the chapter keep their words
        for bad in ("敏感度", "本地差分隐私", "ε 每次", "隐私上限之外", "直说", "放之四海"):
            assert bad not in own_words, (stem, bad)
