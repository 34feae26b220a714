def asymmetric_correct(n, n1, a, b):
    """Unbiased count: E[n1] = N a + (n - N) b, so N = (n1 - n b) / (a - b)."""
    for name, x in (("a", a), ("b", b)):
        if not math.isfinite(x) or not 0 <= x <= 1:
            raise ValueError(f"{name} must be a probability in [0, 1], got {x!r}")
    if a == b:
        raise ValueError("a == b: the reports do not depend on the truth, nothing can be corrected")
    if not 0 <= n1 <= n:
        raise ValueError(f"n1 must be between 0 and n = {n}, got {n1}")
    return min(max((n1 - n * b) / (a - b), 0.0), float(n))   # a count lies in [0, n]
