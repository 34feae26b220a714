def grr_estimate(reports, k, epsilon):
    """Unbiased counts: E[C(v)] = n_v p + (n - n_v) q, so n_v = (C(v) - n q) / (p - q)."""
    r = np.asarray(reports, dtype=np.int64).ravel()
    n = r.size
    t = math.exp(-epsilon)                     # the e^-eps form: no overflow for any finite epsilon
    p, q = 1 / (1 + (k - 1) * t), t / (1 + (k - 1) * t)
    counts = np.bincount(r, minlength=k)
    return (counts - n * q) / (p - q)
