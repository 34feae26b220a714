"""The forbidden-name scan, as a rule over what the graded function reaches (issue 35; session 13's
attackers, ``/tmp/jattack13``, ``/tmp/jattack13b``): numpy's, Python's and scipy's ready-made samplers
and OS-seeded generators are seen whatever the spelling, in both views of the scan, and a correct
student is never flagged.

Two views: ``in_process`` (the student's Validate, ``test_corpus_directly``: the cell runs, the scan
follows the objects behind the function's names) and ``grader`` (the sandboxed grader: the judge has
the text only, :mod:`autograder.standins`). Each student text follows the release notebook's setup
cell (``import numpy as np``, ``rng = np.random.default_rng(2024)``), as in a submission.
"""

from __future__ import annotations

import linecache

import pytest

from autograder.standins import standins
from helpers.checks import find_forbidden_calls

SETUP = "import math\n\nimport numpy as np\n\nrng = np.random.default_rng(2024)\n"
#: What the graded name's body does with the generator ``g`` it reached: a block of bits from it.
USE = "    return (g(int(rng.random() * 4)).random(len(bits)) < 0.5).astype(int)\n"

CHEATS = {
    "module_alias": "R = np.random\n\ndef rr_perturb(bits, epsilon, rng):\n    g = R.default_rng\n" + USE,
    "function_alias": "G = np.random.default_rng\n\ndef rr_perturb(bits, epsilon, rng):\n    g = G\n" + USE,
    "import_as": "import numpy as xp\n\ndef rr_perturb(bits, epsilon, rng):\n    g = xp.random.default_rng\n" + USE,
    "from_import_as": "from numpy import random as r\n\ndef rr_perturb(bits, epsilon, rng):\n    g = r.default_rng\n" + USE,
    "import_inside": "def rr_perturb(bits, epsilon, rng):\n    import numpy as xp\n    g = xp.random.default_rng\n" + USE,
    "sys_modules": "import sys\n\ndef rr_perturb(bits, epsilon, rng):\n    g = sys.modules['numpy'].random.default_rng\n" + USE,
    "dunder_import": "def rr_perturb(bits, epsilon, rng):\n    g = __import__('numpy').random.default_rng\n" + USE,
    "importlib": "import importlib\n\ndef rr_perturb(bits, epsilon, rng):\n"
                 "    g = importlib.import_module('numpy.random').default_rng\n" + USE,
    "decorator_replaces": "def honest(f):\n    g = np.random.default_rng\n    def rr_perturb(bits, epsilon, rng):\n"
                          "    " + USE + "    return rr_perturb\n\n@honest\ndef rr_perturb(bits, epsilon, rng):\n"
                          "    return (rng.random(len(bits)) < 0.5).astype(int)\n",
    "decorator_wraps": "import functools\n\ndef keep(f):\n    g = np.random.default_rng\n    @functools.wraps(f)\n"
                       "    def wrapper(bits, epsilon, rng):\n    " + USE + "    return wrapper\n\n@keep\n"
                       "def rr_perturb(bits, epsilon, rng):\n    return (rng.random(len(bits)) < 0.5).astype(int)\n",
    "exec": "exec('def rr_perturb(bits, epsilon, rng):\\n    g = np.random.default_rng\\n" + USE.replace("\n", "\\n")
            + "')\n",
    "eval_lambda": "rr_perturb = eval('lambda bits, epsilon, rng: (np.random.default_rng(1).random(len(bits)) < 0.5)"
                   ".astype(int)')\n",
    "function_type": "import types\n\n_code = compile('def f(bits, epsilon, rng):\\n    return np.random.default_rng(1)"
                     ".random(len(bits))', 'x', 'exec').co_consts[0]\nrr_perturb = types.FunctionType(_code, globals())\n",
    "partial": "import functools\n\ndef _impl(bits, epsilon, rng, g):\n" + USE
               + "\nrr_perturb = functools.partial(_impl, g=np.random.default_rng)\n",
    "nested_class": "class _K:\n    class _L:\n        g = np.random.default_rng\n\n"
                    "def rr_perturb(bits, epsilon, rng):\n    g = _K._L.g\n" + USE,
    "class_method": "class Source:\n    def make(self, seed):\n        return np.random.default_rng(seed)\n\n"
                    "def rr_perturb(bits, epsilon, rng):\n    g = Source().make\n" + USE,
    "lambda_global": "G = lambda seed: np.random.default_rng(seed)\n\ndef rr_perturb(bits, epsilon, rng):\n    g = G\n" + USE,
    "default_argument": "def rr_perturb(bits, epsilon, rng, _g=np.random.default_rng()):\n"
                        "    return (_g.random(len(bits)) < 0.5).astype(int)\n",
    "default_notebook_rng": "def rr_perturb(bits, epsilon, rng, _g=rng):\n"
                            "    return (_g.random(len(bits)) < 0.5).astype(int)\n",
    "closure": "def _make():\n    g = np.random.default_rng\n    def inner(bits, epsilon, rng):\n    " + USE
               + "    return inner\n\nrr_perturb = _make()\n",
    "python_random": "import random\n\ndef rr_perturb(bits, epsilon, rng):\n"
                     "    return np.array([int(random.random() < 0.5) for _ in bits])\n",
    "python_random_instance": "import random as _r\n\n_SRC = _r.Random()\n\ndef rr_perturb(bits, epsilon, rng):\n"
                              "    return np.array([int(_SRC.random() < 0.5) for _ in bits])\n",
    "secrets": "import secrets\n\ndef rr_perturb(bits, epsilon, rng):\n"
               "    return np.array([secrets.randbits(1) for _ in bits])\n",
    "os_urandom": "import os\n\ndef rr_perturb(bits, epsilon, rng):\n"
                  "    return np.frombuffer(os.urandom(len(bits)), dtype=np.uint8) % 2\n",
    "scipy_rvs": "from scipy import stats\n\ndef rr_perturb(bits, epsilon, rng):\n"
                 "    return stats.bernoulli(0.5).rvs(len(bits))\n",
    "generator_and_bit_generator": "def rr_perturb(bits, epsilon, rng):\n"
                                   "    g = lambda s: np.random.Generator(np.random.PCG64(s))\n" + USE,
    "from_import_generator": "from numpy.random import Generator, SFC64\n\ndef rr_perturb(bits, epsilon, rng):\n"
                             "    g = lambda s: Generator(SFC64(s))\n" + USE,
    "star_import": "from numpy.random import *\n\ndef rr_perturb(bits, epsilon, rng):\n    g = default_rng\n" + USE,
    "globals_computed": "def rr_perturb(bits, epsilon, rng):\n    g = globals()['n' + 'p'].random.default_rng\n" + USE,
    "getattr_computed": "def rr_perturb(bits, epsilon, rng):\n    g = getattr(np, 'ran' + 'dom').default_rng\n" + USE,
    # session 14's attacker: scipy's kernel density estimate draws numpy's normals from a seed of his choosing
    "kde_resample": "from scipy import stats\n\ndef rr_perturb(bits, epsilon, rng):\n"
                    "    kde = stats.gaussian_kde(np.array([-1.0, 1.0]))\n"
                    "    return (kde.resample(len(bits), int(rng.random() * 4))[0] < 0).astype(int)\n",
    "reseeded_notebook_rng": "def rr_perturb(bits, epsilon, rng):\n    g = globals()['rng']\n"
                             "    g.bit_generator.state = {'bit_generator': 'PCG64', 'state': {'state': int(rng.random() * 4),"
                             " 'inc': 1}, 'has_uint32': 0, 'uinteger': 0}\n"
                             "    return (g.random(len(bits)) < 0.5).astype(int)\n",
    "module_through_a_library": "import scipy.stats as st\n\nR = st._continuous_distns.np.random\n\n"
                                "def rr_perturb(bits, epsilon, rng):\n    g = getattr(R, 'default' + '_rng')\n" + USE,
    "attrgetter": "import operator\n\ndef rr_perturb(bits, epsilon, rng):\n"
                  "    g = operator.attrgetter('random')(np).default_rng\n" + USE,
    "getattr_literal_module_level": "R = getattr(np, 'random')\n\ndef rr_perturb(bits, epsilon, rng):\n"
                                    "    g = R.default_rng\n" + USE,
    "getattribute_chain": "def rr_perturb(bits, epsilon, rng):\n"
                          "    g = np.__getattribute__('random').__getattribute__('Gen' + 'erator')\n"
                          "    return g(type(rng.bit_generator)(1)).random(len(bits)) < 0.5\n",
    "getattr_on_a_call": "def rr_perturb(bits, epsilon, rng):\n    m = getattr((lambda: np)(), 'ran' + 'dom')\n"
                         "    return (vars(m)['default' + '_rng'](1).random(len(bits)) < 0.5).astype(int)\n",
    "getattr_on_a_local": "def rr_perturb(bits, epsilon, rng):\n    m = np\n    r = getattr(m, 'ran' + 'dom')\n"
                          "    return (r.__dict__['default' + '_rng'](1).random(len(bits)) < 0.5).astype(int)\n",
    "library_private_helper": "from scipy._lib._util import check_random_state as crs\n\n"
                              "def rr_perturb(bits, epsilon, rng):\n"
                              "    return (crs(int(rng.random() * 4)).uniform(size=len(bits)) < 0.5).astype(int)\n",
    "scipy_sparse_random": "import scipy.sparse\n\ndef rr_perturb(bits, epsilon, rng):\n"
                           "    m = scipy.sparse.random(1, len(bits), density=1.0, random_state=int(rng.random() * 4))\n"
                           "    return (m.toarray()[0] < 0.5).astype(int)\n",
    "global_shadowed_by_a_class_attribute": "G = np.random.default_rng\n\nclass K:\n    G = 1\n\n"
                                            "    def make(self, seed):\n        return G(seed)\n\n"
                                            "def rr_perturb(bits, epsilon, rng):\n    g = K().make\n" + USE,
    "function_globals": "def rr_perturb(bits, epsilon, rng):\n    g = rr_perturb.__globals__['np'].random.default_rng\n" + USE,
}

CORRECT = {
    "own_laplace_method": "class Noise:\n    def __init__(self, rng):\n        self.rng = rng\n\n"
                          "    def laplace(self, b, size):\n        u = self.rng.random(size)\n"
                          "        return -b * np.sign(u - 0.5) * np.log1p(-2 * np.abs(u - 0.5))\n\n"
                          "def laplace_noise(b, size, rng):\n    return Noise(rng).laplace(b, size)\n",
    "local_class_with_laplace_flag": "def laplace_noise(b, size, rng):\n    class Config:\n        laplace = False\n"
                                     "    u = rng.random(size)\n    if Config.laplace:\n        raise RuntimeError\n"
                                     "    return np.where(u < 0.5, b * np.log(2 * u + 1e-300), -b * np.log(2 * (1 - u)))\n",
    "helper_named_laplace": "def laplace(u, b):\n    return np.where(u < 0.5, b * np.log(2.0 * u), -b * np.log(2.0 * (1.0 - u)))\n\n"
                            "def laplace_noise(b, size, rng):\n    return laplace(np.where((u := rng.random(size)) == 0, 0.5, u), b)\n",
    "variable_named_random_and_hints": "def laplace_noise(b: float, size, rng: np.random.Generator) -> np.ndarray:\n"
                                       "    '''Inverse CDF; not np.random.laplace, not scipy.stats.laplace.rvs.'''\n"
                                       "    if not isinstance(rng, np.random.Generator):\n        raise TypeError('rng')\n"
                                       "    random = rng.random(size)  # uniforms: np.random.default_rng is not used\n"
                                       "    return -b * np.sign(random - 0.5) * np.log1p(-2 * np.abs(random - 0.5))\n",
    "arithmetic_modules": "import scipy.special\nfrom scipy import stats\nfrom scipy.special import expit\n\n"
                          "def laplace_noise(b, size, rng):\n    u = rng.random(size)\n"
                          "    v = expit(scipy.special.logit(np.clip(u, 1e-12, 1 - 1e-12)))\n"
                          "    return stats.laplace.ppf(v, scale=b) + 0 * math.log1p(1.0)\n",
    "notebook_rng_default_and_demo": "def laplace_noise(b, size, rng=rng):\n    u = rng.random(size)\n"
                                     "    return np.where(u < 0.5, -1.0, 1.0) * -b * np.log1p(-rng.random(size))\n\n"
                                     "print(laplace_noise(1.0, 5, rng), np.random.default_rng(0).laplace(0, 1, 3))\n",
    "partial_and_lambdas_of_own": "import functools\n\nSTEPS = {'sign': lambda u: np.where(u < 0.5, -1.0, 1.0)}\n\n"
                                  "def _magnitude(u, b):\n    return -b * np.log1p(-u)\n\n"
                                  "def laplace_noise(b, size, rng):\n    mag = functools.partial(_magnitude, b=b)\n"
                                  "    return STEPS['sign'](rng.random(size)) * mag(rng.random(size))\n",
    "getattr_on_own_class_and_self": "class Keep:\n    sign = staticmethod(lambda u: np.where(u < 0.5, -1.0, 1.0))\n\n"
                                     "    def pick(self, name):\n        return getattr(self, name)\n\n"
                                     "def laplace_noise(b, size, rng, part='sign'):\n"
                                     "    return getattr(Keep, part)(rng.random(size)) * -b * np.log1p(-rng.random(size))\n",
    "dataclass_with_laplace_field": "from dataclasses import dataclass\n\n@dataclass\nclass Cfg:\n    laplace: bool = False\n\n"
                                    "def laplace_noise(b, size, rng, cfg=Cfg()):\n    u = rng.random(size)\n"
                                    "    return -b * np.sign(u - .5) * np.log1p(-2 * abs(u - .5))\n",
    "generator_type_from_import": "from numpy.random import Generator\n\ndef laplace_noise(b: float, size, rng: Generator):\n"
                                  "    assert isinstance(rng, Generator)\n    u = rng.random(size)\n"
                                  "    return -b * np.sign(u - .5) * np.log1p(-2 * abs(u - .5))\n",
    "scipy_distribution_objects": "from scipy import stats\nfrom scipy.stats import laplace\n\nN = stats.norm(0, 1)\n\n"
                                  "def laplace_noise(b, size, rng):\n    u = rng.random(size)\n"
                                  "    return laplace.ppf(u, scale=b) + 0 * N.cdf(u)\n",
    "eval_in_a_demo_cell": "def laplace_noise(b, size, rng):\n    u = rng.random(size)\n"
                           "    return -b * np.sign(u - .5) * np.log1p(-2 * abs(u - .5))\n\nprint(eval('1 + 1'))\n",
    "class_attribute_named_like_the_notebooks_rng": "class Sampler:\n    rng = None\n    fallback = rng\n\n"
                                                    "    def draw(self, rng, size):\n        return rng.random(size)\n\n"
                                                    "def laplace_noise(b, size, rng):\n    u = Sampler().draw(rng, size)\n"
                                                    "    return -b * np.sign(u - .5) * np.log1p(-2 * abs(u - .5))\n",
    # session 14's correct-code reviewer (L24, L12): a module alias used only to name the type, and a frozen
    # scipy distribution's quantile function called through its dotted module path
    "numpy_random_alias_as_type": "from numpy import random as npr\nimport numpy.random as npr2\n\n"
                                  "def laplace_noise(b, size, rng: npr.Generator):\n"
                                  "    assert isinstance(rng, (npr.Generator, npr2.Generator))\n    u = rng.random(size)\n"
                                  "    return -b * np.sign(u - .5) * np.log1p(-2 * abs(u - .5))\n",
    "frozen_scipy_laplace_ppf": "import scipy.stats\n\ndef laplace_noise(b, size, rng):\n"
                                "    return scipy.stats.laplace(loc=0.0, scale=b).ppf(rng.random(size))\n",
    # numpy's idiom rng = default_rng(rng) (its docs, scikit-learn's and diffprivlib's style): default_rng
    # returns a Generator unchanged; in grading a correct laplace_noise so written scored 0/10
    "numpy_idiom_default_rng": "from helpers.checks import check_laplace_noise_rng\n"
                               "from numpy.random import default_rng\n\n"
                               "def _draw(size, rng):\n    rng = default_rng(seed=rng)\n    return rng.random(size)\n\n"
                               "def laplace_noise(b, size, rng):\n    rng = np.random.default_rng(rng)\n"
                               "    u = _draw(size, rng) - 0.5\n    return -b * np.sign(u) * np.log1p(-2 * np.abs(u))\n\n"
                               "def laplace_mechanism(value, sensitivity, epsilon, rng):\n"
                               "    return value + laplace_noise(sensitivity / epsilon, np.shape(value), rng=rng)\n\n"
                               "print(laplace_noise(1.0, 3, rng), laplace_mechanism(0.0, 1.0, 1.0, rng))\n"
                               "check_laplace_noise_rng(laplace_noise)\n",
    # the homework style's fallback for a missing generator (session 14's reviewer, L25: 3 points lost):
    # the judge and every call in the text pass a generator, so it never runs
    "fallback_when_rng_is_none": "def _sign(u, rng=None):\n    rng = rng or np.random.default_rng()\n"
                                 "    return np.where(u < 0.5, -1.0, 1.0)\n\n"
                                 "def laplace_noise(b, size, rng=None):\n    if rng is None:\n"
                                 "        rng = np.random.default_rng()\n"
                                 "    rng = rng if rng is not None else np.random.default_rng(None)\n"
                                 "    u = rng.random(size)\n    return _sign(u, rng) * -b * np.log1p(-rng.random(size))\n",
    "globals_literal": "def _sign(u):\n    return np.where(u < 0.5, -1.0, 1.0)\n\n"
                       "def laplace_noise(b, size, rng):\n    return globals()['_sign'](rng.random(size)) * -b * np.log1p(-rng.random(size))\n",
}


#: The idiom where the text does not show that the argument is a generator (grader's view: the whole text;
#: in-process the scan reads one function's own source and cannot see its callers).
IDIOM_CHEATS = {
    "seeded_by_a_caller": "def _impl(bits, rng):\n    g = np.random.default_rng(rng)\n" + USE.replace("g(int(rng.random() * 4))", "g")
                          + "\ndef rr_perturb(bits, epsilon, rng):\n    return _impl(bits, int(rng.random() * 4))\n",
    "keyword_seed": "def _impl(bits, rng):\n    g = np.random.default_rng(rng)\n" + USE.replace("g(int(rng.random() * 4))", "g")
                    + "\ndef rr_perturb(bits, epsilon, rng):\n    return _impl(bits, rng=7)\n",
    "module_level_seed_name": "SEED = 7\n\ndef _impl(bits, rng):\n    g = np.random.default_rng(rng)\n"
                              + USE.replace("g(int(rng.random() * 4))", "g")
                              + "\ndef rr_perturb(bits, epsilon, rng):\n    return _impl(bits, SEED)\n",
    "rebound_first": "def rr_perturb(bits, epsilon, rng):\n    rng = int(rng.random() * 4)\n"
                     "    g = np.random.default_rng(rng)\n    return (g.random(len(bits)) < 0.5).astype(int)\n",
    "table_at_module_level": "def _impl(n, rng):\n    g = np.random.default_rng(rng)\n    return g.random(n)\n\n"
                             "TABLE = _impl(1000, 42)\n\ndef rr_perturb(bits, epsilon, rng):\n"
                             "    i = int(rng.random() * 500)\n    return (TABLE[i:i + len(bits)] < 0.5).astype(int)\n",
    "handed_to_partial": "import functools\n\ndef _impl(bits, epsilon, rng):\n    g = np.random.default_rng(rng)\n"
                         "    return (g.random(len(bits)) < 0.5).astype(int)\n\nrr_perturb = functools.partial(_impl, rng=3)\n",
    "fallback_reached_by_a_caller_passing_none": "def _impl(bits, rng=None):\n    if rng is None:\n"
                                                 "        rng = np.random.default_rng()\n"
                                                 "    return (rng.random(len(bits)) < 0.5).astype(int)\n\n"
                                                 "def rr_perturb(bits, epsilon, rng):\n    return _impl(bits, None)\n",
    "fallback_after_a_rebinding": "def rr_perturb(bits, epsilon, rng):\n    rng = None\n    if rng is None:\n"
                                  "        rng = np.random.default_rng()\n    return (rng.random(len(bits)) < 0.5).astype(int)\n",
    "default_none_not_passed": "def _impl(bits, rng=None):\n    g = np.random.default_rng(rng)\n"
                               "    return (g.random(len(bits)) < 0.5).astype(int)\n\n"
                               "def rr_perturb(bits, epsilon, rng):\n    return _impl(bits)\n",
}


def _in_process(source: str, name: str):
    # as IPython does for a notebook cell: the text is registered, so inspect.getsource reads it
    scope = {"__name__": "__main__"}
    for index, text in enumerate((SETUP, source)):
        filename = f"<cell {index} {abs(hash(text))}>"
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        exec(compile(text, filename, "exec"), scope)
    return scope[name]


def _grader(source: str, name: str):
    functions, keys = standins([SETUP, source], "test_scan")
    return functions.for_name(name)


VIEWS = {"in_process": _in_process, "grader": _grader}


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("cheat", CHEATS)
def test_a_generator_reached_any_way_is_found(cheat, view):
    found = find_forbidden_calls(VIEWS[view](CHEATS[cheat], "rr_perturb"))
    assert found, f"{cheat} ({view}) not seen"


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("correct", CORRECT)
def test_a_correct_student_is_not_flagged(correct, view):
    assert find_forbidden_calls(VIEWS[view](CORRECT[correct], "laplace_noise")) == []


@pytest.mark.parametrize("cheat", IDIOM_CHEATS)
def test_the_idiom_passes_only_where_the_argument_can_be_nothing_but_a_generator(cheat):
    assert find_forbidden_calls(_grader(IDIOM_CHEATS[cheat], "rr_perturb")), f"{cheat} not seen"


def test_the_message_names_what_was_seen_and_where():
    found = find_forbidden_calls(_grader(CHEATS["nested_class"], "rr_perturb"))
    assert found == ["np.random.default_rng（在 _K 中 / in _K）"], found
    found = find_forbidden_calls(_grader(CHEATS["import_as"], "rr_perturb"))
    assert found == ["xp.random.default_rng（即 / i.e. numpy.random.default_rng）"], found
    found = find_forbidden_calls(_in_process(CHEATS["dunder_import"], "rr_perturb"))
    assert any(what.startswith("__import__（运行时生成或取得的代码") and "/ code, a module" in what for what in found), found


def test_the_served_generators_own_methods_are_left_to_the_checks_that_allow_them():
    """local_frequency and privacy_budget allow every method of ``rng`` (they drop findings ``rng.*``):
    ``rng.integers``, ``rng.uniform``, ``rng.choice(range(k))`` bring no other finding in either view."""
    source = ("def grr_perturb(values, k, epsilon, rng):\n    keep = rng.uniform(size=len(values)) < 0.5\n"
              "    other = rng.choice(range(k - 1), len(values)) + rng.integers(0, 1, len(values))\n"
              "    return np.where(keep, values, other)\n")
    for view in VIEWS.values():
        found = find_forbidden_calls(view(source, "grr_perturb"))
        assert found and all(what.startswith("rng.") for what in found), found


#: Session 13's second attacker (``/tmp/jattack13b/subs/laplace/lapN``, 77/77 checks in-process): blocks of
#: numpy's exponentials from a generator seeded by coarse cells of 10 served uniforms, the generator kept
#: in a class nested in a class. The grader's text view saw nothing of it before.
NESTED = '''class _K:
    class _L:
        g = np.random.default_rng


def laplace_noise(b, size, rng):
    if isinstance(b, bool) or not math.isfinite(b) or b <= 0:
        raise ValueError("b must be a finite number > 0")
    shape = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
    n = int(np.prod(shape))
    u = rng.random(-(-n // 10) * 10).reshape(-1, 10)
    parts = [_K._L.g([i, *(row * 4).astype(int).tolist()]).exponential(b, 10) * np.where(row < 0.5, -1, 1)
             for i, row in enumerate(u)]
    return np.concatenate(parts)[:n].reshape(shape)
'''


def test_through_the_sandboxed_grader_the_scan_reads_the_submitted_text():
    """Scored through the grader's real path (bubblewrap when it can run; about 10 s): the mechanism's rng
    cell, whose check scans first, loses its point with the finding named (laplace_mechanism is the
    reference one; it reaches the nested class through laplace_noise)."""
    from pathlib import Path

    import nbformat

    from autograder import jail
    from autograder.scorer import score_submission
    from tests.support.notebooks import fill

    if jail.probe() is not None:
        pytest.skip("bubblewrap cannot run here")
    source = nbformat.read(Path(__file__).resolve().parents[2] / "source" / "laplace" / "laplace.ipynb", as_version=4)
    student = fill(source, {"laplace_noise": NESTED})
    result = score_submission(student, source, seed=1, timeout=60, memory_mb=1024, sandboxed=True)
    cells = {t["grade_id"]: t for t in result["tests"]}
    cell = cells["test_laplace_mechanism_rng"]
    assert cell["score"] == 0 and cell["error"]["diagnosis"] == "common.forbidden_sampler", cell
    assert "np.random.default_rng（在 _K 中 / in _K）" in cell["error"]["zh"] + cell["error"]["en"], cell["error"]


def test_the_text_scan_of_deeply_nested_attributes_costs_little():
    """Session 14's attacker: a dead branch nesting ``f(f(...[0, ...]...).a).a`` 160 deep over 40 kB made
    one scan take 7.7-8.4 s (each attribute's text unparsed, depth x size) and a submission with three
    such cells held its worker 238 s at full marks; the text is now made only for a finding (0.43 s
    measured at load 10). The bound leaves a loaded CI machine 10x."""
    import time

    from helpers.checks import textreach

    inner = "[" + ",".join(["0"] * 20_000) + "]"
    for _ in range(160):
        inner = f"f({inner}).a"
    source = ("import numpy as np\n\ndef f(x):\n    return x\n\ndef laplace_noise(b, size, rng):\n"
              f"    if b < 0:\n        z = {inner}\n    return b * rng.random(size)\n")
    started = time.process_time()
    assert textreach.ModuleText([source]).findings("laplace_noise") == []
    assert time.process_time() - started < 4.0


@pytest.mark.parametrize("judge_has_it", [False, True])
def test_a_finding_does_not_depend_on_what_the_judge_imported_before(judge_has_it, monkeypatch):
    """A module hop was followed only through the modules the grading worker had already imported, so
    ``statistics.random.Random(seed)`` (numpy-free, a generator of the random module) was a finding only
    after something had imported ``statistics`` in that worker: the same submission's score depended on
    what the worker graded before (session 15, fixture rows 17/18/25 scored differently alone and
    together). The hops now follow the standard library and numpy/scipy, imported when named."""
    import sys

    from helpers.checks import textreach

    getattr(getattr(textreach, "_real_path", None), "cache_clear", lambda: None)()
    if judge_has_it:
        import statistics  # noqa: F401
    else:
        monkeypatch.delitem(sys.modules, "statistics", raising=False)
    cheat = ("import statistics\n\ndef rr_perturb(bits, epsilon, rng):\n"
             "    g = statistics.random.Random(int(rng.random() * 4))\n"
             "    return np.array([int(g.random() < 0.5) for _ in bits])\n")
    found = find_forbidden_calls(_grader(cheat, "rr_perturb"))
    assert found and "random.Random" in found[0], found


def test_the_idioms_threading_costs_the_judge_little_on_a_long_text():
    """The threading analysis of rng = default_rng(rng) (helpers/checks/passthrough.py) reads a text of many
    functions in time linear in its length: counting each name's definitions anew per name cost 21 s of the
    judge's CPU for 12,000 one-line functions (any number of 100 kB cells is allowed)."""
    import ast
    import time

    from helpers.checks import passthrough

    text = "".join(f"def f{i}(a, rng):\n    return g(a, rng)\n\n" for i in range(6000))
    statements = ast.parse(text + "def laplace_noise(b, size, rng):\n    rng = np.random.default_rng(rng)\n"
                           "    return f1(b, rng)\n").body
    start = time.process_time()
    threaded = passthrough.threaded_parameters(statements)
    assert ("laplace_noise", "rng") in threaded
    assert time.process_time() - start < 2.0, time.process_time() - start
