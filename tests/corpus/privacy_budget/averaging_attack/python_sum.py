def averaging_attack(answers):
    answers = list(answers)
    return round(sum(answers) / len(answers))
