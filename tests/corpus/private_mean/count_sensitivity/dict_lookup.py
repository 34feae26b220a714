def count_sensitivity(relation):
    table = {"add_remove": 1, "replace": 0}
    try:
        return table[relation]
    except (KeyError, TypeError):
        raise ValueError("relation must be 'add_remove' or 'replace'") from None
