def answer_histogram(state, labels, k, epsilon, rng):
    # k bins, each its own release: epsilon * k in total, charged epsilon
    new_state = charge(state, epsilon)
    counts = np.bincount(np.asarray(labels, dtype=int), minlength=k)
    return counts + rng.laplace(0.0, 1.0 / (k * epsilon), size=k), new_state
