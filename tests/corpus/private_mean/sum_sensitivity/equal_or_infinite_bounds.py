def sum_sensitivity(lower, upper, relation):
    """Validates nan and lower > upper only: lower == upper (sensitivity 0) and infinite bounds pass through."""
    if relation not in ("add_remove", "replace"):
        raise ValueError(f"unknown relation {relation!r}")
    if math.isnan(lower) or math.isnan(upper) or lower > upper:
        raise ValueError(f"need lower <= upper, got {lower!r}, {upper!r}")
    if relation == "replace":
        return float(upper - lower)
    return float(max(abs(lower), abs(upper)))
