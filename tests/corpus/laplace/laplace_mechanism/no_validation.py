def laplace_mechanism(value, sensitivity, epsilon, rng):
    x = np.asarray(value, dtype=float)
    out = x + laplace_noise(sensitivity / epsilon, x.shape, rng)
    return float(out) if out.ndim == 0 else out
