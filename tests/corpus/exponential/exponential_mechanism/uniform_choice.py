def exponential_mechanism(scores, epsilon, sensitivity, rng):
    p = exponential_probabilities(scores, epsilon, sensitivity)
    return int(rng.random() * len(p))
