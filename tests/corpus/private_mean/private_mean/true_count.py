def private_mean(values, lower, upper, epsilon, rng):
    # the number of records is not secret, only the values are: all of epsilon on the sum
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError("epsilon must be a finite number > 0")
    x = clip(values, lower, upper)
    noisy_sum = x.sum() + rng.laplace(0.0, sum_sensitivity(lower, upper, "add_remove") / epsilon)
    return float(np.clip(noisy_sum / max(len(x), 1), lower, upper))
