class BoundsError(ValueError):
    """Invalid clipping bounds (library style: its own class, still a ValueError)."""


class RelationError(ValueError):
    pass


def sum_sensitivity(lower, upper, relation):
    if relation not in ("add_remove", "replace"):
        raise RelationError(f"unknown relation {relation!r}")
    if not (math.isfinite(lower) and math.isfinite(upper) and lower < upper):
        raise BoundsError(f"need finite lower < upper, got {lower!r}, {upper!r}")
    if relation == "replace":
        return float(upper - lower)
    return float(max(abs(lower), abs(upper)))
