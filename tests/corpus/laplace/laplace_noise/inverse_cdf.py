def laplace_noise(b, size, rng):
    if isinstance(b, bool) or not isinstance(b, (int, float, np.integer, np.floating)) or not math.isfinite(b) or b <= 0:
        raise ValueError(f"b must be a finite number > 0; got {b!r}")
    # F^-1(u) = b ln(2u) for u < 1/2, -b ln(2(1-u)) otherwise; u = 0 (probability 2^-53) is nudged up.
    u = np.maximum(rng.random(size), 5e-324)
    return np.where(u < 0.5, b * np.log(2 * u), -b * np.log(2 * (1 - u)))
