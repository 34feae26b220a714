def exponential_mechanism(scores, epsilon, sensitivity, rng):
    # uses exp(eps q / (2 Delta)) without the stable probabilities: overflows for big scores
    q = np.asarray(scores, dtype=float)
    w = np.exp(epsilon * q / (2 * sensitivity))
    cdf = np.cumsum(w / w.sum())
    return int(np.searchsorted(cdf, rng.random(), side="right"))
