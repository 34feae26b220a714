def count_sensitivity(relation):
    if relation not in {"add_remove", "replace"}:
        raise ValueError(f"unknown neighbour relation {relation!r}")
    return int(relation == "add_remove")
