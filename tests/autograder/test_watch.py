"""The sandbox's watch for library randomness during the generator assignments' calls (issue 35, A2):
numpy's samplers reached through a route no list of names holds cost the call's check, honest
samplers and the audit assignments' calls are untouched. One sandbox, a few seconds."""

from __future__ import annotations

import time

import numpy as np
import pytest

#: Each function draws its numbers through a route the forbidden-name scan did not list (session 14's
#: attacker, /tmp/jattack14/scan_routes.py) or through numpy's and Python's own generators.
ROUTES = '''
import math, os, random, operator
import numpy as np, scipy.stats, scipy.optimize
from scipy.spatial.transform import Rotation

def kde_seeded(n, rng):
    k = scipy.stats.gaussian_kde(np.array([-1.0, 1.0]), bw_method=1e4)
    return k.resample(n, int(rng.random() * 4))[0]

def kde_os_seeded(n, rng):
    rng.random()
    return scipy.stats.gaussian_kde(np.array([-1.0, 1.0]), bw_method=1e4).resample(n)[0]

def rotation(n, rng):
    q = Rotation.random(n, int(rng.random() * 4)).as_quat()
    return q[:, 0] ** 2 + q[:, 1] ** 2

def evolution(n, rng):
    xs = []
    scipy.optimize.differential_evolution(lambda x: xs.append(x[0]) or 0.0, [(0, 1)], seed=int(rng.random() * 4),
                                          maxiter=1, popsize=n, polish=False, init="random")
    return np.array(xs[:n])

def from_c(n, rng):
    # a generator made and used from C only: map and methodcaller make no Python-level call of numpy
    make = getattr(np.random, "default" + "_rng")
    g = next(map(make, [int(rng.random() * 4)]))
    return operator.methodcaller("laplace", 0.0, 1.0, n)(g)

KEPT = np.random.default_rng(11)

def kept(n, rng):
    rng.random()
    return operator.methodcaller("laplace", 0.0, 1.0, n)(KEPT)

def global_numpy(n, rng):
    rng.random()
    return np.random.laplace(0.0, 1.0, n)

def python_random(n, rng):
    rng.random()
    return np.array([random.expovariate(1.0) for _ in range(n)])

def entropy(n, rng):
    return rng.random(n) + os.urandom(1)[0] * 0.0

def honest(n, rng):
    u = rng.random(n) - 0.5
    return -np.sign(u) * np.log1p(-2 * np.abs(u))

def honest_scipy(n, rng):
    return scipy.stats.laplace.ppf(rng.random(n))

def audit(n, rng):
    return rng.laplace(0.0, 1.0, n) + np.random.default_rng(1).random(n) * 0.0
'''
#: What the watch must name for each route.
SEEN = {"kde_seeded": "bit generator", "kde_os_seeded": "global generator", "rotation": "bit generator",
        "evolution": "bit generator", "from_c": "bit generator", "kept": "made before the call",
        "global_numpy": "global generator", "python_random": "random module", "entropy": "os.urandom"}
NAMES = ["kde_seeded", "kde_os_seeded", "rotation", "evolution", "from_c", "kept", "global_numpy", "python_random",
         "entropy", "honest", "honest_scipy", "audit"]


@pytest.fixture(scope="module")
def box():
    from autograder.jail import Sandbox, probe

    sandbox = Sandbox(sandboxed=probe() is None, deadline=time.monotonic() + 120, memory_mb=1024, cpu_seconds=60)
    sandbox.send({"cells": [ROUTES], "files": {}, "graded": NAMES, "limits": sandbox.limits,
                  "cell_timeout": 60.0, "call_timeout": 20.0})
    sandbox.recv(60, "cell")
    ready, _ = sandbox.recv(60, "ready")
    assert ready["names"] == {n: "callable" for n in NAMES}
    yield sandbox
    sandbox.close()


@pytest.mark.parametrize("name", NAMES[:9])
def test_library_randomness_in_a_watched_call_fails_its_check(box, name):
    from autograder.proxy import Proxy
    from helpers.checks import RecordingGenerator
    from helpers.checks.core import CheckFailure, _after_call

    rng = RecordingGenerator(3)
    out = Proxy(box, name, 20.0)(50, rng)
    assert np.asarray(out).size == 50
    assert any(SEEN[name] in seen for seen in rng.library), f"{name}: {rng.library}"
    with pytest.raises(CheckFailure) as failure:
        _after_call(Proxy(box, name, 20.0), rng)
    assert failure.value.diagnosis == "common.library_randomness"
    assert name in str(failure.value) and "库自带的随机数" in failure.value.zh


def test_honest_samplers_batches_and_audit_calls_are_not_flagged(box):
    from autograder.proxy import Proxy
    from helpers.checks import RecordingGenerator
    from helpers.checks.core import call_sequence

    for name in ("honest", "honest_scipy"):
        rng = RecordingGenerator(4)
        Proxy(box, name, 20.0)(1000, rng)
        Proxy(box, name, 20.0).call_repeatedly(5, 100, rng)
        call_sequence([(Proxy(box, name, 20.0), (10, rng)) for _ in range(3)])
        assert rng.library == [] and rng.draws == 1000 + 500 + 30
    # an unrestricted generator (the audit assignments may use any rng method): not watched
    assert Proxy(box, "audit", 20.0)(10, np.random.default_rng(2)).size == 10
    rng = RecordingGenerator(5)
    Proxy(box, "kde_seeded", 20.0).call_repeatedly(3, 10, rng)
    assert rng.library  # a batch is watched as a whole


def test_a_reply_without_the_watch_report_is_a_finding():
    from autograder.proxy import NO_REPORT, _watch_report
    from autograder.served import Served
    from helpers.checks import RecordingGenerator

    rng = RecordingGenerator(1)
    server = Served(rng)
    _watch_report({"ok": 1, "rngs": []}, [server])
    server.record()
    assert rng.library == [NO_REPORT]


def test_walking_the_process_objects_in_a_cell_is_reported_with_every_later_call():
    """A cell that walks the grader's objects (to find and switch off the watch) is a finding at each
    later watched call, though the call itself is clean."""
    from autograder.jail import Sandbox, probe
    from autograder.proxy import Proxy
    from helpers.checks import RecordingGenerator

    box = Sandbox(sandboxed=probe() is None, deadline=time.monotonic() + 60, memory_mb=1024, cpu_seconds=30)
    code = ("import gc\nimport numpy as np\nfound = [o for o in gc.get_objects() if type(o).__name__ == '_Watch']\n"
            "def honest(n, rng):\n    return rng.random(n)\n")
    try:
        box.send({"cells": [code], "files": {}, "graded": ["honest"], "limits": box.limits,
                  "cell_timeout": 30.0, "call_timeout": 10.0})
        box.recv(30, "cell")
        box.recv(30, "ready")
        for _ in range(2):
            rng = RecordingGenerator(1)
            Proxy(box, "honest", 10.0)(5, rng)
            assert rng.library and "gc.get_objects" in rng.library[0]
    finally:
        box.close()


def test_a_library_imported_at_the_first_call_may_make_generators_but_code_passing_for_one_may_not():
    """``import scipy.stats`` makes a dozen generators for its docstrings' examples: a function importing it
    at its first watched call is honest. Code compiled under a library's file name, to pass for that
    module's import, is a finding (and stays one)."""
    from autograder.jail import Sandbox, probe
    from autograder.proxy import Proxy
    from helpers.checks import RecordingGenerator

    box = Sandbox(sandboxed=probe() is None, deadline=time.monotonic() + 60, memory_mb=1024, cpu_seconds=30)
    code = ("import os\nimport numpy as np\n"
            "def lazy(n, rng):\n    import scipy.stats\n    return scipy.stats.laplace.ppf(rng.random(n))\n"
            "def posing(n, rng):\n"
            "    where = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), 'scipy', 'stats', '_x.py')\n"
            "    space = {'n': n}\n"
            "    exec(compile('import numpy as np\\nout = np.random.default_rng(int(n)).laplace(size=n)', where, 'exec'), space)\n"
            "    return space['out'] + 0 * rng.random()\n"
            # the sandbox's own generator.py, whose frames the watch passes over (red team, session 15: 7/10)
            "def posing_as_the_sandbox(n, rng):\n    import sys\n"
            "    where = [m.__file__ for m in list(sys.modules.values()) if getattr(m, '__file__', '') and "
            "m.__file__.endswith('generator.py') and hasattr(m, 'ServedGenerator')][0]\n"
            "    space = {'n': n}\n"
            "    exec(compile('import numpy as np\\nout = np.random.default_rng(int(n)).laplace(size=n)', where, 'exec'), space)\n"
            "    return space['out'] + 0 * rng.random()\n")
    try:
        box.send({"cells": [code], "files": {}, "graded": ["lazy", "posing", "posing_as_the_sandbox"], "limits": box.limits,
                  "cell_timeout": 30.0, "call_timeout": 20.0})
        box.recv(30, "cell")
        box.recv(30, "ready")
        rng = RecordingGenerator(1)
        assert Proxy(box, "lazy", 20.0)(5, rng).size == 5 and rng.library == []
        rng = RecordingGenerator(2)
        Proxy(box, "posing", 20.0)(5, rng)
        assert any("passing for a library's code" in seen for seen in rng.library), rng.library
        rng = RecordingGenerator(3)
        Proxy(box, "lazy", 20.0)(5, rng)
        assert rng.library, "sticky"
        rng = RecordingGenerator(4)
        Proxy(box, "posing_as_the_sandbox", 20.0)(5, rng)
        assert any("generator.py" in seen and "passing for a library's code" in seen for seen in rng.library), rng.library
    finally:
        box.close()
