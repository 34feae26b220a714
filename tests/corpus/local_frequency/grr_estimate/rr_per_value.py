def grr_estimate(reports, k, epsilon):
    # binary randomized response's correction applied to each value ("v" versus "not v")
    r = np.asarray(reports, dtype=np.int64).ravel()
    n = r.size
    p = math.exp(epsilon) / (math.exp(epsilon) + k - 1)
    counts = np.bincount(r, minlength=k)
    return ((p - 1) * n + counts) / (2 * p - 1)
