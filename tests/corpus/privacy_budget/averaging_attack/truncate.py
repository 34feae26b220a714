def averaging_attack(answers):
    return int(np.mean(answers))
