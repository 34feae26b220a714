def sum_sensitivity(lower, upper, relation):
    # the sum can change by at most the width of the range
    if not (math.isfinite(lower) and math.isfinite(upper)) or lower >= upper:
        raise ValueError("need finite lower < upper")
    if relation not in ("add_remove", "replace"):
        raise ValueError("relation must be 'add_remove' or 'replace'")
    return upper - lower
