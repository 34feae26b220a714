"""The forbidden-call scan sees a module attribute fetched by a name computed at run time (issue 35,
attacker session 12: ``_T = {"g": getattr(getattr(np, "ran" + "dom"), "default" + "_rng")}``)."""

from __future__ import annotations

import linecache

import numpy as np
import pytest

from autograder.standins import standins
from helpers.checks.forbidden import find_forbidden_calls

HIDDEN = '''import numpy as np
_T = {"g": getattr(getattr(np, "ran" + "dom"), "default" + "_rng")}


def rr_perturb(bits, epsilon, rng):
    u = rng.random()
    return _T["g"](int(u * 8)).random(len(bits)) < 0.5
'''

INSIDE = '''import numpy as np


def rr_perturb(bits, epsilon, rng):
    name = "ran" + "dom"
    return getattr(np, name).default_rng(1).random(len(bits)) < 0.5
'''

IN_A_CLASS = '''import numpy as np


class Sources:
    make = getattr(np, "ran" + "dom").default_rng


def rr_perturb(bits, epsilon, rng):
    return Sources.make(1).random(len(bits)) < 0.5
'''

OWN_OBJECT = '''import numpy as np


class Keep:
    p = 0.5


def rr_perturb(bits, epsilon, rng):
    field = "p"
    return rng.random(len(bits)) < getattr(Keep, field)
'''


def _in_process(source):
    # as IPython does for a notebook cell: the source is registered, so inspect.getsource reads it
    name = f"<student {abs(hash(source))}>"
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    scope = {"__name__": "__main__"}
    exec(compile(source, name, "exec"), scope)
    return scope["rr_perturb"]


def _stand_in(source):
    functions, _ = standins([source], "test")
    return functions["rr_perturb"]


@pytest.mark.parametrize("build", [_in_process, _stand_in], ids=["in_process", "stand_in"])
def test_a_sampler_reached_by_a_computed_name_is_found(build):
    found = find_forbidden_calls(build(HIDDEN))
    assert found and any("_T" in what for what in found), found
    found = find_forbidden_calls(build(INSIDE))
    assert any("getattr(np, name)" in what for what in found), found
    found = find_forbidden_calls(build(IN_A_CLASS))
    assert any("Sources" in what for what in found), found


@pytest.mark.parametrize("build", [_in_process, _stand_in], ids=["in_process", "stand_in"])
def test_getattr_on_the_students_own_object_is_not_a_finding(build):
    assert find_forbidden_calls(build(OWN_OBJECT)) == []


def test_a_global_that_holds_a_sampler_names_what_it_holds():
    scope = {"np": np}
    exec("G = [np.random.default_rng]\ndef f(rng):\n    return G[0](1).random()\n", scope)
    assert any("default_rng" in what for what in find_forbidden_calls(scope["f"])), find_forbidden_calls(scope["f"])


def test_literal_names_are_judged_and_a_students_own_laplace_method_is_not(tmp_path):
    """A reviewer's correct samplers (session 13): ``getattr(np, "log1p" if precise else "log")`` and a class
    of her own with a ``laplace`` method built from rng.random lost points; ``getattr(np.random, "laplace")``,
    an attribute chain written another way, was not seen at all."""
    import importlib
    import sys

    source = '''import numpy as np


class Noise:
    def __init__(self, rng):
        self.rng = rng

    def laplace(self, b, size=None):
        u = self.rng.random(size)
        return -b * np.sign(u - 0.5) * np.log(1 - 2 * np.abs(u - 0.5))


def own_method(b, size, rng):
    return Noise(rng).laplace(b, size)


def conditional_name(b, size, rng, precise=True):
    return getattr(np, "log1p" if precise else "log")(-rng.random(size))


def literal_sampler(b, size, rng):
    return getattr(np.random, "laplace")(0, b, size)


def literal_branch_sampler(b, size, rng):
    return getattr(np, "random" if b else "log").default_rng(0).random(size)
'''
    (tmp_path / "own_laplace_student.py").write_text(source)
    sys.path.insert(0, str(tmp_path))
    try:
        module = importlib.import_module("own_laplace_student")
    finally:
        sys.path.remove(str(tmp_path))
    assert find_forbidden_calls(module.own_method) == []
    assert find_forbidden_calls(module.conditional_name) == []
    assert "np.random.laplace" in find_forbidden_calls(module.literal_sampler)
    assert "np.random" in find_forbidden_calls(module.literal_branch_sampler)
