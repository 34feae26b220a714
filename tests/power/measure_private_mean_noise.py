"""Power and false failures of the private_mean noise-scale audit (not part of the suite).

``python tests/power/measure_private_mean_noise.py RUNS|FIRST:END [CASE ...]``: runs
``helpers.checks.private_mean.noise_scale_bound`` on vectorized samplers of
correct and wrong mechanisms (seeds 1000, 1001, ...), prints per case how
often the audit failed and the range of the proven lower bound on
(ε₁ + ε₂)/ε. Figures: ``tests/power/RESULTS.md``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import helpers.checks.private_mean as cpm  # noqa: E402


def mechanism(u1: float, u2: float, *, reuse: int = 0, exact_count: bool = False):
    """Vectorized private_mean: sum noise Δ/(u1 ε), count noise 1/(u2 ε); ``reuse`` = ±1: one draw for both."""
    def draw(values, lower, upper, epsilon, rng, n):
        x = np.clip(values, lower, upper)
        delta = max(abs(lower), abs(upper))
        l1 = rng.laplace(size=n)
        l2 = reuse * l1 if reuse else rng.laplace(size=n)
        s = x.sum() + delta / (u1 * epsilon) * l1
        c = x.size + (0.0 if exact_count else l2 / (u2 * epsilon))
        return np.clip(s / np.maximum(c, 1.0), lower, upper)
    return draw


CASES = {
    "correct 0.5/0.5": mechanism(0.5, 0.5),
    "correct 0.6/0.4": mechanism(0.6, 0.4),
    "correct 0.9/0.1": mechanism(0.9, 0.1),
    "correct 0.98/0.02": mechanism(0.98, 0.02),
    "correct 0.2/0.8": mechanism(0.2, 0.8),
    "1.25ε: sum scale 1.5x too small (0.75+0.5)": mechanism(0.75, 0.5),
    "1.25ε: 0.5+0.75": mechanism(0.5, 0.75),
    "1.25ε: 1.0+0.25": mechanism(1.0, 0.25),
    "1.5ε: 1.0+0.5": mechanism(1.0, 0.5),
    "1.5ε: 0.75+0.75": mechanism(0.75, 0.75),
    "2ε: full ε on both": mechanism(1.0, 1.0),
    "exact count, 0.5ε on the sum": mechanism(0.5, 1.0, exact_count=True),
    "exact count, ε on the sum": mechanism(1.0, 1.0, exact_count=True),
    "one draw for both (S + aL, n + bL)": mechanism(0.5, 0.5, reuse=1),
    "one draw for both (S + aL, n - bL)": mechanism(0.5, 0.5, reuse=-1),
}


def main() -> None:
    span = sys.argv[1] if len(sys.argv) > 1 else "10"
    first, end = (int(x) for x in span.split(":")) if ":" in span else (0, int(span))
    runs = end - first
    wanted = sys.argv[2:] or list(CASES)
    for name in wanted:
        start = time.process_time()
        bounds = [cpm.noise_scale_bound(CASES[name], 1000 + s).epsilon for s in range(first, end)]
        failed = sum(b > 1.0 for b in bounds)
        print(f"| {name} | {runs} | {failed}/{runs} | {min(bounds):.2f}-{max(bounds):.2f} | "
              f"{(time.process_time() - start) / runs:.1f} |", flush=True)


if __name__ == "__main__":
    main()
