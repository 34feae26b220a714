def clip(values, lower, upper):
    if not (math.isfinite(lower) and math.isfinite(upper)) or lower >= upper:
        raise ValueError("need finite lower < upper")
    if isinstance(values, list):
        values = np.array(values, dtype=float)
    if np.isnan(values).any():
        raise ValueError("NaN in values")
    np.clip(values, lower, upper, out=values)   # saves memory
    return values
