def private_mean(values, lower, upper, epsilon, rng):
    """Sum gets 70% of the budget, count 30%."""
    if math.isnan(epsilon) or math.isinf(epsilon) or epsilon <= 0:
        raise ValueError("epsilon must be a positive finite number")
    clipped = clip(values, lower, upper)
    eps1 = 0.7 * epsilon
    eps2 = epsilon - eps1
    b1 = sum_sensitivity(lower, upper, "add_remove") / eps1
    b2 = count_sensitivity("add_remove") / eps2
    # Laplace(b) is the difference of two Exponential(b)
    noise1 = rng.exponential(b1) - rng.exponential(b1)
    noise2 = rng.exponential(b2) - rng.exponential(b2)
    total = float(np.sum(clipped)) + noise1
    count = len(clipped) + noise2
    if count < 1:
        count = 1.0
    return float(np.clip(total / count, lower, upper))
