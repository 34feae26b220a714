def grr_perturb(values, k, epsilon, rng):
    if not isinstance(k, (int, np.integer)) or k < 2:
        raise ValueError("k must be an integer >= 2")
    if not math.isfinite(epsilon) or epsilon <= 0:
        raise ValueError("epsilon must be a finite positive number")
    v = np.asarray(values)
    if v.size and (v.min() < 0 or v.max() > k - 1 or np.any(v != v.astype(int))):
        raise ValueError("values must be in 0..k-1")
    v = v.astype(int)
    out = np.empty(v.shape, dtype=int)
    denominator = math.exp(epsilon) + k - 1
    for value in range(k):
        holders = v == value
        probs = np.full(k, 1 / denominator)
        probs[value] = math.exp(epsilon) / denominator
        out[holders] = rng.choice(k, size=int(holders.sum()), p=probs)
    return out
