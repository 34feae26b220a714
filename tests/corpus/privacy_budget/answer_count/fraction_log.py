from fractions import Fraction


def _fits(state, epsilon):
    # Fraction(str(x)) is the decimal number the user typed, exactly: 0.1 + 0.2 + 0.7 == 1.
    used = sum(Fraction(str(entry["epsilon"])) for entry in state["log"])
    return used + Fraction(str(epsilon)) <= Fraction(str(state["total_epsilon"]))


def _laplace(scale, rng, size=None):
    sign = np.where(rng.random(size) < 0.5, -1.0, 1.0)
    return sign * rng.exponential(scale, size)


def answer_count(state, values, threshold, epsilon, rng):
    if not (isinstance(epsilon, (int, float)) and math.isfinite(epsilon) and epsilon > 0):
        raise ValueError("epsilon must be a finite positive number")
    if not _fits(state, epsilon):
        raise ValueError("refused: this query would exceed the privacy budget")
    log = state["log"] + [{"query": "count", "epsilon": epsilon}]
    n = int((np.asarray(values, dtype=float) > threshold).sum())
    return float(n + _laplace(1 / epsilon, rng)), {"total_epsilon": state["total_epsilon"], "log": log}
