def make_accountant(total_epsilon):
    return {"total": float(total_epsilon), "spent": []}
