def rr_keep_probability(epsilon):
    return 1.0 / (1.0 + math.exp(-epsilon))
