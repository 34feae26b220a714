def grr_perturb(values, k, epsilon, rng):
    """The reference, drawing the other value with rng.choice over a range (numpy accepts a range)."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 2:
        raise ValueError(f"grr_perturb: k must be an integer >= 2; got {k!r}")
    if not isinstance(epsilon, (int, float, np.integer, np.floating)) or not math.isfinite(epsilon) or epsilon <= 0:
        raise ValueError(f"grr_perturb: epsilon must be a finite number > 0; got {epsilon!r}")
    v = np.asarray(values)
    if v.size and (not np.issubdtype(v.dtype, np.number) or np.any(v != np.round(v)) or v.min() < 0 or v.max() >= k):
        raise ValueError(f"grr_perturb: values must be integers in 0..{k - 1}")
    v = v.astype(np.int64)
    p = 1.0 / (1.0 + (k - 1) * math.exp(-epsilon))
    keep = rng.random(v.shape) < p
    other = rng.choice(range(k - 1), v.shape)
    other = other + (other >= v)
    return np.where(keep, v, other)
