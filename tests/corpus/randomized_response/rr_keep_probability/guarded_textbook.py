def rr_keep_probability(epsilon):
    if epsilon != epsilon or epsilon <= 0 or epsilon == float("inf"):
        raise ValueError("epsilon must be a positive finite number")
    if epsilon > 700:
        return 1.0 / (1.0 + math.exp(-epsilon))
    e = math.exp(epsilon)
    return e / (e + 1)
