def laplace_noise(b, size, rng):
    # Exact Laplace by rejection from a Cauchy proposal of the same scale, with uniforms only:
    # t = tan(pi (u - 1/2)) is standard Cauchy; f/g = (pi/2)(1 + t^2) e^-|t| <= pi/2, so accept with
    # probability (1 + t^2) e^-|t|. Rejected positions are drawn again, all at once.
    if not math.isfinite(b) or b <= 0:
        raise ValueError(f"laplace_noise: b must be finite and > 0, got {b}")
    shape = () if size is None else size
    n = int(np.prod(shape))
    out = np.empty(n)
    todo = np.arange(n)
    while todo.size:
        u = rng.random(todo.size)
        v = rng.random(todo.size)
        t = np.tan(np.pi * (u - 0.5))
        ok = v < (1 + t * t) * np.exp(-np.abs(t))
        out[todo[ok]] = b * t[ok]
        todo = todo[~ok]
    return float(out[0]) if size is None else out.reshape(shape)
