class BudgetExceededError(ValueError):
    """The query does not fit in what is left (diffprivlib's BudgetError, Tumult's InsufficientBudgetError)."""


class InvalidEpsilonError(ValueError):
    pass


def charge(state, epsilon):
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not math.isfinite(epsilon) or epsilon <= 0:
        raise InvalidEpsilonError(f"epsilon must be a finite number > 0, got {epsilon!r}")
    if math.fsum(state["spent"] + [epsilon]) > state["total"] * (1 + 1e-12):
        raise BudgetExceededError(f"epsilon = {epsilon:g} does not fit in the budget {state['total']:g}")
    return {"total": state["total"], "spent": state["spent"] + [float(epsilon)]}


def answer_count(state, values, threshold, epsilon, rng):
    new_state = charge(state, epsilon)
    true_count = int(np.sum(np.asarray(values) > threshold))
    return true_count + rng.laplace(0.0, 1.0 / epsilon), new_state
