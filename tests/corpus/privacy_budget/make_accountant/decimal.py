from decimal import Decimal


def make_accountant(total_epsilon):
    # Decimal strings: the budget is kept exactly as the user wrote it (0.1 stays 0.1).
    if not isinstance(total_epsilon, (int, float)) or not (0 < total_epsilon < float("inf")):
        raise ValueError("total_epsilon must be positive and finite")
    return {"total": str(Decimal(repr(float(total_epsilon)))), "spent": "0"}
