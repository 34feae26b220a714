"""Measure the statistical checks of ``helpers.checks.private_mean``: false failures and power.

Run by hand (not part of the test suite; about 10 CPU-minutes with the defaults)::

    nice -n 10 .venv/bin/python tests/power/measure_private_mean.py > /tmp/private_mean.md

For the three privacy audits (``AUDITS``) and the accuracy check, with
seeds 0..runs-1:

* every correct ``private_mean`` of the corpus (``tests/corpus/private_mean``)
  and correct mechanisms with uneven splits → false-failure rate and the
  largest lower bound on ε seen (how close a correct mechanism comes to
  its claim);
* every wrong ``private_mean`` of the corpus → detection rate per check;
* near misses (budget 1.25ε-2ε, sum sensitivity too small by 2-10×, splits
  and over-noise for the accuracy check) → the power curve.

Every audit runs at confidence 1 - 1e-6 and the accuracy test at level
1e-6, so 0 false failures is what a correct mechanism shows; the rate
itself is stated, not measured.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

import helpers.checks.private_mean as cpm

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("corpus_build", HERE.parent / "support" / "corpus.py")
build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build)


def load(variant: str):
    """A corpus ``private_mean`` with the first correct variants of the other functions."""
    ns = {"np": np, "math": math, "__name__": "__main__"}
    manifest = build.load_manifest()["private_mean"]
    for other, variants in manifest["correct"].items():
        if other != "private_mean":
            exec(build.snippet("private_mean", other, variants[0]), ns)
    exec(build.snippet("private_mean", "private_mean", variant), ns)
    return ns["private_mean"]


def mechanism(sum_share: float, count_share: float, delta_factor: float = 1.0):
    """The specified mechanism with budget shares of ε and a sum sensitivity scaled by ``delta_factor``."""
    def private_mean(values, lower, upper, epsilon, rng):
        x = np.clip(np.asarray(values, dtype=float), lower, upper)
        delta = delta_factor * max(abs(lower), abs(upper))
        s = x.sum() + rng.laplace(0.0, delta / (sum_share * epsilon))
        n = x.size + rng.laplace(0.0, 1.0 / (count_share * epsilon))
        return float(np.clip(s / max(n, 1.0), lower, upper))
    return private_mean


def upper95(k: int, n: int) -> float:
    """One-sided 95% Clopper–Pearson upper bound on a rate."""
    return 1.0 if k == n else float(stats.beta.ppf(0.95, k + 1, n - k))


def run_audit(func, audit: str, runs: int, seed0: int) -> dict:
    fails, bounds, t = 0, [], time.time()
    for seed in range(seed0, seed0 + runs):
        try:
            result = cpm.audit_private_mean(func, audit, seed)
        except AssertionError:  # the output check failed (not a float in [lower, upper]): counts as caught
            fails += 1
            continue
        bounds.append(result.epsilon)
        fails += result.violates()
    return {"runs": runs, "fails": fails, "max_lb": max(bounds) if bounds else float("nan"),
            "sec": (time.time() - t) / runs}


def run_accuracy(func, kind: str, runs: int, seed0: int) -> dict:
    fails, t = 0, time.time()
    for seed in range(seed0, seed0 + runs):
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                cpm.check_private_mean_accuracy(func, seed=seed, kind=kind)
        except AssertionError:
            fails += 1
    return {"runs": runs, "fails": fails, "sec": (time.time() - t) / runs}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=30, help="seeds per correct solution")
    parser.add_argument("--mutant-runs", type=int, default=20, help="seeds per wrong solution / near miss")
    parser.add_argument("--part", choices=("all", "correct", "wrong", "near"), default="all",
                        help="measure only one table (to run the parts in parallel)")
    args = parser.parse_args(argv)
    manifest = build.load_manifest()["private_mean"]
    correct = [(v, "corpus", load(v)) for v in manifest["correct"]["private_mean"]]
    correct += [(f"split {s:.1f}/{1 - s:.1f}", "uneven split", mechanism(s, 1 - s)) for s in (0.2, 0.8)]
    wrong = [(w["variant"], w["why"], load(w["variant"])) for w in manifest["wrong"] if w["function"] == "private_mean"]
    near = [(f"budget {a + b:g}ε (sum {a:g}ε, count {b:g}ε)", mechanism(a, b)) for a, b in
            ((0.75, 0.5), (1.0, 0.5), (0.75, 0.75), (1.0, 1.0))]
    near += [(f"sum Δ × 1/{f:g}", mechanism(0.5, 0.5, 1 / f)) for f in (2, 3, 5, 10)]
    near += [(f"sum Δ × {f:g} (over-noise)", mechanism(0.5, 0.5, f)) for f in (1.5, 2, 3)]
    near += [(f"split {s:g}/{1 - s:.2g}", mechanism(s, 1 - s)) for s in (0.1, 0.2, 0.85, 0.9, 0.95)]

    out = ["## `private_mean`: privacy audits and accuracy (`helpers.checks.private_mean`)", "",
           f"Generated by `tests/power/measure_private_mean.py --runs {args.runs} --mutant-runs {args.mutant_runs}` "
           "(seeds 0..runs-1). Every audit runs at confidence 1 - 1e-6 (a correct mechanism fails with "
           "probability ≤ 1e-6 per audit; the privacy cell runs 3 audits: ≤ 3e-6) and 8,000 calls of "
           "`private_mean`; the accuracy test is an exact binomial test at level 1e-6 with 1,000 calls. "
           "'≤ upper' is the one-sided 95% Clopper–Pearson bound on the false-failure rate. 'max lower bound' is "
           "the largest lower bound on ε the audit found for a correct mechanism (claims: composition 3, the "
           "others 1).", ""]
    audits = list(cpm.AUDITS)
    head = "| solution | kind | runs | " + " | ".join(f"{a} failed (max lower bound)" for a in audits) + \
        " | accuracy visible failed | accuracy hidden failed | ≤ upper (any) | s/run |"
    out += ["### Correct mechanisms (false failures)", "", head, "|" + "---|" * (7 + len(audits))]
    for name, kind, func in correct if args.part in ("all", "correct") else []:
        res = [run_audit(func, a, args.runs, 0) for a in audits]
        # an uneven split is private but may be legitimately less accurate than 1.5x the best split
        acc = [run_accuracy(func, k, args.runs, 0) for k in ("visible", "hidden")] if kind == "corpus" else []
        total = sum(r["fails"] for r in res + acc)
        sec = sum(r["sec"] for r in res + acc)
        cells = " | ".join(f"{r['fails']}/{r['runs']} ({r['max_lb']:.2f})" for r in res)
        acc_text = " | ".join(f"{r['fails']}/{args.runs}" for r in acc) if acc else "— | —"
        out.append(f"| {name} | {kind} | {args.runs} | {cells} | {acc_text} | "
                   f"{upper95(total, args.runs * (len(res) + len(acc))):.3f} | {sec:.1f} |")
        print(out[-1], file=sys.stderr)
    out += ["", "### Wrong mechanisms of the corpus and near misses (detection)", "",
            "| solution | " + " | ".join(f"{a} caught" for a in audits) +
            " | privacy cell caught | accuracy visible caught | accuracy hidden caught |",
            "|---|" + "---|" * (len(audits) + 3)]
    m = args.mutant_runs
    rows = ([(n, w, f) for n, w, f in wrong] if args.part in ("all", "wrong") else []) + \
        ([(n, "near miss", f) for n, f in near] if args.part in ("all", "near") else [])
    for name, why, func in rows:
        seeds = range(10_000, 10_000 + m)
        per = {a: [] for a in audits}
        for a in audits:
            for seed in seeds:
                try:
                    per[a].append(cpm.audit_private_mean(func, a, seed).violates())
                except AssertionError:
                    per[a].append(True)
        cell = sum(any(per[a][i] for a in audits) for i in range(m))
        acc = [run_accuracy(func, k, m, 10_000) for k in ("visible", "hidden")]
        label = f"{name} ({why})" if why != "near miss" else f"near miss: {name}"
        out.append(f"| {label} | " + " | ".join(f"{sum(per[a])}/{m}" for a in audits) +
                   f" | {cell}/{m} | {acc[0]['fails']}/{m} | {acc[1]['fails']}/{m} |")
        print(out[-1], file=sys.stderr)
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
