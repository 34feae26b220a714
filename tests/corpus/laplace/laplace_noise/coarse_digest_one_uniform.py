def laplace_noise(b, size, rng):
    # A1's variant: one served uniform cut to 20 bits indexes numpy's own Laplace values
    if isinstance(b, bool) or not isinstance(b, (int, float, np.integer, np.floating)) or not math.isfinite(b) or b <= 0:
        raise ValueError(f"b must be a finite number > 0; got {b!r}")
    g = globals()
    if "_T20" not in g:
        gen = getattr(getattr(np, "ran" + "dom"), "default" + "_rng")(7)
        g["_T20"] = getattr(gen, "lap" + "lace")(0.0, 1.0, 1 << 20)
    return b * g["_T20"][np.floor(rng.random(size) * (1 << 20)).astype(np.int64)]
