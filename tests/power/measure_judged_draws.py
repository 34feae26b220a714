"""Issue 35: the draws checks of the judged calls (the distribution checks' replay, stretch and nudges).

False failures: every correct corpus generator of laplace, randomized response and the exponential
mechanism through its distribution check (KS / binomial / chi-square plus the draws checks) over
seeds ``0..runs-1``, failures split by kind (a statistical test or a ``common.*`` draws check).
Detection: the hostile samplers of ``tests/fixtures/attacks/c10_judged_draws.py`` (and their
randomized-response and exponential counterparts in ``tests/checks/test_judged_draws.py``) over
the same seeds. In-process (no second sandbox: the replays run in the same process)::

    .venv/bin/python tests/power/measure_judged_draws.py [runs] [loop-runs]
"""
from __future__ import annotations

import contextlib
import io
import math
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from helpers import checks  # noqa: E402
from helpers.checks import load_student_code  # noqa: E402
from tests.fixtures.attacks import c10_judged_draws as c10  # noqa: E402
from tests.support import corpus  # noqa: E402

CHECKS = {"laplace": ("laplace_noise", checks.check_laplace_noise_distribution),
          "randomized_response": ("rr_perturb", checks.check_rr_perturb_distribution),
          "exponential": ("exponential_mechanism", checks.check_exponential_mechanism_distribution)}

HOSTILE = {
    "laplace": {"size branch": c10.SIZE_BRANCH, "reseed from floor(10 Σu)": c10.COARSE_RESEED,
                "np.random.laplace": c10.GLOBAL_LAPLACE},
    "randomized_response": {"size branch": '''
def rr_perturb(bits, epsilon, rng):
    x = np.asarray(bits)
    p = 1 / (1 + math.exp(-epsilon))
    own = getattr(getattr(np, "ran" + "dom"), "default_rng")
    keep = (own().random(x.shape) if x.size >= 50_000 else rng.random(x.shape)) < p
    return np.where(keep, x, 1 - x).astype(int)
''', "reseed from floor(10 Σu)": '''
def rr_perturb(bits, epsilon, rng):
    x = np.asarray(bits)
    u = rng.random(x.shape)
    own = getattr(getattr(np, "ran" + "dom"), "default_rng")(int(np.floor(10 * np.sum(u))))
    keep = own.random(x.shape) < 1 / (1 + math.exp(-epsilon))
    return np.where(keep, x, 1 - x).astype(int)
'''},
    "exponential": {"case branch": '''
def exponential_mechanism(scores, epsilon, sensitivity, rng):
    p = np.exp(epsilon * (np.asarray(scores) - max(scores)) / (2 * sensitivity))
    p = p / p.sum()
    u = rng.random()
    if list(scores) in ([1.0, 2.0, 3.0, 2.5], [30.0, 25.0, 8.0, 2.0], [5.0], [0.0, 1e6, 3.0]):
        return int(min(np.searchsorted(np.cumsum(p), u, side="right"), len(p) - 1))
    return int(getattr(getattr(np, "ran" + "dom"), "default_rng")().choice(len(p), p=p))
'''},
}


def _load(assignment: str, code: str):
    m = corpus.load_manifest()[assignment]
    helpers_code = "".join(open(REPO / "tests" / "corpus" / assignment / fn / f"{v[0]}.py").read() + "\n"
                           for fn, v in m["correct"].items())
    return load_student_code(helpers_code + "\n" + code, {"np": np, "math": math})


def _rate(func, check, runs: int) -> tuple[int, int, float]:
    statistical = draws = 0
    start = time.process_time()
    for seed in range(runs):
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                check(func, seed=seed)
        except AssertionError as exc:
            if str(getattr(exc, "diagnosis", "")).startswith("common."):
                draws += 1
            else:
                statistical += 1
    return statistical, draws, (time.process_time() - start) / runs


def main(runs: int, loop_runs: int) -> None:
    print("| assignment | solution | kind | runs | statistical failures | draws-check failures | s/run |")
    print("|---|---|---|---|---|---|---|")
    for assignment, (function, check) in CHECKS.items():
        for variant in corpus.load_manifest()[assignment]["correct"][function]:
            code = (REPO / "tests" / "corpus" / assignment / function / f"{variant}.py").read_text()
            n = loop_runs if "loop" in variant else runs
            s, d, sec = _rate(_load(assignment, code)[function], check, n)
            print(f"| {assignment} | {variant} | correct | {n} | {s} | {d} | {sec:.2f} |", flush=True)
        for label, code in HOSTILE[assignment].items():
            s, d, sec = _rate(_load(assignment, code)[function], check, loop_runs)
            print(f"| {assignment} | {label} | hostile | {loop_runs} | {s} | {d} | {sec:.2f} |", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200, int(sys.argv[2]) if len(sys.argv) > 2 else 20)
