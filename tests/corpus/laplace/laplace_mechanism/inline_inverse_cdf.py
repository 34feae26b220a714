def laplace_mechanism(value, sensitivity, epsilon, rng):
    if not math.isfinite(sensitivity) or sensitivity <= 0:
        raise ValueError("sensitivity must be > 0")
    if not math.isfinite(epsilon) or epsilon <= 0:
        raise ValueError("epsilon must be > 0")
    b = sensitivity / epsilon
    x = np.asarray(value, dtype=float)
    u = np.maximum(rng.random(x.shape), 5e-324)
    noise = np.where(u < 0.5, b * np.log(2 * u), -b * np.log(2 - 2 * u))
    out = x + noise
    return float(out) if out.ndim == 0 else out
