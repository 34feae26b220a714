def grr_perturb(values, k, epsilon, rng):
    # One uniform per user: [0, p) keeps the truth, the rest is cut into k-1 slices of width q.
    if not isinstance(k, (int, np.integer)) or k < 2:
        raise ValueError("k must be an integer >= 2")
    if math.isnan(epsilon) or math.isinf(epsilon) or epsilon <= 0:
        raise ValueError("epsilon must be > 0")
    v = np.asarray(values)
    if not np.all(np.isin(v, np.arange(k))):
        raise ValueError("values must be in {0, ..., k-1}")
    v = v.astype(int)
    t = math.exp(-epsilon)
    p, q = 1 / (1 + (k - 1) * t), t / (1 + (k - 1) * t)
    u = rng.random(v.shape)
    out = v.copy()
    lie = u >= p                                   # only those: q may be 0 (huge epsilon)
    j = np.minimum(np.floor((u[lie] - p) / q), k - 2).astype(int)
    out[lie] = j + (j >= v[lie])
    return out
