def rr_correct(n, n1, p):
    return ((p - 1) * n + n1) / (2 * p - 1)
