def grr_variance(n, k, epsilon, f):
    """Var[n_v estimate] = n q(1-q)/(p-q)^2 + n f (1-p-q)/(p-q) for a value held by n f users."""
    p = 1 / (1 + (k - 1) * math.exp(-epsilon))
    q = math.exp(-epsilon) / (1 + (k - 1) * math.exp(-epsilon))
    return n * q * (1 - q) / (p - q) ** 2 + n * f * (1 - p - q) / (p - q)
