def exponential_mechanism(scores, epsilon, sensitivity, rng):
    p = exponential_probabilities(scores, epsilon, sensitivity)
    top = p.max()
    # rejection sampling: propose a uniform candidate, accept it with probability p_i / max p;
    # the number of draws depends on their values (every later call reads shifted draws)
    while True:
        i = min(int(rng.random() * len(p)), len(p) - 1)
        if rng.random() * top < p[i]:
            return i
