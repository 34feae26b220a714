import random

def exponential_mechanism(scores, epsilon, sensitivity, rng):
    p = exponential_probabilities(scores, epsilon, sensitivity)
    return random.choices(range(len(p)), weights=p)[0]
