"""How many output elements jump when every uniform is nudged (``helpers.checks.forbidden._NUDGES``).

Not part of the suite. ``python tests/power/measure_seeded_sampler.py [SEEDS]``: for honest
constructions and for ready-made samplers seeded per element, the largest and mean number of
jumping elements over SEEDS seeds, for 1,000 Laplace draws (``check_laplace_noise_rng``'s call) and
64 exponential-mechanism draws (``check_exponential_mechanism_rng``'s call). The check fails at
max(5, 1% of the elements). Figures: ``tests/power/RESULTS.md``.
"""

from __future__ import annotations

import sys

import numpy as np

from helpers.checks.forbidden import _NUDGES as NUDGES, _nudged  # noqa: E402

SCORES, DELTA, EPS = np.array([1.0, 2.0, 3.0, 2.5]), 0.7, 3.0
LOGITS = EPS * SCORES / (2 * DELTA)
CDF = np.cumsum(np.exp(LOGITS - LOGITS.max())) / np.exp(LOGITS - LOGITS.max()).sum()

LAPLACE = {  # (uniforms per element, map from the uniforms (columns) to one output)
    "inverse CDF": (1, lambda u: -np.sign(u[0] - 0.5) * np.log1p(-2 * np.abs(u[0] - 0.5))),
    "inverse CDF, log(2|u - 1/2|)": (1, lambda u: np.sign(u[0] - 0.5) * np.log(2 * np.abs(u[0] - 0.5))),
    "sign x exponential": (2, lambda u: np.where(u[0] < 0.5, -1.0, 1.0) * -np.log1p(-u[1])),
    "difference of exponentials": (2, lambda u: np.log1p(-u[0]) - np.log1p(-u[1])),
    "seeded per element int(u * 2**32)": (1, lambda u: np.array([np.random.default_rng(int(x * 2**32)).laplace()
                                                                    for x in u[0]])),
    "seeded per element int(u * 10**8)": (1, lambda u: np.array([np.random.default_rng(int(x * 1e8)).laplace()
                                                                    for x in u[0]])),
}
EXPONENTIAL = {
    "Gumbel-max": (4, lambda u: np.argmax(LOGITS[:, None] - np.log(-np.log(u)), axis=0)),
    "inverse CDF (searchsorted)": (1, lambda u: np.searchsorted(CDF, u[0], side="right")),
    "seeded choice int(u * 2**32)": (1, lambda u: np.array([np.random.default_rng(int(x * 2**32)).choice(4, p=CDF - np.r_[0, CDF[:-1]])
                                                           for x in u[0]])),
}


def jumps(k: int, fn, n: int, seed: int) -> list[int]:
    u = np.random.default_rng(seed).random((k, n))
    base = np.asarray(fn(u), dtype=float)
    spread = float(np.subtract(*np.percentile(base, [75, 25])))
    out = []
    pattern = np.random.default_rng([seed, 29])
    for nudge, share in NUDGES:  # as the check nudges: random size in [nudge/2, nudge], random sign
        moved = np.asarray(fn(_nudged(u.ravel(), nudge, pattern).reshape(u.shape)), dtype=float)
        out.append(int(np.sum(np.abs(moved - base) > share * spread)))
    return out


def main() -> None:
    seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    for title, table, n in (("Laplace, 1,000 elements", LAPLACE, 1000), ("exponential mechanism, 64 elements", EXPONENTIAL, 64)):
        print(f"{title}: fail at >= {max(5, int(np.ceil(0.01 * n)))}")
        for name, (k, fn) in table.items():
            runs = seeds if not name.startswith("seeded") else min(seeds, 20)
            counts = np.array([jumps(k, fn, n, s) for s in range(runs)])
            print(f"| {name} | {runs} | " + " | ".join(f"max {c.max()}, mean {c.mean():.2f}" for c in counts.T) + " |")


if __name__ == "__main__":
    main()
