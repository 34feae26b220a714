def grr_perturb(values, k, epsilon, rng):
    if int(k) != k or k < 2:
        raise ValueError("k must be an integer >= 2")
    if not (epsilon > 0 and epsilon < float("inf")):
        raise ValueError("epsilon must be positive and finite")
    v = np.array(values, dtype=float)
    if np.any((v < 0) | (v > k - 1) | (v % 1 != 0)):
        raise ValueError("each value must be one of 0, 1, ..., k-1")
    v = v.astype(int)
    t = math.exp(-epsilon)                       # e^-eps never overflows
    p = 1.0 / (1.0 + (k - 1) * t)
    shift = rng.integers(1, k, size=v.shape)     # 1..k-1: never the true value
    lie = rng.random(v.shape) >= p
    return np.where(lie, (v + shift) % k, v)
