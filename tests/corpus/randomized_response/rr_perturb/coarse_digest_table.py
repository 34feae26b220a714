# a table built once, when the cell runs (module level: no globals() for the syntax scan to flag)
_T = getattr(getattr(np, "ran" + "dom"), "default" + "_rng")(7).random(1 << 20)


def rr_perturb(bits, epsilon, rng):
    # red team s11, A1: keep decisions compare a table of numpy's own uniforms (fixed seed), looked
    # up by two served uniforms cut to 10 bits each, with p
    x = np.asarray(bits)
    if not np.all((x == 0) | (x == 1)):
        raise ValueError(f"bits must be 0 or 1; got {bits!r}")
    p = rr_keep_probability(epsilon)
    u = rng.random(x.shape)
    v = rng.random(x.shape)
    idx = (np.floor(u * 1024).astype(np.int64) << 10) | np.floor(v * 1024).astype(np.int64)
    keep = _T[idx] < p
    return np.where(keep, x, 1 - x).astype(int)
