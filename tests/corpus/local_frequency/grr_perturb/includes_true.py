def grr_perturb(values, k, epsilon, rng):
    if not isinstance(k, (int, np.integer)) or k < 2:
        raise ValueError("k must be an integer >= 2")
    if not math.isfinite(epsilon) or epsilon <= 0:
        raise ValueError("epsilon must be > 0")
    v = np.asarray(values)
    if v.size and (v.min() < 0 or v.max() >= k):
        raise ValueError("values must be in 0..k-1")
    p = math.exp(epsilon) / (math.exp(epsilon) + k - 1)
    keep = rng.random(v.shape) < p
    # otherwise "a random value" -- drawn from all k values, the true one included
    return np.where(keep, v, rng.integers(0, k, size=v.shape))
