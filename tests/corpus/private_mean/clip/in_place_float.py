def clip(values, lower, upper):
    if not (math.isfinite(lower) and math.isfinite(upper)) or lower >= upper:
        raise ValueError("need finite lower < upper")
    values = np.asarray(values, dtype=float)   # a float array comes back as itself, not a copy
    if np.isnan(values).any():
        raise ValueError("NaN in values")
    np.clip(values, lower, upper, out=values)   # clips the caller's float array in place
    return values
