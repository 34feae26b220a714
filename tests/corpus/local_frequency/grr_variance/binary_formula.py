def grr_variance(n, k, epsilon, f):
    # the variance of binary randomized response, n p (1-p) / (2p-1)^2
    p = math.exp(epsilon) / (math.exp(epsilon) + 1)
    return n * p * (1 - p) / (2 * p - 1) ** 2
