def laplace_noise(b, size, rng):
    if isinstance(b, bool) or not isinstance(b, (int, float, np.integer, np.floating)) or not math.isfinite(b) or b <= 0:
        raise ValueError(f"b must be a finite number > 0; got {b!r}")
    u1 = rng.random(size)
    u2 = rng.random(size)
    # the formula exactly as printed in textbook 6.2.2
    with np.errstate(divide="ignore"):
        return np.where(u1 <= 0.5, b * np.log(2 * u1) + u2, u2 - b * np.log(2 * (1 - u1)))
