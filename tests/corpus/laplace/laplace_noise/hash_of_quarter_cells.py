def _mix(x):
    # splitmix64's finaliser on uint64 arrays: a hand-written hash, no numpy.random
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def laplace_noise(b, size, rng):
    # attacker, session 13: blocks of 10 values from 10 served uniforms, each value the inverse CDF of a
    # hash of the block and int(4u) of all 10 uniforms, plus 0.005 b (u - 1/2) of its own uniform
    if isinstance(b, bool) or not isinstance(b, (int, float, np.integer, np.floating)) or not math.isfinite(b) or b <= 0:
        raise ValueError(f"b must be a finite number > 0; got {b!r}")
    shape = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
    n = int(np.prod(shape))
    nb = -(-n // 10)
    u = rng.random(nb * 10).reshape(nb, 10)
    cells = (u * 4).astype(np.uint64)
    key = np.arange(nb, dtype=np.uint64) * np.uint64(4 ** 10) + (cells * (np.uint64(4) ** np.arange(10, dtype=np.uint64))).sum(axis=1)
    h = _mix(_mix(key[:, None] * np.uint64(64) + np.arange(10, dtype=np.uint64)[None, :]))
    d = ((h >> np.uint64(11)).astype(float) + 0.5) * 2.0 ** -53 - 0.5
    x = -b * np.sign(d) * np.log1p(-2 * np.abs(d)) + 0.005 * b * (u - 0.5)
    return x.ravel()[:n].reshape(shape)
