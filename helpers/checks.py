"""Checks behind the graded exercises (``source/laplace``, ``source/exponential``,
``source/randomized_response``).

Every ``check_*`` function takes the student's function(s) and, where
randomness is judged, a ``seed``. It returns ``None`` when the function passes
and raises :class:`AssertionError` with a bilingual message (Chinese, then
English) that says what was measured, what was expected and the likely
mistake. The checks are pure: they depend only on the functions passed in and
on the seed, so the autograder can re-run them in a separate process.

What the checks never do is compare exact sample values: any correct sampler
(inverse CDF, sign × exponential, difference of exponentials, a Python loop,
Gumbel-max, cumulative sums...) must pass. Randomness is judged by

* its distribution: Kolmogorov–Smirnov for continuous outputs, chi-square
  (bins with expected count < 5 merged) for the exponential mechanism, exact
  binomial tests for randomized response. Each statistical test is run at
  level ``ALPHA = 1e-6`` (a check that runs ``k`` tests states its total
  false-failure probability ``k × 1e-6``);
* rng discipline: students get a :class:`RecordingGenerator` (a real
  ``numpy.random.Generator`` subclass) whose only usable method is
  ``random``. Same seed must give the same output, different seeds different
  output, and ``rng.random`` must actually be called. A call of any other
  method (``rng.laplace``, ``rng.choice``...) fails with a message saying so.
* :func:`find_forbidden_calls` reads the function's syntax tree (and that of
  helper functions it calls) for ready-made samplers: ``numpy.random.*``,
  the ``random`` module, ``scipy``, ``helpers``.

Seeds: a check's default seed is fixed (derived from its name), so a student
sees the same verdict every time. If the environment variable
``DP_COURSE_SEED`` is set, seeds are derived from it instead; every
statistical check prints the seed it used.

:func:`similarity_to_reference` compares a student's function with the
reference in :mod:`helpers.mechanisms` (normalized syntax trees), so that
the autograder can flag a copied solution for the instructor.

The ``*_explorer`` functions build the ungraded ε-slider views of the
notebooks (the student's own sampler against the true density).
"""

from __future__ import annotations

import ast
import difflib
import inspect
import math
import os
import textwrap
import types
import zlib
from typing import Any, Callable

import numpy as np

__all__ = [
    "ALPHA",
    "SEED_ENV",
    "RecordingGenerator",
    "ForbiddenRngMethod",
    "call_repeatedly",
    "check_seed",
    "ks_test",
    "chi_square_test",
    "binomial_test",
    "find_forbidden_calls",
    "load_student_code",
    "similarity_to_reference",
    "copy_report",
    "check_laplace_noise_basics",
    "check_laplace_noise_invalid",
    "check_laplace_noise_distribution",
    "check_laplace_noise_rng",
    "check_laplace_noise_only_rng_random",
    "check_laplace_mechanism_basics",
    "check_laplace_mechanism_invalid",
    "check_laplace_mechanism_distribution",
    "check_laplace_mechanism_rng",
    "check_exponential_probabilities_table",
    "check_exponential_probabilities_formula",
    "check_exponential_probabilities_stable",
    "check_exponential_probabilities_invalid",
    "check_exponential_mechanism_basics",
    "check_exponential_mechanism_invalid",
    "check_exponential_mechanism_distribution",
    "check_exponential_mechanism_rng",
    "check_rr_keep_probability_values",
    "check_rr_keep_probability_edge",
    "check_rr_perturb_basics",
    "check_rr_perturb_invalid",
    "check_rr_perturb_distribution",
    "check_rr_perturb_rng",
    "check_rr_correct_textbook",
    "check_rr_correct_formula",
    "check_rr_correct_invalid",
    "laplace_explorer",
    "exponential_explorer",
    "rr_explorer",
]

#: Level of every statistical test: the probability that a correct
#: implementation fails one test.
ALPHA = 1e-6
#: Environment variable through which the autograder sets a per-run seed.
SEED_ENV = "DP_COURSE_SEED"

# Parameters away from 1 so that swapped formulas (ε/Δ vs Δ/ε, ε·Δ...) differ.
EPSILON = 0.7
SENSITIVITY = 3.0


# --- messages and seeds ------------------------------------------------------


def _fail(zh: str, en: str) -> AssertionError:
    return AssertionError(f"\n{zh}\n{en}")


def check_seed(name: str, seed: int | None = None) -> int:
    """Seed used by the check ``name``.

    ``seed`` wins when given. Otherwise the seed is derived from the check's
    name, mixed with the integer in ``DP_COURSE_SEED`` when that variable is
    set (the autograder's per-run seed).
    """
    if seed is not None:
        return int(seed)
    base = zlib.crc32(name.encode())
    env = os.environ.get(SEED_ENV, "").strip()
    if env:
        run = int(env) if env.isdigit() else zlib.crc32(env.encode())
        return int(np.random.SeedSequence([run, base]).generate_state(1)[0])
    return int(base)


def _say(name: str, seed: int, text: str) -> None:
    origin = f"{SEED_ENV}={os.environ[SEED_ENV]}" if os.environ.get(SEED_ENV) else "default"
    print(f"[{name}] seed={seed} ({origin}): {text}")


# --- the recording generator -------------------------------------------------

_ALLOWED_RNG = frozenset({"random"})
_GENERATOR_PUBLIC = frozenset(n for n in dir(np.random.Generator) if not n.startswith("_"))


class ForbiddenRngMethod(AttributeError):
    """Raised when student code asks a :class:`RecordingGenerator` for a method
    other than ``random``."""


class RecordingGenerator(np.random.Generator):
    """A real ``numpy.random.Generator`` whose only public method is ``random``.

    It counts the ``random`` calls and the numbers drawn, and records any
    attempt to use another method (``laplace``, ``choice``, ``integers``...),
    which raises :class:`ForbiddenRngMethod`. Being a subclass, it passes
    ``isinstance(rng, numpy.random.Generator)``.
    """

    def __init__(self, seed: int):
        super().__init__(np.random.PCG64(seed))
        object.__setattr__(self, "calls", 0)
        object.__setattr__(self, "draws", 0)
        object.__setattr__(self, "forbidden", [])

    def random(self, size=None, dtype=np.float64, out=None):  # noqa: D102
        result = np.random.Generator.random(self, size, dtype, out)
        object.__setattr__(self, "calls", object.__getattribute__(self, "calls") + 1)
        object.__setattr__(self, "draws", object.__getattribute__(self, "draws") + int(np.size(result)))
        return result

    def __getattribute__(self, name: str):
        if name in _GENERATOR_PUBLIC and name not in _ALLOWED_RNG:
            object.__getattribute__(self, "forbidden").append(name)
            raise ForbiddenRngMethod(
                f"rng.{name} 不允许使用：只能用 rng.random(...) 生成均匀随机数，再自己变换。 / "
                f"rng.{name} is not allowed here: draw uniforms with rng.random(...) and transform them yourself."
            )
        return object.__getattribute__(self, name)


def _state(rng: np.random.Generator):
    """The bit generator's state, read without going through the recording filter."""
    return object.__getattribute__(rng, "bit_generator").state["state"]


def _forbidden_message(fname: str, methods: list[str]) -> AssertionError:
    names = ", ".join(f"rng.{m}" for m in sorted(set(methods)))
    return _fail(
        f"{fname} 调用了 {names}。本作业只允许 rng.random(...)：请用均匀随机数自己实现抽样（不能交给现成的抽样函数）。",
        f"{fname} called {names}. Only rng.random(...) is allowed in this assignment: build the sampler "
        f"from uniform numbers yourself instead of handing the job to a ready-made sampler.",
    )


def call_repeatedly(fn: Callable, n: int, *args, **kwargs) -> list:
    """``[fn(*args, **kwargs) for _ in range(n)]``, in one round trip when ``fn`` is a grading proxy.

    In a notebook this is the loop itself, except that every call gets fresh
    copies of list, tuple, dict and array arguments (generators and other
    objects are passed as they are), as every call does in trusted grading:
    an input modified in place does not leak into the next call. There ``fn``
    is an ``autograder.proxy.Proxy`` whose ``call_repeatedly`` makes the ``n``
    calls in the sandbox with one message instead of ``n``: same results, same
    generator state afterwards, and the first exception is raised as the loop
    would raise it, the generator left as the failing call left it.
    """
    batched = getattr(fn, "call_repeatedly", None)
    if callable(batched):
        return batched(n, *args, **kwargs)
    return [fn(*_fresh(args), **_fresh(kwargs)) for _ in range(n)]


def _fresh(value: Any) -> Any:
    """A copy of the containers and arrays in ``value``; anything else (a Generator) is shared."""
    if type(value) in (list, tuple):
        return type(value)(_fresh(v) for v in value)
    if type(value) is dict:
        return {k: _fresh(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return value.copy()
    return value


def _call(func: Callable, *args, rng: RecordingGenerator | None = None, name: str | None = None,
          repeat: int | None = None):
    """Call student code (``repeat`` times: a list); turn its exceptions into student-facing messages."""
    name = name or getattr(func, "__name__", "function")
    try:
        return func(*args) if repeat is None else call_repeatedly(func, repeat, *args)
    except AssertionError:
        raise
    except ForbiddenRngMethod:
        raise _forbidden_message(name, rng.forbidden if rng is not None else ["?"]) from None
    except NotImplementedError:
        raise _fail(f"{name} 还没有实现（NotImplementedError）。", f"{name} is not implemented yet (NotImplementedError).") from None
    except Exception as error:  # noqa: BLE001  (any crash is reported, not hidden)
        shown = ", ".join("rng" if isinstance(a, np.random.Generator) else _short(a) for a in args)
        raise _fail(
            f"调用 {name}({shown}) 时出错：{type(error).__name__}: {error}",
            f"{name}({shown}) raised {type(error).__name__}: {error}",
        ) from None


def _short(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"array(shape={value.shape})"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _after_call(func: Callable, rng: RecordingGenerator) -> None:
    if rng.forbidden:
        raise _forbidden_message(getattr(func, "__name__", "function"), rng.forbidden)


def _expect_value_error(func: Callable, args: tuple, why_zh: str, why_en: str) -> None:
    name = getattr(func, "__name__", "function")
    shown = ", ".join(_short(a) for a in args if not isinstance(a, np.random.Generator))
    try:
        func(*args)
    except ValueError:
        return
    except NotImplementedError:
        raise _fail(f"{name} 还没有实现。", f"{name} is not implemented yet.") from None
    except Exception as error:  # noqa: BLE001
        raise _fail(
            f"{name}({shown}) 应该抛出 ValueError（{why_zh}），却抛出了 {type(error).__name__}: {error}",
            f"{name}({shown}) should raise ValueError ({why_en}) but raised {type(error).__name__}: {error}",
        ) from None
    hint_zh = "注意：nan <= 0 为 False，需要单独检查 NaN（例如 math.isfinite）。" if "nan" in shown else ""
    hint_en = "Note: nan <= 0 is False, so NaN needs its own check (e.g. math.isfinite)." if "nan" in shown else ""
    raise _fail(
        f"{name}({shown}) 没有抛出 ValueError，期望抛出（{why_zh}）。{hint_zh}",
        f"{name}({shown}) did not raise ValueError; expected one ({why_en}). {hint_en}",
    )


# --- running student code outside a notebook ----------------------------------------


def load_student_code(code: str, namespace: dict | None = None, filename: str = "<student>") -> dict:
    """Execute the code of solution cells in ``namespace`` (default: ``np``, ``math``).

    The source is registered in :mod:`linecache` under ``filename`` (made
    unique), so that :func:`inspect.getsource` and therefore
    :func:`find_forbidden_calls` and :func:`similarity_to_reference` work on
    the functions it defines, as they do in a notebook kernel. Functions get
    ``__module__ == "__main__"`` like notebook code. Returns the namespace.
    """
    import linecache

    ns = {"np": np, "math": math, "__name__": "__main__"} if namespace is None else namespace
    ns.setdefault("__name__", "__main__")
    name = f"{filename}-{zlib.crc32(code.encode()):08x}-{len(linecache.cache)}"
    linecache.cache[name] = (len(code), None, code.splitlines(True), name)
    exec(compile(code, name, "exec"), ns)
    return ns


# --- forbidden calls (syntax tree) ---------------------------------------------

# The type itself may be named (``isinstance(rng, np.random.Generator)``).
_ALLOWED_NUMPY_RANDOM = frozenset({"random.Generator"})
_FORBIDDEN_MODULES = ("numpy.random", "random", "scipy", "helpers", "secrets", "torch", "statistics")


def _module_is_forbidden(name: str) -> bool:
    return any(name == m or name.startswith(m + ".") for m in _FORBIDDEN_MODULES)


def _function_source(func: Callable) -> str | None:
    try:
        return textwrap.dedent(inspect.getsource(func))
    except (OSError, TypeError):
        return None


def _rng_param_names(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.Lambda)):
            for arg in node.args.args + node.args.kwonlyargs:
                if arg.arg in {"rng", "generator", "gen", "random_state"}:
                    names.add(arg.arg)
    return names or {"rng"}


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _resolve_global(func: Callable, name: str) -> Any:
    globs = getattr(func, "__globals__", {})
    if name in globs:
        return globs[name]
    return getattr(__builtins__, name, None) if not isinstance(__builtins__, dict) else __builtins__.get(name)


def _object_origin(obj: Any) -> str | None:
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    module = getattr(obj, "__module__", None)
    if isinstance(module, str):
        return module
    cls_module = getattr(type(obj), "__module__", None)
    if isinstance(obj, np.random.Generator) or cls_module == "numpy.random._generator":
        return "numpy.random"
    return None


def find_forbidden_calls(func: Callable, _seen: set | None = None) -> list[str]:
    """Ready-made samplers and forbidden modules used by ``func``.

    Reads the function's source (and the source of other functions of the
    same module it calls, such as the student's own ``laplace_noise`` called
    from ``laplace_mechanism``). Reported: any method of the rng other than
    ``random``; any attribute named ``laplace``; anything from
    ``numpy.random``, ``random``, ``scipy``, ``helpers``, ``secrets``,
    ``statistics`` or ``torch`` (imported inside the function or reached
    through a global name). Without source (e.g. a function built by
    ``exec``), the code object's names are used instead.

    Returns a list of short descriptions (empty when nothing was found).
    """
    seen = set() if _seen is None else _seen
    code = getattr(func, "__code__", None)
    if code is None or code in seen:
        return []
    seen.add(code)
    found: list[str] = []
    source = _function_source(func)
    tree = None
    if source is not None:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            tree = None
    names_used: set[str] = set()
    if tree is None:
        names_used = set(_all_co_names(code))
        for attr in names_used:
            if attr == "laplace":
                found.append("laplace")
    else:
        rng_names = _rng_param_names(tree)
        # Judge each attribute chain once, by its outermost node.
        inner = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and id(node) in inner:
                continue
            if isinstance(node, ast.Import):
                found += [f"import {a.name}" for a in node.names if _module_is_forbidden(a.name)]
            elif isinstance(node, ast.ImportFrom):
                module = node.module or ""
                if _module_is_forbidden(module) or (
                    module == "numpy" and any(a.name == "random" for a in node.names)
                ):
                    found.append(f"from {module} import ...")
            elif isinstance(node, ast.Attribute):
                dotted = _dotted(node)
                base = dotted.split(".")[0] if dotted else None
                if base in rng_names and node.attr not in _ALLOWED_RNG and isinstance(node.value, ast.Name):
                    found.append(f"{base}.{node.attr}")
                elif node.attr == "laplace":
                    found.append(dotted or ".laplace")
                elif dotted and ".random." in dotted + "." and base in {"np", "numpy"} \
                        and dotted.split(".", 1)[1] not in _ALLOWED_NUMPY_RANDOM:
                    found.append(dotted)
            elif isinstance(node, ast.Name):
                names_used.add(node.id)
    local = set(code.co_varnames) | set(code.co_cellvars) | set(code.co_freevars)
    for name in sorted(names_used - local):
        obj = _resolve_global(func, name)
        if obj is None:
            continue
        origin = _object_origin(obj)
        if origin and _module_is_forbidden(origin):
            found.append(f"{name} (from {origin})")
        elif isinstance(obj, types.FunctionType) and obj.__module__ == getattr(func, "__module__", None):
            found += [f"{obj.__name__}: {what}" for what in find_forbidden_calls(obj, seen)]
    return sorted(set(found))


def _all_co_names(code: types.CodeType) -> list[str]:
    names = list(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names += _all_co_names(const)
    return names


def _check_no_forbidden(func: Callable) -> None:
    found = find_forbidden_calls(func)
    if found:
        name = getattr(func, "__name__", "function")
        listed = ", ".join(found)
        raise _fail(
            f"{name} 使用了不允许的随机数来源或现成的抽样器：{listed}。只能用传入的 rng 的 rng.random(...)。",
            f"{name} uses a forbidden randomness source or ready-made sampler: {listed}. "
            f"Use only rng.random(...) of the rng you are given.",
        )


def _check_rng_discipline(func: Callable, call: Callable[[np.random.Generator], Any], name: str, seed: int) -> None:
    """Same seed ⇒ same output; other seed ⇒ other output; rng.random used."""
    fname = getattr(func, "__name__", "function")
    outputs = []
    rngs = []
    for s in (seed, seed, seed + 1):
        rng = RecordingGenerator(s)
        before = _state(rng)
        out = _call(lambda: call(rng), rng=rng, name=fname)
        _after_call(func, rng)
        outputs.append(np.asarray(out, dtype=float))
        rngs.append((rng, before))
    rng, before = rngs[0]
    if rng.calls == 0 or _state(rng) == before:
        raise _fail(
            f"{fname} 没有使用传入的 rng（rng.random 被调用了 0 次）。请用 rng.random(...) 产生随机数，不要用 np.random.* 或自己新建生成器。",
            f"{fname} did not use the rng it was given (rng.random was called 0 times). Draw your uniforms with "
            f"rng.random(...), not np.random.* or a generator you create yourself.",
        )
    if outputs[0].shape != outputs[1].shape or not np.array_equal(outputs[0], outputs[1], equal_nan=True):
        raise _fail(
            f"{fname}：相同种子的 rng 给出了不同的输出。随机性必须全部来自传入的 rng（不要用 np.random.*、random 模块或全局状态）。",
            f"{fname}: two rngs with the same seed gave different outputs. All randomness must come from the rng "
            f"you are given (no np.random.*, no random module, no global state).",
        )
    if outputs[0].shape == outputs[2].shape and np.array_equal(outputs[0], outputs[2], equal_nan=True):
        raise _fail(
            f"{fname}：不同种子的 rng 给出了完全相同的输出。是否在函数里固定了种子，或没有用 rng？",
            f"{fname}: rngs with different seeds gave identical outputs. Is a seed fixed inside the function, or "
            f"is the rng not used?",
        )
    _say(name, seed, f"same seed -> same output, other seed -> other output; rng.random called {rng.calls} time(s)")


# --- the three tests ---------------------------------------------------------------
# scipy.special only: importing scipy.stats costs ~0.5 s in every graded kernel.


class TestResult(tuple):
    """``(statistic, pvalue)`` with named access, like scipy's results."""

    statistic = property(lambda self: self[0])
    pvalue = property(lambda self: self[1])


def ks_test(x: np.ndarray, cdf: Callable[[np.ndarray], np.ndarray]) -> TestResult:
    """Two-sided one-sample Kolmogorov–Smirnov test with the asymptotic p-value.

    ``p = K(√n · D)`` where ``K`` is the survival function of Kolmogorov's
    limiting distribution (``scipy.special.kolmogorov``, as
    ``scipy.stats.kstest(..., method="asymp")``). For finite ``n`` it
    overstates the p-value slightly, so a test at level α rejects a correct
    sampler with probability at most about α.
    """
    from scipy.special import kolmogorov

    x = np.sort(np.ravel(x))
    n = x.size
    f = cdf(x)
    d_plus = np.max(np.arange(1, n + 1) / n - f)
    d_minus = np.max(f - np.arange(n) / n)
    d = float(max(d_plus, d_minus))
    return TestResult((d, float(kolmogorov(math.sqrt(n) * d))))


def chi_square_test(observed: np.ndarray, expected: np.ndarray) -> TestResult:
    """Pearson's chi-square goodness of fit, ``k - 1`` degrees of freedom (as ``scipy.stats.chisquare``)."""
    from scipy.special import chdtrc

    observed = np.asarray(observed, dtype=float)
    expected = np.asarray(expected, dtype=float)
    stat = float(np.sum((observed - expected) ** 2 / expected))
    return TestResult((stat, float(chdtrc(observed.size - 1, stat))))


def binomial_test(k: int, n: int, p: float) -> float:
    """Two-sided exact binomial p-value: twice the smaller tail, capped at 1.

    Never smaller than scipy's ``binomtest`` p-value (which sums the outcomes
    no more likely than ``k``), so the level is exact or conservative.
    """
    from scipy.special import bdtr, bdtrc

    lower = float(bdtr(k, n, p))                      # P(X <= k)
    upper = float(bdtrc(k - 1, n, p)) if k > 0 else 1.0  # P(X >= k)
    return min(1.0, 2.0 * min(lower, upper))


# --- Laplace (§6.2) ------------------------------------------------------------


def _laplace_cdf(x: np.ndarray, b: float) -> np.ndarray:
    tail = 0.5 * np.exp(-np.abs(x) / b)
    return np.where(x < 0, tail, 1.0 - tail)


def _as_float_array(out: Any, fname: str, shape: tuple) -> np.ndarray:
    if not isinstance(out, np.ndarray):
        raise _fail(
            f"{fname} 应返回 numpy 数组，实际返回了 {type(out).__name__}。",
            f"{fname} should return a numpy array; it returned {type(out).__name__}.",
        )
    if out.shape != shape:
        raise _fail(
            f"{fname} 返回的数组形状是 {out.shape}，期望 {shape}（与 size 一致）。",
            f"{fname} returned an array of shape {out.shape}; expected {shape} (the requested size).",
        )
    if not np.issubdtype(out.dtype, np.floating):
        raise _fail(
            f"{fname} 返回的 dtype 是 {out.dtype}，期望浮点数。",
            f"{fname} returned dtype {out.dtype}; expected floating-point numbers.",
        )
    if not np.all(np.isfinite(out)):
        bad = int(np.sum(~np.isfinite(out)))
        raise _fail(
            f"{fname} 返回了 {bad} 个非有限值（inf 或 nan）。rng.random() 可能恰好返回 0，ln(0) = -inf：请避开 0（例如用 1-u）。",
            f"{fname} returned {bad} non-finite values (inf or nan). rng.random() can return exactly 0 and "
            f"ln(0) = -inf: make sure you never take the log of 0 (e.g. use 1 - u).",
        )
    return out


def _diagnose_laplace(x: np.ndarray, b: float, context: str, sensitivity: float | None = None,
                      epsilon: float | None = None) -> tuple[str, str]:
    """Guess the mistake behind a Laplace sample that failed the KS test."""
    n = x.size
    mean = float(np.mean(x))
    b_hat = float(np.mean(np.abs(x - np.median(x))))  # MLE of the scale around the median
    se_mean = math.sqrt(2.0) * b / math.sqrt(n)
    measured = f"mean = {mean:.3f}, median = {float(np.median(x)):.3f}, scale mean|x - median| = {b_hat:.3f}"
    expected = f"mean 0, median 0, scale b = {b:.3f} ({context})"
    distinct = np.unique(x).size
    if distinct <= max(1, n // 10):
        return (f"{n} 个样本中只有 {distinct} 个不同的值：是否只抽了一个噪声（或少数几个）并用于整个数组？每个元素都需要自己的独立噪声（用 size 生成）。",
                f"only {distinct} distinct values among {n} samples: was one noise value (or a few) drawn and used "
                f"for the whole array? Every element needs its own independent noise (draw `size` of them).")
    if np.all(x >= 0) or np.all(x <= 0):
        return (f"所有样本同号（{'全为正' if np.all(x >= 0) else '全为负'}）：缺少了符号（两个分支中的一个）。",
                "all samples have the same sign: the random sign (one of the two branches) is missing.")
    if abs(mean - 0.5) < 6 * se_mean + 0.02 and abs(mean) > 6 * se_mean:
        return (f"测得均值 {mean:.2f}，期望 0：是否在噪声上加了一个均匀随机数 u2（教材 6.2.2 印刷公式的错误）？",
                f"mean {mean:.2f}, expected 0: is a uniform number (u2) being added to the noise (the misprint "
                f"in the formula of textbook §6.2.2)?")
    if abs(mean) > 6 * se_mean:
        return (f"测得均值 {mean:.3f}，期望 0：噪声不对称（两个分支的概率或公式不对？）。",
                f"mean {mean:.3f}, expected 0: the noise is not symmetric (wrong branch probabilities or formula?).")
    candidates = {"b": b}
    if sensitivity is not None and epsilon is not None:
        candidates.update({
            "ε/Δ": epsilon / sensitivity,
            "1/(ε·Δ)": 1.0 / (epsilon * sensitivity),
            "ε·Δ": epsilon * sensitivity,
            "1/ε": 1.0 / epsilon,
            "Δ": sensitivity,
            "Δ/(2ε)": sensitivity / (2 * epsilon),
            "2Δ/ε": 2 * sensitivity / epsilon,
            "ε": epsilon,
        })
    else:
        candidates.update({"1/b": 1.0 / b, "b/2": b / 2, "2b": 2 * b, "1": 1.0, "b²": b * b, "√b": math.sqrt(b)})
    ratio = b_hat / b
    if abs(ratio - 1) > 0.03:
        best = min(candidates, key=lambda k: abs(math.log(b_hat / candidates[k])))
        if best != "b" and abs(math.log(b_hat / candidates[best])) < 0.05:
            return (f"测得尺度 ≈ {b_hat:.3f}，像是 {best} = {candidates[best]:.3f}；期望 b = {b:.3f}（{context}）。",
                    f"measured scale ≈ {b_hat:.3f}, which looks like {best} = {candidates[best]:.3f}; expected "
                    f"b = {b:.3f} ({context}).")
        return (f"测得尺度 ≈ {b_hat:.3f}，期望 b = {b:.3f}（{context}）。检查尺度公式。",
                f"measured scale ≈ {b_hat:.3f}, expected b = {b:.3f} ({context}). Check the scale formula.")
    return (f"均值和尺度接近正确（{measured}），但分布形状不是拉普拉斯分布（是否用了别的分布，或只在一个分支上变换）？",
            f"mean and scale are close ({measured}) but the shape is not Laplace (another distribution, or a "
            f"transform applied to one branch only?).")


def _ks_laplace(x: np.ndarray, b: float, name: str, seed: int, fname: str, context: str,
                sensitivity: float | None = None, epsilon: float | None = None) -> None:
    x = np.ravel(x)
    result = ks_test(x, lambda t: _laplace_cdf(t, b))
    text = f"KS test of n = {x.size} samples against Laplace(0, b = {b:.4g}): D = {result.statistic:.5f}, p = {result.pvalue:.3g}"
    if result.pvalue < ALPHA:
        mistake_zh, mistake_en = _diagnose_laplace(x, b, context, sensitivity, epsilon)
        raise _fail(
            f"{fname} 的输出不服从 Laplace(0, {b:.3f})：KS 检验 D = {result.statistic:.4f}，p = {result.pvalue:.2g} < {ALPHA:g}"
            f"（n = {x.size}，seed = {seed}；正确的实现被误判的概率 ≤ {ALPHA:g}）。可能的错误：{mistake_zh}",
            f"{fname}'s output is not Laplace(0, {b:.3f}): KS statistic D = {result.statistic:.4f}, "
            f"p = {result.pvalue:.2g} < {ALPHA:g} (n = {x.size}, seed = {seed}; a correct implementation fails "
            f"with probability <= {ALPHA:g}). Likely mistake: {mistake_en}",
        )
    _say(name, seed, text + " -> OK")


def check_laplace_noise_basics(laplace_noise: Callable) -> None:
    """Shapes, dtype, finiteness; ValueError for b <= 0. Deterministic."""
    for size, shape in ((5, (5,)), ((3, 4), (3, 4)), (1, (1,))):
        rng = RecordingGenerator(1)
        out = _call(laplace_noise, 2.0, size, rng, rng=rng)
        _after_call(laplace_noise, rng)
        _as_float_array(out, "laplace_noise", shape)
    rng = RecordingGenerator(2)
    _expect_value_error(laplace_noise, (0.0, 5, rng), "b 必须 > 0", "b must be > 0")
    _expect_value_error(laplace_noise, (-1.5, 5, rng), "b 必须 > 0", "b must be > 0")
    print("[check_laplace_noise_basics] shapes (5,), (3, 4), (1,) and ValueError for b = 0, -1.5: OK")


def check_laplace_noise_invalid(laplace_noise: Callable) -> None:
    """ValueError for NaN and infinite b. Deterministic."""
    rng = RecordingGenerator(3)
    _expect_value_error(laplace_noise, (float("nan"), 5, rng), "b 必须是有限正数", "b must be a finite number > 0")
    _expect_value_error(laplace_noise, (float("inf"), 5, rng), "b 必须是有限正数", "b must be a finite number > 0")
    print("[check_laplace_noise_invalid] ValueError for b = nan, inf: OK")


def check_laplace_noise_distribution(laplace_noise: Callable, seed: int | None = None, *,
                                     b: float = SENSITIVITY / EPSILON, size: Any = 100_000) -> None:
    """KS test of ``laplace_noise(b, size, rng)`` against Laplace(0, b).

    False-failure probability for a correct implementation: ``ALPHA`` = 1e-6.
    Defaults: b = 3/0.7 ≈ 4.29, 100,000 samples (detects a 5% scale error,
    see ``tests/power/RESULTS.md``).
    """
    name = "check_laplace_noise_distribution"
    seed = check_seed(name + repr((b, size)), seed)
    rng = RecordingGenerator(seed)
    out = _call(laplace_noise, b, size, rng, rng=rng)
    _after_call(laplace_noise, rng)
    shape = (size,) if isinstance(size, int) else tuple(size)
    x = _as_float_array(out, "laplace_noise", shape)
    _ks_laplace(x, b, name, seed, "laplace_noise", f"laplace_noise(b = {b:.4g})")


def check_laplace_noise_rng(laplace_noise: Callable, seed: int | None = None) -> None:
    """rng discipline: same seed ⇒ same output, other seed ⇒ other output, rng used. Deterministic."""
    name = "check_laplace_noise_rng"
    seed = check_seed(name, seed)
    _check_rng_discipline(laplace_noise, lambda rng: laplace_noise(1.5, 1000, rng), name, seed)


def check_laplace_noise_only_rng_random(laplace_noise: Callable) -> None:
    """No ready-made sampler (syntax tree) and nothing but ``rng.random`` at run time."""
    _check_no_forbidden(laplace_noise)
    rng = RecordingGenerator(4)
    _call(laplace_noise, 1.0, 10, rng, rng=rng)
    _after_call(laplace_noise, rng)
    print("[check_laplace_noise_only_rng_random] only rng.random used, no ready-made sampler: OK")


def check_laplace_mechanism_basics(laplace_mechanism: Callable) -> None:
    """Scalar in ⇒ float out; array in ⇒ array of the same shape; ValueError for ε, Δ <= 0."""
    rng = RecordingGenerator(5)
    out = _call(laplace_mechanism, 10.0, 1.0, 1.0, rng, rng=rng)
    _after_call(laplace_mechanism, rng)
    if isinstance(out, np.ndarray) or not isinstance(out, (float, np.floating)):
        raise _fail(
            f"laplace_mechanism(10.0, 1, 1, rng) 应返回一个浮点数，实际返回 {type(out).__name__} {_short(out)}。",
            f"laplace_mechanism(10.0, 1, 1, rng) should return a float; it returned {type(out).__name__} {_short(out)}.",
        )
    if not math.isfinite(out) or out == 10.0:
        raise _fail(
            f"laplace_mechanism(10.0, 1, 1, rng) 返回了 {out}：应该是 10 加上有限的随机噪声。",
            f"laplace_mechanism(10.0, 1, 1, rng) returned {out}: expected 10 plus finite random noise.",
        )
    values = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    out = _call(laplace_mechanism, values, 1.0, 1.0, rng, rng=rng)
    _as_float_array(out, "laplace_mechanism", values.shape)
    if np.unique(out - values).size < values.size:
        raise _fail(
            "laplace_mechanism 对数组的每个元素应该加上独立的噪声，但有些噪声完全相同（是否只抽了一个噪声？）。",
            "laplace_mechanism should add independent noise to each coordinate, but some noises are identical "
            "(was a single noise value drawn for the whole array?).",
        )
    for args, zh, en in (
        ((1.0, 1.0, 0.0, rng), "ε 必须 > 0", "epsilon must be > 0"),
        ((1.0, 1.0, -0.5, rng), "ε 必须 > 0", "epsilon must be > 0"),
        ((1.0, 0.0, 1.0, rng), "灵敏度必须 > 0", "sensitivity must be > 0"),
        ((1.0, -2.0, 1.0, rng), "灵敏度必须 > 0", "sensitivity must be > 0"),
    ):
        _expect_value_error(laplace_mechanism, args, zh, en)
    print("[check_laplace_mechanism_basics] float for scalar, shape (2, 3) for array, ValueError for ε, Δ <= 0: OK")


def check_laplace_mechanism_invalid(laplace_mechanism: Callable) -> None:
    """ValueError for NaN ε and NaN sensitivity. Deterministic."""
    rng = RecordingGenerator(6)
    _expect_value_error(laplace_mechanism, (1.0, 1.0, float("nan"), rng), "ε 必须是有限正数", "epsilon must be a finite number > 0")
    _expect_value_error(laplace_mechanism, (1.0, float("nan"), 1.0, rng), "灵敏度必须是有限正数", "sensitivity must be a finite number > 0")
    print("[check_laplace_mechanism_invalid] ValueError for ε = nan and Δ = nan: OK")


def check_laplace_mechanism_distribution(laplace_mechanism: Callable, seed: int | None = None, *,
                                         sensitivity: float = SENSITIVITY, epsilon: float = EPSILON,
                                         n: int = 100_000, value: float = 10.0) -> None:
    """KS test of ``laplace_mechanism(values, Δ, ε, rng) - values`` against Laplace(0, Δ/ε).

    ``values`` is an array of ``n`` copies of ``value`` plus a ramp, so that
    both the noise and its addition to each coordinate are judged.
    False-failure probability for a correct implementation: ``ALPHA`` = 1e-6.
    """
    name = "check_laplace_mechanism_distribution"
    seed = check_seed(name + repr((sensitivity, epsilon, n, value)), seed)
    rng = RecordingGenerator(seed)
    values = value + np.arange(n) % 7
    out = _call(laplace_mechanism, values, sensitivity, epsilon, rng, rng=rng)
    _after_call(laplace_mechanism, rng)
    out = _as_float_array(out, "laplace_mechanism", values.shape)
    b = sensitivity / epsilon
    _ks_laplace(out - values, b, name, seed, "laplace_mechanism",
                f"b = Δ/ε = {sensitivity:g}/{epsilon:g}", sensitivity, epsilon)


def check_laplace_mechanism_rng(laplace_mechanism: Callable, seed: int | None = None) -> None:
    """rng discipline of the mechanism plus the forbidden-call scan."""
    name = "check_laplace_mechanism_rng"
    seed = check_seed(name, seed)
    _check_no_forbidden(laplace_mechanism)
    _check_rng_discipline(laplace_mechanism, lambda rng: laplace_mechanism(np.zeros(500), 2.0, 0.5, rng), name, seed)


# --- exponential mechanism (§6.3) ----------------------------------------------

#: Table 6-4 of the textbook: scores, Δq = 1, and the printed probabilities.
TABLE_6_4_SCORES = (30.0, 25.0, 8.0, 2.0)
TABLE_6_4 = {0.0: (0.25, 0.25, 0.25, 0.25), 0.1: (0.424, 0.330, 0.141, 0.105), 1.0: (0.924, 0.075, 1.5e-05, 7.7e-07)}


def _exp_probs(scores: np.ndarray, epsilon: float, sensitivity: float) -> np.ndarray:
    logits = epsilon * np.asarray(scores, dtype=float) / (2.0 * sensitivity)
    w = np.exp(logits - logits.max())
    return w / w.sum()


def _exp_alternatives(scores: np.ndarray, epsilon: float, sensitivity: float) -> dict[str, tuple[str, str, np.ndarray]]:
    s = np.asarray(scores, dtype=float)
    alts = {
        "no2": ("指数中少了因子 2（用了 exp(εq/Δ)）", "missing factor 2 in the exponent (exp(εq/Δ) was used)", _exp_probs(s, 2 * epsilon, sensitivity)),
        "eps_times_delta": ("用了 ε·Δ 而不是 ε/Δ", "ε·Δ used instead of ε/Δ", _exp_probs(s, epsilon * sensitivity ** 2, sensitivity)),
        "no_delta": ("忘记除以灵敏度 Δ", "the sensitivity Δ is missing (not divided by Δ)", _exp_probs(s, epsilon * sensitivity, sensitivity)),
        "reversed": ("符号反了：低分反而概率高", "wrong sign: low scores get the high probabilities", _exp_probs(-s, epsilon, sensitivity)),
        "uniform": ("概率与分数无关（均匀）", "probabilities do not depend on the scores (uniform)", np.full(s.size, 1.0 / s.size)),
        "argmax": ("总是输出最高分（没有随机性）", "always the highest score (no randomness)", np.eye(s.size)[int(np.argmax(s))]),
    }
    if np.all(s > 0):
        alts["proportional"] = ("概率正比于分数本身而不是 exp(...)", "probabilities proportional to the scores, not to exp(...)", s / s.sum())
    with np.errstate(over="ignore", invalid="ignore"):
        raw = np.exp(epsilon * s / (2 * sensitivity))
    if np.all(np.isfinite(raw)) and abs(raw.sum() - 1) > 1e-3:
        alts["unnormalized"] = ("没有归一化（概率之和不是 1）", "not normalized (the probabilities do not sum to 1)", raw)
    return alts


def _probs_output(exponential_probabilities: Callable, scores, epsilon, sensitivity) -> np.ndarray:
    out = _call(exponential_probabilities, scores, epsilon, sensitivity)
    arr = np.asarray(out, dtype=float) if isinstance(out, (np.ndarray, list, tuple)) else None
    k = len(scores)
    if arr is None or arr.shape != (k,):
        raise _fail(
            f"exponential_probabilities 应返回长度为 {k} 的 numpy 数组，实际返回 {type(out).__name__} {_short(out)}。",
            f"exponential_probabilities should return a numpy array of length {k}; it returned {type(out).__name__} {_short(out)}.",
        )
    return arr


def _compare_probs(got: np.ndarray, scores, epsilon, sensitivity, rtol: float, atol: float, where: str) -> None:
    expected = _exp_probs(np.asarray(scores, dtype=float), epsilon, sensitivity)
    if np.allclose(got, expected, rtol=rtol, atol=atol):
        return
    guess_zh, guess_en = "检查公式 Pr[r] ∝ exp(ε q / (2Δq))", "check the formula Pr[r] ∝ exp(ε q / (2Δq))"
    if np.all(np.isfinite(got)):
        for zh, en, alt in _exp_alternatives(np.asarray(scores, dtype=float), epsilon, sensitivity).values():
            if alt.shape == got.shape and np.allclose(got, alt, rtol=1e-6, atol=1e-9):
                guess_zh, guess_en = zh, en
                break
    else:
        guess_zh, guess_en = "结果含 nan/inf：是否在 exp 之前没有减去最大值（溢出）？", "result contains nan/inf: subtract the maximum logit before exp (overflow)?"
    np_print = np.get_printoptions()
    np.set_printoptions(precision=4, suppress=False)
    try:
        raise _fail(
            f"exponential_probabilities({list(scores)}, ε={epsilon:g}, Δq={sensitivity:g}) = {got}，期望 {expected}（{where}）。可能的错误：{guess_zh}。",
            f"exponential_probabilities({list(scores)}, epsilon={epsilon:g}, sensitivity={sensitivity:g}) = {got}; "
            f"expected {expected} ({where}). Likely mistake: {guess_en}.",
        )
    finally:
        np.set_printoptions(**np_print)


def check_exponential_probabilities_table(exponential_probabilities: Callable) -> None:
    """Table 6-4 of the textbook (scores 30, 25, 8, 2; Δq = 1; ε = 0, 0.1, 1). Deterministic."""
    for epsilon, printed in TABLE_6_4.items():
        got = _probs_output(exponential_probabilities, list(TABLE_6_4_SCORES), epsilon, 1.0)
        printed = np.array(printed)
        # The table prints 3 decimals or 2 significant digits.
        if not np.allclose(got, printed, rtol=0.04, atol=6e-4):
            _compare_probs(got, TABLE_6_4_SCORES, epsilon, 1.0, rtol=1e-9, atol=0, where="表 6-4 / Table 6-4")
            raise _fail(f"与表 6-4 不符：{got} vs {printed}", f"does not match Table 6-4: {got} vs {printed}")
    print("[check_exponential_probabilities_table] Table 6-4 columns ε = 0, 0.1, 1 reproduced: OK")


def check_exponential_probabilities_formula(exponential_probabilities: Callable) -> None:
    """Exact values (relative error 1e-9) at Δq = 3, ε = 0.7 and other cases; sums to 1."""
    cases = (
        ([4.0, 1.0, -2.0, 7.5, 0.0], EPSILON, SENSITIVITY),
        ([10.0, 20.0, 30.0], 2.5, 5.0),
        ([3.0, 3.0], 0.7, 3.0),
        ([1.0, 9.0, 4.0, 4.0], 0.0, 2.0),
    )
    for scores, epsilon, sensitivity in cases:
        got = _probs_output(exponential_probabilities, scores, epsilon, sensitivity)
        _compare_probs(got, scores, epsilon, sensitivity, rtol=1e-9, atol=1e-15, where="Pr[r] ∝ exp(ε q / (2Δq))")
        if abs(got.sum() - 1.0) > 1e-9:
            raise _fail(f"概率之和为 {got.sum()}，应为 1。", f"probabilities sum to {got.sum()}, expected 1.")
    print("[check_exponential_probabilities_formula] exact values at (ε, Δq) = (0.7, 3), (2.5, 5), (0.7, 3), (0, 2): OK")


def check_exponential_probabilities_stable(exponential_probabilities: Callable) -> None:
    """Huge scores do not overflow; one candidate gives [1.0]; negative scores work.

    Judged without the formula (so that a formula mistake is not counted
    twice): the output must be finite, non-negative, sum to 1, and adding the
    same constant to every score (here 1e6) must not change it.
    """
    def probs(scores, epsilon, sensitivity):
        with np.errstate(all="ignore"):
            got = _probs_output(exponential_probabilities, scores, epsilon, sensitivity)
        if not np.all(np.isfinite(got)):
            raise _fail(
                f"exponential_probabilities({scores}, {epsilon}, {sensitivity}) = {got} 含 nan/inf：exp(ε·q/(2Δq)) 溢出了。先减去最大的指数再取 exp。",
                f"exponential_probabilities({scores}, {epsilon}, {sensitivity}) = {got} contains nan/inf: "
                f"exp(ε·q/(2Δq)) overflows. Subtract the largest exponent before exponentiating.",
            )
        if np.any(got < 0) or abs(got.sum() - 1.0) > 1e-9:
            raise _fail(
                f"exponential_probabilities({scores}, {epsilon}, {sensitivity}) = {got}：概率必须非负且和为 1（和为 {got.sum():.6g}）。",
                f"exponential_probabilities({scores}, {epsilon}, {sensitivity}) = {got}: probabilities must be "
                f"non-negative and sum to 1 (sum {got.sum():.6g}).",
            )
        return got

    one = probs([42.0], 1.0, 1.0)
    if not np.allclose(one, [1.0]):
        raise _fail(f"只有一个候选时概率应为 [1.0]，得到 {one}。", f"one candidate must get probability [1.0]; got {one}.")
    probs([-5.0, -1.0, -3.0], 0.7, 3.0)
    small = probs([2.0, 0.0, 1.0], 10.0, 1.0)
    big = probs([1e6 + 2.0, 1e6, 1e6 + 1.0], 10.0, 1.0)
    if not np.allclose(small, big, rtol=1e-6, atol=1e-12):
        raise _fail(
            f"所有分数加上同一个常数（1e6）不应改变概率：{small} vs {big}。是否溢出或丢失了精度？",
            f"adding the same constant (1e6) to every score must not change the probabilities: {small} vs {big}. "
            f"Overflow or lost precision?",
        )
    print("[check_exponential_probabilities_stable] one candidate, negative scores, scores near 1e6 (no overflow, shift invariant): OK")


def check_exponential_probabilities_invalid(exponential_probabilities: Callable) -> None:
    """ValueError for ε < 0 or NaN, Δq <= 0, empty or 2-D scores, NaN scores."""
    f = exponential_probabilities
    for args, zh, en in (
        (([1.0, 2.0], -0.1, 1.0), "ε 不能为负", "epsilon must be >= 0"),
        (([1.0, 2.0], float("nan"), 1.0), "ε 必须是有限数", "epsilon must be finite"),
        (([1.0, 2.0], 1.0, 0.0), "Δq 必须 > 0", "sensitivity must be > 0"),
        (([1.0, 2.0], 1.0, -1.0), "Δq 必须 > 0", "sensitivity must be > 0"),
        (([], 1.0, 1.0), "候选集不能为空", "scores must not be empty"),
        (([1.0, float("nan")], 1.0, 1.0), "分数必须是有限数", "scores must be finite"),
        (([[1.0, 2.0], [3.0, 4.0]], 1.0, 1.0), "分数必须是一维的", "scores must be 1-D"),
    ):
        _expect_value_error(f, args, zh, en)
    print("[check_exponential_probabilities_invalid] ValueError for ε < 0, ε = nan, Δq <= 0, empty, NaN and 2-D scores: OK")


def _index_or_fail(out: Any, k: int, args_text: str) -> int:
    if isinstance(out, (bool, np.bool_)) or not isinstance(out, (int, np.integer)):
        raise _fail(
            f"exponential_mechanism({args_text}) 应返回整数下标，实际返回 {type(out).__name__} {_short(out)}。",
            f"exponential_mechanism({args_text}) should return an int index; it returned {type(out).__name__} {_short(out)}.",
        )
    if not 0 <= int(out) < k:
        raise _fail(
            f"exponential_mechanism({args_text}) 返回了 {out}，不在 0..{k - 1} 之内（下标差了 1？）。",
            f"exponential_mechanism({args_text}) returned {out}, outside 0..{k - 1} (off by one?).",
        )
    return int(out)


def check_exponential_mechanism_basics(exponential_mechanism: Callable) -> None:
    """Returns an int index in range; one candidate ⇒ 0; huge score gap ⇒ the best. Deterministic in effect."""
    rng = RecordingGenerator(7)
    for out in _call(exponential_mechanism, [30.0, 25.0, 8.0, 2.0], 1.0, 1.0, rng, rng=rng, repeat=20):
        _index_or_fail(out, 4, "[30, 25, 8, 2], 1, 1, rng")
    _after_call(exponential_mechanism, rng)
    out = _index_or_fail(_call(exponential_mechanism, [5.0], 1.0, 1.0, rng, rng=rng), 1, "[5], 1, 1, rng")
    with np.errstate(all="ignore"):
        # exp(-5e5) underflows to 0: the best candidate is the only possible output.
        for out in _call(exponential_mechanism, [0.0, 1e6, 3.0], 1.0, 1.0, rng, rng=rng, repeat=20):
            out = _index_or_fail(out, 3, "[0, 1e6, 3], 1, 1, rng")
            if out != 1:
                raise _fail(
                    f"分数 [0, 1e6, 3]、ε = 1 时，输出 {out} 的概率小于 e^(-499998)，实际上只能输出 1（最高分）。是否溢出，或下标错位？",
                    f"with scores [0, 1e6, 3] and ε = 1, output {out} has probability below e^(-499998): only 1 "
                    f"(the best) is possible. Overflow, or an index off by one?",
                )
    _after_call(exponential_mechanism, rng)
    print("[check_exponential_mechanism_basics] int indices in range, one candidate, scores 1e6 (no overflow): OK")


def check_exponential_mechanism_invalid(exponential_mechanism: Callable) -> None:
    """ValueError for ε < 0, Δq <= 0 and empty scores."""
    rng = RecordingGenerator(8)
    for args, zh, en in (
        (([1.0, 2.0], -1.0, 1.0, rng), "ε 不能为负", "epsilon must be >= 0"),
        (([1.0, 2.0], 1.0, 0.0, rng), "Δq 必须 > 0", "sensitivity must be > 0"),
        (([], 1.0, 1.0, rng), "候选集不能为空", "scores must not be empty"),
        (([1.0, 2.0], float("nan"), 1.0, rng), "ε 必须是有限数", "epsilon must be finite"),
    ):
        _expect_value_error(exponential_mechanism, args, zh, en)
    print("[check_exponential_mechanism_invalid] ValueError for ε < 0, Δq = 0, empty scores, ε = nan: OK")


#: Scores for the chi-square test: spread so that a factor 2 or Δ mistake moves mass.
CHI2_SCORES = (0.0, 4.0, 8.0, 12.0, 16.0, 20.0, 6.0)


def check_exponential_mechanism_distribution(exponential_mechanism: Callable, seed: int | None = None, *,
                                             scores: tuple = CHI2_SCORES, epsilon: float = EPSILON,
                                             sensitivity: float = SENSITIVITY, n: int = 10_000) -> None:
    """Chi-square goodness of fit of ``n`` draws against exp(εq/(2Δq)).

    Bins with expected count below 5 are merged. False-failure probability for
    a correct implementation: ``ALPHA`` = 1e-6 (asymptotic chi-square; every
    bin has an expected count of at least 5, here at least 130).
    """
    name = "check_exponential_mechanism_distribution"
    seed = check_seed(name + repr((scores, epsilon, sensitivity, n)), seed)
    rng = RecordingGenerator(seed)
    k = len(scores)
    scores_list = list(scores)
    counts = np.zeros(k, dtype=np.int64)
    args_text = f"{scores_list}, {epsilon:g}, {sensitivity:g}, rng"
    for out in _call(exponential_mechanism, scores_list, epsilon, sensitivity, rng, rng=rng, repeat=n):
        counts[_index_or_fail(out, k, args_text)] += 1
    _after_call(exponential_mechanism, rng)
    expected_p = _exp_probs(np.array(scores), epsilon, sensitivity)
    observed, expected = _merge_bins(counts, expected_p * n)
    result = chi_square_test(observed, expected)
    text = (f"chi-square of n = {n} draws against exp(εq/(2Δq)), ε = {epsilon:g}, Δq = {sensitivity:g}, "
            f"{observed.size} bins: stat = {result.statistic:.1f}, p = {result.pvalue:.3g}")
    if result.pvalue < ALPHA:
        freq = counts / n
        alts = _exp_alternatives(np.array(scores), epsilon, sensitivity)
        best = min(alts, key=lambda key: float(np.abs(alts[key][2] - freq).sum()))
        tv_best = float(np.abs(alts[best][2] - freq).sum()) / 2
        tv_true = float(np.abs(expected_p - freq).sum()) / 2
        if tv_best < tv_true / 3:
            guess_zh, guess_en = alts[best][0], alts[best][1]
        else:
            guess_zh, guess_en = "抽样方法有误（检查累积概率与下标的对应）", "the sampling step is wrong (check how cumulative probabilities map to indices)"
        raise _fail(
            f"exponential_mechanism 的输出频率 {np.round(freq, 3)} 与期望概率 {np.round(expected_p, 3)} 不符"
            f"（分数 {scores_list}，ε = {epsilon:g}，Δq = {sensitivity:g}；卡方 = {result.statistic:.1f}，p = {result.pvalue:.2g} < {ALPHA:g}，"
            f"n = {n}，seed = {seed}；正确实现被误判的概率 ≤ {ALPHA:g}）。可能的错误：{guess_zh}。",
            f"exponential_mechanism's output frequencies {np.round(freq, 3)} differ from the expected probabilities "
            f"{np.round(expected_p, 3)} (scores {scores_list}, ε = {epsilon:g}, Δq = {sensitivity:g}; chi-square = "
            f"{result.statistic:.1f}, p = {result.pvalue:.2g} < {ALPHA:g}, n = {n}, seed = {seed}; a correct "
            f"implementation fails with probability <= {ALPHA:g}). Likely mistake: {guess_en}.",
        )
    _say(name, seed, text + " -> OK")


def _merge_bins(observed: np.ndarray, expected: np.ndarray, minimum: float = 5.0) -> tuple[np.ndarray, np.ndarray]:
    """Merge bins (smallest expected first) until every expected count is >= ``minimum``."""
    obs = [float(o) for o in observed]
    exp = [float(e) for e in expected]
    while len(exp) > 1 and min(exp) < minimum:
        i = int(np.argmin(exp))
        j = i + 1 if i + 1 < len(exp) else i - 1
        if 0 < i < len(exp) - 1 and exp[i - 1] < exp[i + 1]:
            j = i - 1
        exp[j] += exp[i]
        obs[j] += obs[i]
        del exp[i], obs[i]
    return np.array(obs), np.array(exp)


def check_exponential_mechanism_rng(exponential_mechanism: Callable, seed: int | None = None) -> None:
    """rng discipline over 64 draws, plus the forbidden-call scan."""
    name = "check_exponential_mechanism_rng"
    seed = check_seed(name, seed)
    _check_no_forbidden(exponential_mechanism)

    def draws(rng):
        return call_repeatedly(exponential_mechanism, 64, [1.0, 2.0, 3.0, 2.5], 0.7, 3.0, rng)

    _check_rng_discipline(exponential_mechanism, draws, name, seed)


# --- randomized response (§6.4) ------------------------------------------------


def _keep(epsilon: float) -> float:
    return 1.0 / (1.0 + math.exp(-epsilon))


def check_rr_keep_probability_values(rr_keep_probability: Callable) -> None:
    """p(ln 4) = 0.8 (the textbook's example), p(0.7), p(3); values to 1e-12."""
    for epsilon in (math.log(4.0), EPSILON, 3.0, 1e-3):
        got = _call(rr_keep_probability, epsilon)
        if isinstance(got, np.ndarray) and got.shape == ():
            got = float(got)
        if not isinstance(got, (float, np.floating)):
            raise _fail(
                f"rr_keep_probability({epsilon:.4g}) 应返回一个浮点数，实际返回 {type(got).__name__}。",
                f"rr_keep_probability({epsilon:.4g}) should return a float; it returned {type(got).__name__}.",
            )
        expected = _keep(epsilon)
        if not math.isclose(got, expected, rel_tol=1e-12, abs_tol=1e-15):
            guess_zh, guess_en = "检查公式 p = e^ε / (e^ε + 1)", "check the formula p = e^ε / (e^ε + 1)"
            if math.isclose(got, 1 - expected, rel_tol=1e-9):
                guess_zh, guess_en = "p 与 1-p 弄反了（1/(e^ε+1) 是翻转的概率）", "p and 1-p swapped (1/(e^ε+1) is the flip probability)"
            elif math.isclose(got, _keep(epsilon / 2), rel_tol=1e-9) or math.isclose(got, _keep(2 * epsilon), rel_tol=1e-9):
                guess_zh, guess_en = "ε 多乘或多除了 2", "ε multiplied or divided by 2"
            raise _fail(
                f"rr_keep_probability({epsilon:.4g}) = {got}，期望 e^ε/(e^ε+1) = {expected:.6f}。可能的错误：{guess_zh}。",
                f"rr_keep_probability({epsilon:.4g}) = {got}; expected e^ε/(e^ε+1) = {expected:.6f}. Likely mistake: {guess_en}.",
            )
    print("[check_rr_keep_probability_values] p(ln 4) = 0.8, p(0.7), p(3), p(0.001): OK")


def check_rr_keep_probability_edge(rr_keep_probability: Callable) -> None:
    """ValueError for ε <= 0 or NaN; ε = 800 gives 1.0, not nan (overflow)."""
    for epsilon in (0.0, -1.0, float("nan")):
        _expect_value_error(rr_keep_probability, (epsilon,), "ε 必须是有限正数", "epsilon must be a finite number > 0")
    with np.errstate(all="ignore"):
        got = _call(rr_keep_probability, 800.0)
    if not (isinstance(got, (float, np.floating, np.ndarray)) and math.isclose(float(got), 1.0, rel_tol=1e-12)):
        raise _fail(
            f"rr_keep_probability(800) = {got}，期望 1.0。e^800 溢出成 inf，inf/inf = nan：改写成 1/(1 + e^(-ε))。",
            f"rr_keep_probability(800) = {got}; expected 1.0. e^800 overflows to inf and inf/inf = nan: "
            f"write it as 1/(1 + e^(-ε)).",
        )
    print("[check_rr_keep_probability_edge] ValueError for ε = 0, -1, nan; p(800) = 1.0: OK")


def _rr_output(out: Any, shape: tuple, args_text: str) -> np.ndarray:
    if not isinstance(out, np.ndarray) or out.shape != shape:
        raise _fail(
            f"rr_perturb({args_text}) 应返回形状为 {shape} 的 numpy 数组，实际返回 {type(out).__name__} {_short(out)}。",
            f"rr_perturb({args_text}) should return a numpy array of shape {shape}; it returned {type(out).__name__} {_short(out)}.",
        )
    if not np.issubdtype(out.dtype, np.integer):
        raise _fail(
            f"rr_perturb 返回的 dtype 是 {out.dtype}，期望整数 0/1（例如 .astype(int)）。",
            f"rr_perturb returned dtype {out.dtype}; expected integers 0/1 (e.g. .astype(int)).",
        )
    if not np.all((out == 0) | (out == 1)):
        raise _fail(
            f"rr_perturb 返回了 0/1 以外的值：{np.unique(out)[:10]}。",
            f"rr_perturb returned values other than 0/1: {np.unique(out)[:10]}.",
        )
    return out


def check_rr_perturb_basics(rr_perturb: Callable) -> None:
    """Shape, integer 0/1 output for 1-D and 2-D input; ValueError for ε <= 0 and bits not in {0, 1}."""
    rng = RecordingGenerator(9)
    for bits in (np.array([0, 1, 1, 0, 1]), np.array([[1, 0, 0], [0, 1, 1]]), [1, 0, 1, 1]):
        out = _call(rr_perturb, bits, 1.0, rng, rng=rng)
        _after_call(rr_perturb, rng)
        _rr_output(out, np.shape(bits), f"{_short(bits)}, 1.0, rng")
    for args, zh, en in (
        ((np.array([0, 1, 2]), 1.0, rng), "bits 只能是 0 或 1", "bits must be 0 or 1"),
        ((np.array([0, 1, -1]), 1.0, rng), "bits 只能是 0 或 1", "bits must be 0 or 1"),
        ((np.array([0, 1, 1]), 0.0, rng), "ε 必须 > 0", "epsilon must be > 0"),
        ((np.array([0, 1, 1]), -1.0, rng), "ε 必须 > 0", "epsilon must be > 0"),
    ):
        _expect_value_error(rr_perturb, args, zh, en)
    print("[check_rr_perturb_basics] integer 0/1 arrays of shapes (5,), (2, 3), (4,); ValueError for bits 2, -1 and ε <= 0: OK")


def check_rr_perturb_invalid(rr_perturb: Callable) -> None:
    """ValueError for NaN ε and for a fractional bit."""
    rng = RecordingGenerator(10)
    _expect_value_error(rr_perturb, (np.array([0, 1]), float("nan"), rng), "ε 必须是有限正数", "epsilon must be a finite number > 0")
    _expect_value_error(rr_perturb, (np.array([0.0, 0.5, 1.0]), 1.0, rng), "bits 只能是 0 或 1", "bits must be 0 or 1")
    print("[check_rr_perturb_invalid] ValueError for ε = nan and bit 0.5: OK")


def check_rr_perturb_distribution(rr_perturb: Callable, seed: int | None = None, *, epsilon: float = EPSILON,
                                  n: int = 100_000, ones: float = 0.3, shape: tuple | None = None) -> None:
    """Exact binomial tests of the keep rate among true 1s and among true 0s.

    Two two-sided tests at ``ALPHA / 2`` each: false-failure probability for a
    correct implementation <= ``ALPHA`` = 1e-6 in total.
    """
    name = "check_rr_perturb_distribution"
    seed = check_seed(name + repr((epsilon, n, ones, shape)), seed)
    rng = RecordingGenerator(seed)
    n_ones = int(round(n * ones))
    bits = np.zeros(n, dtype=np.int64)
    bits[np.random.default_rng(seed ^ 0x5EED).permutation(n)[:n_ones]] = 1
    if shape is not None:
        bits = bits.reshape(shape)
    out = _call(rr_perturb, bits, epsilon, rng, rng=rng)
    _after_call(rr_perturb, rng)
    out = _rr_output(out, bits.shape, f"bits of shape {bits.shape}, {epsilon:g}, rng")
    p = _keep(epsilon)
    kept1 = int(np.sum(out[bits == 1] == 1))
    kept0 = int(np.sum(out[bits == 0] == 0))
    p1 = binomial_test(kept1, n_ones, p)
    p0 = binomial_test(kept0, n - n_ones, p)
    r1, r0 = kept1 / n_ones, kept0 / (n - n_ones)
    text = (f"keep rate among {n_ones} ones = {r1:.4f} (binomial p = {p1:.3g}), among {n - n_ones} zeros = {r0:.4f} "
            f"(p = {p0:.3g}); expected p = e^ε/(e^ε+1) = {p:.4f} at ε = {epsilon:g}")
    if min(p1, p0) < ALPHA / 2:
        q = 1 - p
        if abs(r1 - q) < 0.01 and abs(r0 - q) < 0.01:
            zh, en = "p 与 1-p 弄反了：真实答案以 1/(e^ε+1) 的概率保留", "p and 1-p swapped: the true answer is kept with probability 1/(e^ε+1)"
        elif abs(r1 - r0) > 0.05:
            zh, en = "对 0 和 1 的处理不同（只翻转了其中一种？）", "0s and 1s are treated differently (only one kind flipped?)"
        elif abs(r1 - (p + q / 2)) < 0.01:
            zh, en = "翻转时又掷了一次公平硬币（保留率变成 p + (1-p)/2）", "a fair coin decides the answer after a flip (keep rate p + (1-p)/2)"
        elif r1 in (0.0, 1.0) or r0 in (0.0, 1.0):
            zh, en = "所有比特一起保留或一起翻转：每个比特需要自己的随机数", "all bits kept or flipped together: each bit needs its own random number"
        elif abs(r1 - _keep(2 * epsilon)) < 0.01 or abs(r1 - _keep(epsilon / 2)) < 0.01:
            zh, en = "ε 多乘或多除了 2", "ε multiplied or divided by 2"
        elif abs(r1 - 0.5) < 0.01:
            zh, en = "保留率是 1/2：输出与真实答案无关", "keep rate 1/2: the output ignores the true answer"
        else:
            zh, en = "保留概率不是 e^ε/(e^ε+1)", "the keep probability is not e^ε/(e^ε+1)"
        raise _fail(
            f"rr_perturb：真实为 1 的比特保留率 {r1:.4f}，真实为 0 的比特保留率 {r0:.4f}，期望都是 p = {p:.4f}（ε = {epsilon:g}；"
            f"二项检验 p 值 {p1:.2g} / {p0:.2g}，阈值 {ALPHA / 2:g}，seed = {seed}；正确实现被误判的概率 ≤ {ALPHA:g}）。可能的错误：{zh}。",
            f"rr_perturb: keep rate {r1:.4f} among true 1s and {r0:.4f} among true 0s; expected p = {p:.4f} for both "
            f"(ε = {epsilon:g}; binomial p-values {p1:.2g} / {p0:.2g}, threshold {ALPHA / 2:g}, seed = {seed}; a correct "
            f"implementation fails with probability <= {ALPHA:g}). Likely mistake: {en}.",
        )
    _say(name, seed, text + " -> OK")


def check_rr_perturb_rng(rr_perturb: Callable, seed: int | None = None) -> None:
    """rng discipline plus the forbidden-call scan."""
    name = "check_rr_perturb_rng"
    seed = check_seed(name, seed)
    _check_no_forbidden(rr_perturb)
    bits = np.arange(400) % 2
    _check_rng_discipline(rr_perturb, lambda rng: rr_perturb(bits, 0.5, rng), name, seed)


def _correct(n: float, n1: float, p: float) -> float:
    return ((p - 1) * n + n1) / (2 * p - 1)


def _rr_correct_value(rr_correct: Callable, n, n1, p) -> float:
    got = _call(rr_correct, n, n1, p)
    try:
        return float(got)
    except (TypeError, ValueError):
        raise _fail(
            f"rr_correct({n}, {n1}, {p}) 应返回一个数，实际返回 {type(got).__name__}。",
            f"rr_correct({n}, {n1}, {p}) should return a number; it returned {type(got).__name__}.",
        ) from None


def _rr_correct_compare(got: float, n, n1, p, where_zh: str, where_en: str) -> None:
    expected = _correct(n, n1, p)
    if math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-9):
        return
    zh, en = "检查公式 N = ((p-1)n + n1)/(2p-1)", "check the formula N = ((p-1)n + n1)/(2p-1)"
    if math.isclose(got, _correct(n, n1, 1 - p), rel_tol=1e-9, abs_tol=1e-9):
        zh, en = "p 与 1-p 弄反了", "p and 1-p swapped"
    elif math.isclose(got, expected / n, rel_tol=1e-9, abs_tol=1e-12):
        zh, en = "返回了比例 π̂ 而不是人数 N = π̂·n", "returned the fraction π̂ instead of the count N = π̂·n"
    elif math.isclose(got, ((p - 1) * n + n1) / (2 * p), rel_tol=1e-9) or math.isclose(got, (p - 1) * n + n1 / (2 * p - 1), rel_tol=1e-9):
        zh, en = "括号/分母写错了：整个 (p-1)n + n1 要除以 (2p-1)", "brackets: the whole (p-1)n + n1 must be divided by (2p-1)"
    elif math.isclose(got, n1, rel_tol=1e-9):
        zh, en = "没有做校正（直接返回了 n1）", "no correction applied (n1 returned as is)"
    raise _fail(
        f"rr_correct({n}, {n1}, {p}) = {got:.6g}，期望 {expected:.6g}（{where_zh}）。可能的错误：{zh}。",
        f"rr_correct({n}, {n1}, {p}) = {got:.6g}; expected {expected:.6g} ({where_en}). Likely mistake: {en}.",
    )


def check_rr_correct_textbook(rr_correct: Callable) -> None:
    """The worked example of §6.4.2: 20 people, p = 0.8: 14 → 16.7 and 6 → 3.3."""
    for n1, shown in ((14, "16.7"), (6, "3.3")):
        got = _rr_correct_value(rr_correct, 20, n1, 0.8)
        _rr_correct_compare(got, 20, n1, 0.8, f"教材 6.4.2 的例子：≈ {shown}", f"textbook §6.4.2 worked example: ≈ {shown}")
    print("[check_rr_correct_textbook] rr_correct(20, 14, 0.8) ≈ 16.7 and rr_correct(20, 6, 0.8) ≈ 3.3: OK")


def check_rr_correct_formula(rr_correct: Callable) -> None:
    """Exact values away from the textbook example, including p < 1/2 and the ends n1 = 0, n1 = n."""
    for n, n1, p in ((1000, 615, _keep(EPSILON)), (37, 0, 0.9), (37, 37, 0.9), (500, 120, 0.25), (10, 4, 1.0), (10, 4, 0.0)):
        got = _rr_correct_value(rr_correct, n, n1, p)
        _rr_correct_compare(got, n, n1, p, "N = ((p-1)n + n1)/(2p-1)", "N = ((p-1)n + n1)/(2p-1)")
    print("[check_rr_correct_formula] exact values for p = 0.668, 0.9, 0.25, 1, 0 and n1 = 0, n: OK")


def check_rr_correct_invalid(rr_correct: Callable) -> None:
    """ValueError for p = 1/2, p outside [0, 1], p = nan, n1 < 0 and n1 > n."""
    for args, zh, en in (
        ((20, 14, 0.5), "p = 0.5 时回答不含信息，分母 2p-1 = 0", "at p = 0.5 the answers carry no information and 2p-1 = 0"),
        ((20, 14, 1.2), "p 必须在 [0, 1] 内", "p must be in [0, 1]"),
        ((20, 14, -0.1), "p 必须在 [0, 1] 内", "p must be in [0, 1]"),
        ((20, 14, float("nan")), "p 必须是有限数", "p must be a finite number"),
        ((20, 21, 0.8), "n1 不能大于 n", "n1 cannot exceed n"),
        ((20, -1, 0.8), "n1 不能为负", "n1 cannot be negative"),
    ):
        _expect_value_error(rr_correct, args, zh, en)
    print("[check_rr_correct_invalid] ValueError for p = 0.5, 1.2, -0.1, nan and n1 = 21 > n, n1 = -1: OK")


# --- copied solutions ----------------------------------------------------------


def _is_validation(stmt: ast.stmt) -> bool:
    """``if ...: raise``, ``raise``, a call of a ``check_*`` validator, or ``func = "name"``."""
    if isinstance(stmt, ast.Raise):
        return True
    if isinstance(stmt, ast.If) and all(isinstance(s, ast.Raise) for s in stmt.body) and not stmt.orelse:
        return True
    if isinstance(stmt, ast.For) and all(_is_validation(s) for s in stmt.body):
        return True
    value = getattr(stmt, "value", None)
    if isinstance(stmt, (ast.Assign, ast.Expr)) and isinstance(value, ast.Call):
        callee = value.func.id if isinstance(value.func, ast.Name) else getattr(value.func, "attr", "")
        return callee.startswith(("check_", "_check"))
    if isinstance(stmt, ast.Assign) and isinstance(value, ast.Constant) and isinstance(value.value, str):
        return True
    return False


class _Normalizer(ast.NodeTransformer):
    """Rename identifiers by order of appearance and drop docstrings."""

    def __init__(self):
        self.names: dict[str, str] = {}

    def _rename(self, name: str) -> str:
        return self.names.setdefault(name, f"v{len(self.names)}")

    def visit_FunctionDef(self, node):
        node.name = "f"
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:]
        # Parameter validation is written differently by everyone (and the
        # reference's uses helpers' own validators): compare the rest.
        body = [stmt for stmt in body if not _is_validation(stmt)]
        node.body = body or [ast.Pass()]
        node.returns = None
        self.generic_visit(node)
        return node

    def visit_arg(self, node):
        node.arg = self._rename(node.arg)
        node.annotation = None
        return node

    def visit_Name(self, node):
        node.id = self._rename(node.id)
        return node

    def visit_Constant(self, node):
        if isinstance(node.value, str):
            node.value = "s"
        return node


def _normalized_tokens(func_or_source: Callable | str) -> list[str] | None:
    source = func_or_source if isinstance(func_or_source, str) else _function_source(func_or_source)
    if source is None:
        return None
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return None
    tree = _Normalizer().visit(tree)
    tokens = []
    for node in ast.walk(tree):
        token = type(node).__name__
        if isinstance(node, ast.Name):
            token += ":" + node.id
        elif isinstance(node, ast.Attribute):
            token += ":" + node.attr
        elif isinstance(node, ast.Constant):
            token += ":" + repr(node.value)
        elif isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp)):
            token += ":" + type(getattr(node, "op", getattr(node, "ops", [None])[0] if hasattr(node, "ops") else None)).__name__
        tokens.append(token)
    return tokens


def similarity_to_reference(func: Callable | str, reference: Callable | str | None = None, name: str | None = None) -> float | None:
    """Similarity in [0, 1] between ``func`` and the reference solution.

    Both syntax trees are normalized (identifiers renamed by order of first
    appearance, docstrings, annotations and string constants dropped) and
    their node sequences compared with :class:`difflib.SequenceMatcher`.
    ``reference`` defaults to the function of the same name in
    :mod:`helpers.mechanisms`; ``func`` may be source text, then ``name``
    says which reference to use. Returns ``None`` when a source is
    unavailable. Scores of 0.9 and above on functions of more than ~40
    nodes mean "very probably copied"; short functions (a one-line formula)
    look alike whoever writes them, so their score proves nothing.
    """
    if reference is None:
        import helpers.mechanisms as mechanisms

        ref_name = name or getattr(func, "__name__", None)
        reference = getattr(mechanisms, ref_name, None) if ref_name else None
        if reference is None:
            return None
    a = _normalized_tokens(func)
    b = _normalized_tokens(reference)
    if a is None or b is None:
        return None
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def copy_report(functions: dict[str, Callable | str], threshold: float = 0.9, min_nodes: int = 40) -> list[dict]:
    """One row per function: similarity to :mod:`helpers.mechanisms` and whether to flag it.

    ``functions`` maps a graded function name to the student's function or
    its source. A row is flagged when the similarity is at least
    ``threshold`` and the function has at least ``min_nodes`` syntax-tree
    nodes. Meant for the instructor's report, never to deduct points.
    """
    rows = []
    for name, func in functions.items():
        score = similarity_to_reference(func, name=name)
        tokens = _normalized_tokens(func) or []
        rows.append({
            "function": name,
            "similarity": None if score is None else round(score, 3),
            "nodes": len(tokens),
            "flagged": bool(score is not None and score >= threshold and len(tokens) >= min_nodes),
        })
    return rows


# --- ε-slider views (ungraded) -----------------------------------------------


def _explorer_figure():
    """A 6 × 3 in figure whose text can be Chinese (the course's bundled CJK font)."""
    import matplotlib.pyplot as plt

    from helpers.lectures.plots import configure_fonts

    configure_fonts()  # before any text is created: legends below are bilingual
    fig, ax = plt.subplots(figsize=(6, 3))
    plt.close(fig)
    return fig, ax


def _slider_view(draw: Callable[[float], None], fig, description: str = "ε"):
    import ipywidgets as widgets
    from IPython.display import display

    from helpers.lectures.widgets import RoundLogSlider

    slider = RoundLogSlider(1.0, -1, 1, description=description, continuous_update=False)
    out = widgets.Output(layout=widgets.Layout(min_height="320px"))

    def redraw(change=None):
        with out:
            out.clear_output(wait=True)
            try:
                draw(slider.value)
                box.last_error = None
                display(fig)
            except NotImplementedError as error:
                box.last_error = error
                print("你的函数还没有实现 / your function is not implemented yet (NotImplementedError)")
            except Exception as error:  # noqa: BLE001  (shown to the student, not lost)
                box.last_error = error
                print(f"你的函数出错了 / your function raised {type(error).__name__}: {error}")

    box = widgets.VBox([slider, out])
    box.slider, box.figure, box.output, box.redraw, box.last_error = slider, fig, out, redraw, None
    slider.observe(redraw, names="value")
    redraw()
    return box


def laplace_explorer(laplace_mechanism: Callable, sensitivity: float = 1.0, n: int = 20_000, seed: int = 0):
    """Histogram of ``laplace_mechanism(0, Δ, ε, rng)`` against the Laplace(Δ/ε) density; ε on a log slider."""
    fig, ax = _explorer_figure()
    grid = np.linspace(-15, 15, 301)
    edges = np.linspace(-15, 15, 61)
    centers, width = (edges[:-1] + edges[1:]) / 2, edges[1] - edges[0]
    bars = ax.bar(centers, np.zeros(centers.size), width=width, alpha=0.5, label="your samples / 你的样本")
    (line,) = ax.plot(grid, np.zeros(grid.size), "k-", label="Laplace(Δ/ε) density / 密度")
    ax.set_xlim(-15, 15)
    ax.set_ylim(0, 1.2)
    ax.legend(loc="upper right")

    def draw(epsilon):
        b = sensitivity / epsilon
        x = np.asarray(laplace_mechanism(np.zeros(n), sensitivity, epsilon, np.random.default_rng(seed)), dtype=float)
        heights, _ = np.histogram(x, bins=edges)
        for bar, h in zip(bars, heights / (n * width)):
            bar.set_height(h)
        line.set_ydata(np.exp(-np.abs(grid) / b) / (2 * b))
        ax.set_title(f"ε = {epsilon:g}, Δ = {sensitivity:g}, b = Δ/ε = {b:.3g}")

    return _slider_view(draw, fig)


def exponential_explorer(exponential_mechanism: Callable, scores=TABLE_6_4_SCORES, sensitivity: float = 1.0,
                         n: int = 2_000, seed: int = 0):
    """Frequencies of ``n`` draws of the student's mechanism against exp(εq/(2Δq)) (Table 6-4's scores)."""
    fig, ax = _explorer_figure()
    k = len(scores)
    xs = np.arange(k)
    bars = ax.bar(xs - 0.2, np.zeros(k), width=0.4, label="your draws / 你的抽样")
    truth = ax.bar(xs + 0.2, np.zeros(k), width=0.4, label="exp(εq/(2Δq))")
    ax.set_xticks(xs, [f"q = {s:g}" for s in scores])
    ax.set_ylim(0, 1)
    ax.legend(loc="upper right")

    def draw(epsilon):
        rng = np.random.default_rng(seed)
        counts = np.bincount([int(exponential_mechanism(list(scores), epsilon, sensitivity, rng)) for _ in range(n)], minlength=k)
        for bar, h in zip(bars, counts / n):
            bar.set_height(h)
        for bar, h in zip(truth, _exp_probs(np.array(scores), epsilon, sensitivity)):
            bar.set_height(h)
        ax.set_title(f"ε = {epsilon:g}, Δq = {sensitivity:g}")

    return _slider_view(draw, fig)


def rr_explorer(rr_perturb: Callable, n: int = 200, true_ones: int = 60, repeats: int = 1_000, seed: int = 0):
    """Histogram of the number of reported 1s over ``repeats`` surveys against its exact distribution."""
    from scipy import stats

    fig, ax = _explorer_figure()
    support = np.arange(n + 1)
    bars = ax.bar(support, np.zeros(n + 1), width=1.0, alpha=0.5, label="your surveys / 你的调查")
    (line,) = ax.plot(support, np.zeros(n + 1), "k-", label="exact / 精确分布")
    ax.set_xlim(0, n)
    ax.set_ylim(0, 0.12)
    ax.legend(loc="upper right")
    bits = np.zeros((repeats, n), dtype=int)
    bits[:, :true_ones] = 1

    def draw(epsilon):
        p = _keep(epsilon)
        reported = np.asarray(rr_perturb(bits, epsilon, np.random.default_rng(seed))).sum(axis=1)
        heights = np.bincount(reported.astype(int), minlength=n + 1)[: n + 1] / repeats
        for bar, h in zip(bars, heights):
            bar.set_height(h)
        exact = np.convolve(stats.binom.pmf(np.arange(true_ones + 1), true_ones, p),
                            stats.binom.pmf(np.arange(n - true_ones + 1), n - true_ones, 1 - p))
        line.set_ydata(exact)
        ax.set_title(f"ε = {epsilon:g}, p = {p:.3f}: {true_ones} true 1s out of {n}")

    return _slider_view(draw, fig)
