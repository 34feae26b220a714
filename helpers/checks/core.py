"""Shared machinery of the checks: bilingual failures (:class:`CheckFailure`), seeds, the
recording generator, calling student code, loading solution cells outside a notebook.
"""

from __future__ import annotations

import math
import os
import re
import sys
import unicodedata
import zlib
from typing import Any, Callable

import numpy as np

#: Level of every statistical test: the probability that a correct
#: implementation fails one test.
ALPHA = 1e-6
#: Environment variable through which the autograder sets a per-run seed.
SEED_ENV = "DP_COURSE_SEED"

# Parameters away from 1 so that swapped formulas (ε/Δ vs Δ/ε, ε·Δ...) differ.
EPSILON = 0.7
SENSITIVITY = 3.0


# --- messages and seeds ------------------------------------------------------


#: How a grading run's seed is written in a message (:class:`GradingSeed`), and in each language.
_HIDDEN_SEED_ZH, _HIDDEN_SEED_EN = "评分种子，不显示", "the grading run's, not shown"
_HIDDEN_SEED = f"{_HIDDEN_SEED_ZH} / {_HIDDEN_SEED_EN}"


class CheckFailure(AssertionError):
    """A check's verdict on the student's code: one bilingual message, no traceback.

    ``str(error)`` is the message (Chinese, then English), as an ``AssertionError``
    always was, so nbgrader and the autograder count it as a failed test.
    ``diagnosis`` is a stable, machine-readable id of the likely mistake (e.g.
    ``"laplace.scale_inverted"``; ``None`` when the check has not named one), so
    that a class report groups submissions by mistake rather than by wording.
    IPython shows an exception with ``_render_traceback_`` by the lines it
    returns instead of a traceback, so a student sees the message, not 20 lines
    of checker source (also in nbgrader's Validate and in feedback).
    """

    def __init__(self, zh: str, en: str, diagnosis: str | None = None):
        # a grading seed written into both parts (GradingSeed is one string for both) reads in each one's
        # language (an English fragment inside the Chinese message: session 15's walkthrough)
        zh, en = str(zh).replace(_HIDDEN_SEED, _HIDDEN_SEED_ZH), str(en).replace(_HIDDEN_SEED, _HIDDEN_SEED_EN)
        super().__init__(f"\n{zh}\n{en}")
        self.zh, self.en, self.diagnosis = zh, en, diagnosis

    def _render_traceback_(self) -> list[str]:
        # nbgrader's Validate dialog shows these lines unwrapped: break them here, both
        # languages to the same width on screen. The notebook's language (helpers.i18n) first; the
        # other one after it, dimmed and labelled, for a reader of the other language.
        from helpers.i18n import get_lang

        first, other = (self.zh, self.en) if get_lang() == "zh" else (self.en, self.zh)
        lines = ["\x1b[31m✗ 未通过 / check failed\x1b[0m"]
        for paragraph in str(first).splitlines() or [""]:
            lines += wrap_columns(paragraph, MESSAGE_COLUMNS)
        label = "English:" if other is self.en else "中文："
        for i, paragraph in enumerate(str(other).splitlines() or [""]):
            lines += [f"\x1b[2m{line}\x1b[0m" for line in wrap_columns((label + " " if i == 0 else "") + paragraph,
                                                                     MESSAGE_COLUMNS)]
        return lines


#: Width of a failure message's lines in monospace columns (a CJK character takes two).
MESSAGE_COLUMNS = 100
_CJK = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef]")
_NO_LINE_START = set("，。；：、！？）》」』】,.;:!?)]}%")
_NO_LINE_END = set("（《「『【([{")
# "n = 100000", "p < 1e-06": a relation stays on one line with both of its sides.
_RELATIONS = {"=", "<", ">", "≤", "≥", "<=", ">=", "->", "≈", "×"}


_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def _cut_wide(chunk: list[str], width: int) -> list[list[str]]:
    """A chunk of Chinese characters wider than ``width`` in pieces of at most ``width`` columns."""
    text, trailing = chunk
    if _columns(text) <= width or not _HAN.search(text):
        return [chunk]
    pieces, piece = [], ""
    for ch in text:
        if piece and _columns(piece + ch) > width and ch not in _NO_LINE_START:
            pieces.append([piece, ""])
            piece = ""
        piece += ch
    return pieces + [[piece, trailing]]


def _columns(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def wrap_columns(paragraph: str, width: int) -> list[str]:
    """Break ``paragraph`` into lines of at most ``width`` monospace columns.

    Unlike :func:`textwrap.wrap`, a CJK character counts two columns (as a terminal and
    a monospace browser font show it), Chinese breaks after its punctuation or next to
    Latin text but not between two Han characters (no word is cut), nor before closing or
    after opening punctuation, and never inside a relation such as ``n = 100000``. A
    Latin chunk wider than ``width`` on its own stays whole; a Chinese one is cut.
    """
    tokens = re.findall(r"\s+|" + _CJK.pattern + r"|[^\s\u2e80-\u9fff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef]+",
                        paragraph.strip())
    # chunks: runs that must stay on one line, each with the space that followed it
    chunks: list[list[str]] = []
    for i, token in enumerate(tokens):
        if not chunks:
            chunks.append([token, ""])
            continue
        if token.isspace():
            after = tokens[i + 1] if i + 1 < len(tokens) else ""
            if chunks[-1][0].split(" ")[-1] in _RELATIONS or after in _RELATIONS:
                chunks[-1][0] += " "          # a relation's spaces do not break
            else:
                chunks[-1][1] = " "
            continue
        previous = chunks[-1][0]
        # Chinese breaks after its punctuation, never inside a run of characters (a word may span
        # them: "被误/判", "保留概/率"); a run wider than a line is cut below.
        breakable = bool(chunks[-1][1]) or (
            (_CJK.fullmatch(token) or _CJK.fullmatch(previous[-1]))
            and token[0] not in _NO_LINE_START and previous[-1] not in _NO_LINE_END
            and not (_HAN.fullmatch(token) and _HAN.fullmatch(previous[-1])))
        if breakable:
            chunks.append([token, ""])
        else:
            chunks[-1][0] += token
    lines: list[str] = []
    line, space = "", ""
    chunks = [piece for chunk in chunks for piece in _cut_wide(chunk, width)]
    for text, trailing in chunks:
        if line and _columns(line + space + text) > width:
            lines.append(line)
            line, space = text, trailing
        else:
            line, space = line + space + text, trailing
    return lines + [line] if line or not lines else lines


def _fail(zh: str, en: str, diagnosis: str | None = None) -> CheckFailure:
    return CheckFailure(zh, en, diagnosis)


class GradingSeed(int):
    """A check's seed derived from a grading run's ``DP_COURSE_SEED``: the number for every use, but
    written as a name (``f"seed = {seed}"`` in a failure message). The run's seed is 32 bits per
    student: from one derived seed and the check's name a search of 2³² seeds recovers it, and with
    it the hidden cases of a regrade at the same ``--seed`` (issue 35). ``f"{seed:d}"`` and ``int(seed)``
    still give the number (the instructor's tools)."""

    def __str__(self) -> str:
        return _HIDDEN_SEED

    __repr__ = __str__

    def __format__(self, spec: str) -> str:
        return str(self) if not spec else int(self).__format__(spec)


def check_seed(name: str, seed: int | None = None) -> int:
    """Seed used by the check ``name``.

    ``seed`` wins when given. Otherwise the seed is derived from the check's
    name, mixed with the integer in ``DP_COURSE_SEED`` when that variable is
    set (the autograder's per-run seed; then a :class:`GradingSeed`, shown
    by name only).
    """
    if seed is not None:
        return int(seed)
    base = zlib.crc32(name.encode())
    env = os.environ.get(SEED_ENV, "").strip()
    if env:
        run = int(env) if env.isdigit() else zlib.crc32(env.encode())
        return GradingSeed(int(np.random.SeedSequence([run, base]).generate_state(1)[0]))
    return int(base)


def _passed(name: str, zh: str, en: str) -> None:
    """A passing deterministic check's line: the verdict, then what was checked (Chinese, then English)."""
    print(f"✓ 通过 / passed [{name}] {zh} / {en}")


def _say(name: str, seed: int, text: str, zh: str | None = None) -> None:
    """A passing statistical check's line: verdict first, what passed in Chinese (``zh``), then
    what was measured in English (``text``)."""
    # In grading the seed comes from the run's secret (DP_COURSE_SEED, per student): shown on a
    # feedback page it would let a student compute the hidden cases of a regrade at the same --seed.
    shown = _HIDDEN_SEED if os.environ.get(SEED_ENV) \
        else f"{seed}（默认 / default）"
    print(f"✓ 通过 / passed [{name}] 种子 / seed = {shown}：{zh + ' / ' if zh else ''}{text}")


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

    In grading the student's code never holds it: the autograder serves its
    draws from the trusted process (``autograder.proxy``), which refuses the
    other methods and keeps this record itself.

    ``tape``: float64 uniforms to hand out first (then the generator's own),
    so a check can replay or change the draws a function is built from;
    ``keep=True`` keeps every float64 uniform handed out in ``drawn()``.
    """

    def __init__(self, seed: int, tape: np.ndarray | None = None, keep: bool = False):
        super().__init__(np.random.PCG64(seed))
        object.__setattr__(self, "calls", 0)
        object.__setattr__(self, "draws", 0)
        object.__setattr__(self, "forbidden", [])
        # library randomness the grading sandbox saw during a call served by this generator (the judge's record)
        object.__setattr__(self, "library", [])
        object.__setattr__(self, "_tape", None if tape is None else np.asarray(tape, dtype=float).ravel())
        object.__setattr__(self, "_pos", 0)
        object.__setattr__(self, "_kept", [] if keep else None)
        object.__setattr__(self, "_undo", None)

    def random(self, size=None, dtype=np.float64, out=None):  # noqa: D102
        get = object.__getattribute__
        if out is not None:
            if not isinstance(out, np.ndarray):
                raise TypeError("rng.random: out must be a numpy array")
            size, dtype = out.shape, out.dtype
        try:
            double = dtype is np.float64 or np.dtype(dtype) == np.float64
        except TypeError:
            double = False
        if not double:
            # Only float64 uniforms are recorded and replayed (the draws checks change them): a
            # float32 draw would be a stream of its own that no check could see.
            used = dtype_name(dtype)
            get(self, "forbidden").append(f"random(dtype={used})")
            raise ForbiddenRngMethod(
                f"rng.random(dtype={used}) 不允许使用：只能用默认的 float64 均匀随机数 rng.random(size)。 / "
                f"rng.random(dtype={used}) is not allowed here: draw float64 uniforms, rng.random(size) "
                f"(the default dtype).")
        count = 1 if size is None else size if type(size) is int else int(np.prod(size, dtype=np.int64))
        # No undo record: only the grader's served draws are given back (``_take``), and reading the
        # PCG64 state for it cost a Python loop of scalar draws half its time (issue 36).
        values = get(self, "_draw")(count, False)
        result = float(values[0]) if size is None else values.reshape(size)
        if out is not None:
            out[...] = result
            result = out
        object.__setattr__(self, "calls", get(self, "calls") + 1)
        object.__setattr__(self, "draws", get(self, "draws") + count)  # the size of result
        return result

    def _take(self, count: int) -> np.ndarray:
        """The next ``count`` float64 uniforms (tape first), not counted; undone by ``_give_back``."""
        return object.__getattribute__(self, "_draw")(count, True)

    def _draw(self, count: int, undoable: bool) -> np.ndarray:
        get = object.__getattribute__
        tape, pos, kept = get(self, "_tape"), get(self, "_pos"), get(self, "_kept")
        object.__setattr__(self, "_undo", (get(self, "bit_generator").state, pos,
                                           None if kept is None else len(kept), count) if undoable else None)
        if tape is None or pos >= tape.size:
            values = np.random.Generator.random(self, count)
        else:
            head = tape[pos:pos + count]
            values = np.concatenate([head, np.random.Generator.random(self, count - head.size)])
            object.__setattr__(self, "_pos", pos + head.size)
        if kept is not None:
            kept.append(values.copy())
        return values

    def _give_back(self, unused: int) -> None:
        """Undo the last ``_take``'s final ``unused`` numbers, as if they had never been drawn."""
        get = object.__getattribute__
        state, pos, kept_len, count = get(self, "_undo")
        get(self, "bit_generator").state = state
        object.__setattr__(self, "_pos", pos)
        if kept_len is not None:
            del get(self, "_kept")[kept_len:]
        get(self, "_take")(count - unused)

    def drawn(self) -> np.ndarray:
        """Every float64 uniform handed out so far, in order (``keep=True``)."""
        kept = object.__getattribute__(self, "_kept")
        return np.concatenate(kept) if kept else np.empty(0)

    def __getattribute__(self, name: str):
        if name in _GENERATOR_PUBLIC and name not in _ALLOWED_RNG:
            object.__getattribute__(self, "forbidden").append(name)
            raise ForbiddenRngMethod(
                f"rng.{name} 不允许使用：只能用 rng.random(...) 生成均匀随机数，再自己变换。 / "
                f"rng.{name} is not allowed here: draw uniforms with rng.random(...) and transform them yourself."
            )
        return object.__getattribute__(self, name)


def dtype_name(dtype) -> str:
    """A short name of what was passed as ``dtype`` (for messages)."""
    try:
        return np.dtype(dtype).name
    except TypeError:
        return repr(dtype)[:40]


def _state(rng: np.random.Generator):
    """The bit generator's state, read without going through the recording filter."""
    return object.__getattribute__(rng, "bit_generator").state["state"]


def _forbidden_message(fname: str, methods: list[str]) -> AssertionError:
    dtypes = sorted({m for m in methods if m.startswith("random(dtype=")})
    if dtypes and len(dtypes) == len(set(methods)):
        names = ", ".join(f"rng.{m}" for m in dtypes)
        return _fail(
            f"{fname} 调用了 {names}。本作业只接受 float64 的均匀随机数：请用 rng.random(size)（默认类型 float64），"
            f"不要指定 dtype=np.float32 等其他类型。",
            f"{fname} called {names}. Only float64 uniforms are accepted in this assignment: use rng.random(size) "
            f"(the default dtype, float64), not dtype=np.float32 or another type.",
            diagnosis="common.rng_dtype",
        )
    names = ", ".join(f"rng.{m}" for m in sorted(set(methods)))
    return _fail(
        f"{fname} 调用了 {names}。本作业只允许 rng.random(...)：请用均匀随机数自己实现抽样（不能交给现成的抽样函数）。",
        f"{fname} called {names}. Only rng.random(...) is allowed in this assignment: build the sampler "
        f"from uniform numbers yourself instead of handing the job to a ready-made sampler.",
        diagnosis="common.forbidden_rng_method",
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


class Output:
    """In a :func:`call_sequence` step's arguments: the result of step ``index`` (its item ``item``)."""

    __slots__ = ("index", "item")

    def __init__(self, index: int, item: int | None = None):
        self.index, self.item = index, item

    def __repr__(self) -> str:
        return f"Output({self.index}{'' if self.item is None else f', {self.item}'})"


def call_sequence(steps: list[tuple[Callable, tuple]], keep=None) -> tuple[list, Exception | None]:
    """Make the calls ``steps`` (``[(fn, args)]``) in order, as a loop does; one round trip in grading.

    An argument ``Output(i)`` is the result of step ``i``, ``Output(i, j)``
    its item ``j`` (a ledger that each call returns and the next one takes),
    passed on as a fresh copy; ``Output`` may stand only for a whole
    argument. Every call gets fresh copies of list, tuple, dict and array
    arguments, as :func:`call_repeatedly`. Returns the results and the
    exception of the step that raised one (``None`` when every step
    returned; its results end before that step): the caller validates the
    results in order and reports the first problem, a bad result before the
    exception that followed it, exactly as the loop would have met them. In
    trusted grading all ``fn`` are proxies of one submission and the steps go
    to its sandbox in one request (``autograder.proxy.Proxy.call_sequence``).

    ``keep`` (a set of step indices): the results the caller reads. The others
    come back as ``None``, except the last result made, which always comes
    back; an ``Output`` may then name only the step before its own or a kept
    one. In grading the results not kept never leave the sandbox: a ledger
    that grows with every step costs O(steps) to send, not O(steps²).
    """
    if keep is not None:
        keep = frozenset(keep)
        for i, (_, args) in enumerate(steps):
            for a in args:
                if isinstance(a, Output) and a.index != i - 1 and a.index not in keep:
                    raise ValueError(f"call_sequence: step {i} takes the result of step {a.index}, which is not kept")
    if steps and all(callable(getattr(fn, "call_sequence", None)) for fn, _ in steps):
        return steps[0][0].call_sequence([(fn, tuple(args), {}) for fn, args in steps], keep=keep)
    results: list = []
    error = None
    for fn, args in steps:
        try:
            call_args = tuple(_fresh(_output(a, results)) for a in args)
            results.append(fn(*call_args))
        except Exception as exc:  # noqa: BLE001 - returned for the caller to report, as the loop's caller would
            error = exc
            break
    if keep is not None:  # as in grading: only the kept results and the last one made
        results = [r if i in keep or i == len(results) - 1 else None for i, r in enumerate(results)]
    return results, error


def _call_batch(func: Callable, calls: list[tuple]) -> tuple[list, Callable[[], None]]:
    """``[func(*args) for args in calls]`` made by :func:`call_sequence` (one round trip in grading,
    not one per call): the results made, and a function raising what :func:`_call` raises for the call
    that failed (nothing if none did). The caller checks the results in order, then calls it: the
    first problem is the one a loop of :func:`_call` meets."""
    results, error = call_sequence([(func, tuple(args)) for args in calls])

    def fail() -> None:
        if error is not None:
            _call(lambda *_: _reraise(error), *calls[len(results)], name=getattr(func, "__name__", "function"))
    return results, fail


def _reraise(error: Exception):
    raise error


def _output(value: Any, results: list) -> Any:
    if isinstance(value, Output):
        found = results[value.index]
        return found if value.item is None else found[value.item]
    return value


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
          repeat: int | None = None, share: bool = False):
    """Call student code (``repeat`` times: a list); turn its exceptions into student-facing messages.

    The student gets fresh copies of list, tuple, dict and array arguments, so nothing the call
    does to them can change what the check computes afterwards from its own objects (in grading,
    changes to arguments come back across the boundary). ``share``: the objects themselves, for
    a check that asks whether the caller's data were modified.
    """
    name = name or getattr(func, "__name__", "function")
    call_args = args if share else _fresh(args)
    try:
        return func(*call_args) if repeat is None else call_repeatedly(func, repeat, *call_args)
    except AssertionError:
        raise
    except ForbiddenRngMethod:
        raise _forbidden_message(name, rng.forbidden if rng is not None else ["?"]) from None
    except NotImplementedError:
        raise _fail(f"{name} 还没有实现（NotImplementedError）。", f"{name} is not implemented yet (NotImplementedError).",
                    diagnosis="common.not_implemented") from None
    except Exception as error:  # noqa: BLE001  (any crash is reported, not hidden)
        shown = ", ".join("rng" if isinstance(a, np.random.Generator) else _short(a) for a in args)
        raise _fail(
            f"调用 {name}({shown}) 时出错：{type(error).__name__}: {error}",
            f"{name}({shown}) raised {type(error).__name__}: {error}",
            diagnosis="common.timeout" if isinstance(error, TimeoutError) else "common.crashed",
        ) from None


def _short(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"array(shape={value.shape})"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _after_call(func: Callable, rng: RecordingGenerator) -> None:
    if rng.forbidden:
        raise _forbidden_message(getattr(func, "__name__", "function"), rng.forbidden)
    library = getattr(rng, "library", None)
    if library:
        raise _library_message(getattr(func, "__name__", "function"), library)


def _library_message(fname: str, seen: list[str]) -> AssertionError:
    """A call served by this generator used library randomness, as the grading sandbox's watch saw it
    (``autograder/sandbox/watch.py``; issue 35: numpy's samplers reached through scipy's
    ``gaussian_kde(...).resample``, ``Rotation.random`` or ``differential_evolution(seed=...)``, which
    no list of names holds). Only in grading: a notebook's own call is not watched."""
    listed = "; ".join(seen[:4])
    return _fail(
        f"{fname} 在评分时的调用里用到了库自带的随机数：{listed}。随机数只能来自传入的 rng 的 rng.random(...)；"
        f"numpy、scipy 的抽样函数（也包括通过 scipy.stats、scipy.spatial、scipy.optimize 等间接用到的）、自己新建的生成器、"
        f"np.random 的全局状态、random 模块和 os.urandom 都不行。",
        f"{fname} used a library's randomness in a graded call: {listed}. Random numbers must come from rng.random(...) "
        f"of the rng you are given: not from numpy's or scipy's samplers (also when reached through scipy.stats, "
        f"scipy.spatial, scipy.optimize ...), a generator of your own, np.random's global state, the random module "
        f"or os.urandom.",
        diagnosis="common.library_randomness",
    )


def _names_used(code) -> set:
    """Every global name a code object (its nested functions' included) refers to."""
    names = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _names_used(const)
    return names


def _calls_name(func: Callable, name: str) -> bool:
    """Whether ``func``'s code refers to ``name`` (read from its code object, never run; in grading
    the proxy's stand-in code, :mod:`autograder.standins`)."""
    code = getattr(func, "__code__", None)
    return code is not None and name in _names_used(code)


def _caller_function(name: str) -> Callable | None:
    """The function ``name`` where the check was called: the test cell's namespace, which holds the
    notebook's own function, or in grading the proxy of the student's function in the same sandbox as
    the function checked (hidden blocks included). ``None`` when there is no such callable.

    For the checks of a function that may call another graded function (``rr_perturb`` calls
    ``rr_keep_probability``): on a failure the judge asks that function for its value itself, on the
    check's own arguments, and names the function the evidence points to (issue 35, §5).
    """
    frame = sys._getframe(2)   # 0: here, 1: the check, 2: its caller (the test cell)
    try:
        found = frame.f_globals.get(name)
    finally:
        del frame
    return found if callable(found) else None


def _ask(func: Callable | None, *args) -> tuple[Any, str | None]:
    """``(func(*args), None)``, or ``(None, "<exception name>")`` when it raises (also
    ``NotImplementedError``: a template); ``(None, None)`` without ``func``. One call, no message:
    what the student's helper returns is evidence for a message, never a verdict of its own."""
    if func is None:
        return None, None
    try:
        with np.errstate(all="ignore"):
            return func(*_fresh(args)), None
    except Exception as error:  # noqa: BLE001 - any failure of the helper is a fact about it
        return None, type(error).__name__


def _expect_value_error(func: Callable, args: tuple, why_zh: str, why_en: str) -> None:
    name = getattr(func, "__name__", "function")
    shown = ", ".join(_short(a) for a in args if not isinstance(a, np.random.Generator))
    try:
        func(*args)
    except ValueError:
        return
    except NotImplementedError:
        raise _fail(f"{name} 还没有实现。", f"{name} is not implemented yet.", diagnosis="common.not_implemented") from None
    except Exception as error:  # noqa: BLE001
        raise _fail(
            f"{name}({shown}) 应该抛出 ValueError（{why_zh}），却抛出了 {type(error).__name__}: {error}",
            f"{name}({shown}) should raise ValueError ({why_en}) but raised {type(error).__name__}: {error}",
            diagnosis="common.wrong_exception",
        ) from None
    hint_zh = "注意：nan <= 0 为 False，需要单独检查 NaN（例如 math.isfinite）。" if "nan" in shown else ""
    hint_en = "Note: nan <= 0 is False, so NaN needs its own check (e.g. math.isfinite)." if "nan" in shown else ""
    raise _fail(
        f"{name}({shown}) 没有抛出 ValueError，期望抛出（{why_zh}）。{hint_zh}",
        f"{name}({shown}) did not raise ValueError; expected one ({why_en}). {hint_en}",
        diagnosis="common.nan_accepted" if "nan" in shown else "common.no_value_error",
    )


def _expect_value_error_via(func: Callable, args: tuple, why_zh: str, why_en: str, helper: Callable | None,
                            helper_args: tuple, helper_name: str, diagnosis: str) -> None:
    """:func:`_expect_value_error` for a function that may leave checking these arguments to the
    student's ``helper`` (``rr_perturb`` to ``rr_keep_probability``): when ``func`` does not raise
    ValueError (or raises something else), its code calls ``helper_name`` (read, never run) and the
    judge's own call ``helper(*helper_args)`` does not raise ValueError either (it returns, or raises
    what ``func`` raised), the failure is said of the helper, with ``diagnosis`` (issue 35, §5). A
    helper that does raise ValueError leaves the failure with ``func``, and the message says so."""
    try:
        _expect_value_error(func, args, why_zh, why_en)
        return
    except AssertionError as caught:
        failure = caught
    name = getattr(func, "__name__", "function")
    if getattr(failure, "diagnosis", None) not in ("common.no_value_error", "common.nan_accepted",
                                                   "common.wrong_exception") or not _calls_name(func, helper_name):
        raise failure
    got, error = _ask(helper, *helper_args)
    shown = ", ".join(_short(a) for a in helper_args)
    if error == "ValueError":
        raise _fail(failure.zh + f"（你的 {helper_name}({shown}) 抛出了 ValueError，是正确的，所以错误在 {name} 本身："
                    f"它没有把这个 ValueError 传出来。）",
                    failure.en + f" (Your {helper_name}({shown}) raises ValueError, which is right, so the mistake is in "
                    f"{name} itself: the ValueError does not come out of it.)", diagnosis=failure.diagnosis) from None
    wrong_exception = failure.diagnosis == "common.wrong_exception"
    if (got is None and error is None) or (wrong_exception and not (error and f"raised {error}:" in failure.en)) \
            or (not wrong_exception and error is not None):
        raise failure
    said_zh = f"抛出的也是 {error}" if error else f"也没有抛出 ValueError（返回了 {_short(got)}）"
    said_en = f"raises {error} too" if error else f"does not raise ValueError either (it returned {_short(got)})"
    raise _fail(
        f"错误多半在 {helper_name}，不在 {name}：{name} 调用了你的 {helper_name}，靠它检查参数，而 {helper_name}({shown}) "
        f"{said_zh}。先让 {helper_name} 对这个参数抛出 ValueError（它自己的测试应该也没通过）。{name} 的测试结果：{failure.zh}",
        f"The mistake is most likely in {helper_name}, not {name}: {name} calls your {helper_name} and leaves checking "
        f"the arguments to it, and {helper_name}({shown}) {said_en}. Make {helper_name} raise ValueError for this argument "
        f"first (its own test should fail too). {name}'s test said: {failure.en}",
        diagnosis=diagnosis,
    ) from None


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
