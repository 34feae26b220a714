"""A trusted grading worker: many students, one warm process, no student code.

``python -m autograder.worker`` reads one JSON line on stdin describing the
assignment (source and release notebooks, release data files, limits), then
one JSON task per line; it answers ``{"ready": true}`` and one
``{"index": i, "result": {...}}`` line per task on its original stdout
(everything else it or a library prints goes to stderr). For each task it
reads and sanitizes the notebooks, scores them with
:func:`autograder.scorer.score_submission` (the student's cells run in a
sandbox, the tests here), builds the executed notebook (student outputs from
the sandbox, test outputs from the trusted run, hidden tests absent) and the
feedback page. The parent validates every line before it becomes a row.
"""

from __future__ import annotations

import ast
import base64
import json
import os
import sys
import time
import traceback
from pathlib import Path

from autograder import astcheck, scorer
from autograder.cells import source_text
from autograder.students import pick_notebooks
from helpers.checks import copy_report

# nbformat, nbgrader and nbconvert (autograder.sanitize, autograder.render) are imported where a
# submission is graded, not here: the grading parent (autograder.grade) imports this module for its
# limits and would pay seconds of start-up for renderers it never runs (measured: 1.3 s for
# autograder.grade, 11 s for autograder.render.feedback on the loaded 2-core machine).

#: Seconds a worker may take per submission beyond the notebooks' own limits.
SLACK = 60
#: Most entries kept in each of errors, flags, repairs, notes (one per flagged cell adds up).
MAX_ITEMS = 100
#: Largest result line a worker sends (bytes of JSON); the parent refuses longer lines.
MAX_RESULT = 48 << 20


def expected_cells(sources: dict) -> list[dict]:
    """``[{notebook, grade_id, points}]`` of every test cell, in order."""
    return [{"notebook": name, "grade_id": scorer.nbgrader_meta(c)["grade_id"],
             "points": float(scorer.nbgrader_meta(c).get("points") or 0)}
            for name, nb in sorted(sources.items()) for c in nb.cells if scorer.is_test(c)]


#: Most UTF-8 bytes of student Markdown/raw text kept in the executed notebook and the feedback.
MAX_TEXT_BYTES = 1_000_000


def trim_for_display(nb, skip=frozenset()):
    """``nb`` with what would only cost rendering time cut: the source of cells that are not run
    (``skip``: over the size limits) to its first 20 lines, student text cells past
    :data:`MAX_TEXT_BYTES` to a note. Rendering (pygments, Markdown) is linear but slow: a 25 MB
    notebook of such cells would pin the worker for minutes."""
    left = MAX_TEXT_BYTES
    for index, cell in enumerate(nb.cells):
        meta = scorer.nbgrader_meta(cell)
        if index in skip:
            head = _head(source_text(cell.source))
            cell.source = head + "\n# ... (not run, not shown: too large / 单元格过大，未运行)"
        elif cell.cell_type in ("markdown", "raw") and not (meta.get("locked") and not meta.get("solution")):
            size = len(source_text(cell.source).encode("utf-8", "surrogatepass"))
            if size > left:
                cell.source = "(text not shown: size limit / 文字过多，未显示)"
                size = 0
            left -= size
    return nb


#: Most UTF-8 bytes of student code shown in the executed notebook and the feedback; later cells
#: are shown by their head (:data:`HEAD_LINES` lines, :data:`HEAD_CHARS` characters). Rendering
#: costs ~80 ms of the trusted side's CPU per kB of code (pygments, then bleach over its spans,
#: then two HTML parses of the page: 1 MB of code took 80 s of CPU, 327 s on the loaded machine),
#: so this bounds it to seconds; honest notebooks hold < 10 kB. Grading uses the full code.
MAX_SHOWN_CODE = 50_000
HEAD_LINES, HEAD_CHARS = 20, 2_000
CODE_NOTE = "\n# ... (not shown: the notebook's code is too long to display / 代码过长，未全部显示)"


def _head(source: str) -> str:
    return "\n".join(source.splitlines()[:HEAD_LINES])[:HEAD_CHARS]


def cap_shown_code(nb):
    """``nb`` with student code past :data:`MAX_SHOWN_CODE` (bytes, in notebook order) cut to its head."""
    left = MAX_SHOWN_CODE
    for cell in nb.cells:
        meta = scorer.nbgrader_meta(cell)
        if cell.cell_type != "code" or (meta and not meta.get("solution")):
            continue
        source = source_text(cell.source)
        size = len(source.encode("utf-8", "surrogatepass"))
        if size > left:
            cell.source = _head(source) + CODE_NOTE
            size = len(cell.source.encode("utf-8", "surrogatepass"))
        left = max(0, left - size)
    return nb


def static_notes(name: str, student_nb, source_nb, release_nb, skip=frozenset()) -> list[str]:
    """The static scan of the student's code: a note for the instructor, never points."""
    from autograder.sanitize import normalize_source  # lazy: see the note on imports above

    instructor = [source_text(c.source) for c in source_nb.cells
                  if c.cell_type == "code" and scorer.nbgrader_meta(c) and not scorer.nbgrader_meta(c).get("solution")]
    protected = astcheck.imported_names(instructor)
    shipped = {normalize_source(c.source) for c in release_nb.cells
               if c.cell_type == "code" and not scorer.nbgrader_meta(c)}
    flags = []
    for index, cell in enumerate(student_nb.cells):
        meta = scorer.nbgrader_meta(cell)
        if cell.cell_type != "code" or (meta and not meta.get("solution")) or index in skip:
            continue
        if not meta and normalize_source(cell.source) in shipped:
            continue
        try:
            flags += astcheck.inspect_code(cell.source, protected, where=f"{Path(name).stem} cell {index + 1}")
        except (RecursionError, MemoryError, ValueError):
            flags.append(f"{Path(name).stem} cell {index + 1}: could not be parsed")
    return flags


def similarity(student_nb, skip=frozenset()) -> list[dict]:
    """Similarity of each solution function to :mod:`helpers.mechanisms` (a note, never points)."""
    functions = {}
    for index, cell in enumerate(student_nb.cells):
        if cell.cell_type != "code" or not scorer.nbgrader_meta(cell).get("solution") or index in skip:
            continue
        try:
            tree = ast.parse(cell.source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                functions[node.name] = ast.get_source_segment(cell.source, node) or ""
    try:
        return [row for row in copy_report(functions) if row.get("similarity") is not None]
    except Exception:  # noqa: BLE001 - a note only
        return []


def executed_notebook(student_nb, scored: dict):
    """The sanitized notebook with the sandbox's outputs (student cells) and the trusted ones (tests)."""
    import copy

    import nbformat

    from autograder.render.feedback import HIDDEN_FAILED, error_text  # lazy: see the note on imports above
    from autograder.render.languages import notebook_language

    nb = copy.deepcopy(student_nb)
    declared = notebook_language(nb)   # the release's own language, if it declares one, decides the order
    tests = {t["grade_id"]: t for t in scored["tests"]}
    count = 0
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        outputs = []
        if scorer.is_test(cell):
            test = tests.get(scorer.nbgrader_meta(cell).get("grade_id"))
            if test is None:
                continue
            for block in test["outputs"]:
                if block["text"] and not block["hidden"]:
                    outputs.append(nbformat.v4.new_output("stream", name="stdout", text=block["text"]))
            error = test["error"]
            if error and test["hidden_failed"]:  # the message may quote hidden arguments: report.json only
                text = HIDDEN_FAILED.format(grade_id=test["grade_id"])
                outputs.append(nbformat.v4.new_output("error", ename="HiddenTestFailed", evalue=text,
                                                      traceback=[text]))
            elif error:
                outputs.append(nbformat.v4.new_output("error", ename=error["ename"], evalue=error["evalue"],
                                                      traceback=[error_text(error)]))
                if error.get("zh") is not None:  # the feedback page shows one language, the other folded
                    cell.metadata.setdefault("autograder", {})["message"] = {
                        "zh": error["zh"], "en": error["en"], "lang": declared or error["lang"]}
            cell.metadata.setdefault("autograder", {}).update(score=test["score"], points=test["points"])
        else:
            report = scored["student_cells"].get(index)
            if report is None:
                continue
            for stream in ("stdout", "stderr"):
                if report[stream]:
                    outputs.append(nbformat.v4.new_output("stream", name=stream, text=report[stream]))
            if report["error"]:
                e = report["error"]
                outputs.append(nbformat.v4.new_output("error", ename=e["ename"], evalue=e["evalue"],
                                                      traceback=[e["traceback"] or f"{e['ename']}: {e['evalue']}"]))
        count += 1
        cell.execution_count = count
        cell.outputs = outputs
    return nb


def grade_one(task: dict, spec: dict) -> dict:
    """Grade one submission; always returns a JSON-able result."""
    import nbformat

    from autograder import sanitize  # lazy: see the note on imports above
    from autograder.render import feedback

    started = time.monotonic()
    result = {"cells": [], "errors": [], "flags": [], "repairs": [], "notes": [], "similarity": [],
              "timings": {}, "feedback": {}, "autograded": {}}
    scores = {}
    try:
        folder = Path(task["path"])
        picked = pick_notebooks(folder, sorted(spec["sources"]))
        for key in ("errors", "repairs"):
            result[key] += picked[key]
        for name, path in sorted(picked["notebooks"].items()):
            student, reason = sanitize.read_notebook(path)
            if student is None:
                result["errors"].append(reason)
                continue
            if len(student.cells) > scorer.MAX_CELLS:
                result["errors"].append(f"notebook {name} has {len(student.cells)} cells (the grader's limit "
                                        f"is {scorer.MAX_CELLS}); remove the extra cells and submit again")
                continue
            source, release = spec["sources"][name], spec["releases"][name]
            judge_cpu = time.process_time()  # the trusted side's own cost of this notebook (bench, report)
            try:
                nb, issues = sanitize.sanitize_notebook(student, release, name=Path(name).stem)
            except Exception as exc:  # noqa: BLE001 - nbformat accepted it, we cannot rebuild it
                result["errors"].append(f"malformed notebook {name} ({type(exc).__name__})")
                continue
            result["flags"] += issues.flags
            result["repairs"] += issues.repairs
            result["errors"] += issues.errors
            cells = scorer.student_code(nb)  # size limits checked, IPython syntax transformed once
            skip = frozenset(index for index, _, why in cells if why)
            nb = trim_for_display(nb, skip)
            result["flags"] += static_notes(name, nb, source, release, skip)
            result["similarity"] += similarity(nb, skip)
            scored = scorer.score_submission(
                nb, source, seed=task["seed"], timeout=spec["timeout"], memory_mb=spec["memory_mb"],
                sandboxed=spec["sandboxed"], files=spec["files"], submission_seconds=spec["submission_seconds"],
                cells=cells, sleep_seconds=spec.get("sleep_seconds"))
            result["errors"] += scored["problems"]
            result["notes"] += scored["notes"]
            result["timings"][name] = scored["timings"]
            for test in scored["tests"]:
                scores[(name, test["grade_id"])] = (test["score"], test["error"], test)
            executed = executed_notebook(cap_shown_code(nb), scored)
            result["autograded"][name] = nbformat.writes(feedback.gradebook_notebook(executed))
            hidden = [line for c in source.cells if c.cell_type == "code"
                      for line in feedback.hidden_lines(source_text(c.source))]
            for grade_id in feedback.redact_hidden(executed, hidden)[1]:
                result["notes"].append(f"feedback: test {grade_id} redacted (it showed a hidden-test line)")
            try:
                result["feedback"][name] = feedback.feedback_html(executed, hidden)
            except feedback.FeedbackWithheld as exc:
                result["errors"].append(f"feedback withheld: {str(exc)[:200]}")
            result["timings"][name]["judge_cpu"] = round(time.process_time() - judge_cpu, 3)
    except Exception:  # noqa: BLE001 - one broken submission must not stop the batch
        result["errors"].append("autograder: " + traceback.format_exc().strip().splitlines()[-1][:200])
    for cell in expected_cells(spec["sources"]):
        score, error, test = scores.get((cell["notebook"], cell["grade_id"]), (0.0, None, {}))
        cell.update(score=score, message=(f"{error['ename']}: {error['evalue']}"[:2000] if error else None),
                    diagnosis=error.get("diagnosis") if error else None, hidden=test.get("hidden", False),
                    hidden_failed=test.get("hidden_failed", False), audits=test.get("audits", [])[:20])
        result["cells"].append(cell)
    for row in result["similarity"]:
        if row.get("flagged"):
            result["notes"].append(f"{row['function']} looks copied from helpers.mechanisms "
                                   f"(similarity {row['similarity']})")
    for key in ("errors", "flags", "repairs", "notes"):  # the parent accepts at most 200 strings each
        items = list(dict.fromkeys(result[key]))
        result[key] = items[:MAX_ITEMS] + ([f"... and {len(items) - MAX_ITEMS} more"] if len(items) > MAX_ITEMS else [])
    result["seconds"] = round(time.monotonic() - started, 3)
    return result


def message(index: int, result: dict) -> str:
    """The result line for the parent, at most :data:`MAX_RESULT` bytes.

    Past the cap the pages are dropped (the scores and errors stay) and the
    status says why; the parent refuses any longer line anyway.
    """
    line = json.dumps({"index": index, "result": result}, ensure_ascii=True)
    if len(line) > MAX_RESULT:
        result = dict(result, feedback={}, autograded={},
                      errors=result["errors"] + [f"feedback not written: larger than {MAX_RESULT >> 20} MiB"])
        line = json.dumps({"index": index, "result": result}, ensure_ascii=True)
    return line


def load_spec(line: str) -> dict:
    import nbformat

    spec = json.loads(line)
    spec["sources"] = {k: nbformat.reads(v, as_version=4) for k, v in spec["sources"].items()}
    spec["releases"] = {k: nbformat.reads(v, as_version=4) for k, v in spec["releases"].items()}
    spec["files"] = {k: base64.b64decode(v) for k, v in spec["files"].items()}
    return spec


_RESERVED: int | None = None
#: Set (by the grader) in the environment of a worker that runs in a cgroup of its own, whose memory cap
#: replaces this worker's RLIMIT_AS.
IN_GROUP = "AUTOGRADER_WORKER_CGROUP"


def _address_space() -> int:
    """Bytes of address space this process holds now (``VmSize``; 0 where /proc cannot tell)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            return next(int(line.split()[1]) << 10 for line in status if line.startswith("VmSize:"))
    except (OSError, StopIteration, ValueError, IndexError):
        return 0


def limit_self(spec: dict) -> None:
    """This trusted worker's own soft limits for the next submission: ``worker_memory_mb`` of address
    space beyond what it held at its first submission, and ``worker_cpu_seconds`` more of CPU time (``--worker-memory-mb``; the grader derives the
    CPU from the submission's budget).

    The sandbox's limits do not cover the judge's side: a parser surprise in the feedback (html5lib
    built n²/2 elements from 3n tags: 95 s and 4.9 GB for one Markdown cell, red team s10) or in a
    check costs this worker's memory and CPU. Past the memory the allocation fails (``MemoryError``:
    the row says so); past the CPU the kernel's SIGXCPU ends the worker, the grader gives that one
    submission an ``error:`` row and starts another worker. Only the soft limits are set: the
    sandboxes this worker starts lift them (``jail.bwrap._die_with_parent``) and get their own.
    Where the grader put this worker in a cgroup of its own (:data:`IN_GROUP` is set:
    ``jail.worker_group``), the group caps its memory (everything it holds, not only its address
    space) and ``RLIMIT_AS`` is not set; the CPU-time limit is set either way.
    """
    import resource

    global _RESERVED
    memory = spec.get("worker_memory_mb")
    if memory and not os.environ.get(IN_GROUP):
        if _RESERVED is None:
            # what the interpreter and its libraries reserve at start (OpenBLAS's buffers grow with
            # the machine's cores) is not the judge's work: the limit is that much more
            _RESERVED = _address_space()
        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        soft = _RESERVED + (int(memory) << 20)
        resource.setrlimit(resource.RLIMIT_AS, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))
    seconds = spec.get("worker_cpu_seconds")
    if seconds:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
        soft = int(usage.ru_utime + usage.ru_stime + float(seconds)) + 1
        resource.setrlimit(resource.RLIMIT_CPU, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))


def main() -> None:
    # Results go to the original stdout; anything else printed goes to stderr.
    import signal

    def stop(signum, frame):
        # The grader was stopped: unwind (every ``finally`` closes its sandbox; the trusted cells
        # re-raise KeyboardInterrupt), then ``jail.stop_all`` at exit removes whatever is left:
        # groups, CPU shares, uid slots. Nothing heavier runs inside the handler itself (it may
        # interrupt the very ``Popen.wait`` that cleanup would need).
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, stop)
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    import IPython.core.inputtransformer2  # noqa: F401

    spec = load_spec(sys.stdin.readline())
    protocol.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        task = json.loads(line)
        limit_self(spec)
        result = grade_one(task, spec)
        protocol.write(message(task["index"], result) + "\n")


if __name__ == "__main__":
    main()
