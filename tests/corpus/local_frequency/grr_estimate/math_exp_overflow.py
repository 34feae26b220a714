def grr_estimate(reports, k, epsilon):
    """Textbook form with math.exp(epsilon), as diffprivlib's estimators: OverflowError once epsilon > 709."""
    r = np.asarray(reports, dtype=np.int64).ravel()
    n = r.size
    p = math.exp(epsilon) / (math.exp(epsilon) + k - 1)
    q = 1 / (math.exp(epsilon) + k - 1)
    counts = np.bincount(r, minlength=k)
    return (counts - n * q) / (p - q)
