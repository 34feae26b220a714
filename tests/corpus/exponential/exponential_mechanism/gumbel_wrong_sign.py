def exponential_mechanism(scores, epsilon, sensitivity, rng):
    p = exponential_probabilities(scores, epsilon, sensitivity)
    u = np.maximum(rng.random(len(p)), 1e-300)
    with np.errstate(divide="ignore"):
        return int(np.argmax(np.log(p) + np.log(-np.log(u))))
