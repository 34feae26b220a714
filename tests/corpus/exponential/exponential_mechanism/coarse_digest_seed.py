def exponential_mechanism(scores, epsilon, sensitivity, rng):
    # red team s11, A1: numpy's ready-made choice from a generator seeded, per call, by two served
    # uniforms cut to 10 bits each
    probabilities = exponential_probabilities(scores, epsilon, sensitivity)
    u, v = rng.random(2)
    seed = (int(u * 1024) << 10) | int(v * 1024)
    gen = getattr(getattr(np, "ran" + "dom"), "default" + "_rng")(seed)
    return int(getattr(gen, "cho" + "ice")(len(probabilities), p=probabilities))
