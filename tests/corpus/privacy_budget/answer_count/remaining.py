TOLERANCE = 1e-9   # relative to the total: absorbs float rounding, far below any meaningful epsilon


def spend(state, epsilon):
    if math.isnan(epsilon) or epsilon <= 0 or math.isinf(epsilon):
        raise ValueError(f"epsilon must be finite and > 0 (got {epsilon})")
    if epsilon > state["remaining"] + TOLERANCE * state["total"]:
        raise ValueError(f"budget exceeded: {state['remaining']:.6g} left, {epsilon:.6g} requested")
    return {"total": state["total"], "remaining": max(state["remaining"] - epsilon, 0.0),
            "queries": state["queries"] + 1}


def answer_count(state, values, threshold, epsilon, rng):
    state = spend(state, epsilon)
    count = 0
    for v in values:
        if v > threshold:
            count += 1
    return count + float(rng.laplace(0, 1 / epsilon)), state
