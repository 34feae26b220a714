def grr_estimate(reports, k, epsilon):
    # E[counts] = M @ true_counts with M = q (all ones) + (p - q) I: solve the linear system.
    r = np.asarray(reports).astype(int)
    counts = np.array([np.count_nonzero(r == v) for v in range(k)], dtype=float)
    t = np.exp(-epsilon)
    p, q = 1.0 / (1 + (k - 1) * t), t / (1 + (k - 1) * t)
    M = q * np.ones((k, k)) + (p - q) * np.eye(k)
    return np.linalg.solve(M, counts)
