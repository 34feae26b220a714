"""Session 14: how many served uniforms each output depends on (helpers/checks/dependency.py), measured.

For every sampler file given (a corpus variant, a reviewer's or an attacker's file: ``<dir>/<function>/*.py``
or ``<dir>/*.py`` with the function named by the file's folder), the distribution checks of its function
(visible and hidden cases of each seed; exponential: both hidden cases) run in-process with the
forbidden-name scan switched off (the draws checks alone). Each judged call's dependency count is recorded
with its limit: printed per sampler, the largest count ÷ limit, the failures of the whole check and which
diagnosis, and the CPU of the dependency runs. ::

    .venv/bin/python tests/power/measure_dependency.py SEED_FROM SEED_TO PATH...
"""
from __future__ import annotations

import contextlib
import io
import math
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from helpers import checks  # noqa: E402
from helpers.checks import dependency, forbidden, load_student_code  # noqa: E402
from helpers.checks.core import CheckFailure  # noqa: E402
from helpers.checks.exponential import hidden_mechanism_cases  # noqa: E402
from helpers.checks.laplace import hidden_noise_case  # noqa: E402
from helpers.checks.randomized_response import hidden_perturb_case  # noqa: E402

PRE = '''
def rr_keep_probability(epsilon):
    return 1.0 / (1.0 + math.exp(-epsilon))


def exponential_probabilities(scores, epsilon, sensitivity):
    z = epsilon * np.asarray(scores, dtype=float) / (2 * sensitivity)
    w = np.exp(z - z.max())
    return w / w.sum()
'''
FUNCTIONS = ("laplace_noise", "rr_perturb", "exponential_mechanism")
RECORD: list = []


def _recording(fname, run, shifted, drawn, base, seed, **kw):
    start = time.process_time()
    found = dependency.dependency_counts(run, shifted, drawn, base, seed, **kw)
    RECORD.append((found, time.process_time() - start))
    if found is not None and found[0] > found[1]:
        raise CheckFailure("dependency", "dependency", diagnosis="common.output_from_coarse_digest")


def _checks(function, f, seed):
    if function == "laplace_noise":
        return [lambda: checks.check_laplace_noise_distribution(f, seed),
                lambda: checks.check_laplace_noise_distribution(f, seed, **hidden_noise_case(seed))]
    if function == "rr_perturb":
        return [lambda: checks.check_rr_perturb_distribution(f, seed),
                lambda: checks.check_rr_perturb_distribution(f, seed, **hidden_perturb_case(seed))]
    return [lambda: checks.check_exponential_mechanism_distribution(f, seed)] + [
        (lambda c=c: checks.check_exponential_mechanism_distribution(f, seed, **c)) for c in hidden_mechanism_cases(seed)]


def main() -> None:
    a, b = int(sys.argv[1]), int(sys.argv[2])
    forbidden.find_forbidden_calls = lambda *args, **kwargs: []
    forbidden.dependency.check_dependencies = _recording
    samplers = []  # (label, function, code)
    for given in sys.argv[3:]:
        path = Path(given)
        if path.is_file():
            samplers.append((path.stem, path.parent.name, path.read_text()))
        elif list(path.glob("*.py")):  # one submission: all its files
            function = {"laplace": "laplace_noise", "randomized_response": "rr_perturb"}.get(
                path.parent.name, "exponential_mechanism")
            samplers.append((path.name, function, "\n".join(p.read_text() for p in sorted(path.glob("*.py")))))
        else:
            samplers += [(p.stem, p.parent.name, p.read_text()) for p in sorted(path.glob("*/*.py"))
                         if p.parent.name in FUNCTIONS]
    for label, function, code in samplers:
        f = load_student_code(PRE + code, {"np": np, "math": math, "__name__": "__main__"})[function]
        RECORD.clear()
        dep = other = runs = 0
        diagnoses = set()
        for seed in range(a, b):
            for check in _checks(function, f, seed):
                runs += 1
                try:
                    with contextlib.redirect_stdout(io.StringIO()):
                        check()
                except CheckFailure as failure:
                    if getattr(failure, "en", "") == "dependency":
                        dep += 1
                    else:
                        other += 1
                        diagnoses.add(getattr(failure, "diagnosis", "?"))
        judged = [(found, spent) for found, spent in RECORD if found]
        largest = f"{max(found[0] / found[1] for found, _ in judged):.3f}" if judged else "-"
        cpu = f"{np.mean([spent for _, spent in judged]):.3f}" if judged else "-"
        print(f"| {label} | {function} | {len(judged)} of {runs} | {dep} | {other} {sorted(diagnoses) if diagnoses else ''} "
              f"| {largest} | {cpu} |", flush=True)


if __name__ == "__main__":
    main()
