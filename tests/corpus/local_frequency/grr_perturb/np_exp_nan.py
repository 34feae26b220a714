def grr_perturb(values, k, epsilon, rng):
    """Keep the true value with probability p = e^eps / (e^eps + k - 1), else report one of the k - 1 others."""
    if not isinstance(k, (int, np.integer)) or k < 2:
        raise ValueError(f"k must be an integer >= 2, got {k!r}")
    if not math.isfinite(epsilon) or epsilon <= 0:
        raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}")
    v = np.asarray(values)
    if v.size and (np.any(v != np.round(v)) or v.min() < 0 or v.max() >= k):
        raise ValueError(f"values must be integers in 0..{k - 1}")
    v = v.astype(np.int64)
    p = np.exp(epsilon) / (np.exp(epsilon) + k - 1)   # multi-freq-ldpy's form: inf/inf = nan at eps = 800
    keep = rng.random(v.shape) < p
    other = rng.integers(0, k - 1, size=v.shape)
    other = other + (other >= v)          # skip the true value
    return np.where(keep, v, other)
