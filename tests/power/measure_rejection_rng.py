"""False failures of the laplace rng checks on vectorised rejection samplers (issue 25, item 1).

Cauchy-proposal Laplace samplers (``tests/corpus/laplace/laplace_noise/cauchy_rejection_*.py``)
with ``check_laplace_noise_rng`` and ``check_laplace_mechanism_rng`` over seeds ``0..runs-1``::

    .venv/bin/python tests/power/measure_rejection_rng.py [runs]
"""
from __future__ import annotations

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
                    check(ns[func], seed=seed)
                except AssertionError as exc:
                    failed.append((seed, str(exc)[:160]))
            print(f"{variant:26s} {check.__name__:28s} failed {len(failed)}/{runs} "
                  f"({(time.time() - start) / runs:.3f} s/seed) {failed[:2]}", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
