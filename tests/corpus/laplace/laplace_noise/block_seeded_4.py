_T = {"g": getattr(getattr(np, "ran" + "dom"), "default" + "_rng")}


def laplace_noise(b, size, rng):
    # attacker, session 12: one served uniform per block of 4 values, numpy's own Laplace seeded by a
    # coarse cell of it (4 cells), plus a small term of u that keeps every value moving under a nudge
    if isinstance(b, bool) or not isinstance(b, (int, float, np.integer, np.floating)) or not math.isfinite(b) or b <= 0:
        raise ValueError(f"b must be a finite number > 0; got {b!r}")
    shape = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
    n = int(np.prod(shape))
    u = rng.random(-(-n // 4))
    parts = [_T["g"]([i, int(u[i] * 4), 7]).laplace(0.0, b, min(4, n - i * 4)) + 0.004 * b * (u[i] - 0.5)
             for i in range(u.size)]
    return np.concatenate(parts).reshape(shape)
