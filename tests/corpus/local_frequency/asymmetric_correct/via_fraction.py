def asymmetric_correct(n, n1, a, b):
    if not (0 <= a <= 1) or not (0 <= b <= 1):   # False for nan too
        raise ValueError("a and b must be probabilities")
    if a == b:
        raise ValueError("a and b must differ")
    if n1 < 0 or n1 > n:
        raise ValueError("need 0 <= n1 <= n")
    share_of_ones = n1 / n
    pi = (share_of_ones - b) / (a - b)
    return pi * n
