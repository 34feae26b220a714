def rr_perturb(bits, epsilon, rng):
    x = np.asarray(bits)
    if not np.all((x == 0) | (x == 1)):
        raise ValueError("bits must be 0 or 1")
    flip = rng.random(x.shape) >= rr_keep_probability(epsilon)
    return np.bitwise_xor(x.astype(np.int64), flip.astype(np.int64))
