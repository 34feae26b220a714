def answer_histogram(state, labels, k, epsilon, rng):
    # The labels split the data into disjoint parts: parallel composition, epsilon is charged once.
    charge(state, epsilon)   # raises if it does not fit
    new_state = state
    counts = np.bincount(np.asarray(labels, dtype=int), minlength=k)
    return counts + rng.laplace(0.0, 1.0 / epsilon, size=k), new_state
