def exponential_probabilities(scores, epsilon, sensitivity):
    # Extended precision as the overflow guard (as in two public repositories): float128 weights.
    q = np.asarray(scores, dtype=np.longdouble)
    if q.ndim != 1 or q.size == 0 or not np.all(np.isfinite(q)):
        raise ValueError("scores must be a non-empty 1-D sequence of finite numbers")
    if not math.isfinite(epsilon) or epsilon < 0:
        raise ValueError("epsilon must be finite and >= 0")
    if not math.isfinite(sensitivity) or sensitivity <= 0:
        raise ValueError("sensitivity must be finite and > 0")
    z = np.longdouble(epsilon) * q / (2 * np.longdouble(sensitivity))
    w = np.exp(z - z.max())
    return w / w.sum()
