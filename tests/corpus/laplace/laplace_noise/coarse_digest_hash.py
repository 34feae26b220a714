def laplace_noise(b, size, rng):
    # A1's variant at the size of the largest table (2^26 cells: two uniforms cut to 13 bits each),
    # without the table: the cell is hashed (splitmix64) to a uniform of its own, turned into Laplace
    if isinstance(b, bool) or not isinstance(b, (int, float, np.integer, np.floating)) or not math.isfinite(b) or b <= 0:
        raise ValueError(f"b must be a finite number > 0; got {b!r}")
    u = rng.random(size)
    v = rng.random(size)
    z = ((np.floor(u * 8192).astype(np.uint64) << np.uint64(13)) | np.floor(v * 8192).astype(np.uint64))
    with np.errstate(over="ignore"):
        z = z + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    w = ((z >> np.uint64(11)).astype(np.float64) + 0.5) / 2.0 ** 53
    return -b * np.sign(w - 0.5) * np.log1p(-2 * np.abs(w - 0.5))
