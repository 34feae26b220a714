def laplace_noise(b, size, rng):
    # Exact Laplace by rejection from a Cauchy proposal (accept t with probability (1 + t^2) e^-|t|),
    # vectorised: draw about twice what is missing, keep the accepted values, concatenate, truncate.
    if not math.isfinite(b) or b <= 0:
        raise ValueError(f"laplace_noise: b must be finite and > 0, got {b}")
    shape = () if size is None else size
    n = int(np.prod(shape))
    accepted = np.empty(0)
    while accepted.size < n:
        m = 2 * (n - accepted.size) + 10
        t = np.tan(np.pi * (rng.random(m) - 0.5))
        keep = rng.random(m) < (1 + t * t) * np.exp(-np.abs(t))
        accepted = np.concatenate([accepted, b * t[keep]])
    out = accepted[:n]
    return float(out[0]) if size is None else out.reshape(shape)
