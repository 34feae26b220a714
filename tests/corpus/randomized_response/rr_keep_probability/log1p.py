def rr_keep_probability(epsilon):
    if not (np.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"rr_keep_probability: epsilon must be > 0, got {epsilon}")
    return float(np.exp(-np.log1p(np.exp(-epsilon))))
