def grr_perturb(values, k, epsilon, rng):
    # A beginner's first version: one user at a time, plain Python.
    if not isinstance(k, (int, np.integer)) or k < 2:
        raise ValueError("k must be an integer >= 2")
    if not math.isfinite(epsilon) or epsilon <= 0:
        raise ValueError("epsilon must be a finite number > 0")
    values = np.asarray(values)
    p = 1 / (1 + (k - 1) * math.exp(-epsilon))
    reports = []
    for v in values.ravel():
        if v < 0 or v >= k or v != int(v):
            raise ValueError("values must be integers in 0..k-1")
        v = int(v)
        if rng.random() < p:
            reports.append(v)
        else:
            others = [x for x in range(k) if x != v]
            reports.append(others[rng.integers(0, k - 1)])
    return np.array(reports, dtype=int).reshape(values.shape)
