def rr_perturb(bits, epsilon, rng):
    x = np.asarray(bits)
    if not np.all((x == 0) | (x == 1)):
        raise ValueError("bits must be 0 or 1")
    flip = rng.binomial(1, 1 - rr_keep_probability(epsilon), x.shape)
    return (x + flip) % 2
