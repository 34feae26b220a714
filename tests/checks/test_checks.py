"""Tests of ``helpers.checks``, the code behind the graded test cells (issue 3).

Fast, without nbgrader: the corpus functions are executed directly and
passed to the check functions. (``test_assignments.py`` grades the same
corpus through ``nbgrader autograde``.)
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import math
import re
import textwrap
from pathlib import Path

import nbformat
import numpy as np
import pytest

import helpers.checks as checks
import helpers.lectures.explorers as explorers
import helpers.mechanisms as mechanisms
from helpers.checks import RecordingGenerator

HERE = Path(__file__).resolve().parent
from tests.support import corpus as build
from tests.support import notebooks


_failing_cells = notebooks.failing_cells


# --- the corpus, directly ------------------------------------------------------


#: private_mean's corpus runs only through the grader (test_assignments.py checks the same expectations
#: and that each failing cell's message is bilingual): its privacy audits are the costliest checks of
#: the course, and running them twice cost about five minutes of the suite.
DIRECT = [a for a in build.ASSIGNMENTS if a != "private_mean"]
# The others run both ways on purpose (issue 36 looked at it): here the student's code draws from a
# RecordingGenerator in the same process, as a student's Validate and plain `nbgrader autograde` run
# it; through the grader (test_assignments.py) the judge serves the draws across the sandbox. Only
# the run here sees the messages of entries the sandbox refuses (importing helpers), and the
# diagnosis table (test_diagnosis.py) reads these runs.


@pytest.mark.xdist_group("corpus-direct")   # with test_diagnosis.py, which reads the same runs
@pytest.mark.parametrize("assignment", DIRECT)
def test_corpus_directly(assignment):
    """Correct solutions pass every cell; each wrong one fails the cells the manifest names,
    with a bilingual message (no crash of the check itself)."""
    problems = build.corpus_problems(assignment, lambda solutions: _failing_cells(assignment, solutions))
    assert not problems, "\n".join(problems)


def test_source_solutions_pass_directly():
    """...and every line a passing check prints says what passed in Chinese, then English
    (the assignments are bilingual; the walk of issue 18 found English-only passing lines)."""
    for assignment in build.ASSIGNMENTS + ("privacy_budget", "local_frequency"):
        nb = nbformat.read(build.notebook_path(build.REPO / "source", assignment), as_version=4)
        solutions = {c.metadata["nbgrader"]["grade_id"]: c.source for c in nb.cells
                     if c.metadata.get("nbgrader", {}).get("solution")}
        printed: list[str] = []
        assert _failing_cells(assignment, solutions, printed) == {}, assignment
        assert printed, assignment
        for line in printed:
            verdict, _, body = line.partition("]")
            assert verdict.startswith("✓ 通过 / passed ["), line
            body = re.sub(r"^ 种子 / seed = \d+（[^）]*）：", "", body)  # the seed's own bilingual label
            zh, _, en = body.partition(" / ")
            assert re.search(r"[\u4e00-\u9fff]", zh) and re.search(r"[A-Za-z]{3,}", en), line


# --- the recording generator -----------------------------------------------------


def test_recording_generator_is_a_generator_that_only_offers_random():
    rng = RecordingGenerator(5)
    assert isinstance(rng, np.random.Generator)
    a = rng.random(4)
    rng.random()
    assert rng.calls == 2 and rng.draws == 5
    np.testing.assert_array_equal(a, np.random.Generator(np.random.PCG64(5)).random(4))
    for method in ("laplace", "exponential", "choice", "integers", "uniform", "bit_generator", "spawn"):
        with pytest.raises(checks.ForbiddenRngMethod, match=f"rng.{method}"):
            getattr(rng, method)
    assert rng.forbidden == ["laplace", "exponential", "choice", "integers", "uniform", "bit_generator", "spawn"]


def test_forbidden_method_is_reported_even_if_the_student_swallows_the_error():
    def sneaky(b, size, rng):
        try:
            return rng.laplace(0, b, size)
        except Exception:  # noqa: BLE001
            return rng.random(size)

    with pytest.raises(AssertionError, match="rng.laplace"):
        checks.check_laplace_noise_rng(sneaky)


# --- seeds -------------------------------------------------------------------------


def test_seed_default_env_and_explicit(monkeypatch, capsys):
    monkeypatch.delenv(checks.SEED_ENV, raising=False)
    default = checks.check_seed("x")
    assert default == checks.check_seed("x") != checks.check_seed("y")
    assert checks.check_seed("x", 17) == 17
    monkeypatch.setenv(checks.SEED_ENV, "123")
    from_env = checks.check_seed("x")
    assert from_env != default and from_env == checks.check_seed("x")
    monkeypatch.setenv(checks.SEED_ENV, "run-7")
    assert checks.check_seed("x") not in (default, from_env)
    monkeypatch.setenv(checks.SEED_ENV, "124")
    assert checks.check_seed("x") != from_env
    monkeypatch.setenv(checks.SEED_ENV, "3141592653")
    checks.check_laplace_noise_distribution(mechanisms.laplace_noise)
    out = capsys.readouterr().out
    # a grading run's seed (and the check's seed made from it) never reaches the feedback page:
    # with it a student could compute the hidden cases of a regrade at the same --seed
    assert "p = " in out and "not shown" in out, out
    assert "3141592653" not in out and checks.SEED_ENV not in out
    assert not re.search(r"seed = \d", out)
    monkeypatch.delenv(checks.SEED_ENV)
    checks.check_laplace_noise_distribution(mechanisms.laplace_noise)
    assert re.search(r"seed = \d+（默认 / default）", capsys.readouterr().out)  # locally: reproducible


def test_a_failure_in_grading_does_not_show_the_seed(monkeypatch):
    """A failing check's message names its seed (``seed = ...``): in grading that seed is made from the
    run's 32-bit per-student seed, which a search of 2³² seeds would recover from it (issue 35)."""
    def off(b, size, rng):
        return mechanisms.laplace_noise(2 * b, size, rng)

    off.__name__ = "laplace_noise"
    monkeypatch.setenv(checks.SEED_ENV, "3141592653")
    seed = checks.check_seed("check_laplace_noise_distribution")
    with pytest.raises(AssertionError, match="KS") as info:
        checks.check_laplace_noise_distribution(off)
    assert "not shown" in str(info.value) and f"{seed:d}" not in str(info.value), str(info.value)
    assert not re.search(r"seed = \d", str(info.value))
    # each part in its own language: no English inside the Chinese message (session 15's walkthrough)
    assert "评分种子，不显示" in info.value.zh and "not shown" not in info.value.zh, info.value.zh
    assert "not shown" in info.value.en and "评分种子" not in info.value.en, info.value.en
    assert np.random.default_rng(seed).random() == np.random.default_rng(int(seed)).random()


# --- how a failure reads -------------------------------------------------------------


def test_failure_lines_are_one_width_in_both_languages_and_keep_relations_whole():
    """The message a student reads (IPython, nbgrader's Validate dialog): Chinese lines as
    wide on screen as the English ones (a CJK character is two columns), none wider than
    the limit, no relation such as ``n = 100000`` cut in two, and no character lost."""
    from helpers.checks.core import MESSAGE_COLUMNS, _columns

    zh = ("laplace_noise 的输出不服从 Laplace(0, 4.286)：KS 检验 D = 0.0551，p = 5.6e-264 < 1e-06（n = 100000，"
          "seed = 59732085；正确的实现被误判的概率 ≤ 1e-06）。可能的错误：测得均值 0.48，期望 0：是否在噪声上加了"
          "一个均匀随机数 u2（教材 6.2.2 印刷公式的错误）？")
    en = ("laplace_noise's output is not Laplace(0, 4.286): KS statistic D = 0.0551, p = 5.6e-264 < 1e-06 "
          "(n = 100000, seed = 59732085; a correct implementation fails with probability <= 1e-06). Likely "
          "mistake: mean 0.48, expected 0: is a uniform number (u2) being added to the noise.")
    from helpers import i18n

    previous = i18n.get_lang()
    try:
        i18n.set_lang("zh")
        header, *lines = checks.CheckFailure(zh, en)._render_traceback_()
        i18n.set_lang("en")
        _, *english_first = checks.CheckFailure(zh, en)._render_traceback_()
    finally:
        i18n.set_lang(previous)
    assert "未通过" in header and "check failed" in header
    zh_lines = [line for line in lines if checks.core._CJK.search(line)]
    assert "".join(zh_lines).replace(" ", "") == zh.replace(" ", "")
    # the notebook's language first; the other one after it, dimmed and labelled
    dim = [re.sub(r"\x1b\[[0-9]*m", "", line) for line in lines[len(zh_lines):]]
    assert all(line.startswith("\x1b[2m") for line in lines[len(zh_lines):])
    assert " ".join(dim) == "English: " + en
    plain = [line for line in english_first if not line.startswith("\x1b[2m")]
    assert " ".join(plain) == en and english_first[len(plain)].startswith("\x1b[2m中文：")
    lines = zh_lines + dim
    assert all(_columns(line) <= MESSAGE_COLUMNS for line in lines)
    # the Chinese half is not wrapped much narrower than the English (it was cut at 44 characters)
    assert min(_columns(line) for line in zh_lines[:-1]) > 0.6 * MESSAGE_COLUMNS
    # no Chinese word is cut: a line never ends and the next begins with a Han character ("被误/判")
    for this, following in zip(zh_lines, zh_lines[1:]):
        assert not (re.search(r"[\u4e00-\u9fff]$", this) and re.match(r"[\u4e00-\u9fff]", following)), (this, following)
    for line in lines:
        assert not re.search(r"(=|<|≤)$", line) and not re.match(r"^(=|<|≤)", line), line
        assert not re.search(r"[（(]$", line) and not re.match(r"^[，。；：）)]", line), line


# --- forbidden calls (syntax tree) ---------------------------------------------------

import numpy.random as npr  # noqa: E402  (used by the functions under test)
from numpy.random import default_rng  # noqa: E402


def _ok(b, size, rng):
    if not isinstance(rng, np.random.Generator):
        raise ValueError("rng")
    return -b * np.log1p(-rng.random(size)) * np.where(rng.random(size) < 0.5, -1, 1)


def _calls_helper(b, size, rng):
    return _uses_rng_laplace(b, size, rng) + 0


def _uses_rng_laplace(b, size, rng):
    return rng.laplace(0, b, size)


def _uses_np_random(b, size, rng):
    return np.random.laplace(0, b, size)


def _uses_alias(b, size, rng):
    return npr.random(size)


def _uses_default_rng(b, size, rng):
    return default_rng(0).random(size)


def _imports_scipy(b, size, rng):
    from scipy import stats

    return stats.laplace.rvs(scale=b, size=size, random_state=rng)


def _imports_helpers(b, size, rng):
    import helpers.mechanisms as m

    return m.laplace_noise(b, size, rng)


@pytest.mark.parametrize(
    ("func", "expected"),
    [
        (_ok, []),
        (_uses_rng_laplace, ["rng.laplace"]),
        (_calls_helper, ["_uses_rng_laplace: rng.laplace"]),
        (_uses_np_random, ["np.random.laplace"]),
        (_uses_alias, ["npr (from numpy.random)"]),
        (_uses_default_rng, ["default_rng (from numpy.random)"]),
    ],
)
def test_find_forbidden_calls(func, expected):
    assert checks.find_forbidden_calls(func) == expected


def test_find_forbidden_calls_imports():
    assert checks.find_forbidden_calls(_imports_scipy) == ["stats.laplace.rvs"]  # the call it saw
    assert any("helpers" in f for f in checks.find_forbidden_calls(_imports_helpers))


def test_find_forbidden_calls_bans_sampling_not_arithmetic():
    """scipy.special, scipy.stats' cdf/ppf and statistics' averages are arithmetic (issue 35: banning
    scipy whole cost a correct expit a point); samplers are named by the call seen."""
    ns = checks.load_student_code(
        "import math, statistics\nimport numpy as np\nimport scipy.special\nfrom scipy import stats\n"
        "from scipy.special import expit, softmax, logsumexp\nfrom scipy.stats import laplace as L\n"
        "def arithmetic(eps, k, rng):\n"
        "    u = rng.random(k)\n"
        "    return (expit(eps) + softmax(u) + logsumexp(u) + scipy.special.log1p(eps) + L.ppf(u)\n"
        "            + stats.norm.cdf(u) + statistics.fmean(u))\n"
        "def frozen(n, rng):\n    return stats.norm(0, 1).rvs(n, random_state=rng)\n"
        "def normal_dist(n, rng):\n    return statistics.NormalDist(0, 1).samples(n)\n"
        "def qmc(n, rng):\n    from scipy.stats import qmc\n    return qmc.Sobol(1).random(n)\n"
        "def chained(eps, k, rng):\n    return arithmetic(eps, k, rng) + L.rvs(size=k)\n")
    assert checks.find_forbidden_calls(ns["arithmetic"]) == []
    assert checks.find_forbidden_calls(ns["frozen"]) == ["stats.norm(0, 1).rvs"]
    assert checks.find_forbidden_calls(ns["normal_dist"]) == ["statistics.NormalDist(0, 1).samples"]
    assert checks.find_forbidden_calls(ns["qmc"]) == ["from scipy.stats import qmc"]
    assert checks.find_forbidden_calls(ns["chained"]) == ["L.rvs"]


def test_load_student_code_keeps_the_source_visible():
    ns = checks.load_student_code("import numpy\ndef f(b, size, rng):\n    return numpy.random.laplace(0, b, size)\n")
    assert inspect.getsource(ns["f"]).startswith("def f")
    assert checks.find_forbidden_calls(ns["f"]) == ["numpy.random.laplace"]


def test_find_forbidden_calls_without_source():
    ns = {"np": np}
    exec("def f(b, size, rng):\n    return rng.laplace(0, b, size)\n", ns)
    ns["f"].__code__ = ns["f"].__code__.replace(co_filename="<nowhere>")
    assert "laplace" in checks.find_forbidden_calls(ns["f"])


# --- statistical checks: built-in power, stated level ---------------------------------


@pytest.mark.parametrize("factor", [0.9, 1.1])
def test_laplace_check_rejects_a_10_percent_scale_error(factor):
    def off(b, size, rng):
        return mechanisms.laplace_noise(b * factor, size, rng)

    off.__name__ = "laplace_noise"
    with pytest.raises(AssertionError, match="KS"):
        checks.check_laplace_noise_distribution(off, seed=1)


def test_laplace_message_names_the_swapped_scale():
    def swapped(value, sensitivity, epsilon, rng):
        return mechanisms.laplace_mechanism(value, 1.0, sensitivity * epsilon, rng)

    with pytest.raises(AssertionError) as info:
        checks.check_laplace_mechanism_distribution(swapped, seed=2)
    message = str(info.value)
    assert "1/(ε·Δ)" in message and "4.286" in message and "Laplace" in message
    assert "拉普拉斯" in message or "不服从" in message


def test_textbook_formula_is_diagnosed():
    from helpers.sampling import textbook_printed_laplace  # the misprinted formula of §6.2.2

    def laplace_noise(b, size, rng):
        return np.asarray(textbook_printed_laplace(rng.random(size), rng.random(size), b), dtype=float)

    with pytest.raises(AssertionError, match="u2"):
        checks.check_laplace_noise_distribution(laplace_noise, seed=3)


def test_exponential_chi_square_names_the_missing_factor_2():
    def no2(scores, epsilon, sensitivity, rng):
        return mechanisms.exponential_mechanism(scores, 2 * epsilon, sensitivity, rng)

    with pytest.raises(AssertionError, match="factor 2"):
        checks.check_exponential_mechanism_distribution(no2, seed=4)


def test_rr_binomial_names_the_swap():
    def swapped(bits, epsilon, rng):
        return 1 - mechanisms.rr_perturb(bits, epsilon, rng)

    with pytest.raises(AssertionError, match="swapped"):
        checks.check_rr_perturb_distribution(swapped, seed=5)


def test_merge_bins_keeps_totals_and_minimum():
    obs, exp = checks._merge_bins(np.array([1, 2, 50, 3, 40]), np.array([0.5, 2.0, 48.0, 4.0, 41.5]))
    assert obs.sum() == 96 and math.isclose(exp.sum(), 96.0)
    assert exp.min() >= 5


def test_table_6_4_constants_match_the_formula():
    for epsilon, printed in checks.TABLE_6_4.items():
        exact = checks._exp_probs(np.array(checks.TABLE_6_4_SCORES), epsilon, 1.0)
        np.testing.assert_allclose(exact, printed, rtol=0.04, atol=6e-4)


# --- copied solutions -------------------------------------------------------------------


class _Rename(ast.NodeTransformer):
    def __init__(self, names):
        self.names = names

    def visit_Name(self, node):
        if node.id in self.names:
            node.id = self.names[node.id]
        return node

    def visit_arg(self, node):
        node.arg = self.names.get(node.arg, node.arg)
        return node


def _disguised_copy(func) -> str:
    """The reference with its locals renamed and its validation rewritten, as a student might copy it."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    names = {n: f"my_{n}" for n in func.__code__.co_varnames}
    tree = _Rename(names).visit(tree)
    fdef = tree.body[0]
    fdef.body = [s for s in fdef.body if not checks._is_validation(s)]
    fdef.body.insert(0, ast.parse("if not my_b > 0:\n    raise ValueError('b must be > 0')").body[0])
    return ast.unparse(tree)


def test_similarity_flags_a_disguised_copy_and_not_independent_solutions():
    copy = _disguised_copy(mechanisms.laplace_noise)
    assert checks.similarity_to_reference(copy, name="laplace_noise") >= 0.9
    independent = {
        f"{name}": build.snippet(assignment, name, variants[0])
        for assignment in build.ASSIGNMENTS
        for name, variants in build.load_manifest()[assignment]["correct"].items()
    }
    rows = {row["function"]: row for row in checks.copy_report({"laplace_noise": copy})}
    assert rows["laplace_noise"]["flagged"]
    for row in checks.copy_report(independent):
        assert not row["flagged"], row
    assert checks.similarity_to_reference(mechanisms.rr_correct) == 1.0


# --- ε-slider views -------------------------------------------------------------------------


def test_explorers_build_headless_and_redraw():
    view = explorers.laplace_explorer(mechanisms.laplace_mechanism, n=2000)
    heights = [bar.get_height() for bar in view.figure.axes[0].patches]
    view.slider.value = 5.0
    assert [bar.get_height() for bar in view.figure.axes[0].patches] != heights
    for builder, func in ((explorers.exponential_explorer, mechanisms.exponential_mechanism),
                          (explorers.rr_explorer, mechanisms.rr_perturb)):
        view = builder(func)
        view.slider.value = 0.2
        assert view.figure.axes[0].get_title().startswith("ε = 0.2,")  # round slider values, shown exactly



def test_explorer_figures_are_bilingual():
    """The assignments are bilingual: every title and axis label the explorers draw holds
    Chinese, except pure notation (ε = 0.2, Δq = 3, k)."""
    views = [explorers.laplace_explorer(mechanisms.laplace_mechanism, n=2000),
             explorers.rr_explorer(mechanisms.rr_perturb),
             explorers.private_mean_explorer(lambda values, lo, hi, eps, rng: float(np.mean(values)), n_outputs=20),
             explorers.budget_explorer(lambda total: {"total": total, "spent": 0.0},
                                       lambda state, values, t, eps, rng: (6.0, state), lambda a: 6, trials=2)]
    for view in views:
        view.slider.value = 0.2
        for ax in view.figure.axes:
            for text in (ax.get_title(), ax.get_xlabel(), ax.get_ylabel()):
                words = re.findall(r"[A-Za-z]{3,}", text)
                assert not words or re.search(r"[\u4e00-\u9fff]", text), text


def test_explorer_shows_errors_instead_of_raising():
    def broken(*args):
        raise NotImplementedError()

    view = explorers.laplace_explorer(broken)
    assert isinstance(view.last_error, NotImplementedError)
    view.slider.value = 2.0
    assert isinstance(view.last_error, NotImplementedError)


# --- the tests themselves against scipy.stats ------------------------------------------------


def test_ks_chi_square_and_binomial_agree_with_scipy_stats():
    from scipy import stats

    rng = np.random.default_rng(0)
    for scale in (1.0, 1.05):
        x = mechanisms.laplace_noise(scale, 20_000, rng)
        mine = checks.ks_test(x, lambda t: checks._laplace_cdf(t, 1.0))
        ref = stats.kstest(x, lambda t: checks._laplace_cdf(t, 1.0), method="asymp")
        assert math.isclose(mine.statistic, ref.statistic, rel_tol=1e-9)
        assert math.isclose(mine.pvalue, ref.pvalue, rel_tol=1e-6, abs_tol=1e-300)
    obs, exp = np.array([12, 30, 58]), np.array([10.0, 35.0, 55.0])
    mine = checks.chi_square_test(obs, exp)
    ref = stats.chisquare(obs, exp)
    assert math.isclose(mine.pvalue, ref.pvalue, rel_tol=1e-9)
    for k, n, p in ((20_100, 30_000, 0.6682), (19_700, 30_000, 0.6682), (5, 10, 0.5), (0, 10, 0.3), (10, 10, 0.3)):
        ours = checks.binomial_test(k, n, p)
        theirs = stats.binomtest(k, n, p).pvalue
        assert theirs <= ours + 1e-12 <= 2 * theirs + 1e-9 or ours == 1.0
    assert "scipy.stats" not in checks.__dict__


@pytest.mark.parametrize("assignment", ["laplace", "exponential", "randomized_response", "private_mean",
                                        "privacy_budget", "local_frequency"])
def test_every_failure_names_a_mistake(assignment):
    """Every ``_fail`` of an assignment's checks passes ``diagnosis``, and every literal id reads
    ``<assignment>.<mistake>`` (lower-case words), so the class report can group submissions by mistake."""
    import re

    base = Path(checks.__file__).parent  # a module, or a package of modules (private_mean)
    paths = [base / f"{assignment}.py"] if (base / f"{assignment}.py").exists() else sorted((base / assignment).glob("*.py"))
    tree = ast.Module(body=[n for path in paths for n in ast.parse(path.read_text(encoding="utf-8")).body], type_ignores=[])
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)
             and getattr(node.func, "id", None) == "_fail"]
    assert calls
    for call in calls:
        assert any(k.arg == "diagnosis" for k in call.keywords), f"{assignment}:{call.lineno}: _fail without diagnosis"
    literals = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)
                and re.match(r"[a-z_]+\.[a-z]", node.value) and node.value.split(".")[0] in (assignment, "common")}
    assert literals and all(re.fullmatch(re.escape(assignment) + r"\.[a-z][a-z0-9_]*|common\.[a-z][a-z0-9_]*", d)
                            for d in literals), literals


def test_recording_generator_refuses_other_dtypes_and_tapes_out():
    """Only float64 uniforms are taped (the draws checks replay and change them): float32 draws
    had been a stream no check could see (red team: a per-element seeded sampler fed float32)."""
    rng = RecordingGenerator(5, tape=[0.25, 0.5, 0.75], keep=True)
    out = np.empty(2)
    assert rng.random(out=out) is out and list(out) == [0.25, 0.5]
    for dtype in (np.float32, "f4"):
        with pytest.raises(checks.ForbiddenRngMethod, match=r"float32.*rng\.random\(size\)"):
            rng.random(3, dtype=dtype)
    assert rng.forbidden == ["random(dtype=float32)"] * 2
    assert rng.random() == 0.75 and list(rng.drawn()) == [0.25, 0.5, 0.75]

    def mixed(b, size, rng):  # honest, but its sign comes from float32 uniforms
        sign = np.where(rng.random(size, dtype=np.float32) < 0.5, -1.0, 1.0)
        return -sign * b * np.log1p(-rng.random(size))

    with pytest.raises(AssertionError, match="dtype=float32") as failure:
        checks.check_laplace_noise_rng(mixed)
    assert failure.value.diagnosis == "common.rng_dtype"


def test_a_draw_count_that_changes_with_every_draw_does_not_escape_the_nudges():
    """A seeded per-element sampler whose extra draws are hashed from all draws made every changed
    run 'shifted' (not judged). A replaced stretch is now judged by its values, where this one's
    untouched elements keep theirs; the nudged runs are retried sparsely until one keeps the count
    (an honest count keeps it, never this one), so it fails there."""
    def seeded(b, size, rng):
        u = rng.random(size)
        extra = int(np.frombuffer(u.tobytes(), dtype=np.uint64).sum() % np.uint64(997))
        if extra:
            rng.random(extra)
        return np.array([np.random.default_rng(int(x * 2**32)).laplace(0.0, b) for x in u])

    with pytest.raises(AssertionError, match="drew another number of uniforms every time") as failure:
        checks.check_laplace_noise_rng(seeded)
    assert failure.value.diagnosis == "common.draw_count_unstable"


def test_a_draw_count_that_changes_with_every_stretch_does_not_escape_the_stretches():
    """Second red team: the count is computed from 100 × the sum of the draws, so every replaced
    stretch changed it (such runs were not judged) while the nudges barely move the sum (its output
    stayed). Its values are all new after a replaced stretch; an honest rejection sampler puts most
    of the same values in other places (issue 35: judged by values, not positions)."""
    def summed(b, size, rng):
        u = rng.random(size)
        s = int(np.floor(100 * np.sum(u)))
        rng.random(1 + s % 997)
        return np.random.default_rng(s).laplace(0.0, b, size)

    with pytest.raises(AssertionError, match="output values new") as failure:
        checks.check_laplace_noise_rng(summed)
    assert failure.value.diagnosis == "common.generator_seeded_from_draws"


def _memo_sampler():
    """A per-element seeded sampler that gives its first output back for nearby draws (red team)."""
    memo = {}

    def laplace_noise(b, size, rng):
        u = rng.random(size)
        out = np.array([np.random.default_rng(int(x * 2**32)).laplace(0.0, b) for x in u])
        first = memo.setdefault((u.size, b), (u.copy(), out.copy()))
        near = np.abs(first[0] - u) < 1e-5
        out[near] = first[1][near]
        return out

    return laplace_noise


def test_a_sampler_remembering_its_first_output_is_judged_in_another_process():
    """In one process the memory answered the replay, stretches and nudges (the limit of a notebook's
    check), until elements that stay exactly put under the 10⁻⁶ nudge failed as a coarse digest (red
    team s11, A1); a function with ``elsewhere`` (a grading proxy: its second sandbox) gets the nudged
    runs judged where the original draws were never seen: there its elements jump."""

    class TwoProcesses:
        __name__ = "laplace_noise"

        def __init__(self):
            self.here, self.other = _memo_sampler(), _memo_sampler()

        def __call__(self, *args):
            return self.here(*args)

        @contextlib.contextmanager
        def elsewhere(self):
            self.here, self.other = self.other, self.here
            try:
                yield True
            finally:
                self.here, self.other = self.other, self.here

    with pytest.raises(AssertionError) as failure:
        checks.check_laplace_noise_rng(_memo_sampler())
    assert failure.value.diagnosis == "common.output_from_coarse_digest"
    with pytest.raises(AssertionError, match="jump") as failure:
        checks.check_laplace_noise_rng(TwoProcesses())
    assert failure.value.diagnosis == "common.sampler_seeded_per_element"


def test_hidden_laplace_cases_come_from_the_run_seed(monkeypatch, capsys):
    """Issue 25, item 11: a sampler with scale 2b except at the graded sizes (100,000 and (200, 500))
    kept the hidden distribution cell. The hidden b and size are now drawn from the run's seed from
    a family holding the visible ones: over 20 run seeds it is caught whenever the size drawn is not
    one it special-cases, and a correct sampler passes every one (KS at 1e-6)."""
    import math

    from helpers.checks import load_student_code
    from helpers.checks.laplace import check_laplace_noise_distribution, hidden_noise_case

    code = '''
def laplace_noise(b, size, rng):
    u = rng.random(size)
    scale = b if size in (100_000, (200, 500)) else 2 * b
    return -scale * np.sign(u - 0.5) * np.log(1 - 2 * np.abs(u - 0.5))
'''
    wrong = load_student_code(code, {"np": np, "math": math})["laplace_noise"]
    right = load_student_code(code.replace("2 * b", "b"), {"np": np, "math": math})["laplace_noise"]
    caught, sizes = 0, set()
    for run in range(20):
        monkeypatch.setenv("DP_COURSE_SEED", str(run))
        case = hidden_noise_case()
        sizes.add(case["size"])
        check_laplace_noise_distribution(right, **case)
        try:
            check_laplace_noise_distribution(wrong, **case)
        except AssertionError:
            caught += 1
        else:
            assert case["size"] in (100_000, (200, 500))
    assert caught >= 14 and len(sizes) >= 6
