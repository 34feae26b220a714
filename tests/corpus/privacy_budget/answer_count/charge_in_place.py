def charge(state, epsilon):
    """Charges the caller's ledger in place, then checks the budget: a refusal leaves it charged."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not math.isfinite(epsilon) or epsilon <= 0:
        raise ValueError(f"epsilon must be a finite number > 0; got {epsilon!r}")
    state["spent"].append(float(epsilon))
    if math.fsum(state["spent"]) > state["total"] * (1 + 1e-12):
        raise ValueError(f"query refused: epsilon = {epsilon:g} does not fit in the total {state['total']:g}")
    return state


def answer_count(state, values, threshold, epsilon, rng):
    new_state = charge(state, epsilon)
    true_count = int(np.count_nonzero(np.asarray(values, dtype=float) > threshold))
    return true_count + float(rng.laplace(0.0, 1.0 / epsilon)), new_state
