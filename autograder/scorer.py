"""Score one submission: student cells in the sandbox, instructor cells here.

:func:`score_submission` starts a :class:`autograder.jail.Sandbox`, sends it
the student's cells (every code cell of the sanitized notebook except the
test cells, in notebook order, as plain Python), then runs the *source*
notebook's instructor cells (setup and every test cell, hidden tests
included) in this trusted process, where each graded name (a function
defined in a solution cell of the source) is a :class:`autograder.proxy.Proxy`:
of that sandbox in visible code, of a second, fresh sandbox (same cells, output
discarded) inside hidden blocks, so that nothing the student's process saw of a
hidden test can reach what is shown. Draws replayed by a check (``Proxy.elsewhere``) go to a
sandbox that never made the call: the visible calls' to the second, the hidden calls' to a third
that ran the same cells and nothing else.
A test cell earns its points when it raises nothing. The student's process
never sees the tests, and nothing it sends is trusted beyond plain data.
"""

from __future__ import annotations

import ast
import contextlib
import io
import linecache
import math
import os
import re
import sys
import time

from autograder import astcheck
from autograder.cells import source_text
from autograder.jail import GRACE, SLEEP_LIMIT, WALL_FACTOR, WALL_SLACK, CpuShare, Sandbox, SandboxError, SleepBudget
from autograder.proxy import CellBudget, Proxy
from autograder.standins import standins

BEGIN, END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
TEXT_CAP = 32_000


def nbgrader_meta(cell) -> dict:
    meta = cell.get("metadata", {}).get("nbgrader")
    return meta if isinstance(meta, dict) else {}


def is_test(cell) -> bool:
    meta = nbgrader_meta(cell)
    return bool(meta.get("grade") and not meta.get("solution") and cell.get("cell_type") == "code")


#: Student code the trusted worker transforms (IPython syntax) at most; a cell over a limit is
#: not run (its place runs ``raise RuntimeError(...)`` in the sandbox) and the status says so.
#: IPython's transformer costs ~15 us x lines per escaped line (``%``, ``!``, ``?``), so these
#: bound it to ~1 s per notebook; honest cells are < 50 lines and < 2 KB.
MAX_CELL_BYTES = 100_000
MAX_CELL_LINES = 2_000
MAX_CODE_LINES = 20_000
MAX_CODE_BYTES = 1_000_000
MAX_MAGIC_LINES = 50
#: Most (escaped lines x lines) summed over the notebook's cells (IPython re-tokenizes the whole
#: cell once per escaped line: 2,000 lines x 50 ``%`` lines took 1-8 s); 0.3-1.2 s at the limit.
MAX_TRANSFORM_COST = 20_000
#: Most cells a notebook may have (honest ones have < 30); more is refused with an ``error:``.
MAX_CELLS = 300
#: Most student output (UTF-8 bytes of stdout, stderr and errors, all cells) kept per notebook:
#: rendering costs ~1.3 s of CPU per MB of text (measured: 2 MB of non-ASCII output, 5.3 s).
OUTPUT_BUDGET = 1_000_000
OUTPUT_NOTE = "(output limit reached: not shown / 输出过多，未显示)"
#: Terminal escape sequences (colours, cursor moves, titles). Stripped from student output: each
#: colour change would become an HTML ``<span>`` in the feedback, and a flood of them (one per
#: character) multiplied the page, hence the trusted side's rendering and scanning time, by ~20.
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[ -/]*[0-~])|\x9b[0-?]*[ -/]*[@-~]")
_MAGIC = re.compile(r"^\s*[%!]|=\s*[%!]|\?\s*$", re.M)


def to_python(source: str) -> str:
    """IPython syntax (``%magic``, ``!cmd``) as plain Python (cached, see :mod:`autograder.astcheck`)."""
    return astcheck.to_python(source)


def student_code(student_nb) -> list[tuple[int, str | None, str | None]]:
    """``[(cell index, python or None, why not run or None)]`` for each student code cell.

    Size limits are checked on the raw text before IPython's transformer
    sees it: a cell over :data:`MAX_CELL_BYTES` / :data:`MAX_CELL_LINES`, or
    past the notebook's totals (:data:`MAX_CODE_BYTES`, :data:`MAX_CODE_LINES`,
    :data:`MAX_MAGIC_LINES` escaped lines, :data:`MAX_TRANSFORM_COST`), is not
    transformed and not run.
    """
    out, lines_left, bytes_left, magics_left = [], MAX_CODE_LINES, MAX_CODE_BYTES, MAX_MAGIC_LINES
    cost_left = MAX_TRANSFORM_COST
    for index, cell in enumerate(student_nb.cells):
        if cell.cell_type != "code" or is_test(cell):
            continue
        text = source_text(cell.source)
        size, lines = len(text.encode("utf-8", "surrogatepass")), text.count("\n") + 1
        magics = len(_MAGIC.findall(text)) if ("%" in text or "!" in text or "?" in text) else 0
        why = None
        if size > MAX_CELL_BYTES or lines > MAX_CELL_LINES:
            why = (f"cell {index + 1} not run: too large for the grader ({lines} lines, {size} bytes; "
                   f"limit {MAX_CELL_LINES} lines, {MAX_CELL_BYTES} bytes)")
        elif size > bytes_left or lines > lines_left:
            why = (f"cell {index + 1} not run: the notebook's code exceeds the grader's limit "
                   f"({MAX_CODE_LINES} lines, {MAX_CODE_BYTES} bytes)")
        elif magics > magics_left or magics * lines > cost_left:
            why = (f"cell {index + 1} not run: too many IPython %/! lines for its length "
                   f"(at most {MAX_MAGIC_LINES} in the notebook; fewer in long cells)")
        if why:
            out.append((index, None, why))
            continue
        lines_left, bytes_left, magics_left = lines_left - lines, bytes_left - size, magics_left - magics
        cost_left -= magics * lines
        out.append((index, to_python(text), None))
    return out


def graded_names(source_nb) -> list[str]:
    """Functions defined at the top of the source notebook's solution cells."""
    names = []
    for cell in source_nb.cells:
        if cell.cell_type == "code" and nbgrader_meta(cell).get("solution"):
            try:
                tree = ast.parse(to_python(source_text(cell.source)))
            except SyntaxError:
                continue
            names += [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name not in names]
    return names


def split_hidden(source: str) -> list[tuple[bool, str]]:
    """``[(hidden, code), ...]``: the cell cut at the hidden-test markers (top level only)."""
    blocks, hidden, lines = [], False, []
    for line in source.splitlines():
        stripped = line.strip()
        if stripped.startswith((BEGIN, END)) and line == line.lstrip():
            if lines:
                blocks.append((hidden, "\n".join(lines)))
            hidden, lines = stripped.startswith(BEGIN), []
            continue
        lines.append(line)
    if lines:
        blocks.append((hidden, "\n".join(lines)))
    for _, code in blocks:
        try:
            compile(code, "<check>", "exec")
        except SyntaxError:  # markers inside a block: run the cell whole, as hidden
            return [(True, source)]
    return blocks


class _NoIPython:
    def __getattr__(self, name):
        return lambda *args, **kwargs: None


#: What a diagnosis id may look like (``laplace.scale_inverted``); anything else is dropped.
DIAGNOSIS = re.compile(r"[a-z][a-z0-9_]{0,39}\.[a-z0-9_]{1,60}")


def diagnosis_of(exc: BaseException) -> str | None:
    """The check's id of the likely mistake (:class:`helpers.checks.CheckFailure`); for a failure
    outside the checks' verdicts a ``common.*`` id of what happened, or ``None``."""
    value = getattr(exc, "diagnosis", None)
    if type(value) is str and DIAGNOSIS.fullmatch(value):
        return value
    if isinstance(exc, NameError):  # a graded function the student did not define
        return "common.function_missing"
    if isinstance(exc, TimeoutError):
        return "common.timeout"
    if isinstance(exc, SandboxError):  # the student's process died or was killed (memory, time)
        return "common.sandbox_failed"
    return None


def _audits() -> list[dict]:
    """``[{claimed, lower_bound}]`` of the privacy audits (:data:`helpers.audit.RECENT`) the checks
    ran in this process since it was last cleared."""
    audit = sys.modules.get("helpers.audit")
    recent = list(getattr(audit, "RECENT", ())) if audit else []
    return [{"claimed": float(r.claimed_epsilon), "lower_bound": float(r.epsilon)} for r in recent
            if r.claimed_epsilon is not None and math.isfinite(r.epsilon)]


def _languages(exc: BaseException) -> dict:
    """A check's verdict in its two languages, ``{"zh", "en", "lang"}`` (``{}`` for other errors): the
    feedback page shows ``lang`` first and folds the other (:func:`autograder.render.languages.bilingual`).
    ``lang`` is the language the notebook shows the message in (``helpers.i18n.get_lang`` where the
    check ran: ``DP_COURSE_LANG``, or a ``set_lang`` of the source's setup cell; Chinese by default)."""
    zh, en = getattr(exc, "zh", None), getattr(exc, "en", None)
    if type(zh) is not str or type(en) is not str:
        return {}
    from helpers.i18n import get_lang

    return {"zh": zh[:TEXT_CAP], "en": en[:TEXT_CAP], "lang": get_lang()}


def _run_trusted(code: str, namespace: dict, filename: str) -> tuple[str, dict | None]:
    """Run instructor code; ``(captured output, error or None)``."""
    out = io.StringIO()
    error = None
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            exec(compile(to_python(code), filename, "exec"), namespace)
    except BaseException as exc:  # noqa: BLE001 - any failure of the cell is a failed test
        error = {"ename": type(exc).__name__[:100], "evalue": str(exc)[:TEXT_CAP], "diagnosis": diagnosis_of(exc)}
        error.update(_languages(exc))
        if isinstance(exc, KeyboardInterrupt):
            raise
    finally:
        linecache.cache.pop(filename, None)
    return out.getvalue()[:TEXT_CAP], error


def has_hidden_tests(source_nb) -> bool:
    """Whether any test cell of ``source_nb`` holds a hidden block (then a second sandbox runs them)."""
    return any(hidden for cell in source_nb.cells if is_test(cell)
               for hidden, _ in split_hidden(source_text(cell.source)))


def _start(cells, names, files, *, sandboxed, deadline, memory_mb, budget, timeout, share, sleep) -> Sandbox:
    """A sandbox running the student's ``cells`` (reports are read by the caller)."""
    sandbox = Sandbox(sandboxed=sandboxed, deadline=deadline, memory_mb=memory_mb,
                      cpu_seconds=int(budget) + 5, cpu_budget=budget, share=share, sleep=sleep)
    payload, spans = bytearray(), {}
    for name, data in (files or {}).items():
        spans[name] = [len(payload), len(data)]
        payload += data
    try:
        sandbox.send({"cells": [code for _, code in cells], "files": spans, "graded": names,
                      "limits": sandbox.limits, "cell_timeout": float(timeout),
                      "call_timeout": float(timeout), "wall_factor": WALL_FACTOR}, bytes(payload),
                     seconds=float(timeout) + GRACE, what="the student's cells")
    except SandboxError:
        pass
    return sandbox


def _student_cells(sandbox, cells, names, timeout, on_report=None) -> dict:
    """Read the sandbox's report of each cell (``on_report(index, report)``), then the graded names."""
    try:
        for position, (index, _) in enumerate(cells):
            message, _ = sandbox.recv(timeout + GRACE, f"cell {index + 1}")
            report = _cell_report(message, position)
            if on_report is not None:
                on_report(index, report)
        message, _ = sandbox.recv(timeout + GRACE, "the end of the student's cells")
        return _names_report(message, names)
    except SandboxError:
        pass
    except (TypeError, ValueError, KeyError) as exc:
        sandbox.kill(f"malformed message from the sandbox: {str(exc)[:100]}")
    return {}


def hidden_problem(problem: str, what: str = "hidden tests") -> str:
    """What the status says when the hidden tests' (or the replays') sandbox failed: its kind only (no
    call, count or size)."""
    kind = ("timeout" if problem.startswith("timeout") else
            "memory limit exceeded" if problem.startswith("memory limit") else
            "the student's process failed")
    return f"{what}: {kind}"


def score_submission(student_nb, source_nb, *, seed: int, timeout: float, memory_mb: int | None,
                     sandboxed: bool, files: dict[str, bytes] | None = None,
                     submission_seconds: float | None = None, cells: list | None = None,
                     sleep_seconds: float | None = None) -> dict:
    """Run and score one sanitized notebook.

    The visible tests call the student's functions in one sandbox, whose cells' output is shown.
    The hidden blocks (``### BEGIN HIDDEN TESTS``) call them in a second, fresh sandbox that ran
    the same cells (started at once, beside the first, only when the source has hidden tests);
    its output is discarded, so nothing the student's process saw of a hidden test (arguments,
    sizes, seeds) can reach what the first one says; the hidden blocks run after the last visible
    call, the first sandbox closed, so not even their duration can. Only pass/fail and the hidden failure's
    message (kept for report.json; the student sees a generic text) come back. The draws of a
    hidden call that a check replays (the generator assignments) are replayed in a third sandbox
    that ran the same cells and nothing else, started when the first closes (at the first hidden
    replay where no visible check replayed): the second made the hidden calls, and a process that
    remembers its answers could give them back.

    Limits: ``submission_seconds`` (default ``timeout + 20``) of CPU time per sandbox and
    ``timeout`` per cell or call, counted in the sandbox's own CPU time (its cgroup), with
    wall-clock backstops :data:`autograder.jail.WALL_FACTOR` times as long; ``sleep_seconds``
    (default :data:`SLEEP_LIMIT`) of wall-clock time asleep or blocked, both sandboxes together.

    Returns ``{"tests": [{grade_id, points, score, outputs: {...}}],
    "student_cells": {cell index: {stdout, stderr, error}}, "problems": [...],
    "names": {...}, "notes": [...], "timings": {...}}``.
    """
    started = time.monotonic()
    budget = submission_seconds if submission_seconds is not None else timeout + 20
    deadline = started + WALL_FACTOR * budget + WALL_SLACK
    names = graded_names(source_nb)
    planned = student_code(student_nb) if cells is None else cells
    result = {"tests": [], "student_cells": {}, "problems": [], "names": {}, "notes": [], "timings": {}}
    cells = []
    for index, code, why in planned:
        if why:
            result["problems"].append(why)
            code = f"raise RuntimeError({why!r})"
        cells.append((index, code))
    output_left = [OUTPUT_BUDGET]
    two = has_hidden_tests(source_nb)
    # Both sandboxes of the submission in one CPU share: a hog gets one classmate's worth, not two.
    share = CpuShare.create() if (two and sandboxed and memory_mb) else None
    sleep = SleepBudget(SLEEP_LIMIT if sleep_seconds is None else sleep_seconds)
    limits = dict(sandboxed=sandboxed, deadline=deadline, memory_mb=memory_mb, budget=budget, timeout=timeout,
                  share=share, sleep=sleep)
    sandbox = _start(cells, names, files, **limits)
    hidden_box = _start(cells, names, files, **limits) if two else None
    replay_box, replay_ready, used_twin = None, [], [False]  # the third sandbox (hidden calls' replays)
    keys = []
    previous_seed = os.environ.get("DP_COURSE_SEED")
    try:
        def shown(index, report):
            result["student_cells"][index] = _budgeted(report, output_left)

        available = _student_cells(sandbox, cells, names, timeout, shown)
        result["names"] = available
        result["timings"]["student_cells"] = round(time.monotonic() - started, 3)
        functions, keys = standins([code for _, code in cells], tag=str(id(result)))
        namespace = {"__name__": "__main__", "get_ipython": lambda: _NoIPython(),
                     "display": lambda *a, **k: None}
        cell_budget = CellBudget()  # the CPU time of the current test cell's calls (both sandboxes)

        def proxies(box, callable_names, twin=None):
            return {name: Proxy(box, name, timeout, functions.for_name(name), cell_budget=cell_budget,
                                twin=twin and (lambda name=name: twin(name)))
                    for name in names if callable_names.get(name) == "callable"}

        def hidden_proxies() -> dict:
            """The second sandbox's proxies, once its cells have run (waited for at the first use)."""
            nonlocal hidden
            if hidden is None and hidden_box is not None:
                hidden_tick = time.monotonic()
                hidden = proxies(hidden_box, _student_cells(hidden_box, cells, names, timeout), third)
                result["timings"]["hidden_cells_wait"] = round(time.monotonic() - hidden_tick, 3)
            return hidden or {}

        def twin(name):
            """Where a visible check's changed runs go: the second sandbox, before any hidden call.
            Dead or without the function, it fails those runs (no fallback to the first sandbox,
            which a submission could otherwise choose by killing the second)."""
            used_twin[0] = True
            hidden_proxies()
            return hidden_box

        def third(name):
            """Where a hidden check's replays go: a third sandbox that ran the student's cells and
            nothing else, started at its first use (only the generator assignments' checks replay
            draws). The second sandbox made the hidden calls: replayed there, a submission that
            remembered its answers (or branched on its history of calls) answered from memory."""
            nonlocal replay_box
            if replay_box is None:
                replay_box = _start(cells, names, files, **limits)
            if not replay_ready:
                replay_tick = time.monotonic()
                _student_cells(replay_box, cells, names, timeout)
                replay_ready.append(True)
                result["timings"]["replay_cells_wait"] = round(time.monotonic() - replay_tick, 3)
            return replay_box

        hidden = None  # built at first use: the second sandbox's cells run meanwhile
        # Without hidden tests there is no second sandbox: the visible calls' replays go to the third.
        visible = proxies(sandbox, available, twin if hidden_box is not None else third)

        def bind(chosen):
            for name in names:
                if name in chosen:
                    namespace[name] = chosen[name]
                else:
                    namespace.pop(name, None)

        bind(visible)
        for name in names:
            if name not in visible and name not in functions:
                result["notes"].append(f"{name}: no def statement in the student's code")

        def run_block(code, chosen, grade_id):
            """``(text, error, audits)`` of one block of a test cell, graded names bound to ``chosen``."""
            audit = sys.modules.get("helpers.audit")
            if audit is not None:
                audit.RECENT.clear()
            bind(chosen)
            try:
                text, error = _run_trusted(code, namespace, f"<test {grade_id}>")
            finally:
                bind(visible)
            return text, error, [dict(a, hidden=chosen is not visible) for a in _audits()]

        os.environ["DP_COURSE_SEED"] = str(seed)
        # As nbgrader's autograde sets it for the kernel (and bwrap.py for the sandbox): instructor cells
        # that only demonstrate (a 2,000-call replay, a slider) skip themselves in grading here too.
        os.environ["NBGRADER_EXECUTION"] = "autograde"
        tick = time.monotonic()
        deferred = []  # (test entry, its hidden blocks)
        for number, cell in enumerate(source_nb.cells):
            meta = nbgrader_meta(cell)
            if cell.cell_type != "code" or not meta or meta.get("solution"):
                continue
            cell_budget.restart(timeout)
            if not is_test(cell):
                _, error = _run_trusted(source_text(cell.source), namespace, f"<instructor {number}>")
                if error:
                    result["notes"].append(f"instructor cell {meta.get('grade_id')} failed: {error['ename']}")
                continue
            outputs, error, audits, queued = [], None, [], []
            blocks = split_hidden(source_text(cell.source))
            for is_hidden, code in blocks:
                if is_hidden:  # run after every visible block (below)
                    outputs.append({"hidden": True, "text": ""})
                    queued.append(code)
                    continue
                text, error, found = run_block(code, visible, meta.get("grade_id"))
                outputs.append({"hidden": False, "text": text})
                audits += found
                if error:
                    break
            points = float(meta.get("points") or 0)
            entry = {"grade_id": meta.get("grade_id"), "points": points,
                     "score": points if error is None else 0.0,
                     "outputs": outputs, "error": error, "hidden_failed": False,
                     "hidden": any(is_h for is_h, _ in blocks), "audits": audits}
            result["tests"].append(entry)
            if error is None and queued:
                deferred.append((entry, queued))
        # The hidden blocks run after the last visible call, with the first sandbox already closed:
        # a hidden call between two visible ones had shown its duration to the student's process
        # (a sleep of 3·b s in the hidden sandbox read as a gap between visible calls; red team),
        # and nothing of the first sandbox is left to observe the second.
        if deferred:
            sandbox.close()
            if used_twin[0] and replay_box is None:
                # A visible check replayed draws, so the hidden ones will too (the generator
                # assignments): the third sandbox starts now, in the first one's place, and its
                # cells run while the hidden calls do.
                replay_box = _start(cells, names, files, **limits)
        for entry, queued in deferred:
            cell_budget.restart(timeout)
            chosen = hidden_proxies()
            for code in queued:
                _, error, found = run_block(code, chosen, entry["grade_id"])
                entry["audits"] += found
                if error:
                    entry.update(error=error, hidden_failed=True, score=0.0)
                    break
        result["timings"]["tests"] = round(time.monotonic() - tick, 3)
    finally:
        sandbox.close()
        if hidden_box is not None:
            hidden_box.close()
        if replay_box is not None:
            replay_box.close()
        if share is not None:
            share.remove()
        for key in keys:
            linecache.cache.pop(key, None)
        if previous_seed is None:
            os.environ.pop("DP_COURSE_SEED", None)
        else:
            os.environ["DP_COURSE_SEED"] = previous_seed
    result["timings"]["cpu"] = {"visible": _rounded(sandbox.cpu_used),
                                "hidden": _rounded(hidden_box.cpu_used) if hidden_box is not None else None,
                                "replays": _rounded(replay_box.cpu_used) if replay_box is not None else None}
    if sandbox.problem and sandbox.problem != "stopped":
        result["problems"].append(sandbox.problem)
    if hidden_box is not None and hidden_box.problem and hidden_box.problem != "stopped":
        result["problems"].append(hidden_problem(hidden_box.problem))
    if replay_box is not None and replay_box.problem and replay_box.problem != "stopped":
        result["problems"].append(hidden_problem(replay_box.problem, "replayed draws"))
    for report in result["student_cells"].values():
        if report.get("error") and report["error"]["ename"] == "CellTimeoutError":
            result["problems"].append("timeout: a cell exceeded the time limit")
        if report.get("error") and report["error"]["ename"] == "MemoryError":
            result["problems"].append("memory limit exceeded")
    result["problems"] = list(dict.fromkeys(result["problems"]))
    return result


def _rounded(value):
    return None if value is None else round(value, 3)


def _string(value, cap: int = TEXT_CAP) -> str:
    if type(value) is not str:
        raise TypeError("expected a string")
    return value[:cap]


def _shown(value) -> str:
    """Student text as it may be shown: capped, terminal escape sequences removed."""
    text = _string(value)
    return _ANSI.sub("", text) if ("\x1b" in text or "\x9b" in text) else text


def _cell_report(message: dict, position: int) -> dict:
    if message.get("cell") != position or set(message) != {"cell", "stdout", "stderr", "error"}:
        raise ValueError("unexpected cell report")
    error = message["error"]
    if error is not None:
        if type(error) is not dict:
            raise TypeError("bad error")
        error = {"ename": _string(error.get("type"), 100), "evalue": _shown(error.get("message")),
                 "traceback": _shown(error.get("traceback", ""))}
    return {"stdout": _shown(message["stdout"]), "stderr": _shown(message["stderr"]), "error": error}


def _budgeted(report: dict, left: list[int]) -> dict:
    """``report`` with its texts cut to what is ``left`` of the notebook's output budget (bytes)."""
    fields = [("stdout", report, "stdout"), ("stderr", report, "stderr")]
    if report["error"]:
        fields += [("evalue", report["error"], "evalue"), ("traceback", report["error"], "traceback")]
    noted = False
    for _, holder, key in fields:
        data = holder[key].encode("utf-8", "surrogatepass")
        if len(data) <= left[0]:
            left[0] -= len(data)
            continue
        keep = data[:left[0]].decode("utf-8", "ignore")
        left[0] = 0
        holder[key] = keep + ("" if noted else ("\n" if keep else "") + OUTPUT_NOTE)
        noted = True
    return report


def _names_report(message: dict, names: list[str]) -> dict:
    reported = message.get("names")
    if message.get("ready") is not True or type(reported) is not dict:
        raise ValueError("unexpected end-of-cells report")
    return {name: reported.get(name) if reported.get(name) in ("callable", "missing", "other") else "missing"
            for name in names}
