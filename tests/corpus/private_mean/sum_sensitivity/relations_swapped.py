def sum_sensitivity(lower, upper, relation):
    if not (math.isfinite(lower) and math.isfinite(upper)) or lower >= upper:
        raise ValueError("need finite lower < upper")
    if relation == "replace":
        return max(abs(lower), abs(upper))
    if relation == "add_remove":
        return upper - lower
    raise ValueError("relation must be 'add_remove' or 'replace'")
