def grr_estimate(reports, k, epsilon):
    """Unbiased counts: E[C(v)] = n_v p + (n - n_v) q, so n_v = (C(v) - n q) / (p - q)."""
    r = np.asarray(reports, dtype=np.int64).ravel()
    n = r.size
    p = math.exp(epsilon) / (math.exp(epsilon) + k - 1)
    q = 1 / (math.exp(epsilon) + k - 1)
    counts = np.bincount(r, minlength=k)
    return np.maximum((counts - n * q) / (p - q), 0)  # a count cannot be negative
