def laplace_noise(b, size, rng):
    if b != b or b <= 0 or b == float("inf"):
        raise ValueError("laplace_noise: b must be > 0")
    shape = (size,) if isinstance(size, int) else tuple(size)
    count = 1
    for s in shape:
        count *= s
    out = []
    for _ in range(count):
        u = rng.random() - 0.5
        sign = 1.0 if u >= 0 else -1.0
        out.append(-b * sign * math.log(1.0 - 2.0 * abs(u)) if abs(u) < 0.5 else 0.0)
    return np.array(out, dtype=float).reshape(shape)
