def private_mean(values, lower, upper, epsilon, rng):
    """Noisy clipped sum with epsilon, noisy count with epsilon / 2 (1.5 epsilon in total)."""
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"private_mean: epsilon must be a finite number > 0; got {epsilon!r}")
    x = clip(values, lower, upper)
    noisy_sum = x.sum() + rng.laplace(0.0, sum_sensitivity(lower, upper, "add_remove") / epsilon)
    noisy_count = x.size + rng.laplace(0.0, count_sensitivity("add_remove") / (epsilon / 2))
    return float(np.clip(noisy_sum / max(noisy_count, 1.0), lower, upper))
