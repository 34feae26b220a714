def asymmetric_correct(n, n1, a, b):
    return (n1 - n * b) / (a - b)
