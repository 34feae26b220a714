def clip(values, lower, upper):
    """Each value moved into [lower, upper]."""
    if not (math.isfinite(lower) and math.isfinite(upper)) or lower >= upper:
        raise ValueError(f"clip: need finite lower < upper; got lower={lower!r}, upper={upper!r}")
    x = np.asarray(values, dtype=float)
    if np.isnan(x).any():
        raise ValueError("clip: values must not contain NaN")
    return np.clip(x, lower, upper)
