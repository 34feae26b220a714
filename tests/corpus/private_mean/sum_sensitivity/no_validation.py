def sum_sensitivity(lower, upper, relation):
    if relation == "add_remove":
        return max(abs(lower), abs(upper))
    return upper - lower
