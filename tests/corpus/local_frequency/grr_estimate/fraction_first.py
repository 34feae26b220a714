def grr_estimate(reports, k, epsilon):
    r = np.asarray(reports)
    n = r.size
    observed = np.array([(r == v).mean() for v in range(k)])   # share of reports naming v
    p = 1 / (1 + (k - 1) * math.exp(-epsilon))
    q = (1 - p) / (k - 1)
    share = (observed - q) / (p - q)
    return share * n
