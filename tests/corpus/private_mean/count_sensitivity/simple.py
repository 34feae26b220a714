def count_sensitivity(relation):
    """l1 sensitivity of the number of records."""
    if relation == "add_remove":
        return 1.0
    if relation == "replace":
        return 0.0  # the size is the same for both datasets
    raise ValueError(f"count_sensitivity: relation must be 'add_remove' or 'replace'; got {relation!r}")
