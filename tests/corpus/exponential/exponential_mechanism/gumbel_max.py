def exponential_mechanism(scores, epsilon, sensitivity, rng):
    p = exponential_probabilities(scores, epsilon, sensitivity)
    u = np.maximum(rng.random(len(p)), 1e-300)
    with np.errstate(divide="ignore"):
        # log p + Gumbel noise; the argmax is i with probability p_i
        keys = np.log(p) - np.log(-np.log(u))
    return int(np.argmax(keys))
