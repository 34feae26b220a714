def laplace_noise(b, size, rng):
    # Lap(0, b) = b √(2W) Z, W ~ Exp(1) by inversion, Z ~ N(0, 1) by the polar (rejection) method, drawn
    # in rounds until enough pairs fall in the unit disc (after an independent reviewer, session 13)
    if isinstance(b, bool) or not isinstance(b, (int, float, np.integer, np.floating)) or not math.isfinite(b) or b <= 0:
        raise ValueError(f"b must be a finite number > 0; got {b!r}")
    shape = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
    n = int(np.prod(shape))
    w = -np.log1p(-rng.random(n))
    z = np.empty(0)
    while z.size < n:
        xy = 2.0 * rng.random((n - z.size + 8, 2)) - 1.0
        s = (xy ** 2).sum(axis=1)
        ok = (s > 0) & (s < 1)
        z = np.concatenate([z, xy[ok, 0] * np.sqrt(-2.0 * np.log(s[ok]) / s[ok])])
    return (b * np.sqrt(2.0 * w) * z[:n]).reshape(shape)
