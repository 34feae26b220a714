def charge(state, epsilon):
    """The ledger after spending epsilon; ValueError if it does not fit (the old ledger stays valid)."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not math.isfinite(epsilon) or epsilon <= 0:
        raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}")
    # An absolute tolerance: too loose for a small total, too tight for a large one.
    if math.fsum(state["spent"] + [epsilon]) > state["total"] + 1e-9:
        left = state["total"] - math.fsum(state["spent"])
        raise ValueError(f"query refused: it asks for epsilon = {epsilon:g} but only {left:g} of {state['total']:g} is left")
    return {"total": state["total"], "spent": state["spent"] + [float(epsilon)]}


def answer_count(state, values, threshold, epsilon, rng):
    new_state = charge(state, epsilon)
    true_count = int(np.sum(np.asarray(values) > threshold))
    return true_count + rng.laplace(0.0, 1.0 / epsilon), new_state
