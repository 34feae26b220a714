def sum_sensitivity(lower, upper, relation):
    # a record adds at most `upper` to the sum
    if not (math.isfinite(lower) and math.isfinite(upper)) or lower >= upper:
        raise ValueError("need finite lower < upper")
    if relation == "add_remove":
        return upper
    if relation == "replace":
        return upper - lower
    raise ValueError("relation must be 'add_remove' or 'replace'")
