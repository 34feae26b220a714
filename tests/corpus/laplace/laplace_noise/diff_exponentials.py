def laplace_noise(b, size, rng):
    """Difference of two independent Exponential(b) variables is Laplace(0, b)."""
    if not (np.isfinite(b) and b > 0):
        raise ValueError("b must be a finite positive number")
    e1 = -np.log(1.0 - rng.random(size))
    e2 = -np.log(1.0 - rng.random(size))
    return b * (e1 - e2)
