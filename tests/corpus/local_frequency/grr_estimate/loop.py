def grr_estimate(reports, k, epsilon):
    reports = list(np.asarray(reports).ravel())
    n = len(reports)
    e = math.exp(-epsilon)
    p, q = 1 / (1 + (k - 1) * e), e / (1 + (k - 1) * e)
    estimates = []
    for v in range(k):
        c = sum(1 for r in reports if r == v)
        estimates.append((c - n * q) / (p - q))
    return np.array(estimates)
