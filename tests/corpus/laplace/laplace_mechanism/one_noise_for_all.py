def laplace_mechanism(value, sensitivity, epsilon, rng):
    for x in (sensitivity, epsilon):
        if not math.isfinite(x) or x <= 0:
            raise ValueError(f"sensitivity and epsilon must be finite and > 0; got {x!r}")
    noise = laplace_noise(sensitivity / epsilon, 1, rng)[0]
    if np.ndim(value) == 0:
        return float(value + noise)
    return np.asarray(value, dtype=float) + noise
