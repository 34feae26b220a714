def grr_variance(n, k, epsilon, f):
    # C(v) = sum of n f Bernoulli(p) (holders) and n (1 - f) Bernoulli(q) (everybody else).
    e = math.exp(-epsilon)
    p, q = 1 / (1 + (k - 1) * e), e / (1 + (k - 1) * e)
    var_count = n * f * p * (1 - p) + n * (1 - f) * q * (1 - q)
    return var_count / (p - q) ** 2
