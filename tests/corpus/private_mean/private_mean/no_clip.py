def private_mean(values, lower, upper, epsilon, rng):
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError("epsilon must be a finite number > 0")
    if not (math.isfinite(lower) and math.isfinite(upper) and lower < upper):
        raise ValueError("need finite lower < upper")
    x = np.asarray(values, dtype=float)
    if np.isnan(x).any():
        raise ValueError("NaN in values")
    noisy_sum = x.sum() + rng.laplace(0.0, sum_sensitivity(lower, upper, "add_remove") / (epsilon / 2))
    noisy_count = x.size + rng.laplace(0.0, 1.0 / (epsilon / 2))
    return float(np.clip(noisy_sum / max(noisy_count, 1.0), lower, upper))
