class BoundsError(Exception):
    """Invalid clipping bounds (library style: its own class, not the ValueError the notebook requires)."""


class RelationError(Exception):
    pass


def sum_sensitivity(lower, upper, relation):
    if relation not in ("add_remove", "replace"):
        raise RelationError(f"unknown relation {relation!r}")
    if not (math.isfinite(lower) and math.isfinite(upper) and lower < upper):
        raise BoundsError(f"need finite lower < upper, got {lower!r}, {upper!r}")
    if relation == "replace":
        return float(upper - lower)
    return float(max(abs(lower), abs(upper)))
