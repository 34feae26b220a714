from helpers.mechanisms import laplace_noise as _reference_laplace_noise


def laplace_noise(b, size, rng):
    return _reference_laplace_noise(b, size, rng)
