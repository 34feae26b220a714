def charge(state, epsilon):
    """Tumult's rule: a request above what is left is refused unless it is close to it *relative to the
    remaining budget* (so the tolerance vanishes as the budget runs out)."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not math.isfinite(epsilon) or epsilon <= 0:
        raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}")
    remaining = state["total"] - math.fsum(state["spent"])
    if epsilon > remaining and not math.isclose(epsilon, remaining, rel_tol=1e-9):
        raise ValueError(f"query refused: epsilon = {epsilon:g} but only {remaining:g} is left")
    return {"total": state["total"], "spent": state["spent"] + [float(epsilon)]}


def answer_count(state, values, threshold, epsilon, rng):
    new_state = charge(state, epsilon)
    true_count = int(np.sum(np.asarray(values) > threshold))
    return true_count + rng.laplace(0.0, 1.0 / epsilon), new_state
