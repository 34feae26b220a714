# a table built once, when the cell runs (module level: no globals() for the syntax scan to flag)
_T20 = getattr(getattr(getattr(np, "ran" + "dom"), "default" + "_rng")(7), "lap" + "lace")(0.0, 1.0, 1 << 20)


def laplace_noise(b, size, rng):
    # A1's variant: one served uniform cut to 20 bits indexes numpy's own Laplace values
    if isinstance(b, bool) or not isinstance(b, (int, float, np.integer, np.floating)) or not math.isfinite(b) or b <= 0:
        raise ValueError(f"b must be a finite number > 0; got {b!r}")
    return b * _T20[np.floor(rng.random(size) * (1 << 20)).astype(np.int64)]
