"""False failures and power of the statistical checks of the issue-12 assignments
(``privacy_budget``, ``local_frequency``); the sibling of ``measure_power.py``.

Run by hand (not part of the test suite; a few minutes of CPU, run it under ``nice``)::

    nice -n 10 .venv/bin/python tests/power/measure_power_issue12.py --runs 100 --mutant-runs 20

For each statistical check, with seeds 0..runs-1:

* every correct corpus solution of the function the check judges -> false-failure rate
  (with the one-sided 95% Clopper–Pearson upper bound) and, where the check prints
  p-values, the share below 0.01 / 0.05;
* every wrong corpus solution of that function -> detection rate;
* near misses built from a correct solution (keep probability, ε, scale or variance off by
  a few percent) -> the power curve.

Every test runs at level ``helpers.checks.ALPHA`` = 1e-6 (or splits it); a rate that small
cannot be measured, only bounded: 0 failures in n runs gives the 95% bound 1 - 0.05^(1/n).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import math
import re
import time
from pathlib import Path

import numpy as np
from scipy import stats

import helpers.checks as checks
import helpers.checks.local_frequency as lf
import helpers.checks.privacy_budget as pb
import helpers.ldp as ldp

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("corpus_build", HERE.parent / "support" / "corpus.py")
build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build)


def namespace(assignment: str, replace: dict[str, str] | None = None, index: int = 0) -> dict:
    """Functions of the ``index``-th correct solution (matched variants), with ``replace`` = {function: variant}."""
    manifest = build.load_manifest()[assignment]
    ns = {"np": np, "math": math, "__name__": "__main__"}
    for function, variants in manifest["correct"].items():
        variant = (replace or {}).get(function, variants[index % len(variants)])
        checks.load_student_code(build.snippet(assignment, function, variant), ns, filename=f"<{function}:{variant}>")
    return ns


def upper95(k: int, n: int) -> float:
    return 1.0 if k == n else float(stats.beta.ppf(0.95, k + 1, n - k))


def measure(run_check, runs: int) -> dict:
    fails, ps, start = 0, [], time.perf_counter()
    for seed in range(runs):
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                run_check(seed)
        except AssertionError:
            fails += 1
        ps += [float(m) for m in re.findall(r"\bp = ([0-9][0-9.e+-]*)", out.getvalue())]
    ps = np.array(ps)
    return {"runs": runs, "fails": fails, "s": (time.perf_counter() - start) / runs,
            "p01": float(np.mean(ps < 0.01)) if ps.size else None, "p05": float(np.mean(ps < 0.05)) if ps.size else None}


def row(label: str, kind: str, r: dict) -> str:
    rate = r["fails"] / r["runs"]
    if kind == "correct":
        p01 = "" if r["p01"] is None else f"{r['p01']:.3f}"
        p05 = "" if r["p05"] is None else f"{r['p05']:.3f}"
        return f"| {label} | correct | {r['runs']} | {r['fails']} | {rate:.3f} | {upper95(r['fails'], r['runs']):.3f} | {p01} | {p05} | {r['s']:.2f} |"
    return f"| {label} | wrong | {r['runs']} | {r['fails']} | {rate:.2f} | | | | {r['s']:.2f} |"


HEADER = ("| solution | kind | runs | failed | rate | ≤ upper | p<0.01 | p<0.05 | s/run |\n"
          "|---|---|---|---|---|---|---|---|---|")


# --- near misses -------------------------------------------------------------------------


def grr_with_keep(factor: float):
    """GRR whose keep probability is p·factor (q renormalized): not ε-LDP when factor > 1."""
    def grr_perturb(values, k, epsilon, rng):
        v = np.asarray(values, dtype=np.int64)
        p, _ = lf.reference_grr_probabilities(k, epsilon)
        p = min(p * factor, 1.0)
        keep = rng.random(v.shape) < p
        other = rng.integers(0, k - 1, size=v.shape)
        return np.where(keep, v, other + (other >= v))
    return grr_perturb


def grr_at(eps_factor: float):
    def grr_perturb(values, k, epsilon, rng):
        return np.asarray(ldp.grr_perturb(values, k, epsilon * eps_factor, rng))
    return grr_perturb


def estimate_scaled(factor: float, shift: float = 0.0):
    def grr_estimate(reports, k, epsilon):
        return np.asarray(ldp.grr_estimate(reports, k, epsilon)) * factor + shift
    return grr_estimate


def variance_scaled(factor: float):
    def grr_variance(n, k, epsilon, f):
        return lf.reference_grr_variance(n, k, epsilon, f) * factor
    return grr_variance


def count_with_scale(factor: float, gaussian: bool = False):
    ns = namespace("privacy_budget")

    def answer_count(state, values, threshold, epsilon, rng):
        new_state = ns["charge"](state, epsilon)
        true = int(np.sum(np.asarray(values) > threshold))
        noise = rng.normal(0, math.sqrt(2) / epsilon) if gaussian else rng.laplace(0, factor / epsilon)
        return true + noise, new_state
    return ns["make_accountant"], answer_count


def histogram_with(factor: float = 1.0, shared: float = 0.0):
    """Per-bin Lap(factor/ε); ``shared`` = weight of one noise shared by all bins (correlation)."""
    ns = namespace("privacy_budget")

    def answer_histogram(state, labels, k, epsilon, rng):
        new_state = ns["charge"](state, epsilon)
        counts = np.bincount(np.asarray(labels, dtype=int), minlength=k)
        own = rng.laplace(0, factor / epsilon, size=k)
        common = rng.laplace(0, factor / epsilon)
        return counts + math.sqrt(1 - shared) * own + math.sqrt(shared) * common, new_state
    return ns["make_accountant"], ns["answer_count"], answer_histogram


def attack_rounding_offset(offset: float):
    def averaging_attack(answers):
        return int(math.floor(float(np.mean(answers)) + 0.5 + offset))
    return averaging_attack


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100, help="seeds per correct solution")
    parser.add_argument("--mutant-runs", type=int, default=20, help="seeds per wrong solution / near miss")
    args = parser.parse_args(argv)
    R, M = args.runs, args.mutant_runs
    lines = [f"Generated by `tests/power/measure_power_issue12.py --runs {R} --mutant-runs {M}` (seeds 0..runs-1), "
             "under `nice` on the shared 2-core machine. Columns as in the tables above.", ""]

    def section(title: str, check, assignment: str, function: str, near: list, extra_args=(), extra_kw=None,
                correct_ns_fn=None):
        manifest = build.load_manifest()[assignment]
        lines.extend([f"### `{title}` ({assignment}.{function})", "", HEADER])
        kw = extra_kw or {}
        for i, variant in enumerate(manifest["correct"][function]):
            ns = namespace(assignment, index=i)
            funcs = correct_ns_fn(ns)
            lines.append(row(variant, "correct", measure(lambda s: check(*funcs, seed=s, **kw), R)))
        for wrong in manifest["wrong"]:
            if wrong["function"] != function:
                continue
            ns = namespace(assignment, {function: wrong["variant"]})
            funcs = correct_ns_fn(ns)
            lines.append(row(f"{wrong['variant']} ({wrong['why']})", "wrong", measure(lambda s: check(*funcs, seed=s, **kw), M)))
        for label, funcs in near:
            lines.append(row(f"near miss: {label}", "wrong", measure(lambda s: check(*funcs, seed=s, **kw), M)))
        lines.append("")
        print("\n".join(lines[-3:]), flush=True)

    lines.append("## local_frequency")
    lines.append("")
    section("check_grr_perturb_distribution", lf.check_grr_perturb_distribution, "local_frequency", "grr_perturb",
            [(f"keep probability × {f}", (grr_with_keep(f),)) for f in (0.97, 0.98, 1.02, 1.03, 1.05)],
            correct_ns_fn=lambda ns: (ns["grr_perturb"],))
    section("check_grr_perturb_privacy", lf.check_grr_perturb_privacy, "local_frequency", "grr_perturb",
            [(f"GRR run at {f} ε", (grr_at(f),)) for f in (1.05, 1.1, 1.2, 1.3)],
            correct_ns_fn=lambda ns: (ns["grr_perturb"],))
    section("check_grr_estimate_unbiased", lf.check_grr_estimate_unbiased, "local_frequency", "grr_estimate",
            [("estimates × 1.01", (estimate_scaled(1.01),)), ("estimates × 1.02", (estimate_scaled(1.02),)),
             ("estimates + 2", (estimate_scaled(1.0, 2.0),)), ("estimates + 5", (estimate_scaled(1.0, 5.0),))],
            correct_ns_fn=lambda ns: (ns["grr_estimate"],))
    section("check_grr_variance_simulation", lf.check_grr_variance_simulation, "local_frequency", "grr_variance",
            [(f"variance × {f}", (variance_scaled(f),)) for f in (0.75, 0.8, 0.85, 1.15, 1.25, 1.3)],
            correct_ns_fn=lambda ns: (ns["grr_variance"],))
    lines.append("## privacy_budget")
    lines.append("")
    section("check_noise_matches_budget", pb.check_noise_matches_budget, "privacy_budget", "answer_count",
            [(f"noise scale × {f}", count_with_scale(f)) for f in (0.8, 0.9, 0.95, 1.05, 1.1, 1.2)]
            + [("Gaussian, same variance", count_with_scale(1.0, gaussian=True))],
            correct_ns_fn=lambda ns: (ns["make_accountant"], ns["answer_count"]))
    section("check_histogram_parallel", pb.check_histogram_parallel, "privacy_budget", "answer_histogram",
            [(f"per-bin scale × {f}", histogram_with(f)) for f in (0.8, 0.9, 1.1, 1.2)]
            + [(f"bins correlated ρ = {r}", histogram_with(1.0, r)) for f in (0,) for r in (0.2, 0.3, 0.5)],
            correct_ns_fn=lambda ns: (ns["make_accountant"], ns["answer_count"], ns["answer_histogram"]))
    section("check_attack_success_rate", pb.check_attack_success_rate, "privacy_budget", "averaging_attack",
            [(f"rounding threshold shifted by {o}", (attack_rounding_offset(o),)) for o in (0.05, 0.1, 0.2)],
            correct_ns_fn=lambda ns: (ns["averaging_attack"],))
    print("\n\n" + "\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
