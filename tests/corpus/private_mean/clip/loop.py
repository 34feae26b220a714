def clip(values, lower, upper):
    if not (math.isfinite(lower) and math.isfinite(upper) and lower < upper):
        raise ValueError("clip: lower and upper must be finite with lower < upper")
    out = []
    for v in values:
        v = float(v)
        if math.isnan(v):
            raise ValueError("clip: NaN value")
        if v < lower:
            v = lower
        elif v > upper:
            v = upper
        out.append(v)
    return np.array(out, dtype=float)
