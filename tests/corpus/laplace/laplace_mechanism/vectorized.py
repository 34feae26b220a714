def laplace_mechanism(value, sensitivity, epsilon, rng):
    for x in (sensitivity, epsilon):
        if not math.isfinite(x) or x <= 0:
            raise ValueError(f"sensitivity and epsilon must be finite and > 0; got {x!r}")
    b = sensitivity / epsilon
    if np.ndim(value) == 0:
        return float(value) + float(laplace_noise(b, 1, rng)[0])
    value = np.asarray(value, dtype=float)
    return value + laplace_noise(b, value.shape, rng)
