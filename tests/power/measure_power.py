"""Measure the statistical checks of ``helpers.checks``: false failures and power.

Run by hand (not part of the test suite; a few minutes of CPU)::

    .venv/bin/python tests/power/measure_power.py --runs 200 > tests/power/RESULTS.md

For each statistical check, with seeds 0..runs-1:

* every correct solution of the corpus (``tests/corpus``) → false-failure rate,
  plus the share of p-values below 0.01 and 0.05 (≈ 1% and 5% when the test
  is calibrated: the p-values of a correct sampler are uniform);
* every wrong solution of the corpus aimed at that function → detection rate;
* near misses built from a correct sampler (scale off by 3-10%, ε off by
  10-20%, keep probability off by 0.005-0.01) → the power curve.

The level of every test is ``helpers.checks.ALPHA`` = 1e-6, so 0 false
failures in a few hundred runs is what a correct test shows; the rate itself
is too small to measure and is stated, not measured.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import math
import re
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

import helpers.checks as checks

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("corpus_build", HERE.parent / "support" / "corpus.py")
build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build)


def load(assignment: str, function: str, variant: str, helpers_from: dict[str, str] | None = None):
    """Execute a corpus snippet (with the first correct variants of the other functions)."""
    ns = {"np": np, "math": math, "__name__": "__main__"}
    manifest = build.load_manifest()[assignment]
    for other, variants in manifest["correct"].items():
        if other != function:
            exec(build.snippet(assignment, other, variants[0]), ns)
    exec(build.snippet(assignment, function, variant), ns)
    return ns[function]


def pvalue_of(check, func, seed) -> tuple[bool, list[float]]:
    """Run one check; return (failed, the p-values the check printed)."""
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            check(func, seed=seed)
        failed = False
    except AssertionError:
        failed = True
    # Every p-value the check printed (randomized response prints two).
    ps = [float(m) for m in re.findall(r"\bp = ([0-9][0-9.e+-]*)", out.getvalue())]
    return failed, ps


def wilson_upper(k: int, n: int, conf: float = 0.95) -> float:
    """One-sided upper confidence bound for a rate (Clopper–Pearson)."""
    return 1.0 if k == n else float(stats.beta.ppf(conf, k + 1, n - k))


def measure(check, func, runs: int, seed0: int = 0) -> dict:
    fails, ps = 0, []
    start = time.perf_counter()
    for seed in range(seed0, seed0 + runs):
        failed, p = pvalue_of(check, func, seed)
        fails += failed
        ps += p
    ps = np.array(ps)
    return {
        "runs": runs, "fails": fails, "rate": fails / runs,
        "p01": float(np.mean(ps < 0.01)) if ps.size else float("nan"),
        "p05": float(np.mean(ps < 0.05)) if ps.size else float("nan"),
        "sec": (time.perf_counter() - start) / runs,
    }


CHECKS = {
    ("laplace", "laplace_noise"): (checks.check_laplace_noise_distribution, "test_laplace_noise_distribution"),
    ("laplace", "laplace_mechanism"): (checks.check_laplace_mechanism_distribution, "test_laplace_mechanism_distribution"),
    ("exponential", "exponential_mechanism"): (checks.check_exponential_mechanism_distribution, "test_mechanism_distribution"),
    ("randomized_response", "rr_perturb"): (checks.check_rr_perturb_distribution, "test_perturb_distribution"),
}


def test_cells(assignment: str) -> list[tuple[str, str]]:
    import nbformat

    nb = nbformat.read(build.notebook_path(build.REPO / "source", assignment), as_version=4)
    return [(c.metadata["nbgrader"]["grade_id"], c.source) for c in nb.cells
            if c.metadata.get("nbgrader", {}).get("grade")]


def failing_cells(assignment: str, solutions: dict[str, str], seed: int) -> set[str]:
    """Run every graded cell (hidden tests included) with DP_COURSE_SEED = seed."""
    import os

    os.environ[checks.SEED_ENV] = str(seed)
    ns = {"np": np, "math": math, "__name__": "__main__"}
    for code in solutions.values():
        exec(code, ns)
    failed = set()
    for grade_id, code in test_cells(assignment):
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(code, ns)
        except Exception:  # noqa: BLE001  (AssertionError or a crash: the cell scores 0)
            failed.add(grade_id)
    del os.environ[checks.SEED_ENV]
    return failed


def near_misses(assignment: str, function: str):
    """Sampler with a small error, built from the first correct variant."""
    good = load(assignment, function, build.load_manifest()[assignment]["correct"][function][0])
    if function == "laplace_noise":
        for f in (0.9, 0.95, 0.97, 1.03, 1.05, 1.1):
            yield f"scale × {f}", (lambda g, f: lambda b, size, rng: g(b * f, size, rng))(good, f)
        yield "shift + 0.05 b", lambda b, size, rng: good(b, size, rng) + 0.05 * b
    elif function == "laplace_mechanism":
        for f in (0.9, 0.95, 1.05, 1.1):
            yield f"ε × {f}", (lambda g, f: lambda v, s, e, rng: g(v, s, e * f, rng))(good, f)
    elif function == "exponential_mechanism":
        for f in (0.8, 0.9, 1.1, 1.2):
            yield f"ε × {f}", (lambda g, f: lambda q, e, s, rng: g(q, e * f, s, rng))(good, f)
    elif function == "rr_perturb":
        for eps in (0.6, 0.65, 0.68, 0.72, 0.75, 0.8):
            p = checks._keep(eps)
            yield f"p = {p:.4f} (ε = {eps}) instead of 0.6682", (lambda e: lambda bits, epsilon, rng: good(bits, e, rng))(eps)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="seeds per correct solution")
    parser.add_argument("--mutant-runs", type=int, default=50, help="seeds per wrong solution / near miss")
    parser.add_argument("--cell-runs", type=int, default=10, help="seeds per corpus solution for the all-cells table")
    parser.add_argument("--slow-runs", type=int, default=50, help="seeds for Python-loop (slow) solutions")
    args = parser.parse_args(argv)
    lines = [
        "# Measured false failures and power of the statistical checks",
        "",
        f"Generated by `tests/power/measure_power.py --runs {args.runs} --mutant-runs {args.mutant_runs} "
        f"--slow-runs {args.slow_runs} --cell-runs {args.cell_runs}` (seeds 0..runs-1). Level of every test: α = {checks.ALPHA:g}; a cell that runs "
        "k tests fails a correct solution with probability ≤ k·α (stated in the cell). "
        "'≤ upper' is the one-sided 95% Clopper–Pearson bound on the rate. For correct solutions, "
        "'p<0.01' / 'p<0.05' are the shares of p-values below 0.01 / 0.05 (about 1% / 5% when calibrated; "
        "randomized response prints two p-values per run, both counted, and its doubled-tail binomial "
        "p-values are conservative, so lower shares are expected there).",
        "",
    ]
    for (assignment, function), (check, cell) in CHECKS.items():
        manifest = build.load_manifest()[assignment]
        lines += [f"## `{check.__name__}` ({assignment}.{function})", "",
                  "| solution | kind | runs | failed | rate | ≤ upper | p<0.01 | p<0.05 | s/run |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for variant in manifest["correct"][function]:
            func = load(assignment, function, variant)
            runs = args.slow_runs if "loop" in variant else args.runs
            r = measure(check, func, runs)
            lines.append(f"| {variant} | correct | {r['runs']} | {r['fails']} | {r['rate']:.3f} | "
                         f"{wilson_upper(r['fails'], r['runs']):.3f} | {r['p01']:.3f} | {r['p05']:.3f} | {r['sec']:.2f} |")
            print(lines[-1], file=sys.stderr)
        for wrong in manifest["wrong"]:
            if wrong["function"] != function or cell not in wrong["expect_zero"]:
                continue
            func = load(assignment, function, wrong["variant"])
            r = measure(check, func, args.mutant_runs, seed0=10_000)
            lines.append(f"| {wrong['variant']} ({wrong['why']}) | wrong | {r['runs']} | {r['fails']} | "
                         f"{r['rate']:.2f} | | | | {r['sec']:.2f} |")
            print(lines[-1], file=sys.stderr)
        for label, func in near_misses(assignment, function):
            func.__name__ = function
            r = measure(check, func, args.mutant_runs, seed0=20_000)
            lines.append(f"| near miss: {label} | wrong | {r['runs']} | {r['fails']} | {r['rate']:.2f} | | | | {r['sec']:.2f} |")
            print(lines[-1], file=sys.stderr)
        lines.append("")
    lines += ["## Every graded cell, per corpus solution, with DP_COURSE_SEED = 0..{}".format(args.cell_runs - 1), "",
              "All graded cells of the source notebook (hidden tests included) run directly on the solution, "
              "as the autograder does, once per seed. 'lost points' = share of seeds where at least one cell "
              "failed; 'expected cells' = share where every cell named in manifest.json failed.", "",
              "| assignment | solution | kind | seeds | lost points | expected cells failed | cells failed (union) |",
              "|---|---|---|---|---|---|---|"]
    for assignment in build.ASSIGNMENTS:
        for entry in build.corpus_entries(assignment):
            lost = expected = 0
            union: set[str] = set()
            for seed in range(args.cell_runs):
                failed = failing_cells(assignment, entry["solutions"], seed)
                union |= failed
                lost += bool(failed)
                expected += set(entry["expect_zero"]) <= failed if entry["kind"] == "wrong" else 0
            exp_text = f"{expected / args.cell_runs:.2f}" if entry["kind"] == "wrong" else ""
            lines.append(f"| {assignment} | {entry['id']} ({entry['why']}) | {entry['kind']} | {args.cell_runs} | "
                         f"{lost / args.cell_runs:.2f} | {exp_text} | {', '.join(sorted(union))} |")
            print(lines[-1], file=sys.stderr)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
