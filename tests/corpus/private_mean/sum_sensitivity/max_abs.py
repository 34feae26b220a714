def sum_sensitivity(lower, upper, relation):
    """l1 sensitivity of the sum of values clipped to [lower, upper]."""
    if not (math.isfinite(lower) and math.isfinite(upper)) or lower >= upper:
        raise ValueError(f"sum_sensitivity: need finite lower < upper; got {lower!r}, {upper!r}")
    if relation == "add_remove":
        # one record more or less: the sum moves by its clipped value
        return max(abs(lower), abs(upper))
    if relation == "replace":
        # one record changed: the sum moves by the difference of two clipped values
        return upper - lower
    raise ValueError(f"sum_sensitivity: relation must be 'add_remove' or 'replace'; got {relation!r}")
