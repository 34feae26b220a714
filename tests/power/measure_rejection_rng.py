"""False failures of the laplace rng checks on vectorised rejection samplers (issue 25, item 1).

Cauchy-proposal Laplace samplers (``tests/corpus/laplace/laplace_noise/cauchy_rejection_*.py``)
with ``check_laplace_noise_rng`` and ``check_laplace_mechanism_rng`` over seeds ``0..runs-1``::

    .venv/bin/python tests/power/measure_rejection_rng.py [runs]
    .venv/bin/python tests/power/measure_rejection_rng.py values [runs]   # new values of a replaced stretch
    .venv/bin/python tests/power/measure_rejection_rng.py discrete [runs] # the exponential rejection sampler
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
import helpers.checks.laplace as cl  # noqa: E402
from helpers.checks import load_student_code  # noqa: E402

CORPUS = REPO / "tests" / "corpus" / "laplace"


def main(runs: int) -> None:
    mechanism = (CORPUS / "laplace_mechanism" / "vectorized.py").read_text()
    for variant in ("cauchy_rejection_redraw", "cauchy_rejection_concat"):
        code = (CORPUS / "laplace_noise" / f"{variant}.py").read_text() + "\n\n" + mechanism
        ns = load_student_code(code, {"np": np, "math": math})
        for check, func in ((cl.check_laplace_noise_rng, "laplace_noise"),
                            (cl.check_laplace_mechanism_rng, "laplace_mechanism")):
            failed, start = [], time.time()
            for seed in range(runs):
                try:
                    with contextlib.redirect_stdout(io.StringIO()):
                        check(ns[func], seed=seed)
                except AssertionError as exc:
                    failed.append((seed, str(exc)[:160]))
            print(f"{variant:26s} {check.__name__:28s} failed {len(failed)}/{runs} "
                  f"({(time.time() - start) / runs:.3f} s/seed) {failed[:2]}", flush=True)


def new_values(runs: int, size: int) -> None:
    """Issue 35: a replaced stretch of a rejection sampler is judged by its values. Per run, the largest
    share of new values over the 8 stretches (``forbidden._new_values``) against the allowance
    (``forbidden._new_values_allowed``): its mean, standard deviation and maximum, and how many standard
    deviations the allowance lies above the mean."""
    from helpers.checks.core import RecordingGenerator
    from helpers.checks.forbidden import _new_values, _new_values_allowed

    for variant in ("cauchy_rejection_redraw", "cauchy_rejection_concat"):
        noise = load_student_code((CORPUS / "laplace_noise" / f"{variant}.py").read_text(),
                                  {"np": np, "math": math})["laplace_noise"]
        margins = []
        for seed in range(runs):
            rng = RecordingGenerator(seed, keep=True)
            base = noise(1.5, size, rng)
            drawn = rng.drawn()
            edges = np.linspace(0, drawn.size, 9).astype(int)
            other = np.random.default_rng([seed, 17]).random(drawn.size)
            worst = -1.0
            for lo, hi in zip(edges[:-1], edges[1:]):
                tape = drawn.copy()
                tape[lo:hi] = other[lo:hi]
                new = _new_values(noise(1.5, size, RecordingGenerator(seed + 2, tape=tape)), base)
                worst = max(worst, (new - _new_values_allowed(hi - lo, base.size)) / base.size)
            margins.append(worst)
        m = np.array(margins)
        print(f"{variant:26s} n = {size:6d}: (new - allowed)/n over the worst stretch: mean {m.mean():.3f}, "
              f"sd {m.std():.3f}, max {m.max():.3f} (fails at > 0; {-m.mean() / m.std():.1f} sd below), {runs} runs",
              flush=True)


def discrete(runs: int) -> None:
    """Issue 35: the exponential-mechanism rejection sampler (corpus) under the discrete-output rule (a
    fixed count with more changed elements than replaced uniforms fails): how often a replaced stretch
    keeps its number of draws, how often it keeps it while changing more elements than its width, and
    its rng check's failures over seeds ``0..runs-1``."""
    from helpers.checks import call_repeatedly, check_exponential_mechanism_rng
    from helpers.checks.core import RecordingGenerator

    root = REPO / "tests" / "corpus" / "exponential"
    code = (root / "exponential_probabilities" / "softmax.py").read_text() + "\n" + (
        root / "exponential_mechanism" / "rejection.py").read_text()
    mechanism = load_student_code(code, {"np": np, "math": math})["exponential_mechanism"]
    scores, kept, wide, total = [1.0, 2.0, 3.0, 2.5], 0, 0, 0
    for seed in range(runs):
        rng = RecordingGenerator(seed, keep=True)
        base = np.array(call_repeatedly(mechanism, 64, scores, 0.7, 3.0, rng))
        drawn = rng.drawn()
        edges = np.linspace(0, drawn.size, 9).astype(int)
        other = np.random.default_rng([seed, 17]).random(drawn.size)
        for lo, hi in zip(edges[:-1], edges[1:]):
            tape = drawn.copy()
            tape[lo:hi] = other[lo:hi]
            replayed = RecordingGenerator(seed + 2, tape=tape)
            out = np.array(call_repeatedly(mechanism, 64, scores, 0.7, 3.0, replayed))
            same = replayed.draws == drawn.size
            kept, wide, total = kept + same, wide + (same and int(np.sum(out != base)) > hi - lo), total + 1
    failed = 0
    for seed in range(runs):
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                check_exponential_mechanism_rng(mechanism, seed=seed)
        except AssertionError:
            failed += 1
    print(f"exponential rejection, 64 calls: {kept}/{total} replaced stretches keep the count "
          f"({kept / total:.2f}; all 24 probes: about {(kept / total) ** 24:.1e}), {wide}/{total} keep it while "
          f"changing more elements than their width; check_exponential_mechanism_rng failed {failed}/{runs}",
          flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "discrete":
        discrete(int(sys.argv[2]))
    elif len(sys.argv) > 2 and sys.argv[1] == "values":
        new_values(int(sys.argv[2]), 1000)
        new_values(max(1, int(sys.argv[2]) // 50), 100_000)
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
