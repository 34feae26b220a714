"""A failure is said of the function the evidence points to (issue 35, §5)."""

from __future__ import annotations

import pytest

from helpers.checks import load_student_code
from helpers.checks.laplace import check_laplace_mechanism_distribution

ONE_SIDED = "def laplace_noise(b, size, rng):\n    return -b * np.log1p(-rng.random(size))\n"
DELEGATES = "def laplace_mechanism(value, sensitivity, epsilon, rng):\n" \
            "    return value + laplace_noise(sensitivity / epsilon, np.shape(value), rng)\n"
INLINE = "def laplace_mechanism(value, sensitivity, epsilon, rng):\n" \
         "    return value - sensitivity / epsilon * np.log1p(-rng.random(np.shape(value)))\n"


def _failure(code: str) -> AssertionError:
    """The mechanism's distribution check called as the test cell calls it: from the namespace holding
    the student's functions (the check asks the student's laplace_noise there, as in grading)."""
    ns = load_student_code("import numpy as np\n" + code)
    cell = dict(ns, check_laplace_mechanism_distribution=check_laplace_mechanism_distribution)
    with pytest.raises(AssertionError) as caught:
        exec("check_laplace_mechanism_distribution(laplace_mechanism, seed=1)", cell)
    return caught.value


def test_a_sign_bug_of_laplace_noise_is_said_of_laplace_noise():
    failure = _failure(ONE_SIDED + DELEGATES)
    assert failure.diagnosis == "laplace.missing_sign"
    assert failure.zh.startswith("错误多半在 laplace_noise") and failure.en.startswith("The mistake is most likely in laplace_noise")
    # the same mistake written inside the mechanism is the mechanism's
    failure = _failure(INLINE)
    assert failure.diagnosis == "laplace.missing_sign" and "laplace_noise" not in failure.zh + failure.en


INVERSE_SCALE = "def laplace_noise(b, size, rng):\n" \
                "    u = rng.random(size) - 0.5\n" \
                "    return -(1 / b) * np.sign(u) * np.log1p(-2 * np.abs(u))\n"
CORRECT_NOISE = INVERSE_SCALE.replace("(1 / b)", "b")
EPS_OVER_DELTA = DELEGATES.replace("sensitivity / epsilon", "epsilon / sensitivity")


def test_a_scale_bug_is_said_of_the_function_the_judges_own_sample_points_to():
    """The judge asks the student's laplace_noise for a sample at b = Δ/ε itself: a wrong scale there is
    laplace_noise's (the mechanism's noise has that sample's distribution); with a right laplace_noise,
    the same symptom (scale ε/Δ) is the mechanism's own, said so (it had been hedged: either place)."""
    failure = _failure(INVERSE_SCALE + DELEGATES)
    assert failure.zh.startswith("错误多半在 laplace_noise，不在 laplace_mechanism") and "像是 1/b" in failure.zh
    assert failure.en.startswith("The mistake is most likely in laplace_noise, not laplace_mechanism")
    failure = _failure(CORRECT_NOISE + EPS_OVER_DELTA)
    assert failure.diagnosis == "laplace.scale_inverted" and "不在 laplace_mechanism" not in failure.zh
    assert "所以错误在 laplace_mechanism 本身" in failure.zh and "so the mistake is in laplace_mechanism itself" in failure.en


MIDPOINT_MEAN = """
def private_mean(values, lower, upper, epsilon, rng):
    # Google's bounded mean: noise on the sum of x - m, m the range's midpoint (sensitivity (upper - lower)/2)
    x = np.clip(np.asarray(values, dtype=float), lower, upper)
    m = (lower + upper) / 2
    count = len(x) + rng.laplace(0.0, 2.0 / epsilon)
    total = np.sum(x - m) + rng.laplace(0.0, (upper - lower) / epsilon)
    return float(np.clip(m + total / max(count, 1.0), lower, upper))
"""


def test_the_noise_scale_audit_does_not_call_a_private_midpoint_mean_overspent():
    """An ε-DP mechanism of another form fails the specified-form audit; the message says it cannot tell
    that from an overspent budget, and the diagnosis does not claim a proven ε beyond the claim."""
    import contextlib
    import io

    from helpers.checks.private_mean.audits import _check_noise_scales

    ns = load_student_code("import numpy as np\n" + MIDPOINT_MEAN)
    with pytest.raises(AssertionError) as caught, contextlib.redirect_stdout(io.StringIO()):
        _check_noise_scales(ns["private_mean"], 1)
    failure = caught.value
    assert failure.diagnosis == "private_mean.tails_thinner_than_the_form"
    assert "cannot tell these apart" in failure.en and "分不清" in failure.zh and "Google" in failure.en


# --- randomized_response and exponential: the judge asks the helper itself ----------------------------

from helpers.checks.exponential import check_exponential_mechanism_basics, check_exponential_mechanism_distribution
from helpers.checks.randomized_response import check_rr_perturb_basics, check_rr_perturb_distribution
from tests.support import corpus as build


def _corpus_ns(assignment: str, **variants: str) -> dict:
    ns = load_student_code("import math\nimport numpy as np\n")   # one namespace: the functions call each other
    for function, variant in variants.items():
        load_student_code((build.HERE / assignment / function / f"{variant}.py").read_text(), ns)
    return ns


def _caught(run) -> AssertionError:
    with pytest.raises(AssertionError) as caught:
        run()
    return caught.value


def _as_a_test_cell(check: str, function: str, ns: dict) -> AssertionError:
    """The check called as the notebook's test cell calls it: from code whose namespace holds the
    student's functions (no helper passed: the check finds it there, as in grading)."""
    import helpers.checks as checks

    cell = dict(ns, **{check: getattr(checks, check)})
    return _caught(lambda: exec(f"{check}({function})", cell))


@pytest.mark.parametrize("keep", ["swapped", "half_epsilon"])
def test_a_wrong_keep_probability_is_said_of_rr_keep_probability(keep):
    """rr_perturb (the corpus's correct 'where') takes p from a wrong rr_keep_probability: its keep rates
    fit that p, so the failure is said of rr_keep_probability, with that function's id."""
    ns = _corpus_ns("randomized_response", rr_keep_probability=keep, rr_perturb="where")
    failure = _as_a_test_cell("check_rr_perturb_distribution", "rr_perturb", ns)
    assert failure.diagnosis == "randomized_response.keep_probability_inherited"
    assert failure.zh.startswith("错误多半在 rr_keep_probability，不在 rr_perturb")
    assert failure.en.startswith("The mistake is most likely in rr_keep_probability, not rr_perturb")
    assert "rr_keep_probability(0.7)" in failure.zh and "rr_keep_probability(0.7)" in failure.en


def test_an_overflowing_keep_probability_is_said_of_rr_keep_probability():
    """ε = 800: the keep probability gives nan (np.exp) and rr_perturb flips every bit; or raises
    OverflowError (math.exp, the corpus's 'swapped') and rr_perturb crashes with it."""
    for keep in ("overflow", "swapped"):
        ns = _corpus_ns("randomized_response", rr_keep_probability=keep, rr_perturb="where")
        failure = _caught(lambda: check_rr_perturb_basics(ns["rr_perturb"], keep_probability=ns["rr_keep_probability"]))
        assert failure.diagnosis == "randomized_response.keep_probability_inherited", keep
        assert failure.zh.startswith("错误多半在 rr_keep_probability") and "1/(1 + e^(-ε))" in failure.zh


@pytest.mark.parametrize("perturb", ["swapped", "fair_coin_after_flip"])
def test_a_correct_keep_probability_leaves_the_failure_with_rr_perturb(perturb):
    """The same symptoms with a correct rr_keep_probability: rr_perturb's own mistake, said so."""
    ns = _corpus_ns("randomized_response", rr_keep_probability="logistic", rr_perturb=perturb)
    failure = _as_a_test_cell("check_rr_perturb_distribution", "rr_perturb", ns)
    assert failure.diagnosis != "randomized_response.keep_probability_inherited"
    assert failure.zh.startswith("rr_perturb：") and "所以错误在 rr_perturb 本身" in failure.zh
    assert "so the mistake is in rr_perturb itself" in failure.en


def test_a_keep_probability_rr_perturb_does_not_call_is_not_blamed():
    """rr_perturb computing its own p (inline) with a wrong rr_keep_probability beside it: rr_perturb's
    failure stays rr_perturb's (the evidence is about the code that ran)."""
    ns = _corpus_ns("randomized_response", rr_keep_probability="swapped")
    load_student_code(
        "def rr_perturb(bits, epsilon, rng):\n"
        "    x = np.asarray(bits)\n"
        "    q = 1 / (1 + np.exp(epsilon))\n"
        "    return np.where(rng.random(x.shape) < q, x, 1 - x).astype(int)\n", ns)
    failure = _as_a_test_cell("check_rr_perturb_distribution", "rr_perturb", ns)
    assert failure.diagnosis == "randomized_response.p_swapped" and "不在 rr_perturb" not in failure.zh


@pytest.mark.parametrize("probabilities", ["no_factor_2", "reversed", "proportional"])
def test_wrong_probabilities_are_said_of_exponential_probabilities(probabilities):
    """A correct sampler (the corpus's 'cumsum_search') over wrong probabilities: its frequencies fit
    them, so the failure is said of exponential_probabilities. (Unnormalized weights are no mistake for
    this sampler: it scales u by the last cumulative sum, and passes.)"""
    ns = _corpus_ns("exponential", exponential_probabilities=probabilities, exponential_mechanism="cumsum_search")
    failure = _as_a_test_cell("check_exponential_mechanism_distribution", "exponential_mechanism", ns)
    assert failure.diagnosis == "exponential.probabilities_inherited"
    assert failure.zh.startswith("错误多半在 exponential_probabilities，不在 exponential_mechanism")
    assert failure.en.startswith("The mistake is most likely in exponential_probabilities, not exponential_mechanism")


def test_overflowing_probabilities_are_said_of_exponential_probabilities():
    """Scores [0, 1e6, 3]: nan probabilities from the helper, and the mechanism that samples from them fails."""
    ns = _corpus_ns("exponential", exponential_probabilities="overflow", exponential_mechanism="python_loop")
    failure = _caught(lambda: check_exponential_mechanism_basics(
        ns["exponential_mechanism"], probabilities=ns["exponential_probabilities"]))
    assert failure.diagnosis == "exponential.probabilities_inherited" and "nan" in failure.zh


@pytest.mark.parametrize("mechanism", ["gumbel_wrong_sign", "uniform_choice"])
def test_right_probabilities_leave_the_failure_with_exponential_mechanism(mechanism):
    ns = _corpus_ns("exponential", exponential_probabilities="softmax", exponential_mechanism=mechanism)
    failure = _as_a_test_cell("check_exponential_mechanism_distribution", "exponential_mechanism", ns)
    assert failure.diagnosis != "exponential.probabilities_inherited"
    assert failure.zh.startswith("exponential_mechanism 的输出频率")
    assert "所以错误在 exponential_mechanism 本身的抽样" in failure.zh and "exponential_mechanism's own sampling" in failure.en


def test_a_missing_value_error_of_the_helper_is_said_of_the_helper():
    """rr_perturb and exponential_mechanism may leave checking ε to the helper (the notebook's own
    rr_perturb does): a helper that accepts ε = 0 (or ε < 0) is named, not its caller."""
    import helpers.checks.exponential as exponential

    ns = _corpus_ns("randomized_response", rr_keep_probability="no_validation", rr_perturb="where")
    failure = _as_a_test_cell("check_rr_perturb_basics", "rr_perturb", ns)
    assert failure.diagnosis == "randomized_response.keep_probability_inherited"
    assert failure.zh.startswith("错误多半在 rr_keep_probability，不在 rr_perturb") and "ValueError" in failure.zh
    ns = _corpus_ns("exponential", exponential_probabilities="no_validation", exponential_mechanism="cumsum_search")
    failure = _caught(lambda: exponential.check_exponential_mechanism_invalid(
        ns["exponential_mechanism"], probabilities=ns["exponential_probabilities"]))
    assert failure.diagnosis == "exponential.probabilities_inherited"
    assert failure.en.startswith("The mistake is most likely in exponential_probabilities, not exponential_mechanism")


def test_a_caller_that_swallows_the_helpers_value_error_is_named():
    ns = _corpus_ns("randomized_response", rr_keep_probability="logistic")
    load_student_code(
        "def rr_perturb(bits, epsilon, rng):\n"
        "    x = np.asarray(bits)\n"
        "    if not np.all((x == 0) | (x == 1)):\n"
        "        raise ValueError('bits')\n"
        "    try:\n"
        "        p = rr_keep_probability(epsilon)\n"
        "    except ValueError:\n"
        "        p = 0.5\n"
        "    return np.where(rng.random(x.shape) < p, x, 1 - x).astype(int)\n", ns)
    failure = _as_a_test_cell("check_rr_perturb_basics", "rr_perturb", ns)
    assert failure.diagnosis == "common.no_value_error"
    assert failure.zh.startswith("rr_perturb(") and "所以错误在 rr_perturb 本身" in failure.zh
