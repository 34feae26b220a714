def grr_variance(n, k, epsilon, f):
    # n (e^eps + k - 2)/(e^eps - 1)^2 + n f (k - 2)/(e^eps - 1), times e^-2eps / e^-2eps: t = e^-eps
    t = np.exp(-epsilon)
    return float(n * t * (1 + (k - 2) * t) / (1 - t) ** 2 + n * f * (k - 2) * t / (1 - t))
