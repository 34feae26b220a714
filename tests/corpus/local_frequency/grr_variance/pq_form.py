def grr_variance(n, k, epsilon, f):
    """Var[n_v estimate] = n q(1-q)/(p-q)^2 + n f (1-p-q)/(p-q) for a value held by n f users."""
    p = math.exp(epsilon) / (math.exp(epsilon) + k - 1)
    q = 1 / (math.exp(epsilon) + k - 1)
    return n * q * (1 - q) / (p - q) ** 2 + n * f * (1 - p - q) / (p - q)
