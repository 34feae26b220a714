def rr_perturb(bits, epsilon, rng):
    x = np.asarray(bits)
    p = rr_keep_probability(epsilon)
    return np.where(rng.random(x.shape) < p, x, 1 - x).astype(int)
