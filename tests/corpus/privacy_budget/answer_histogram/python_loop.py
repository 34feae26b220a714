def answer_histogram(state, labels, k, epsilon, rng):
    # A beginner's version: count the labels one by one, then one noise draw per bin.
    new_state = charge(state, epsilon)
    counts = [0] * k
    for label in labels:
        counts[int(label)] += 1
    noisy = []
    for count in counts:
        noisy.append(count + rng.laplace(0.0, 1.0 / epsilon))
    return np.array(noisy), new_state
