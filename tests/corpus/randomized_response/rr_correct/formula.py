def rr_correct(n, n1, p):
    if not (0 <= p <= 1) or p == 0.5:
        raise ValueError("p must be in [0, 1] and not 0.5")
    if not (0 <= n1 <= n):
        raise ValueError("n1 must be between 0 and n")
    return ((p - 1) * n + n1) / (2 * p - 1)
