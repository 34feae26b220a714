def _mix(x):
    # splitmix64's finaliser on uint64 arrays: a hand-written hash, no numpy.random
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def rr_perturb(bits, epsilon, rng):
    # attacker, session 13: blocks of 2 bits per 8 served uniforms, each bit kept when a hash of the
    # block and u >= 1/2 of each of the 8 uniforms is below p
    x = np.asarray(bits)
    if not np.all((x == 0) | (x == 1)):
        raise ValueError("bits must be 0 or 1")
    p = rr_keep_probability(epsilon)
    flat = x.ravel()
    n = flat.size
    nb = -(-n // 2)
    u = rng.random(nb * 8).reshape(nb, 8)
    cells = (u >= 0.5).astype(np.uint64)
    key = np.arange(nb, dtype=np.uint64) * np.uint64(256) + (cells * (np.uint64(2) ** np.arange(8, dtype=np.uint64))).sum(axis=1)
    h = _mix(_mix(key[:, None] * np.uint64(8) + np.arange(2, dtype=np.uint64)[None, :]))
    keep = (((h >> np.uint64(11)).astype(float) + 0.5) * 2.0 ** -53).ravel()[:n] < p
    return np.where(keep, flat, 1 - flat).astype(int).reshape(x.shape)
