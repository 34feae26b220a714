def grr_variance(n, k, epsilon, f):
    # e^eps overflows to inf past 709.78: inf/inf = nan
    e = np.exp(epsilon)
    return float(n * (e + k - 2) / (e - 1) ** 2 + n * f * (k - 2) / (e - 1))
