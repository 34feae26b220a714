def answer_histogram(state, labels, k, epsilon, rng):
    # The labels split the data into disjoint parts: parallel composition, epsilon is charged once.
    new_state = charge(state, epsilon)
    counts = np.bincount(np.asarray(labels, dtype=int), minlength=k)
    return counts + rng.laplace(0.0, k / epsilon, size=k), new_state   # epsilon / k per bin
