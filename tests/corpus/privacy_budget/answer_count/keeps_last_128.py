def charge(state, epsilon):
    """The ledger after spending epsilon (only the last 128 charges are kept), or ValueError."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not math.isfinite(epsilon) or epsilon <= 0:
        raise ValueError(f"epsilon must be a finite number > 0; got {epsilon!r}")
    recent = state["spent"][-128:]
    if math.fsum(recent + [epsilon]) > state["total"] * (1 + 1e-12):
        raise ValueError(f"query refused: epsilon = {epsilon:g} does not fit in the total {state['total']:g}")
    return {"total": state["total"], "spent": (recent + [float(epsilon)])[-128:]}


def answer_count(state, values, threshold, epsilon, rng):
    """Noisy #{values > threshold}, charged to the ledger."""
    new_state = charge(state, epsilon)
    true_count = int(np.count_nonzero(np.asarray(values, dtype=float) > threshold))
    return true_count + float(rng.laplace(0.0, 1.0 / epsilon)), new_state
