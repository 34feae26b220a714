def asymmetric_correct(n, n1, a, b):
    if not (0 <= a <= 1 and 0 <= b <= 1) or a == b:
        raise ValueError("a, b must be different probabilities")
    if not 0 <= n1 <= n:
        raise ValueError("need 0 <= n1 <= n")
    return n1 / a      # each true 1 shows up as a 1 with probability a
