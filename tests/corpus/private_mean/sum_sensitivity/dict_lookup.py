def sum_sensitivity(lower, upper, relation):
    if math.isnan(lower) or math.isnan(upper) or math.isinf(lower) or math.isinf(upper) or not lower < upper:
        raise ValueError("bad bounds")
    table = {"add_remove": float(np.max(np.abs([lower, upper]))), "replace": float(upper - lower)}
    if relation not in table:
        raise ValueError("relation must be one of " + ", ".join(table))
    return table[relation]
