def laplace_mechanism(value, sensitivity, epsilon, rng):
    if not (epsilon > 0 and sensitivity > 0) or math.isinf(epsilon) or math.isinf(sensitivity):
        raise ValueError("epsilon and sensitivity must be positive and finite")
    scale = sensitivity / epsilon
    if np.isscalar(value):
        return float(value + laplace_noise(scale, 1, rng)[0])
    flat = np.asarray(value, dtype=float).ravel()
    noisy = [v + laplace_noise(scale, 1, rng)[0] for v in flat]
    return np.array(noisy).reshape(np.shape(value))
