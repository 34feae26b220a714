def laplace_noise(b, size, rng):
    if isinstance(b, bool) or not isinstance(b, (int, float, np.integer, np.floating)) or not math.isfinite(b) or b <= 0:
        raise ValueError(f"b must be a finite number > 0; got {b!r}")
    # Kinderman-Monahan ratio of uniforms for the density e^(-|x|)/2: (u, v) uniform on
    # [0, 1] x [-2/e, 2/e], x = v/u kept when u^2 <= e^(-|x|); the common vectorised idiom:
    # propose 1.5 times what is missing, keep the accepted, loop if short (session 14's reviewer, L09)
    shape = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
    n = int(np.prod(shape))
    out = np.empty(n)
    filled = 0
    while filled < n:
        m = int(1.5 * (n - filled)) + 8
        u = rng.random(m)
        v = (2.0 * rng.random(m) - 1.0) * (2.0 / np.e)
        with np.errstate(divide="ignore", invalid="ignore"):
            x = v / u
            ok = (u > 0) & (2.0 * np.log(u) <= -np.abs(x))
        x = x[ok][: n - filled]
        out[filled:filled + x.size] = x
        filled += x.size
    return b * out.reshape(shape)
