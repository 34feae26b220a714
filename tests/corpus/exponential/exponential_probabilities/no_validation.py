def exponential_probabilities(scores, epsilon, sensitivity):
    q = np.asarray(scores, dtype=float)
    z = epsilon * q / (2 * sensitivity)
    w = np.exp(z - z.max())
    return w / w.sum()
