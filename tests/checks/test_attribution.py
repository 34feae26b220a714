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
    ns = load_student_code("import numpy as np\n" + code)
    with pytest.raises(AssertionError) as caught:
        check_laplace_mechanism_distribution(ns["laplace_mechanism"], seed=1)
    return caught.value


def test_a_sign_bug_of_laplace_noise_is_said_of_laplace_noise():
    failure = _failure(ONE_SIDED + DELEGATES)
    assert failure.diagnosis == "laplace.missing_sign"
    assert failure.zh.startswith("错误多半在 laplace_noise") and failure.en.startswith("The mistake is most likely in laplace_noise")
    # the same mistake written inside the mechanism is the mechanism's
    failure = _failure(INLINE)
    assert failure.diagnosis == "laplace.missing_sign" and "laplace_noise" not in failure.zh + failure.en


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
