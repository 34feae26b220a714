def laplace_noise(b, size, rng):
    u = rng.random(size) - 0.5
    return -b * np.sign(u) * np.log1p(-2 * np.abs(u))
