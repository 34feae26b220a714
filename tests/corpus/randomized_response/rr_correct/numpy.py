def rr_correct(n, n1, p):
    p = float(p)
    if not np.isfinite(p) or not 0.0 <= p <= 1.0 or p == 0.5:
        raise ValueError("rr_correct: p must be in [0, 1], p != 0.5")
    if not 0 <= n1 <= n:
        raise ValueError("rr_correct: need 0 <= n1 <= n")
    return float(np.divide(n1 - (1 - p) * n, 2 * p - 1))
