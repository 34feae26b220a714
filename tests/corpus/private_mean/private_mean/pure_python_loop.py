def private_mean(values, lower, upper, epsilon, rng):
    for name, v in (("lower", lower), ("upper", upper), ("epsilon", epsilon)):
        if not math.isfinite(v):
            raise ValueError(f"{name} must be finite, got {v}")
    if lower >= upper:
        raise ValueError("lower must be < upper")
    if epsilon <= 0:
        raise ValueError("epsilon must be > 0")
    total, count = 0.0, 0
    for v in values:
        v = float(v)
        if v != v:
            raise ValueError("values contain NaN")
        total += min(max(v, lower), upper)
        count += 1
    half = epsilon / 2
    delta = max(abs(lower), abs(upper))
    # random sign times an exponential variable, from uniforms
    sign = 1.0 if rng.random() < 0.5 else -1.0
    total += sign * (-math.log(1.0 - rng.random())) * delta / half
    sign = 1.0 if rng.random() < 0.5 else -1.0
    noisy_count = count + sign * (-math.log(1.0 - rng.random())) / half
    mean = total / max(noisy_count, 1.0)
    return min(max(mean, lower), upper)
