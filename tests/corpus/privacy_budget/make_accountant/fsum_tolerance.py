def make_accountant(total_epsilon):
    """A new ledger: the total budget and the list of the ε spent so far."""
    if isinstance(total_epsilon, bool) or not isinstance(total_epsilon, (int, float)) \
            or not math.isfinite(total_epsilon) or total_epsilon <= 0:
        raise ValueError(f"total_epsilon must be a finite number > 0, got {total_epsilon!r}")
    return {"total": float(total_epsilon), "spent": []}
