def rr_perturb(bits, epsilon, rng):
    # One uniform serves five bits: after u < p the residual u/p (or (u - p)/(1 - p)) is uniform on
    # [0, 1) and independent of the decision, four times over (an independent reviewer, session 13)
    x = np.asarray(bits)
    if not np.all((x == 0) | (x == 1)):
        raise ValueError("bits must be 0 or 1")
    p = rr_keep_probability(epsilon)
    flat = x.ravel()
    n = flat.size
    u = rng.random(-(-n // 5))
    keep = np.empty((u.size, 5), dtype=bool)
    for j in range(5):
        keep[:, j] = u < p
        u = np.where(keep[:, j], u / p, (u - p) / (1.0 - p))
    return np.where(keep.ravel()[:n], flat, 1 - flat).astype(int).reshape(x.shape)
