def rr_perturb(bits, epsilon, rng):
    # e^ε computed inline: math.exp overflows (OverflowError) for ε >= 710.
    x = np.asarray(bits)
    if not np.all((x == 0) | (x == 1)):
        raise ValueError("bits must be 0 or 1")
    if not math.isfinite(epsilon) or epsilon <= 0:
        raise ValueError("epsilon must be finite and > 0")
    p = math.exp(epsilon) / (math.exp(epsilon) + 1)
    return np.where(rng.random(x.shape) < p, x, 1 - x).astype(int)
