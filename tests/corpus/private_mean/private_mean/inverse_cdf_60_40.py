def private_mean(values, lower, upper, epsilon, rng):
    if not (math.isfinite(lower) and math.isfinite(upper) and lower < upper):
        raise ValueError("need finite lower < upper")
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError("epsilon must be finite and > 0")
    x = np.asarray(values, dtype=float)
    if np.isnan(x).any():
        raise ValueError("NaN in values")
    x = np.minimum(np.maximum(x, lower), upper)

    def lap(b):
        u = rng.random() - 0.5                      # inverse CDF of Laplace(0, b)
        return -b * math.copysign(1.0, u) * math.log1p(-2 * abs(u))

    e1, e2 = 0.6 * epsilon, 0.4 * epsilon           # the sum is the noisier query
    s = x.sum() + lap(max(abs(lower), abs(upper)) / e1)
    n = len(x) + lap(1.0 / e2)
    m = s / max(n, 1.0)
    return float(min(max(m, lower), upper))
