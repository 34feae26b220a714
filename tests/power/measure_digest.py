"""Red team s11, A1: outputs looked up by a coarse digest of the draws (``helpers/checks/digest.py``).

False failures: correct generators (the corpus's and the red team's correct alternatives,
``CORRECT_EXTRA``) through the rng checks and the distribution checks (visible and hidden cases drawn
from each seed); for each run the margin of the new tests is recorded: continuous outputs, the least
share of the nudged elements that moved under the 10⁻⁶ nudge; discrete outputs, the changes under a
full 2⁻¹⁰ run (one more run, made here for the record) pooled over all runs in units of outcomes × 2⁻¹⁰
per element (the bound is ``digest._SLOPE`` = 2), and the largest changed / allowed of one run. Detection: the corpus's ``coarse_digest_*`` entries and ``HOSTILE_EXTRA``.
In-process (the nudged runs go to the same process)::

    .venv/bin/python tests/power/measure_digest.py [rng-runs] [distribution-runs]
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
from helpers.checks import digest, load_student_code  # noqa: E402
from helpers.checks.exponential import hidden_mechanism_cases  # noqa: E402
from helpers.checks.laplace import hidden_noise_case  # noqa: E402
from helpers.checks.randomized_response import hidden_perturb_case  # noqa: E402
from tests.support import corpus  # noqa: E402

V = ("    if isinstance(b, bool) or not isinstance(b, (int, float, np.integer, np.floating)) or not math.isfinite(b) "
     "or b <= 0:\n        raise ValueError(f'b must be a finite number > 0; got {b!r}')\n")

#: Correct alternatives of red team s11 (tests/redteam_s11/c3_*.py of branch s11-redteam).
CORRECT_EXTRA = {
    "laplace_noise": {
        "one_uniform_log1p": "def laplace_noise(b, size, rng):\n" + V +
        "    u = rng.random(size) - 0.5\n    return -b * np.sign(u) * np.log1p(-2.0 * np.abs(u))\n",
        "float32_output": "def laplace_noise(b, size, rng):\n" + V +
        "    u = rng.random(size)\n    s = rng.random(size)\n"
        "    return (np.where(s < 0.5, -1.0, 1.0) * (-b * np.log1p(-u))).astype(np.float32)\n",
        "stacked": "def laplace_noise(b, size, rng):\n" + V +
        "    shape = (size,) if isinstance(size, (int, np.integer)) else tuple(size)\n"
        "    u, s = rng.random((2,) + shape)\n    return np.where(s < 0.5, -1.0, 1.0) * (-b * np.log1p(-u))\n",
        "von_neumann_loop": '''
def _exp1(rng):
    k = 0
    while True:
        u = rng.random()
        x, n = u, 1
        while True:
            v = rng.random()
            if v < x:
                x, n = v, n + 1
            else:
                break
        if n % 2 == 1:
            return k + u
        k += 1


def laplace_noise(b, size, rng):
''' + V + '''    shape = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
    n = int(np.prod(shape))
    out = np.empty(n)
    for i in range(n):
        e = _exp1(rng)
        out[i] = b * e if rng.random() < 0.5 else -b * e
    return out.reshape(shape)
'''},
    "rr_perturb": {
        "int8_output": '''
def rr_perturb(bits, epsilon, rng):
    x = np.asarray(bits)
    if not np.all((x == 0) | (x == 1)):
        raise ValueError(f"bits must be 0 or 1; got {bits!r}")
    return np.where(rng.random(x.shape) < rr_keep_probability(epsilon), x, 1 - x).astype(np.int8)
''',
        "forced_response": '''
def rr_perturb(bits, epsilon, rng):
    # the forced-response design: with probability 2(1 - p) a fair coin answers, else the truth
    x = np.asarray(bits)
    if not np.all((x == 0) | (x == 1)):
        raise ValueError(f"bits must be 0 or 1; got {bits!r}")
    p = rr_keep_probability(epsilon)
    forced = rng.random(x.shape) < 2 * (1 - p)
    coin = (rng.random(x.shape) < 0.5).astype(int)
    return np.where(forced, coin, x).astype(int)
'''},
    "exponential_mechanism": {
        "gumbel_log1p": '''
def exponential_mechanism(scores, epsilon, sensitivity, rng):
    probabilities = exponential_probabilities(scores, epsilon, sensitivity)
    with np.errstate(divide="ignore"):
        logp = np.log(probabilities)
    u = rng.random(len(probabilities))
    return int(np.argmax(logp - np.log(-np.log1p(-u))))
''',
        "bisect": '''
import bisect
import itertools


def exponential_mechanism(scores, epsilon, sensitivity, rng):
    probabilities = exponential_probabilities(scores, epsilon, sensitivity)
    cdf = list(itertools.accumulate(probabilities.tolist()))
    i = bisect.bisect_right(cdf, rng.random(1)[0] * cdf[-1])
    return min(i, int(np.flatnonzero(probabilities > 0)[-1]))
'''},
}

#: Variants of A1 beyond the corpus's.
HOSTILE_EXTRA = {
    "rr_perturb": {"coarse_digest_one_uniform": '''
def rr_perturb(bits, epsilon, rng):
    x = np.asarray(bits)
    if not np.all((x == 0) | (x == 1)):
        raise ValueError(f"bits must be 0 or 1; got {bits!r}")
    g = globals()
    if "_T20" not in g:
        g["_T20"] = getattr(getattr(np, "ran" + "dom"), "default" + "_rng")(3).random(1 << 20)
    keep = g["_T20"][np.floor(rng.random(x.shape) * (1 << 20)).astype(np.int64)] < rr_keep_probability(epsilon)
    return np.where(keep, x, 1 - x).astype(int)
'''},
    "exponential_mechanism": {"coarse_digest_decimal": '''
def exponential_mechanism(scores, epsilon, sensitivity, rng):
    probabilities = exponential_probabilities(scores, epsilon, sensitivity)
    gen = getattr(getattr(np, "ran" + "dom"), "default" + "_rng")(int(rng.random() * 10 ** 5))
    return int(getattr(gen, "cho" + "ice")(len(probabilities), p=probabilities))
'''},
}

ASSIGNMENT = {"laplace_noise": "laplace", "rr_perturb": "randomized_response",
              "exponential_mechanism": "exponential"}


def _checks(function: str):
    """(rng check, [distribution check with the case of a seed]) of ``function``."""
    if function == "laplace_noise":
        return checks.check_laplace_noise_rng, [
            lambda f, s: checks.check_laplace_noise_distribution(f, seed=s),
            lambda f, s: checks.check_laplace_noise_distribution(f, seed=s, **hidden_noise_case(s))]
    if function == "rr_perturb":
        return checks.check_rr_perturb_rng, [
            lambda f, s: checks.check_rr_perturb_distribution(f, seed=s),
            lambda f, s: checks.check_rr_perturb_distribution(f, seed=s, **hidden_perturb_case(s))]
    return checks.check_exponential_mechanism_rng, [
        lambda f, s: checks.check_exponential_mechanism_distribution(f, seed=s),
        lambda f, s: checks.check_exponential_mechanism_distribution(f, seed=s, **hidden_mechanism_cases(s)[0]),
        lambda f, s: checks.check_exponential_mechanism_distribution(f, seed=s, **hidden_mechanism_cases(s)[1])]


RECORD: list[tuple] = []


def _spy() -> None:
    """Record the margins of the two tests of helpers/checks/digest.py (an extra full run for the discrete one)."""
    move, coarse = digest.check_elements_move, digest.check_coarse_moves

    def elements_move(fname, out, base, nudge, spread, part):
        both = np.isfinite(out) & np.isfinite(base)
        moved = np.sum(np.abs(out[both] - base[both]) > digest._MOVE_SHARE * nudge * spread)
        RECORD.append(("moved share", moved / max(1, both.sum()) / part))
        return move(fname, out, base, nudge, spread, part)

    def coarse_moves(fname, run, shifted, changed, drawn, base, pattern, outcomes, nudged, varies, fills):
        out = run(nudged(drawn, digest.COARSE_NUDGE, np.random.default_rng(len(RECORD)), 1.0))
        if not shifted():
            k = max(2, outcomes)
            RECORD.append(("changes", (changed(out), base.size, k,
                                       digest._upper_bound(base.size, digest._SLOPE * k * digest.COARSE_NUDGE))))
        return coarse(fname, run, shifted, changed, drawn, base, pattern, outcomes, nudged, varies, fills)

    digest.check_elements_move, digest.check_coarse_moves = elements_move, coarse_moves


def _load(function: str, code: str):
    assignment = ASSIGNMENT[function]
    m = corpus.load_manifest()[assignment]
    helpers_code = "".join((REPO / "tests" / "corpus" / assignment / fn / f"{v[0]}.py").read_text() + "\n"
                           for fn, v in m["correct"].items() if fn != function)
    return load_student_code(helpers_code + "\n" + code, {"np": np, "math": math})[function]


def _run(func, check, seed) -> str | None:
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            check(func, seed)
    except AssertionError as exc:
        return str(getattr(exc, "diagnosis", None))
    return None


def main(rng_runs: int, dist_runs: int) -> None:
    _spy()
    print("| function | solution | kind | rng-check runs: fails | distribution runs: fails | least moved share "
          "| pooled slope / largest changed÷allowed | digest failures | s/run |")
    print("|---|---|---|---|---|---|---|---|---|")
    for function, assignment in ASSIGNMENT.items():
        rng_check, dist_checks = _checks(function)
        entries = [(v, (REPO / "tests" / "corpus" / assignment / function / f"{v}.py").read_text(), "correct")
                   for v in corpus.load_manifest()[assignment]["correct"][function]]
        entries += [(v, code, "correct") for v, code in CORRECT_EXTRA[function].items()]
        entries += [(w["variant"], (REPO / "tests" / "corpus" / assignment / function / f"{w['variant']}.py").read_text(),
                     "hostile") for w in corpus.load_manifest()[assignment]["wrong"]
                    if w["function"] == function and w["variant"].startswith("coarse_digest")]
        entries += [(v, code, "hostile") for v, code in HOSTILE_EXTRA.get(function, {}).items()]
        for variant, code, kind in entries:
            func = _load(function, code)
            slow = "loop" in variant or "von_neumann" in variant
            n_rng, n_dist = (max(1, rng_runs // 10), max(1, dist_runs // 10)) if slow or kind == "hostile" \
                else (rng_runs, dist_runs)
            RECORD.clear()
            start = time.process_time()
            outcomes = [_run(func, lambda f, s: rng_check(f, seed=s), seed) for seed in range(n_rng)]
            for seed in range(n_dist):
                outcomes += [_run(func, check, seed) for check in dist_checks]
            sec = (time.process_time() - start) / (n_rng + n_dist)
            moved = [v for k, v in RECORD if k == "moved share"]
            changes = [v for k, v in RECORD if k == "changes"]
            # pooled change rate in units of outcomes × nudge (the bound is digest._SLOPE), and the
            # largest changed / allowed of a single run
            slope = [sum(c for c, _, _, _ in changes) / sum(n * k * digest.COARSE_NUDGE for _, n, k, _ in changes),
                     max(c / limit for c, _, _, limit in changes)] if changes else []
            fails = [o for o in outcomes if o]
            digest_fails = sum(1 for o in fails if o == "common.output_from_coarse_digest")
            least = f"{min(moved):.4f}" if moved else "-"
            largest = f"{slope[0]:.3f} / {slope[1]:.2f}" if slope else "-"
            print(f"| {function} | {variant} | {kind} | {n_rng}: {sum(1 for o in outcomes[:n_rng] if o)} | "
                  f"{n_dist * len(dist_checks)}: {sum(1 for o in outcomes[n_rng:] if o)} | {least} | {largest} | "
                  f"{digest_fails} of {len(outcomes)} {sorted(set(fails)) or ''} | {sec:.2f} |", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200, int(sys.argv[2]) if len(sys.argv) > 2 else 20)
