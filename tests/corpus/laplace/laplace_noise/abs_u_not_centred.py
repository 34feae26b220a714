def laplace_noise(b, size, rng):
    # Inverse CDF with |u| where |u - 1/2| is meant: 1 - 2|u| < 0 for u > 1/2, half the draws are nan.
    if not math.isfinite(b) or b <= 0:
        raise ValueError(f"laplace_noise: b must be finite and > 0, got {b}")
    u = rng.random(size)
    return -b * np.sign(u - 0.5) * np.log(1 - 2 * np.abs(u))
