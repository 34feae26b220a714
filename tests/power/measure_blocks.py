"""Attacker, session 12: blocks of outputs served by one uniform through numpy's own sampler seeded by
a coarse cell of it; and the correct samplers that serve several bits from one uniform.

False failures: the corpus's ``residual_reuse`` (2 bits per uniform) and ``residual_reuse3`` (3) through
``check_rr_perturb_rng`` and ``check_rr_perturb_distribution`` (visible and the hidden case of each seed).
Detection: for block sizes B and K cells, whether the rng check or the visible distribution check fails
(randomized_response, laplace with the attacker's small term 0.004 b (u - 1/2), exponential with one
uniform per B calls), with the forbidden-name scan switched off (these samplers keep numpy's generator in
a global dict, which the scan now reports: helpers/checks/reach.py), so that the draws checks are measured
alone. In-process::

    .venv/bin/python tests/power/measure_blocks.py [correct-seeds] [cheat-seeds] [assignment]
"""
from __future__ import annotations

import contextlib
import io
import math
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from helpers import checks  # noqa: E402
from helpers.checks import load_student_code  # noqa: E402
from helpers.checks.core import CheckFailure  # noqa: E402
from helpers.checks.randomized_response import hidden_perturb_case  # noqa: E402

CORPUS = REPO / "tests" / "corpus"
KEEP = (CORPUS / "randomized_response" / "rr_keep_probability" / "logistic.py").read_text()
PROBABILITIES = (CORPUS / "exponential" / "exponential_probabilities" / "softmax.py").read_text()
_T = {"g": np.random.default_rng}


def _rr(block, cells):
    keep = load_student_code(KEEP, {"np": np, "math": math})["rr_keep_probability"]

    def rr_perturb(bits, epsilon, rng):
        x = np.asarray(bits)
        flat = x.ravel()
        u = rng.random(-(-flat.size // block))
        draws = np.concatenate([_T["g"]([i, int(u[i] * cells), 99]).random(min(block, flat.size - i * block))
                                for i in range(u.size)])
        return np.where(draws < keep(epsilon), flat, 1 - flat).astype(int).reshape(x.shape)
    return rr_perturb


def _laplace(block, cells):
    def laplace_noise(b, size, rng):
        shape = (size,) if isinstance(size, int) else tuple(size)
        n = int(np.prod(shape))
        u = rng.random(-(-n // block))
        return np.concatenate([_T["g"]([i, int(u[i] * cells), 7]).laplace(0.0, b, min(block, n - i * block))
                               + 0.004 * b * (u[i] - 0.5) for i in range(u.size)]).reshape(shape)
    return laplace_noise


def _exponential(block, cells):
    probs = load_student_code(PROBABILITIES, {"np": np, "math": math})["exponential_probabilities"]
    state = {}

    def exponential_mechanism(scores, epsilon, sensitivity, rng):
        st = state.get(id(rng))
        if st is None or st[0] is not rng:
            st = state[id(rng)] = [rng, 0, None]
        if st[1] % block == 0:
            st[2] = _T["g"]([st[1] // block, int(rng.random() * cells), 5])
        st[1] += 1
        p = probs(scores, epsilon, sensitivity)
        return int(st[2].choice(len(p), p=p))
    return exponential_mechanism


def _fails(check, *args, **kwargs) -> str | None:
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            check(*args, **kwargs)
        except CheckFailure as failure:
            return failure.diagnosis
    return None


def main(correct_seeds: int = 50, cheat_seeds: int = 5, only: str = "") -> None:
    from helpers.checks import exponential, laplace, randomized_response
    for module in (exponential, laplace, randomized_response):
        module._check_no_forbidden = lambda func: None
    for variant in ("residual_reuse", "residual_reuse3"):
        code = KEEP + "\n" + (CORPUS / "randomized_response" / "rr_perturb" / f"{variant}.py").read_text()
        f = load_student_code(code, {"np": np, "math": math})["rr_perturb"]
        failed = [(s, what) for s in range(correct_seeds) for what in (
            _fails(checks.check_rr_perturb_rng, f, s), _fails(checks.check_rr_perturb_distribution, f, s),
            _fails(checks.check_rr_perturb_distribution, f, s, **hidden_perturb_case(s))) if what]
        print(f"correct {variant}: {correct_seeds} seeds x 3 checks, {len(failed)} failures {failed[:5]}", flush=True)
    cases = {"randomized_response": (_rr, checks.check_rr_perturb_rng, checks.check_rr_perturb_distribution,
                                     [(b, 4) for b in (1, 2, 3, 4, 20, 400)] + [(2, k) for k in (8, 16, 32, 64, 256)]),
             "laplace": (_laplace, checks.check_laplace_noise_rng, checks.check_laplace_noise_distribution,
                         [(b, k) for b in (2, 4, 20, 400) for k in (4, 100, 300, 1000)]),
             "exponential": (_exponential, checks.check_exponential_mechanism_rng, checks.check_exponential_mechanism_distribution,
                             [(b, k) for b in (1, 2, 4, 16) for k in (4, 16, 32, 64, 128)])}
    for assignment, (make, rng_check, dist_check, grid) in cases.items():
        if only and assignment != only:
            continue
        for block, cells in grid:
            caught, by = 0, set()
            for s in range(cheat_seeds):
                f = make(block, cells)
                kwargs = {}
                if assignment == "exponential":
                    kwargs["probabilities"] = load_student_code(PROBABILITIES, {"np": np, "math": math})["exponential_probabilities"]
                got = [_fails(rng_check, f, s), _fails(dist_check, make(block, cells), s, **kwargs)]
                caught += any(got)
                by |= {g for g in got if g}
            print(f"{assignment} block {block} cells {cells}: caught {caught}/{cheat_seeds} {sorted(by)}", flush=True)


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]), *sys.argv[3:4])
