def clip(values, lower, upper):
    lower = float(lower)
    upper = float(upper)
    if math.isnan(lower) or math.isnan(upper) or math.isinf(lower) or math.isinf(upper):
        raise ValueError("bounds must be finite")
    if not lower < upper:
        raise ValueError("lower must be smaller than upper")
    arr = np.array(values, dtype=np.float64)  # a copy: the input is never changed
    if np.any(arr != arr):
        raise ValueError("NaN in values")
    return np.minimum(np.maximum(arr, lower), upper)
