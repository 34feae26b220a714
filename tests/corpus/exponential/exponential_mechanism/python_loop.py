def exponential_mechanism(scores, epsilon, sensitivity, rng):
    probabilities = exponential_probabilities(scores, epsilon, sensitivity)
    u = rng.random()
    acc = 0.0
    for i, p in enumerate(probabilities):
        acc += p
        if u < acc:
            return i
    return max(i for i, p in enumerate(probabilities) if p > 0)
