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
    t = math.exp(-epsilon)                       # p = 1/(1 + (k-1) t), q = t/(1 + (k-1) t)
    for value in range(k):
        holders = v == value
        probs = np.full(k, t / (1 + (k - 1) * t))
        probs[value] = 1 / (1 + (k - 1) * t)
        out[holders] = rng.choice(k, size=int(holders.sum()), p=probs)
    return out
