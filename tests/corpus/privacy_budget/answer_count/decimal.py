from decimal import Decimal


def answer_count(state, values, threshold, epsilon, rng):
    if not isinstance(epsilon, (int, float)) or not (0 < epsilon < float("inf")):
        raise ValueError(f"epsilon must be positive and finite, not {epsilon}")
    asked = Decimal(repr(float(epsilon)))
    spent, total = Decimal(state["spent"]), Decimal(state["total"])
    if spent + asked > total:
        raise ValueError(f"privacy budget exhausted: {total - spent} left, {asked} requested")
    count = np.count_nonzero(np.asarray(values) > threshold)
    noise = rng.laplace(scale=1 / epsilon)
    return float(count + noise), {"total": state["total"], "spent": str(spent + asked)}
