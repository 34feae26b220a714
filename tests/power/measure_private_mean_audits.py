"""Power of the private_mean privacy cell against the mistakes of issue 17, and its false failures.

Usage: ``python tests/power/measure_private_mean_audits.py --runs 10 --correct-runs 3 [--only NAME,...]``

Every row runs the privacy cell's audits (``helpers.checks.private_mean.AUDITS``,
in the notebook's order, stopping at the first failure as the cell does) on a
scalar ``private_mean`` in this process, with seeds 2000, 2001, ...
(``check_seed`` is bypassed: the seed is passed). It prints one markdown row
per mechanism: how many seeds the cell failed, which audit caught it first,
the largest lower bound / claimed ε per audit, and the wall time per seed.
Each audit is a Clopper–Pearson bound at confidence 1 - 1e-6, so a correct
mechanism fails an audit with probability <= 1e-6 (stated, not measured).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import helpers.checks.private_mean as cpm

ORDER = ("composition", "noise_scales", "upper_bound_mean", "interior", "small_interior", "mostly_negative_range",
         "one_sided_range")


def mechanism(e1: float, e2: float, *, reuse: bool = False, exact_count: bool = False, cheat: bool = False):
    """Noisy clipped sum (share e1 of ε) / noisy count (share e2), clipped; the variants of issue 17."""
    def private_mean(values, lower, upper, epsilon, rng):
        x = np.clip(np.asarray(values, dtype=float), lower, upper)
        if cheat and len(set(np.asarray(values, dtype=float).tolist())) > 2:
            return float(x.mean()) + 1e-12 * rng.random()
        delta = max(abs(lower), abs(upper))
        noise = rng.laplace()
        s = x.sum() + delta / (e1 * epsilon) * noise
        noise = noise if reuse else rng.laplace()
        n = x.size + (0.0 if exact_count else noise / (e2 * epsilon))
        return float(np.clip(s / max(n, 1.0), lower, upper))
    return private_mean


ROWS = {
    "correct 0.6/0.4": ("correct", mechanism(0.6, 0.4)),
    "correct 0.8/0.2": ("correct", mechanism(0.8, 0.2)),
    "correct 0.3/0.7": ("correct", mechanism(0.3, 0.7)),
    "exact mean unless ≤ 2 distinct values": ("wrong", mechanism(0.5, 0.5, cheat=True)),
    "one noise draw for sum and count (equal split)": ("wrong", mechanism(0.5, 0.5, reuse=True)),
    "one noise draw for sum and count (0.6/0.4)": ("wrong", mechanism(0.6, 0.4, reuse=True)),
    "sum noise scale 1.5× too small (0.75ε + 0.5ε = 1.25ε)": ("wrong", mechanism(0.75, 0.5)),
    "budget 1.25ε (0.5ε + 0.75ε)": ("wrong", mechanism(0.5, 0.75)),
    "budget 1.5ε (ε + 0.5ε)": ("wrong", mechanism(1.0, 0.5)),
    "budget 1.5ε (0.75ε + 0.75ε)": ("wrong", mechanism(0.75, 0.75)),
    "full ε on both releases (2ε)": ("wrong", mechanism(1.0, 1.0)),
    "exact count (0.5ε on the sum)": ("wrong", mechanism(0.5, 0.5, exact_count=True)),
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10, help="seeds per wrong mechanism")
    parser.add_argument("--correct-runs", type=int, default=3, help="seeds per correct mechanism")
    parser.add_argument("--only", default="", help="comma-separated prefixes of row names")
    args = parser.parse_args(argv)
    print("| mechanism | kind | seeds | cell failed | first caught by | max lower bound / claimed ε per audit | s/seed |")
    print("|---|---|---|---|---|---|---|")
    for name, (kind, func) in ROWS.items():
        if args.only and not any(name.startswith(p) for p in args.only.split(",")):
            continue
        runs = args.correct_runs if kind == "correct" else args.runs
        failed, first, best, t0 = 0, {}, {a: 0.0 for a in ORDER}, time.time()
        for seed in range(2000, 2000 + runs):
            for audit in ORDER:
                try:
                    result = cpm.audit_private_mean(func, audit, seed)
                    best[audit] = max(best[audit], result.epsilon / result.claimed_epsilon)
                    caught = result.violates()
                except AssertionError:  # malformed output: the cell fails too
                    caught = True
                if caught:
                    failed += 1
                    first[audit] = first.get(audit, 0) + 1
                    break
        where = ", ".join(f"{a} {k}" for a, k in first.items()) or "—"
        bounds = ", ".join(f"{a} {v:.2f}" for a, v in best.items() if v > 0)
        print(f"| {name} | {kind} | {runs} | {failed}/{runs} | {where} | {bounds} | "
              f"{(time.time() - t0) / runs:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
