def averaging_attack(answers):
    mean = np.asarray(answers, dtype=float).mean()
    return math.floor(mean + 0.5)
