def answer_histogram(state, labels, k, epsilon, rng):
    if not isinstance(epsilon, (int, float)) or not (0 < epsilon < float("inf")):
        raise ValueError(f"epsilon must be positive and finite, not {epsilon}")
    asked = Decimal(repr(float(epsilon)))
    spent, total = Decimal(state["spent"]), Decimal(state["total"])
    if spent + asked > total:
        raise ValueError(f"privacy budget exhausted: {total - spent} left, {asked} requested")
    labels = np.asarray(labels)
    counts = np.array([np.count_nonzero(labels == j) for j in range(k)], dtype=float)
    # Laplace(b) = difference of two exponentials of scale b; one pair per bin.
    b = 1 / epsilon
    noise = rng.exponential(b, size=k) - rng.exponential(b, size=k)
    return counts + noise, {"total": state["total"], "spent": str(spent + asked)}
