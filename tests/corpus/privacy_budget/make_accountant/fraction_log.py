def make_accountant(total_epsilon):
    if not (isinstance(total_epsilon, (int, float)) and math.isfinite(total_epsilon) and total_epsilon > 0):
        raise ValueError("the total budget must be a finite positive number")
    return {"total_epsilon": total_epsilon, "log": []}
