def asymmetric_correct(n, n1, a, b):
    # Unknowns: N ones and M zeros. N + M = n and a N + b M = E[n1].
    if any(not (0.0 <= x <= 1.0) for x in (a, b)):
        raise ValueError("a, b must be in [0, 1]")
    if abs(a - b) == 0:
        raise ValueError("a must differ from b")
    if not (0 <= n1 <= n):
        raise ValueError("n1 must be in [0, n]")
    system = np.array([[1.0, 1.0], [a, b]])
    N, M = np.linalg.solve(system, np.array([n, n1], dtype=float))
    return float(N)
