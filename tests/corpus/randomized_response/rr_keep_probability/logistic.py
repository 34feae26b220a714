def rr_keep_probability(epsilon):
    if not math.isfinite(epsilon) or epsilon <= 0:
        raise ValueError("epsilon must be finite and > 0")
    return 1.0 / (1.0 + math.exp(-epsilon))
