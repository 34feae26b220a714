def asymmetric_correct(n, n1, a, b):
    # the textbook's correction with p = a
    if not (0 <= a <= 1 and 0 <= b <= 1) or a == b:
        raise ValueError("a, b must be different probabilities")
    if not 0 <= n1 <= n:
        raise ValueError("need 0 <= n1 <= n")
    return ((a - 1) * n + n1) / (2 * a - 1)
