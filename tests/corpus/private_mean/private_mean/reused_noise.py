def private_mean(values, lower, upper, epsilon, rng):
    """epsilon-DP mean (add/remove): noisy clipped sum / noisy count, epsilon split in halves."""
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"private_mean: epsilon must be a finite number > 0; got {epsilon!r}")
    x = clip(values, lower, upper)
    eps_sum = eps_count = epsilon / 2
    noise = rng.laplace()                   # one standard Laplace draw, scaled for each release
    noisy_sum = x.sum() + noise * sum_sensitivity(lower, upper, "add_remove") / eps_sum
    noisy_count = x.size + noise * count_sensitivity("add_remove") / eps_count
    return float(np.clip(noisy_sum / max(noisy_count, 1.0), lower, upper))
