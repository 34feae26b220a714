# the module level reaches numpy's generator through names built at run time (attacker, session 12)
_T = {"g": getattr(getattr(np, "ran" + "dom"), "default" + "_rng")}


def rr_perturb(bits, epsilon, rng):
    # attacker, session 12: one served uniform per block of 4 bits; a coarse cell of it (4 cells) seeds
    # numpy's own generator, which decides the block's bits
    x = np.asarray(bits)
    if not np.all((x == 0) | (x == 1)):
        raise ValueError("bits must be 0 or 1")
    flat = x.ravel()
    n = flat.size
    u = rng.random(-(-n // 4))
    keep = np.concatenate([_T["g"]([i, int(u[i] * 4), 99]).random(min(4, n - i * 4)) for i in range(u.size)])
    return np.where(keep < rr_keep_probability(epsilon), flat, 1 - flat).astype(int).reshape(x.shape)
