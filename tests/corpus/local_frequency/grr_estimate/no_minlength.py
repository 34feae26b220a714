def grr_estimate(reports, k, epsilon):
    """Unbiased counts: E[C(v)] = n_v p + (n - n_v) q, so n_v = (C(v) - n q) / (p - q)."""
    r = np.asarray(reports, dtype=np.int64).ravel()
    n = r.size
    t = math.exp(-epsilon)                  # overflow-safe: p = 1/(1 + (k-1)t), q = t/(1 + (k-1)t)
    p = 1 / (1 + (k - 1) * t)
    q = t / (1 + (k - 1) * t)
    counts = np.bincount(r)
    return (counts - n * q) / (p - q)
