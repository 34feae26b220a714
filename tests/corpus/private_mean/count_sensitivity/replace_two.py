def count_sensitivity(relation):
    # replacing = removing one record and adding another: two changes
    if relation == "add_remove":
        return 1
    if relation == "replace":
        return 2
    raise ValueError("relation must be 'add_remove' or 'replace'")
