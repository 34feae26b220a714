def rr_perturb(bits, epsilon, rng):
    # One uniform serves two bits: after u < p the residual u/p (or (u - p)/(1 - p)) is uniform on
    # [0, 1) again and independent of the first decision (an independent reviewer, session 12: the
    # replaced-stretch check allowed one changed output per replaced uniform and cost it a point)
    x = np.asarray(bits)
    if not np.all((x == 0) | (x == 1)):
        raise ValueError("bits must be 0 or 1")
    p = rr_keep_probability(epsilon)
    flat = x.ravel()
    n = flat.size
    u = rng.random((n + 1) // 2)
    keep1 = u < p
    rest = np.where(keep1, u / p, (u - p) / (1.0 - p))
    keep = np.empty(n, dtype=bool)
    keep[0::2] = keep1[: (n + 1) // 2]
    keep[1::2] = (rest < p)[: n // 2]
    return np.where(keep, flat, 1 - flat).astype(int).reshape(x.shape)
