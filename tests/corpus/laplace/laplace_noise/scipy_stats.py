from scipy import stats


def laplace_noise(b, size, rng):
    if not math.isfinite(b) or b <= 0:
        raise ValueError("b must be finite and > 0")
    return stats.laplace.rvs(loc=0.0, scale=b, size=size, random_state=rng)
