def rr_perturb(bits, epsilon, rng):
    x = np.asarray(bits)
    p = rr_keep_probability(epsilon)
    out = np.empty(x.shape, dtype=int)
    for idx, bit in np.ndenumerate(x):
        if bit not in (0, 1):
            raise ValueError(f"bit {bit!r} is not 0 or 1")
        out[idx] = int(bit) if rng.random() < p else 1 - int(bit)
    return out
