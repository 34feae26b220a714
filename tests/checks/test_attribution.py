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
