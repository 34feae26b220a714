def _polar_normals(rng, n):
    # Marsaglia's polar method: pairs (x, y) uniform in the unit disc, the others rejected
    out, got = [], 0
    while got < n:
        m = max(8, int(1.3 * (n - got) / 2) + 8)
        xy = 2.0 * rng.random((m, 2)) - 1.0
        s = (xy ** 2).sum(axis=1)
        ok = (s > 0) & (s < 1)
        xy, s = xy[ok], s[ok]
        z = (xy * np.sqrt(-2.0 * np.log(s) / s)[:, None]).ravel()
        out.append(z)
        got += z.size
    return np.concatenate(out)[:n]


def laplace_noise(b, size, rng):
    # Lap(0, b) = b (Z1 Z2 + Z3 Z4) for independent standard normals (characteristic function 1/(1 + t²));
    # the normals from the polar (rejection) method, in columns (an independent reviewer, session 13)
    if isinstance(b, bool) or not isinstance(b, (int, float, np.integer, np.floating)) or not math.isfinite(b) or b <= 0:
        raise ValueError(f"b must be a finite number > 0; got {b!r}")
    shape = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
    n = int(np.prod(shape))
    z = _polar_normals(rng, 4 * n).reshape(4, n)
    return (b * (z[0] * z[1] + z[2] * z[3])).reshape(shape)
