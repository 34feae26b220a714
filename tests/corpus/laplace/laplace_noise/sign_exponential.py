def laplace_noise(b, size, rng):
    if not math.isfinite(b) or b <= 0:
        raise ValueError(f"laplace_noise: b must be finite and > 0, got {b}")
    u = rng.random(size)
    sign = np.where(u < 0.5, -1.0, 1.0)
    w = np.where(u < 0.5, 2 * u, 2 * u - 1)   # uniform on [0, 1) again, independent of the sign
    return sign * (-b * np.log1p(-w))
