def sum_sensitivity(lower, upper, relation):
    if relation not in ("add_remove", "replace"):
        raise ValueError("unknown relation " + repr(relation))
    if not (math.isfinite(lower) and math.isfinite(upper) and lower < upper):
        raise ValueError("need finite lower < upper")
    if relation == "replace":
        return float(upper - lower)
    if lower >= 0:
        return float(upper)
    if upper <= 0:
        return float(-lower)
    return float(max(-lower, upper))
