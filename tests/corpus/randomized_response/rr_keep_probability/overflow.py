def rr_keep_probability(epsilon):
    if not math.isfinite(epsilon) or epsilon <= 0:
        raise ValueError("epsilon must be finite and > 0")
    e = np.exp(epsilon)
    return float(e / (e + 1))
