def rr_correct(n, n1, p):
    if math.isnan(p) or p < 0 or p > 1 or abs(p - 0.5) == 0:
        raise ValueError(f"invalid p = {p}")
    if n1 < 0 or n1 > n:
        raise ValueError(f"invalid n1 = {n1}")
    pi_hat = (p - 1) / (2 * p - 1) + n1 / ((2 * p - 1) * n)
    return pi_hat * n
