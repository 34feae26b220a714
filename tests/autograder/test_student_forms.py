"""What correct code written in a library's style meets across the sandbox (issue 35, §2): its own
exception classes stay what they derive from, and ``rng`` takes the argument forms numpy takes.
One sandbox, a few seconds."""

from __future__ import annotations

import time

import numpy as np
import pytest

CODE = """
import numpy as np

class BudgetExceededError(ValueError):
    pass

class Refused(BudgetExceededError):
    pass

class Custom(Exception):
    pass

def over(kind):
    raise {"budget": BudgetExceededError, "deep": Refused, "custom": Custom,
           "axis": np.exceptions.AxisError}[kind]("no budget left")

def grr(k, n, rng):
    return rng.choice(range(k - 1), n)

def forms(rng):
    return (rng.integers(np.int64(0), np.int32(5), size=(np.int64(3),)), rng.choice([1, 2, 3], size=np.int64(4)),
            rng.normal(loc=[0.0, 1.0], scale=(1.0, 2.0)), rng.random(np.uint8(2)),
            rng.permutation(range(4)), rng.uniform(np.float32(0.5), 1.0, 2))
"""
NAMES = ["over", "grr", "forms"]


@pytest.fixture(scope="module")
def box():
    from autograder.jail import Sandbox, probe

    sandbox = Sandbox(sandboxed=probe() is None, deadline=time.monotonic() + 120, memory_mb=1024, cpu_seconds=60)
    sandbox.send({"cells": [CODE], "files": {}, "graded": NAMES, "limits": sandbox.limits,
                  "cell_timeout": 30.0, "call_timeout": 10.0})
    cell, _ = sandbox.recv(30, "cell")
    assert cell["error"] is None, cell["error"]
    ready, _ = sandbox.recv(30, "ready")
    assert ready["names"] == {n: "callable" for n in NAMES}
    yield sandbox
    sandbox.close()


def test_a_student_exception_class_keeps_its_builtin_bases(box):
    from autograder.proxy import Proxy
    from helpers.checks.core import call_sequence

    over = Proxy(box, "over", 10.0)
    for kind in ("budget", "deep"):
        with pytest.raises(ValueError, match="no budget left") as caught:
            over(kind)
        assert type(caught.value).__name__ == {"budget": "BudgetExceededError", "deep": "Refused"}[kind]
    with pytest.raises(IndexError):  # numpy's AxisError is a ValueError and an IndexError
        over("axis")
    with pytest.raises(Exception) as caught:
        over("custom")
    assert type(caught.value).__name__ == "Custom" and not isinstance(caught.value, ValueError)
    # the batched path (a ledger's sequence of calls) rebuilds it alike
    results, error = call_sequence([(over, ("budget",))])
    assert results == [] and isinstance(error, ValueError) and type(error).__name__ == "BudgetExceededError"


def test_rng_takes_what_numpy_takes(box):
    from autograder.proxy import Proxy

    for name, args in (("grr", (5, 1000)), ("forms", ())):
        served, local = np.random.default_rng(3), np.random.default_rng(3)
        got = Proxy(box, name, 10.0)(*args, served)
        expected = {"grr": lambda rng: rng.choice(range(4), 1000), "forms": lambda rng: (
            rng.integers(0, 5, size=3), rng.choice([1, 2, 3], size=4), rng.normal([0.0, 1.0], (1.0, 2.0)),
            rng.random(2), rng.permutation(range(4)), rng.uniform(np.float32(0.5), 1.0, 2))}[name](local)
        for g, e in zip(got if name == "forms" else [got], expected if name == "forms" else [expected]):
            assert np.array_equal(g, e), (name, g, e)
        assert served.bit_generator.state == local.bit_generator.state


def test_bases_are_names_of_builtin_exceptions_only():
    from autograder.proxy import student_exception

    assert type(student_exception("E", "m", False, ["UnicodeDecodeError", "UnicodeError", "ValueError"])).__mro__[1] \
        is UnicodeError  # the nearest base that takes a message alone
    for hostile in (["SystemExit"], ["KeyboardInterrupt"], ["os.system('x')"], "ValueError", [1, None], ["object"]):
        error = student_exception("E", "m", False, hostile)
        assert type(error).__mro__[1] is Exception, hostile
    assert isinstance(student_exception("E", "m", False, ["ArithmeticError", "ZeroDivisionError"]), ZeroDivisionError)
