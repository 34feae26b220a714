def answer_histogram(state, labels, k, epsilon, rng):
    if not (isinstance(epsilon, (int, float)) and math.isfinite(epsilon) and epsilon > 0):
        raise ValueError("epsilon must be a finite positive number")
    if not _fits(state, epsilon):
        raise ValueError("refused: this histogram would exceed the privacy budget")
    # one entry: the k bins are disjoint, so together they cost epsilon (parallel composition)
    log = state["log"] + [{"query": f"histogram of {k} bins", "epsilon": epsilon}]
    counts = np.bincount(np.asarray(labels).astype(int), minlength=k)
    return counts + _laplace(1 / epsilon, rng, k), {"total_epsilon": state["total_epsilon"], "log": log}
