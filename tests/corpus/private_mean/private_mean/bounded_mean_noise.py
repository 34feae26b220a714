def private_mean(values, lower, upper, epsilon, rng):
    # the mean of n values in [lower, upper] changes by at most (upper - lower) / n
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError("epsilon must be a finite number > 0")
    x = clip(values, lower, upper)
    if x.size == 0:
        return (lower + upper) / 2
    noisy = x.mean() + rng.laplace(0.0, (upper - lower) / (x.size * epsilon))
    return float(np.clip(noisy, lower, upper))
