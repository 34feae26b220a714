"""Every number and claim added to the lecture notebooks for issue 10 (neighbouring relations,
δ, composition wording, the dice scheme, RAPPOR significance, the local-model argument, the
LCG lattice, the budget lab), recomputed here independently of the notebooks' code, plus the
self-check cells of every notebook (unanswered, right and wrong answers, both languages) and
the errata list of course/README.md against the notebooks.

Randomized checks use fixed seeds; where a statistical tolerance is stated it is at least
5 standard errors (false-failure probability below 1e-6 per check).
"""

from __future__ import annotations

import json
import itertools
import math
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest
from scipy.stats import norm

from helpers import histograms as hist
from helpers import ldp
from helpers import i18n
from helpers import mechanisms as mech
from helpers.data import load_zoo
from helpers.queries import danger_probability, histogram_counts
from helpers.sampling import lcg_line_family, lcg_uniforms

ROOT = Path(__file__).resolve().parents[2]
COURSE = ROOT / "course"
OWNED = ["6.1-basics", "6.2-laplace", "6.4-randomized-response", "6.5a-rappor-shuffle",
         "lab-budget", "lab-floating-point", "lab-ldp-mean", "lab-sensitivity-histograms"]


# --- §6.1: the two neighbouring relations -----------------------------------------------------

def _neighbours(records: list, domain: list, relation: str) -> list[list]:
    if relation == "add_remove":
        return [records[:i] + records[i + 1:] for i in range(len(records))] + [records + [c] for c in domain]
    return [records[:i] + [c] + records[i + 1:] for i in range(len(records)) for c in domain]


@pytest.mark.parametrize("relation, histogram_delta", [("add_remove", 1), ("replace", 2)])
def test_sensitivities_by_brute_force(relation, histogram_delta):
    """Count 1 / 1, histogram 1 / 2, clipped sum max(|L|,|U|) / U - L: the table of §6.1."""
    rng = np.random.default_rng(1)
    domain = [-2, 0, 3, 5]                    # values in [L, U] = [-2, 5]
    worst = {"count": 0, "hist": 0, "sum": 0}
    for _ in range(30):
        records = list(rng.choice(domain, size=rng.integers(1, 6)))
        h = lambda d: np.array([sum(r == c for r in d) for c in domain])
        for d in _neighbours(records, domain, relation):
            worst["count"] = max(worst["count"], abs(sum(r > 0 for r in records) - sum(r > 0 for r in d)))
            worst["hist"] = max(worst["hist"], int(np.abs(h(records) - h(d)).sum()))
            worst["sum"] = max(worst["sum"], abs(sum(records) - sum(d)))
    assert worst["count"] == hist.global_sensitivity_count(relation) == 1
    assert worst["hist"] == hist.global_sensitivity_histogram(relation) == histogram_delta
    assert worst["sum"] == hist.global_sensitivity_sum(-2, 5, relation) == (5 if relation == "add_remove" else 7)


def test_sensitivity_functions_refuse_an_unknown_relation():
    for func in (hist.global_sensitivity_count, hist.global_sensitivity_histogram):
        with pytest.raises(ValueError, match="'add_remove' or 'replace'"):
            func("swap")


def test_table_6_1_histogram_is_1_dp_under_add_remove_and_only_2_dp_under_replace():
    """6.1.4: Lap(1) per cell. The privacy loss ln p_D(y) - ln p_D'(y) = sum_i |y_i - h'_i| - |y_i - h_i|
    reaches ||h - h'||_1: 2 when Aisha's result changes (she moves between two cells), 1 when
    she is removed."""
    d = np.array([2, 0, 3, 2])                # F/Fail, F/Pass, M/Pass, M/Fail of Table 6-1
    y = np.stack(np.meshgrid(*[np.linspace(-10, 10, 21)] * 4, indexing="ij"), axis=-1).reshape(-1, 4)
    loss = lambda h, h2: np.max(np.abs(y - h2).sum(axis=1) - np.abs(y - h).sum(axis=1))
    assert loss(d, np.array([1, 1, 3, 2])) == pytest.approx(2.0)       # replace: 2-DP only
    assert loss(d, np.array([1, 0, 3, 2])) == pytest.approx(1.0)       # remove: 1-DP


# --- §6.1: δ -------------------------------------------------------------------------------------

def test_publishing_each_record_with_probability_delta_is_0_delta_dp_and_leaks():
    """Exact enumeration for n = 3 distinct records: TV distance between neighbours is δ."""
    delta = 0.01
    def distribution(records):
        out = {}
        for mask in itertools.product((0, 1), repeat=len(records)):
            shown = frozenset(r for r, m in zip(records, mask) if m)
            out[shown] = out.get(shown, 0.0) + math.prod(delta if m else 1 - delta for m in mask)
        return out
    p, q = distribution(["a", "b", "c"]), distribution(["a", "b", "c", "x"])
    support = set(p) | set(q)
    # the worst set S for Pr[M(D) in S] - e^0 Pr[M(D') in S] is where the difference is positive
    assert sum(max(p.get(s, 0) - q.get(s, 0), 0) for s in support) == pytest.approx(delta)
    assert sum(max(q.get(s, 0) - p.get(s, 0), 0) for s in support) == pytest.approx(delta)
    assert 10**4 * 10**-3 == 10                                   # exercise 4
    assert 1 - (1 - 1 / 1000) ** 1000 == pytest.approx(0.6323, abs=1e-4)


def test_advanced_composition_numbers_in_6_1():
    advanced = lambda eps, k, dp: eps * math.sqrt(2 * k * math.log(1 / dp)) + k * eps * math.expm1(eps)
    assert round(advanced(0.1, 10, 1e-6), 2) == 1.77 and 1.77 > 10 * 0.1
    assert round(advanced(0.1, 100, 1e-6), 2) == 6.31 and 6.31 < 100 * 0.1


# --- §6.2: LCG lattice, Table 6-3 -----------------------------------------------------------------

def test_lcg_pairs_lie_on_1021_lines():
    h1, h2 = lcg_line_family()
    assert (h1, h2) == (-509, 513) and (h1 + 2045 * h2) % 2**20 == 0
    u = lcg_uniforms(12345, 2**20 + 1)
    position = h1 * u[:-1] + h2 * u[1:] - h2 / 2**20
    assert np.max(np.abs(position - np.rint(position))) < 1e-9
    assert np.unique(np.rint(position)).size == 1021
    assert 1 / math.hypot(h1, h2) == pytest.approx(0.00138, abs=5e-6)
    # no family with fewer lines: |h1| + |h2| = 1022 is the minimum over all h2 (brute force)
    h2s = np.arange(1, 2**20, dtype=np.int64)
    h1s = (-2045 * h2s) % 2**20
    h1s = np.where(h1s > 2**19, h1s - 2**20, h1s)
    assert int(np.min(np.abs(h1s) + h2s)) == 1022
    # the steep family of the first zoom: slope 2045, 2045 lines
    steep = np.floor(2045 * u[:-1] + 1 / 2**20 - u[1:] + 1e-12)
    assert np.unique(steep).size == 2045
    window = (u[:-1] > 0.5) & (u[:-1] < 0.55) & (u[1:] > 0.5) & (u[1:] < 0.55)
    assert 45 <= np.unique(np.rint(position[window])).size <= 56   # "about 50 slanted lines"


def test_table_6_3_cell_25_59_is_an_erratum():
    exact_100 = danger_probability(0.1, 100)
    exact_twin = danger_probability(0.01, 10**4)             # same variance of the average noise
    assert round(100 * exact_100, 2) == 27.73 and round(100 * exact_twin, 2) == 27.63
    se = math.sqrt(exact_100 * (1 - exact_100) / 10**4)
    assert round(100 * se, 2) == 0.45 and round((0.2559 - exact_100) / se, 1) == -4.8
    assert abs(0.2785 - exact_twin) / math.sqrt(exact_twin * (1 - exact_twin) / 10**4) < 1


# --- §6.4: the dice scheme and the general correction ---------------------------------------------

def _dice(truth, first, second):
    if first == 1:
        return int(second == 1)
    return 0 if first >= 4 else truth


def test_dice_scheme_is_not_a_biased_coin_and_the_general_correction_is_unbiased():
    a = np.mean([_dice(1, f, s) for f, s in itertools.product(range(1, 7), repeat=2)])
    b = np.mean([_dice(0, f, s) for f, s in itertools.product(range(1, 7), repeat=2)])
    assert (a, b) == pytest.approx((13 / 36, 1 / 36)) and a + b != pytest.approx(1)
    for pi in (0.0, 0.3, 0.7, 1.0):                      # exact expectation of (n1/n - b)/(a - b)
        assert (pi * a + (1 - pi) * b - b) / (a - b) == pytest.approx(pi)
    # the symmetric formula with p = 35/36 at pi = 0.3: E = ((p-1) + E[n1/n]) / (2p - 1)
    p = 35 / 36
    biased = ((p - 1) + 0.3 * a + 0.7 * b) / (2 * p - 1)
    assert round(biased, 3) == 0.106 and round(biased - 0.3, 3) == -0.194
    sd = math.sqrt(0.3 * a * (1 - a) + 0.7 * b * (1 - b)) / (math.sqrt(3600) * (a - b))
    assert round(sd, 4) == 0.0148
    # simulation of the notebook's experiment: mean within 5 standard errors
    rng = np.random.default_rng(5)
    truth = (np.arange(3600) < 1080).astype(int)
    first, second = rng.integers(1, 7, (2, 400, 3600))
    reports = np.where(first == 1, second == 1, np.where(first >= 4, 0, truth)).astype(int)
    est = ldp.pure_estimate(reports.sum(axis=1), 3600, a, b) / 3600
    assert abs(est.mean() - 0.3) < 5 * sd / math.sqrt(400)
    assert 0.8 < est.std(ddof=1) / sd < 1.2                 # 400 runs: relative SE 3.5%
    assert (500 / 3600 - b) / (a - b) == pytest.approx(1 / 3)  # exercise 4


def test_rr_exercise_3_minimum_users():
    p = math.e / (math.e + 1)
    sd = lambda n: math.sqrt(p * (1 - p) / n) / (2 * p - 1)
    n_min = math.ceil(math.e / (math.e - 1) ** 2 * 1e4)
    assert n_min == 9207 and sd(n_min) <= 0.01 < sd(n_min - 1)
    assert round((0.921 + 0.25) / 1e-4, -2) == 11700


# --- §6.5a: RAPPOR significance, the local-model argument ------------------------------------------

CANDIDATES = ["baidu.com", "qq.com", "taobao.com", "jd.com", "weibo.com", "bilibili.com",
              "zhihu.com", "douyin.com", "163.com", "sohu.com", "csdn.net", "github.com"]


def test_bonferroni_z():
    assert round(ldp.bonferroni_z(12), 3) == 2.638 and round(ldp.bonferroni_z(10**6), 3) == 5.327
    assert ldp.bonferroni_z(1000) == pytest.approx(norm.isf(5e-5)) and round(ldp.bonferroni_z(1000), 2) == 3.89
    for bad in (0, 1.5, -1):
        with pytest.raises(ValueError):
            ldp.bonferroni_z(bad)
    with pytest.raises(ValueError):
        ldp.bonferroni_z(10, alpha=0.0)


def test_rappor_significance_sd_is_calibrated_and_absent_candidates_are_not_reported():
    """400 independent populations of 5000 users: the formula's sd matches the spread of the
    estimates (pooled over 12 candidates, relative SE about 3%), absent candidates are
    (family-wise) reported at most at the 5% level, and a candidate held by 30% is found."""
    rng = np.random.default_rng(11)
    zipf = 1 / np.arange(1, 11)
    users = rng.choice(10, size=5000, p=zipf / zipf.sum())
    bloom = ldp.rappor_bloom(CANDIDATES, 32, 2)[users]
    estimates, sds, false_positive, found = [], [], 0, 0
    for _ in range(400):
        reports = ldp.rappor_instantaneous(ldp.rappor_permanent(bloom, 0.5, rng), 0.5, 0.75, rng)
        test = ldp.rappor_significance(reports, CANDIDATES, 32, 2, 0.5, 0.5, 0.75)
        estimates.append(test.estimate)
        sds.append(test.sd)
        false_positive += bool(test.significant[10:].any())
        found += bool(test.significant[0])
    estimates, sds = np.array(estimates), np.array(sds)
    ratio = np.mean(estimates.var(axis=0, ddof=1) / (sds ** 2).mean(axis=0))
    assert 0.8 < ratio < 1.1, ratio                                # conservative, but close
    true = np.bincount(users, minlength=12)
    assert np.all(np.abs(estimates.mean(axis=0) - true) < 5 * sds.mean(axis=0) / math.sqrt(400))
    assert false_positive / 400 <= 0.05
    assert found == 400
    # the counts form gives the same result as the report matrix
    test_counts = ldp.rappor_significance(reports.sum(axis=0), CANDIDATES, 32, 2, 0.5, 0.5, 0.75, n=5000)
    np.testing.assert_allclose(test_counts.sd, test.sd)
    with pytest.raises(ValueError, match="k_bits=32"):
        ldp.rappor_significance(reports[:, :31], CANDIDATES, 32, 2, 0.5, 0.5, 0.75)


def test_local_model_numbers_of_6_5a():
    sd_rr = math.sqrt(ldp.grr_variance(10**9, 2, 1.0))
    assert round(sd_rr) == 30343 and round(10**6 / sd_rr, 1) == 33.0
    assert sd_rr == pytest.approx(math.sqrt(1e9 * math.e / (math.e - 1) ** 2))
    threshold = lambda eps, m: ldp.bonferroni_z(m) * math.sqrt(ldp.oue_variance(10**9, eps))
    assert ldp.oue_variance(10**9, 1.0) == pytest.approx(1e9 * 4 * math.e / (math.e - 1) ** 2)
    assert round(threshold(0.25, 10**6)) == 1_344_063 > 10**6      # drowned
    assert round(threshold(0.25, 10**3)) == 981_692 < 10**6        # found (barely)
    assert round(threshold(0.5, 10**6)) == 666_815 < 10**6
    assert 235_000 < threshold(1.0, 10**3) < 240_000 and 320_000 < threshold(1.0, 10**6) < 325_000


# --- lab-budget ----------------------------------------------------------------------------------

def test_budget_lab_numbers():
    zoo = load_zoo()
    carrots = np.clip(zoo.carrots, 0, 100)
    n, total = carrots.size, int(carrots.sum())
    assert (n, total) == (182, 9651)
    rel = lambda eps_sum: math.hypot(math.sqrt(2) * 100 / eps_sum / total, math.sqrt(2) / 0.3 / n)
    assert round(100 * math.sqrt(2) * 100 / 0.5 / total, 1) == 2.9 and round(100 * math.sqrt(2) * 100 / 0.2 / total, 1) == 7.3
    assert round(100 * math.sqrt(2) / 0.3 / n, 1) == 2.6
    assert round(100 * rel(0.5), 1) == 3.9 and round(100 * rel(0.2), 1) == 7.8
    buckets = histogram_counts(np.minimum(carrots // 20, 4), range(5))
    assert buckets.tolist() == [32, 34, 37, 32, 47]
    assert round(100 * mech.exponential_probabilities(buckets, 0.2, 1.0).max()) == 48
    assert round(100 * mech.exponential_probabilities(buckets, 0.5, 1.0).max()) == 86
    y = np.linspace(-200, 300, 5001)
    for delta_f in (1, 10, 100):                   # b = 10 fixed: the largest density ratio is e^(Δ/b)
        worst = np.max(mech.laplace_pdf(y - delta_f, 10.0) / mech.laplace_pdf(y, 10.0))
        assert math.log(worst) == pytest.approx(delta_f / 10)


# --- self-check cells ------------------------------------------------------------------------------

#: notebook stem -> (right answers, one wrong answer per variable)
ANSWERS = {
    "6.1-basics": ({"answer_3": 2, "answer_4": 10}, {"answer_3": 1, "answer_4": 1e-3}),
    "6.2-laplace": ({"answer_b": 6.0, "answer_sd": 8.485}, {"answer_b": 2.0, "answer_sd": 6.0}),
    "6.4-randomized-response": ({"answer_3": 9207, "answer_4": 0.3333}, {"answer_3": 9300, "answer_4": 0.1059}),
    "6.5a-rappor-shuffle": ({"answer_1": 33.0, "answer_2": 3.89}, {"answer_1": 1.0, "answer_2": 1.645}),
    "lab-budget": ({"answer_2": 10}, {"answer_2": 0.1}),
    "lab-floating-point": ({"answer_2": 2.0**-46}, {"answer_2": 2.0**-52}),
    "lab-ldp-mean": ({"answer_3": 2.164}, {"answer_3": 1.0}),
    "lab-sensitivity-histograms": ({"answer_2": 7}, {"answer_2": 14}),
}


def _cells(path: Path, tag: str) -> list[str]:
    nb = nbformat.read(path, as_version=4)
    return [c.source for c in nb.cells if c.cell_type == "code" and tag in c.metadata.get("tags", [])]


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("stem", OWNED)
def test_self_checks(stem, lang, capsys):
    path = (COURSE if lang == "zh" else COURSE / "en") / f"{stem}.ipynb"
    answers, checks = _cells(path, "selfcheck-answer"), _cells(path, "selfcheck")
    assert len(answers) == 1 and len(checks) == 1, "one answer cell and one check cell at the end"
    nb = nbformat.read(path, as_version=4)
    assert nb.cells[-1].source == checks[0] and nb.cells[-2].source == answers[0]
    right, wrong = ANSWERS[stem]
    names = set(re.findall(r"^(answer_\w+) = None$", answers[0], flags=re.M))
    assert names == set(right), "the answer cell declares exactly the checked variables, as None"
    previous = i18n.get_lang()
    try:
        i18n.set_lang(lang)
        ns: dict = {}
        exec(answers[0], ns)                      # unanswered: the notebook still runs headless
        exec(checks[0], ns)
        out = capsys.readouterr().out
        assert ("还没作答" if lang == "zh" else "not answered yet") in out
        ns = dict(right)
        exec(checks[0], ns)                       # right answers pass
        out = capsys.readouterr().out
        assert out.count("✓") == checks[0].count("✓") >= 1   # one ✓ line per exercise (the cell is in one language)
        for name, value in wrong.items():         # each wrong answer fails with a hint in the language
            ns = {**right, name: value}
            with pytest.raises(AssertionError) as failure:
                exec(checks[0], ns)
            hint = str(failure.value)
            assert ("提示" if lang == "zh" else "Hint") in hint, hint
            # IPython shows _render_traceback_() instead of a traceback: the answer, no checking code
            shown = "\n".join(failure.value._render_traceback_())
            assert repr(value) in shown and "Traceback" not in shown and "expect(" not in shown, shown
        capsys.readouterr()
    finally:
        i18n.set_lang(previous)


def test_exercise_1_of_the_chapter_appears_once():
    """The chapter's exercise 1 (A/B/C on interactive release) is in 6.1 only, not repeated in 6.4."""
    text = {stem: (COURSE / "_src" / f"{stem}.md").read_text(encoding="utf-8") for stem in OWNED}
    holders = [stem for stem, t in text.items() if "数据合成一般对应非交互式的差分隐私模型" in t]
    assert holders == ["6.1-basics"]


# --- what the executed notebooks print ---------------------------------------------------------------

@pytest.mark.notebook
def test_printed_claims_of_the_executed_notebooks(monkeypatch):
    """The sentences written around 6.5a's decoding table hold for the stored seed: the RAPPOR
    test reports neither absent candidate (the other printed numbers are deterministic or
    statistically certain and are recomputed above)."""
    from tests.support.notebooks import run_notebook

    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = run_notebook(COURSE / "6.5a-rappor-shuffle.ipynb").nb
    rappor = "\n".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "stream")
    reported = re.search(r"报告的候选：\s*(\[.*\])", rappor).group(1)
    assert "csdn.net" not in reported and "github.com" not in reported and "baidu.com" in reported
    assert re.search(r"csdn.net[:：]NNLS 给出 \d+，只有 0\.\d\d 个标准差", rappor)
    assert "33.0 个标准差" in rappor and "1,344,063 （淹没）" in rappor


# --- terminology and errata list --------------------------------------------------------------------

def test_terminology_in_owned_sources():
    for stem in OWNED:
        zh = "\n".join(c.source for c in nbformat.read(COURSE / f"{stem}.ipynb", as_version=4).cells)
        own_words = re.sub(r'"[^"\n]*"|“[^”\n]*”|《[^》]*》', "", zh)     # quotations of the chapter and titles keep their words
        for bad in ("敏感度", "本地差分隐私", "ε 每次", "隐私上限之外", "直说", "放之四海"):
            assert bad not in own_words, (stem, bad)


#: (phrase in course/README.md, notebooks whose Chinese text carries the erratum, phrase there)
ERRATA = [
    ("uniform noise on $[-1, 1]$", ["6.1-basics"], "能够提供差分隐私"),
    ("neighbouring relation is never fixed", ["6.1-basics"], "$D, D' \\in X^n$"),
    ("δ is an additive slack", ["6.1-basics"], "不满足差分隐私的概率"),
    ("advanced composition and the moments accountant", ["6.1-basics"], "矩生成函数"),
    ("2045 = 5", ["6.2-laplace"], "5 \\times 409"),
    ("privacy parameter", ["6.2-laplace"], "隐私参数"),
    ("testraw.c", ["6.2-laplace"], "对于一个单属性的数据集，其敏感度为 1"),
    ("Δ₁ = 2 and Lap(1/ε) per bucket", ["6.2-laplace"], "仅会影响到一个特定的区间"),
    ("25.59", ["6.2-laplace", "lab-budget"], "25.59"),
    ("2\\nu-1", ["6.4-randomized-response"], "2\\nu - 1"),
    ("dice rule is incomplete", ["6.4-randomized-response"], "规则不完整"),
    ("非均匀的硬币", ["6.4-randomized-response"], "非均匀的硬币"),
    ("can leave [0, 1]", ["6.4-randomized-response"], "极大似然估计"),
    ("1-1/2f", ["6.5a-rappor-shuffle"], "1-1/2f"),
    ("不会面临隐私耗尽的风险", ["6.5a-rappor-shuffle"], "不会面临隐私耗尽的风险"),
    ("错误！未找到引用源", ["6.5a-rappor-shuffle"], "错误！未找到引用源"),
    ("百万量级的信号都有可能会被淹没", ["6.5a-rappor-shuffle"], "百万量级的信号都有可能会被淹没"),
    ("larger sensitivity gives stronger privacy", ["lab-budget"], "灵敏度越大隐私越强"),
    ("DCT mechanism", ["lab-ldp-mean"], "的笔误"),
]


def test_errata_list_matches_the_notebooks():
    readme = (COURSE / "README.md").read_text(encoding="utf-8")
    for readme_phrase, stems, notebook_phrase in ERRATA:
        assert readme_phrase in readme, readme_phrase
        for stem in stems:
            zh = "\n".join(c.source for c in nbformat.read(COURSE / f"{stem}.ipynb", as_version=4).cells)
            assert notebook_phrase in zh and ("勘误" in zh or "笔误" in zh), (stem, notebook_phrase)


ASSIGNMENTS = ("laplace", "exponential", "randomized_response", "private_mean", "privacy_budget", "local_frequency")


def _landing_parts() -> tuple[str, str]:
    readme = (COURSE / "README.md").read_text(encoding="utf-8")
    zh, marker, en = readme.partition('<a id="english"></a>')
    assert marker, "course/README.md: no English part (<a id=\"english\"></a>)"
    return zh, en


def test_landing_page_chinese_part_is_chinese_and_lists_the_six_assignments():
    """A student starts on course/README.md: where to start, all six graded assignments and how to fetch
    them, every erratum in Chinese and in English; no English-only line in the Chinese part."""
    zh, en = _landing_parts()
    zh = re.sub(r"<!--.*?-->", "", zh, flags=re.S)
    english_only = [line for line in zh.splitlines()
                    if line.strip() and not re.fullmatch(r"[|\-\s]+|---", line.strip())
                    and not re.search(r"[\u4e00-\u9fff]", line)]
    assert not english_only, f"English-only lines in the Chinese part: {english_only}"
    for part, start, fetch in ((zh, "从这里开始", "Nbgrader ▸ Assignment List"), (en, "Start here", "Nbgrader ▸ Assignment List")):
        assert start in part and fetch in part and "Fetch" in part
        rows = [a for a in ASSIGNMENTS if re.search(rf"^\| `{a}` \|.*release/{a}/{a}\.ipynb", part, flags=re.M)]
        assert rows == list(ASSIGNMENTS), rows
        assert (ROOT / "release").is_dir() and all((ROOT / "release" / a / f"{a}.ipynb").exists() for a in ASSIGNMENTS)
    errata = [len(re.findall(r"^\* ", part.split("## 勘误" if part is zh else "## Errata")[1], flags=re.M)) for part in (zh, en)]
    assert errata[0] == errata[1] >= 25, errata
    # The build's generated regions name their source in an HTML comment, which no reader sees.
    visible = re.sub(r"<!--.*?-->", "", zh + en, flags=re.S)
    assert "course/_src" not in visible, "contributor notes belong in course/_src/README.md"


# --- s5 DP review: numbers behind the corrected sentences (FINDINGS.md) ------------------------------

def _src(stem: str) -> str:
    return (COURSE / "_src" / f"{stem}.md").read_text(encoding="utf-8")


def _duchi_false_alarm(eps: float, n: int = 200_000, confidence: float = 0.95) -> float:
    """Exact P[ln(p1_low / p2_high) > ε] for Duchi's event {+B} (t = 1 vs t' = -1; {-B} is the mirror
    image): k1 ~ Bin(n, e^ε/(e^ε+1)), k2 ~ Bin(n, 1/(e^ε+1)) independent, the audit's two-sided
    Clopper–Pearson bounds at level 1 - confidence. p2_high grows with k2, so for each k1 the k2
    that cross are a lower tail of Bin(n, p2)."""
    from scipy.stats import binom

    from helpers.audit import clopper_pearson

    p1 = 1 / (1 + math.exp(-eps))
    sd = math.sqrt(n * p1 * (1 - p1))
    k1 = np.arange(max(0, int(n * p1 - 9 * sd)), min(n, int(n * p1 + 9 * sd)) + 1)
    k2 = np.arange(max(0, int(n * (1 - p1) - 9 * sd)), min(n, int(n * (1 - p1) + 9 * sd)) + 1)
    p1_low, _ = clopper_pearson(k1, n, 1 - confidence)
    _, p2_high = clopper_pearson(k2, n, 1 - confidence)
    crossing = np.searchsorted(p2_high, p1_low * math.exp(-eps), side="left")   # k2 index with p2_high < p1_low e^-ε
    below = np.where(crossing > 0, binom.cdf(k2[np.maximum(crossing - 1, 0)], n, 1 - p1), 0.0)
    return float(np.sum(binom.pmf(k1, n, p1) * below))


def test_false_alarms_of_a_tight_mechanism_at_95_percent_are_far_rarer_than_one_in_20():
    """lab-ldp-mean: 1 - confidence bounds the false-alarm probability; for Duchi (ratio exactly e^ε)
    the exact probability is 0.4 %, 0.6 %, 2.3 % at ε = 0.5, 1, 4, not "about one audit in 20"."""
    from helpers.audit import clopper_pearson, epsilon_lower_bound

    rates = {eps: _duchi_false_alarm(eps) for eps in (0.5, 1.0, 4.0)}
    assert [round(100 * r, 1) for r in rates.values()] == [0.4, 0.6, 2.3]
    assert all(r < 0.05 for r in rates.values())
    assert round(20 * rates[1.0], 1) == 0.1                      # "about 0.1 refutations in 20 audits"
    # the formula is the audit's own: one real audit of Duchi, its bound recomputed from its counts
    sampler = lambda t, rng, size: ldp.duchi_perturb(np.full(size, t), 1.0, rng)
    result = epsilon_lower_bound(None, -1.0, 1.0, np.random.default_rng(3), sampler=sampler, confidence=0.95,
                                 claimed_epsilon=1.0)
    low, _ = clopper_pearson(result.k1, result.n, 0.05)
    _, high = clopper_pearson(result.k2, result.n, 0.05)
    assert result.n == 200_000 and result.epsilon == pytest.approx(max(0.0, math.log(low / high)), rel=1e-12)
    assert result.k1 / result.n == pytest.approx(1 / (1 + math.exp(-1)), abs=0.005)     # the event {±B}
    text = _src("lab-ldp-mean")
    assert "0.4%、0.6%、2.3%" in text and "0.4%, 0.6% and 2.3%" in text
    assert "约 0.6%，20 次审计平均约 0.1 次" in text and "about 0.6%, i.e. about 0.1 refutations in 20 audits" in text
    assert "每 20 次审计大约会有 1 次" not in text and "about one audit out of twenty" not in text


def test_the_lab_does_not_repeat_the_all_moments_wording_that_6_1_corrects():
    assert "（所有阶矩）" not in _src("lab-approximate-dp") and "(all moments)" not in _src("lab-approximate-dp")
    assert "不是“所有阶矩”" in _src("6.1-basics") + _src("lab-approximate-dp")


def test_redundant_dataset_equals_region_with_probability_0_9():
    from helpers.synthetic import redundant_dataset

    exact = 0.85 + 0.15 / 3
    data = redundant_dataset(200_000, np.random.default_rng(5))
    se = math.sqrt(exact * (1 - exact) / data.shape[0])
    for col in (1, 2, 3):
        assert abs(np.mean(data[:, col] == data[:, 0]) - exact) < 6 * se
    assert abs(np.mean(data[:, 5] == data[:, 4]) - (0.6 + 0.4 / 3)) < 6 * se
    assert "0.85 + 0.15/3 = 0.9" in _src("6.5b-synthetic-data")
    assert "85% 的概率与地区相同" not in _src("6.5b-synthetic-data")


def test_shuffle_utility_comparison_names_both_guarantees():
    from helpers.shuffle import fmt_amplified_epsilon, fmt_is_valid

    assert fmt_is_valid(4.0, 100_000, 1e-6) and round(fmt_amplified_epsilon(4.0, 100_000, 1e-6), 2) == 0.53
    text = _src("6.5a-rappor-shuffle")
    assert "$(0.53, 10^{-6})$ 是近似差分隐私，要信任洗牌器不与收集者串通" in text
    assert "$(0.53, 10^{-6})$ is approximate DP and needs a shuffler that does not collude" in text
    # neither the local nor the shuffled guarantee hides n: both are stated for "one user's data replaced"
    assert "报告的份数本身都会暴露 $n$" in text and "in both the number of reports reveals $n$" in text
    assert "同一个中心化" not in text and "same central" not in text


def test_privacy_budget_task_calls_the_25_59_cell_an_erratum():
    exact = danger_probability(0.1, 100)
    assert round(100 * exact, 2) == 27.73
    cell = "\n".join(c.source for c in nbformat.read(ROOT / "source" / "privacy_budget" / "privacy_budget.ipynb",
                                                        as_version=4).cells if "averaging_attack(answers)" in c.source
                     and c.cell_type == "markdown")
    assert "教材印 25.59%，精确值 27.73%" in cell and "printed 25.59%, exact 27.73%" in cell
    assert "略有出入" not in cell and "differ slightly" not in cell


def test_every_assignment_says_how_to_submit_on_a_laptop_and_on_the_server():
    """The first cell of each released assignment names both ways to hand in, in both languages: the
    toolbar's 提交 on a laptop (where there is no Nbgrader menu: a student following only the menu
    could not submit) and Nbgrader ▸ Assignment List on the class server."""
    for a in ASSIGNMENTS:
        first = "".join(json.loads((ROOT / "release" / a / f"{a}.ipynb").read_text(encoding="utf-8"))["cells"][0]["source"])
        zh, _, en = first.partition("\n---\n")
        for part, toolbar in ((zh, "点笔记本工具栏上的 **提交**"), (en, "press **提交** in the notebook's toolbar")):
            assert toolbar in part and "`提交/" in part and "Assignment List" in part, (a, part[-400:])
