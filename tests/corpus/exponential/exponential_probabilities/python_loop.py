def exponential_probabilities(scores, epsilon, sensitivity):
    values = [float(s) for s in np.ravel(scores)]
    if np.ndim(scores) != 1 or not values or any(not math.isfinite(v) for v in values):
        raise ValueError("bad scores")
    if not (epsilon >= 0) or math.isinf(epsilon) or not (sensitivity > 0) or math.isinf(sensitivity):
        raise ValueError("bad epsilon or sensitivity")
    best = max(values)
    weights = [math.exp(epsilon * (v - best) / (2 * sensitivity)) for v in values]
    total = sum(weights)
    return np.array([w / total for w in weights])
