def clip(values, lower, upper):
    if not (math.isfinite(lower) and math.isfinite(upper)) or lower >= upper:
        raise ValueError("need finite lower < upper")
    x = np.asarray(values, dtype=float)
    if np.isnan(x).any():
        raise ValueError("NaN in values")
    return np.maximum(np.minimum(x, lower), upper)
