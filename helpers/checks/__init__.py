"""What grading checks: the code behind the graded test cells of the six assignments.

Every ``check_*`` function takes the student's function(s) and, where
randomness is judged, a ``seed``. It returns ``None`` when the function passes
and raises :class:`CheckFailure` (an ``AssertionError``) with a bilingual
message (Chinese, then English) that says what was measured, what was expected
and the likely mistake, and a stable ``diagnosis`` id of that mistake. The
checks are pure: they depend only on the functions passed in and on the seed,
so the autograder runs them in its trusted process with the student's
functions standing behind proxies.

What the checks never do is compare exact sample values: any correct sampler
(inverse CDF, sign × exponential, difference of exponentials, a Python loop,
Gumbel-max, cumulative sums...) must pass. Randomness is judged by its
distribution (Kolmogorov–Smirnov, chi-square, exact binomial tests, each at
level ``ALPHA = 1e-6``; a check that runs ``k`` tests states ``k × 1e-6``) and
by rng discipline (:class:`RecordingGenerator`: only ``rng.random``).

Seeds: a check's default seed is fixed (derived from its name), so a student
sees the same verdict every time; with ``DP_COURSE_SEED`` set (the autograder
does) seeds derive from it, and every statistical check prints its seed.

Modules:

* :mod:`~helpers.checks.core` — failures, seeds, the recording generator, calling student code;
* :mod:`~helpers.checks.stats` — the statistical tests;
* :mod:`~helpers.checks.forbidden` — ready-made samplers found in the syntax tree (a note);
* :mod:`~helpers.checks.similarity` — copied solutions (a note);
* one module per assignment: :mod:`~helpers.checks.laplace`, :mod:`~helpers.checks.exponential`,
  :mod:`~helpers.checks.randomized_response`, :mod:`~helpers.checks.private_mean`,
  :mod:`~helpers.checks.privacy_budget`, :mod:`~helpers.checks.local_frequency`.

The package namespace re-exports the framework and the three code assignments' checks,
so ``from helpers.checks import check_laplace_noise_basics`` keeps working.
"""

from helpers.checks.core import (  # noqa: F401
    ALPHA,
    EPSILON,
    SEED_ENV,
    SENSITIVITY,
    CheckFailure,
    ForbiddenRngMethod,
    RecordingGenerator,
    _ALLOWED_RNG,
    _fail,
    call_repeatedly,
    check_seed,
    load_student_code,
)
from helpers.checks.exponential import *  # noqa: F401,F403
from helpers.checks.exponential import _exp_probs  # noqa: F401
from helpers.checks.forbidden import find_forbidden_calls  # noqa: F401
from helpers.checks.laplace import *  # noqa: F401,F403
from helpers.checks.laplace import _laplace_cdf  # noqa: F401
from helpers.checks.randomized_response import *  # noqa: F401,F403
from helpers.checks.randomized_response import _keep  # noqa: F401
from helpers.checks.similarity import _is_validation, copy_report, similarity_to_reference  # noqa: F401
from helpers.checks.stats import _merge_bins, binomial_test, chi_square_test, ks_test  # noqa: F401
