def rr_perturb(bits, epsilon, rng):
    x = np.asarray(bits)
    if not np.all((x == 0) | (x == 1)):
        raise ValueError("bits must be 0 or 1")
    keep = rng.random(x.shape) < rr_keep_probability(epsilon)
    return keep == (x == 1)
