"""Speed of the reference mechanisms, measured in one run: ``python -m helpers.bench``.

Prints a plain-text table and is not a test. Timings depend on the machine and its load. The
*ratios* to a bare numpy baseline, measured in the same run on the same data size, are the
figures to compare across machines:

* ``laplace_noise(b, n, rng)`` throughput as a multiple of numpy's own
  ``rng.laplace(0, b, n)`` (higher is better), n = 10**7, best of 5;
* ``exponential_mechanism`` over 10**6 candidate scores, median of 7 calls, in ms (goal < 30 ms);
* ``rr_perturb(bits, ε, rng)`` time as a multiple of a bare ``rng.random(n) < p`` comparison, n = 10**7,
  best of 5.

Use ``--n`` and ``--repeat`` to scale it down on a busy machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Callable

import numpy as np

from helpers.mechanisms import exponential_mechanism, laplace_noise, rr_keep_probability, rr_perturb


def _times(fn: Callable[[], object], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def run(*, n: int = 10**7, candidates: int = 10**6, repeat: int = 5, seed: int = 2024) -> list[tuple[str, str, str]]:
    """Measure and return rows ``(what, measurement, comparison)``; see the module docstring."""
    rng = np.random.default_rng(seed)
    rows = []

    ours = min(_times(lambda: laplace_noise(1.0, n, rng), repeat))
    bare = min(_times(lambda: rng.laplace(0.0, 1.0, n), repeat))
    rows.append((
        f"laplace_noise, n = {n:.0e}",
        f"{ours * 1e3:8.1f} ms (best of {repeat})",
        f"throughput {bare / ours:4.2f}x rng.laplace's ({bare * 1e3:.1f} ms; goal >= 1x)",
    ))

    scores = rng.integers(0, 1000, candidates).astype(float)
    em = _times(lambda: exponential_mechanism(scores, 1.0, 1.0, rng), max(repeat, 7))
    rows.append((
        f"exponential_mechanism, {candidates:.0e} candidates",
        f"{statistics.median(em) * 1e3:8.1f} ms (median of {len(em)})",
        "",
    ))

    bits = (rng.random(n) < 0.3).astype(np.uint8)
    p = rr_keep_probability(1.0)
    ours = min(_times(lambda: rr_perturb(bits, 1.0, rng), repeat))
    bare = min(_times(lambda: rng.random(n) < p, repeat))
    rows.append((
        f"rr_perturb, n = {n:.0e}",
        f"{ours * 1e3:8.1f} ms (best of {repeat})",
        f"time {ours / bare:4.2f}x a bare rng.random(n) < p ({bare * 1e3:.1f} ms)",
    ))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m helpers.bench", description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10**7, help="samples for laplace_noise and rr_perturb")
    parser.add_argument("--candidates", type=int, default=10**6, help="scores for exponential_mechanism")
    parser.add_argument("--repeat", type=int, default=5, help="repetitions (best-of / median-of)")
    args = parser.parse_args(argv)
    if args.n < 1 or args.candidates < 1 or args.repeat < 1:
        parser.error("--n, --candidates and --repeat must be >= 1")
    print(f"helpers.bench: numpy {np.__version__}, python {sys.version.split()[0]}")
    rows = run(n=args.n, candidates=args.candidates, repeat=args.repeat)
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
