def clip(values, lower, upper):
    return np.clip(np.asarray(values, dtype=float), lower, upper)
