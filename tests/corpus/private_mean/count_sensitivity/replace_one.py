def count_sensitivity(relation):
    # a count query changes by at most 1 whatever the relation
    if relation not in ("add_remove", "replace"):
        raise ValueError("relation must be 'add_remove' or 'replace'")
    return 1.0
