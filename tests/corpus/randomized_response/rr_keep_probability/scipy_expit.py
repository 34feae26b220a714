from scipy.special import expit


def rr_keep_probability(epsilon):
    """p = e^ε / (1 + e^ε), the logistic function of ε (scipy.special.expit: arithmetic, no randomness)."""
    if not math.isfinite(epsilon) or epsilon <= 0:
        raise ValueError("epsilon must be finite and > 0")
    return float(expit(epsilon))
