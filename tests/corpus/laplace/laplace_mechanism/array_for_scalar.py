def laplace_mechanism(value, sensitivity, epsilon, rng):
    for x in (sensitivity, epsilon):
        if not math.isfinite(x) or x <= 0:
            raise ValueError(f"sensitivity and epsilon must be finite and > 0; got {x!r}")
    values = np.atleast_1d(np.asarray(value, dtype=float))
    return values + laplace_noise(sensitivity / epsilon, values.shape, rng)
