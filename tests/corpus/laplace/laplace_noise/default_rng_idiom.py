def laplace_noise(b, size, rng):
    # numpy's idiom (its documentation, scikit-learn's and diffprivlib's style): default_rng returns a
    # Generator it is given unchanged, so this creates nothing
    rng = np.random.default_rng(rng)
    if isinstance(b, bool) or not isinstance(b, (int, float, np.integer, np.floating)) or not math.isfinite(b) or b <= 0:
        raise ValueError(f"b must be a finite number > 0; got {b!r}")
    u = rng.random(size) - 0.5
    return -b * np.sign(u) * np.log1p(-2 * np.abs(u))
