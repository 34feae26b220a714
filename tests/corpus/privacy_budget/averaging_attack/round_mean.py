def averaging_attack(answers):
    """Average the repeated noisy answers and round: the noise averages out (Table 6-3)."""
    return int(round(float(np.mean(answers))))
