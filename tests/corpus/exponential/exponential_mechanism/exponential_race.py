def exponential_mechanism(scores, epsilon, sensitivity, rng):
    """Exponential clocks with rates p_i: the first to ring is i with probability p_i."""
    p = exponential_probabilities(scores, epsilon, sensitivity)
    times = -np.log1p(-rng.random(len(p)))
    with np.errstate(divide="ignore"):
        ring = np.where(p > 0, times / p, np.inf)
    return int(np.argmin(ring))
