def laplace_mechanism(value, sensitivity, epsilon, rng):
    for x in (sensitivity, epsilon):
        if not math.isfinite(x) or x <= 0:
            raise ValueError(f"sensitivity and epsilon must be finite and > 0; got {x!r}")
    b = 1 / epsilon
    x = np.asarray(value, dtype=float)
    out = x + laplace_noise(b, x.shape, rng)
    return float(out) if out.ndim == 0 else out
