"""How much of a 1.25ε overspend the output of private_mean can show at 10⁵ samples (issue 17).

The mean ``clip(noisy_sum / max(noisy_count, 1))`` is a ratio: for a threshold
event {y > t} the privacy loss is that of W = a·L1 - t·b·L2 (a = Δ/ε₁,
b = 1/ε₂) shifted by |t - x| when a record x is added, i.e. at most
|t - x| / max(a, |t|·b), reached only in W's tail. For ε₁ = 0.75ε,
ε₂ = 0.5ε (a sum noise scale 1.5× too small with an even split) the supremum
1.25ε sits at t = -Δε₂/ε₁ = -2Δ/3 where the two scales are equal and the
tail converges polynomially. This script runs the course's auditor
(``helpers.audit.epsilon_lower_bound``, confidence 1 - 1e-6, interval events,
n_final = 10⁵ fresh outputs per dataset, a vectorized sampler of the exact
mechanism) on range [-1, 1], d = n records at m, d' = d + [1], for several
ε, m and n, and prints lower bound / ε for the overspend and for a correct
even split. Seeds 0, 1, 2. Usage: ``python tests/power/ceiling_private_mean.py``.
"""

from __future__ import annotations

import numpy as np

from helpers.audit import epsilon_lower_bound


def sampler_for(e1: float, e2: float):
    def sampler(data, rng, size):
        lo, hi, values = data
        x = np.clip(np.asarray(values, dtype=float), lo, hi)
        delta = max(abs(lo), abs(hi))
        s = x.sum() + delta / e1 * rng.laplace(size=size)
        n = x.size + rng.laplace(size=size) / e2
        return np.clip(s / np.maximum(n, 1.0), lo, hi)
    return sampler


def bound(shares, eps, mean, n, seed, n_final=100_000):
    d = (-1.0, 1.0, [mean] * n)
    d_prime = (-1.0, 1.0, [mean] * n + [1.0])
    result = epsilon_lower_bound(None, d, d_prime, np.random.default_rng(seed), sampler=sampler_for(*(s * eps for s in shares)),
                                 n_select=n_final // 5, n_final=n_final, confidence=1 - 1e-6, events="interval")
    return result.epsilon / eps


def main() -> None:
    print("| ε | mean of d | n | lower bound / ε, 1.25ε (0.75 + 0.5) | lower bound / ε, correct (0.5 + 0.5) |")
    print("|---|---|---|---|---|")
    for eps in (0.5, 1.0, 2.0, 3.0, 4.0, 6.0):
        for mean, n in ((-1.0, 5), (-2 / 3, 5), (-2 / 3, 20), (-0.5, 20)):
            over = [bound((0.75, 0.5), eps, mean, n, s) for s in range(3)]
            ok = [bound((0.5, 0.5), eps, mean, n, s) for s in range(3)]
            print(f"| {eps:g} | {mean:.2f} | {n} | {max(over):.3f} (max of 3) | {max(ok):.3f} |", flush=True)


if __name__ == "__main__":
    main()
