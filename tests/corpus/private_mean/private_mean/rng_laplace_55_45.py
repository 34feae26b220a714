def private_mean(values, lower, upper, epsilon, rng):
    if not np.isfinite(epsilon) or epsilon <= 0:
        raise ValueError("epsilon must be > 0 and finite")
    x = clip(values, lower, upper)
    eps_sum, eps_count = 0.55 * epsilon, 0.45 * epsilon
    noise = rng.laplace(0.0, [sum_sensitivity(lower, upper, "add_remove") / eps_sum,
                              count_sensitivity("add_remove") / eps_count])
    noisy_sum, noisy_count = x.sum() + noise[0], x.size + noise[1]
    return float(np.clip(noisy_sum / np.maximum(noisy_count, 1.0), lower, upper))
