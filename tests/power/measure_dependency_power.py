"""Session 14: detection of outputs hashed from coarse cells of M served uniforms, by M and cells per
uniform (the second attacker's construction of session 13, ``tests/corpus/*/hash_of_*_cells.py``, with M
and the cells as parameters), at the visible distribution check of each function, in-process, the
forbidden-name scan off. Prints, per construction, the seeds at which the dependency check failed, and
the mean count ÷ limit. ::

    .venv/bin/python tests/power/measure_dependency_power.py SEEDS
"""
from __future__ import annotations

import contextlib
import io
import math
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from helpers import checks  # noqa: E402
from helpers.checks import dependency, forbidden  # noqa: E402
from helpers.checks.core import CheckFailure  # noqa: E402

RECORD: list = []


def _recording(fname, run, shifted, drawn, base, seed, **kw):
    RECORD.append(dependency.dependency_counts(run, shifted, drawn, base, seed, **kw))
    dependency_check(fname, run, shifted, drawn, base, seed, **kw)


dependency_check = dependency.check_dependencies


def _mix(x):
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _hashed(u, cells, per_block, first=0):
    """A uniform in (0, 1) per output of each block: a hash of the block's index, the cells of its uniforms."""
    nb, m = u.shape
    c = (u * cells).astype(np.uint64)
    key = (np.arange(nb, dtype=np.uint64) + np.uint64(first)) * np.uint64(cells ** m) + (c * (np.uint64(cells) ** np.arange(m, dtype=np.uint64))).sum(axis=1)
    h = _mix(_mix(key[:, None] * np.uint64(64) + np.arange(per_block, dtype=np.uint64)[None, :]))
    return ((h >> np.uint64(11)).astype(float) + 0.5) * 2.0 ** -53


def laplace(m, cells):
    def laplace_noise(b, size, rng):
        shape = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
        n = int(np.prod(shape))
        nb = -(-n // m)
        u = rng.random(nb * m).reshape(nb, m)
        d = _hashed(u, cells, m) - 0.5
        return (-b * np.sign(d) * np.log1p(-2 * np.abs(d)) + 0.005 * b * (u - 0.5)).ravel()[:n].reshape(shape)
    return laplace_noise


def rr(m, cells, per_block=2):
    def rr_perturb(bits, epsilon, rng):
        x = np.asarray(bits)
        flat = x.ravel()
        n = flat.size
        nb = -(-n // per_block)
        keep = _hashed(rng.random(nb * m).reshape(nb, m), cells, per_block).ravel()[:n] < 1 / (1 + math.exp(-epsilon))
        return np.where(keep, flat, 1 - flat).astype(int).reshape(x.shape)
    return rr_perturb


def exponential(m, cells):
    calls = {}

    def exponential_mechanism(scores, epsilon, sensitivity, rng):
        z = epsilon * np.asarray(scores, dtype=float) / (2 * sensitivity)
        p = np.exp(z - z.max())
        p /= p.sum()
        state = calls.get(id(rng))
        if state is None or state[0] is not rng:
            state = calls[id(rng)] = [rng, 0]
        k = state[1]
        state[1] += 1
        u = rng.random(m)[None, :]
        v = _hashed(u, cells, 1, k)[0, 0]
        return int(min(np.searchsorted(np.cumsum(p), v, side="right"), len(p) - 1))
    return exponential_mechanism


def main() -> None:
    seeds = range(int(sys.argv[1]))
    forbidden.find_forbidden_calls = lambda *args, **kwargs: []
    forbidden.dependency.check_dependencies = _recording
    cases = ([("laplace", m, c, laplace(m, c)) for m, c in ((10, 4), (8, 4), (6, 4), (4, 4), (6, 16), (4, 16))]
             + [("randomized_response", m, c, rr(m, c)) for m, c in ((8, 2), (6, 2), (4, 2), (4, 4), (3, 8))]
             + [("exponential", m, c, exponential(m, c)) for m, c in ((10, 2), (8, 2), (6, 2), (4, 4))])
    print("| assignment | uniforms per output M | cells per uniform | dependency failures (seeds) | other failures | mean count/limit |")
    print("|---|---|---|---|---|---|")
    for assignment, m, cells, f in cases:
        check = {"laplace": checks.check_laplace_noise_distribution,
                 "randomized_response": checks.check_rr_perturb_distribution,
                 "exponential": checks.check_exponential_mechanism_distribution}[assignment]
        RECORD.clear()
        dep = other = 0
        for seed in seeds:
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    check(f, seed)
            except CheckFailure as failure:
                if "replaced (each independently)" in getattr(failure, "en", ""):
                    dep += 1
                else:
                    other += 1
        ratios = [r[0] / r[1] for r in RECORD if r]
        print(f"| {assignment} | {m} | {cells} | {dep}/{len(seeds)} | {other} | "
              f"{np.mean(ratios):.2f} |" if ratios else f"| {assignment} | {m} | {cells} | {dep}/{len(seeds)} | {other} | - |",
              flush=True)


if __name__ == "__main__":
    main()
