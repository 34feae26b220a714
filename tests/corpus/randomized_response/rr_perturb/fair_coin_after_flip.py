def rr_perturb(bits, epsilon, rng):
    x = np.asarray(bits)
    if not np.all((x == 0) | (x == 1)):
        raise ValueError("bits must be 0 or 1")
    p = rr_keep_probability(epsilon)
    truthful = rng.random(x.shape) < p
    coin = (rng.random(x.shape) < 0.5).astype(int)
    return np.where(truthful, x, coin).astype(int)
