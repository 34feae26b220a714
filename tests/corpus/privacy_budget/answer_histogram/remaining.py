def answer_histogram(state, labels, k, epsilon, rng):
    state = spend(state, epsilon)       # disjoint bins: parallel composition
    noisy = []
    for j in range(k):
        n_j = sum(1 for x in labels if x == j)
        noisy.append(n_j + rng.laplace(0, 1 / epsilon))
    return np.array(noisy), state
