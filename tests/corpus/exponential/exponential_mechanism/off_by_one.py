def exponential_mechanism(scores, epsilon, sensitivity, rng):
    p = exponential_probabilities(scores, epsilon, sensitivity)
    cdf = np.cumsum(p)
    return int(np.sum(cdf < rng.random())) - 1 if len(p) > 1 else 0
