def make_accountant(total_epsilon):
    try:
        total = float(total_epsilon)
    except (TypeError, ValueError):
        raise ValueError("total_epsilon must be a number") from None
    if math.isnan(total) or math.isinf(total) or total <= 0:
        raise ValueError(f"total_epsilon must be finite and > 0 (got {total_epsilon})")
    return {"total": total, "remaining": total, "queries": 0}
