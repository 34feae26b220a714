import scipy.special


def exponential_probabilities(scores, epsilon, sensitivity):
    """Pr[r] ∝ exp(ε q(r) / 2Δ): scipy.special.softmax of the exponents (arithmetic, no randomness)."""
    q = np.asarray(scores, dtype=float)
    if q.ndim != 1 or q.size == 0 or not np.all(np.isfinite(q)):
        raise ValueError("scores must be a non-empty 1-D sequence of finite numbers")
    if not math.isfinite(epsilon) or epsilon < 0:
        raise ValueError("epsilon must be finite and >= 0")
    if not math.isfinite(sensitivity) or sensitivity <= 0:
        raise ValueError("sensitivity must be finite and > 0")
    return scipy.special.softmax(epsilon * q / (2 * sensitivity))
