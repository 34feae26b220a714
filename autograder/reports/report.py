"""``grades.csv``, ``grades_by_question.csv`` and ``report.json``: atomic writes, resume, merging shards.

Every output is written by :func:`write_atomic` (a temporary file in the same
folder, ``fsync``, ``os.replace``), so a grader killed at any moment leaves
either the previous complete file or the new complete file, never a torn
one. :func:`write_outputs` writes ``report.json`` first and ``grades.csv``
second; :func:`completed` (``--resume``) trusts ``report.json`` alone, so a
kill between the two writes loses nothing.

Rows are normalized before writing (:func:`clean_row`): whatever a worker
sent (a student id with commas, quotes or newlines, a score that is not a
number, NaN, a nested object), the CSV keeps its five columns and
``report.json`` stays strict JSON (no NaN, no lone surrogates).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
import shutil
import tempfile
from pathlib import Path

COLUMNS = ("student", "assignment", "score", "max_score", "status")
#: Longest status kept in grades.csv (report.json holds the details).
MAX_STATUS = 500
#: Deepest nesting kept in report.json (deeper values become a string note).
MAX_DEPTH = 32


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically: temp file + fsync + ``os.replace``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = _clean_str(text).encode("utf-8")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:  # make the rename itself durable
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:
        pass


def _clean_str(value) -> str:
    """``value`` as a string that encodes to UTF-8 (lone surrogates backslash-escaped)."""
    text = value if isinstance(value, str) else str(value)
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        try:
            raw = text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            return text.encode("utf-8", "backslashreplace").decode("utf-8")
        return raw.decode("utf-8", "backslashreplace")


def _one_line(value, limit: int) -> str:
    text = "".join(c if c.isprintable() else " " for c in _clean_str(value))
    text = " ".join(text.split())
    return text[:limit]


def _finite(value) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def _number(value) -> str:
    value = float(value)
    return str(int(value)) if value.is_integer() else f"{value:.6g}"


def jsonable(value, depth: int = 0):
    """``value`` as strict-JSON data: finite numbers, UTF-8 strings, str keys, lists, dicts."""
    if depth > MAX_DEPTH:
        return "(nested too deeply)"
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, str):
        return _clean_str(value)
    if isinstance(value, dict):
        return {_clean_str(k): jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v, depth + 1) for v in value]
    number = _finite(value) if hasattr(value, "__float__") else None
    if number is not None:  # numpy scalars
        return number
    return _clean_str(repr(value))[:200]


def clean_row(row) -> dict:
    """A result with valid ``student, assignment, score, max_score, status``.

    A missing or non-numeric score or max_score becomes 0 and turns the status
    into an ``error:`` naming the problem; a score above max_score is cut to
    max_score (also an error). Other keys are kept (made JSON-safe).
    """
    if not isinstance(row, dict):
        row = {"student": "?", "status": f"error: malformed result ({type(row).__name__})"}
    out = jsonable(row)
    problems = []
    out["student"] = _clean_str(row.get("student", "?"))
    out["assignment"] = _clean_str(row.get("assignment", ""))
    score, max_score = _finite(row.get("score")), _finite(row.get("max_score"))
    if max_score is None or max_score < 0:
        problems.append(f"invalid max_score {_one_line(repr(row.get('max_score')), 40)}")
        max_score = 0.0
    if score is None or score < 0:
        problems.append(f"invalid score {_one_line(repr(row.get('score')), 40)}")
        score = 0.0
    elif score > max_score:
        problems.append(f"score {score:g} above max_score {max_score:g}")
        score = max_score
    out["score"], out["max_score"] = score, max_score
    status = _one_line(row.get("status", ""), MAX_STATUS) or "error: no status"
    if problems:
        status = _one_line("error: " + "; ".join(problems) + (f" ({status})" if status else ""),
                           MAX_STATUS)
    out["status"] = status
    return out


#: First characters that make a spreadsheet read a cell as a formula (CSV/formula injection), also
#: after leading whitespace (LibreOffice and Excel skip it) and in their full-width forms (an IME
#: types ``＝``; some spreadsheets normalize it to ``=``).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")


def _needs_quote(text: str) -> bool:
    # "'" too, so that the quote stays reversible; lstrip() also drops Unicode spaces (U+3000, NBSP).
    return text.startswith(FORMULA_START + ("'",)) or text.lstrip().startswith(FORMULA_START)


def csv_field(text: str) -> str:
    """``text`` safe to open in a spreadsheet: a formula-like value gets a leading ``'``.

    A student folder named ``=HYPERLINK(...)``, `` =1+1`` or ``＝1+1`` would
    otherwise run as a formula in Excel or LibreOffice. ``report.json``
    keeps the exact id; :func:`read_grades` removes the quote again.
    """
    return "'" + text if _needs_quote(text) else text


def unquote_field(text: str) -> str:
    """Inverse of :func:`csv_field` for a value read back from ``grades.csv``."""
    return text[1:] if text.startswith("'") and _needs_quote(text[1:]) else text


def grades_csv(results) -> str:
    """The text of ``grades.csv``: one row per result, sorted by assignment then student.

    Text fields that start like a formula (:data:`FORMULA_START`) are
    prefixed with ``'`` (:func:`csv_field`).
    """
    rows = sorted((clean_row(r) for r in results), key=lambda r: (r["assignment"], r["student"]))
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(COLUMNS)
    for r in rows:
        writer.writerow([csv_field(r["student"]), csv_field(r["assignment"]), _number(r["score"]),
                         _number(r["max_score"]), csv_field(r["status"])])
    return buffer.getvalue()


def report_json(runs, results) -> str:
    """The text of ``report.json`` (strict JSON, rows sorted like the CSV)."""
    rows = sorted((clean_row(r) for r in results), key=lambda r: (r["assignment"], r["student"]))
    report = {"runs": jsonable(list(runs)), "submissions": rows}
    return json.dumps(report, indent=1, ensure_ascii=False, allow_nan=False)


#: Columns of ``grades_by_question.csv``: one row per (student, assignment, test cell).
QUESTION_COLUMNS = ("student", "assignment", "cell", "score", "max")


def grades_by_question_csv(results) -> str:
    """The text of ``grades_by_question.csv`` (nbgrader #938): every test cell's score, sorted like
    ``grades.csv``; ``cell`` is the grade id (``notebook:grade_id`` when an assignment has several
    notebooks)."""
    rows = sorted((clean_row(r) for r in results), key=lambda r: (r["assignment"], r["student"]))
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(QUESTION_COLUMNS)
    for r in rows:
        cells = [c for c in r.get("cells") or [] if isinstance(c, dict)]
        several = len({c.get("notebook") for c in cells}) > 1
        for c in cells:
            cell = f"{Path(str(c.get('notebook'))).stem}:{c.get('grade_id')}" if several else str(c.get("grade_id"))
            writer.writerow([csv_field(r["student"]), csv_field(r["assignment"]), csv_field(cell),
                             _number(_finite(c.get("score")) or 0.0), _number(_finite(c.get("points")) or 0.0)])
    return buffer.getvalue()


def write_grades(path: Path, results) -> None:
    """One row per submission, sorted by assignment then student (atomic)."""
    write_atomic(path, grades_csv(results))


def read_grades(path: Path) -> list[dict]:
    """Rows of ``grades.csv`` with the exact values (the formula guard's ``'`` removed)."""
    with open(path, newline="", encoding="utf-8") as handle:
        return [{k: unquote_field(v) if isinstance(v, str) else v for k, v in row.items()}
                for row in csv.DictReader(handle)]


def write_report(path: Path, runs, results) -> None:
    write_atomic(path, report_json(runs, results))


def write_outputs(out: Path, rows, report: dict) -> None:
    """Write ``OUT/report.json`` then ``OUT/grades.csv``, each atomically.

    ``rows`` are the results (one per submission); ``report`` holds at least
    ``runs`` (each run should carry ``assignment``, ``seed`` and
    ``source_checksum`` so that :func:`completed` can resume it); its
    ``submissions`` are replaced by the cleaned ``rows``. Safe to call after
    every graded student: a kill at any point leaves a consistent OUT.
    """
    out = Path(out)
    rows = list(rows)
    extra = {k: v for k, v in dict(report).items() if k not in ("runs", "submissions")}
    text = report_json(report.get("runs", []), rows)
    if extra:
        data = json.loads(text)
        data.update(jsonable(extra))
        text = json.dumps(data, indent=1, ensure_ascii=False, allow_nan=False)
    write_atomic(out / "report.json", text)
    write_atomic(out / "grades.csv", grades_csv(rows))
    write_atomic(out / "grades_by_question.csv", grades_by_question_csv(rows))


def source_checksum(folder: Path) -> str:
    """SHA-256 over the relative paths and bytes of every file under ``folder`` (sorted).

    ``source/<assignment>`` changes (a fixed hidden test, new points) change
    the checksum, so ``--resume`` never mixes grades of two versions.
    """
    folder = Path(folder)
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        if "__pycache__" in rel.split("/") or ".ipynb_checkpoints" in rel.split("/"):
            continue
        digest.update(rel.encode("utf-8", "surrogateescape") + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def completed(out: Path, assignment: str, source_checksum: str, seed: int) -> dict[str, dict]:
    """Results already in ``OUT`` that ``--resume`` keeps: ``{student: result}``.

    An ``OUT`` without ``report.json`` and ``grades.csv`` has nothing to keep
    (``{}``). Otherwise every run recorded in ``report.json`` must have the
    same assignment, source checksum and seed as this one; anything else
    raises ``ValueError`` saying what differs and what to do.
    """
    out = Path(out)
    report_path, grades_path = out / "report.json", out / "grades.csv"
    if not report_path.exists():
        if grades_path.exists():
            raise ValueError(f"cannot resume {out}: grades.csv exists but report.json does not "
                             "(not a complete autograder output); grade into a new --out folder")
        return {}
    try:
        report = json.loads(report_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot resume {out}: report.json is unreadable ({exc}); "
                         "grade into a new --out folder") from None
    runs = report.get("runs") if isinstance(report, dict) else None
    subs = report.get("submissions") if isinstance(report, dict) else None
    if not isinstance(runs, list) or not runs or not isinstance(subs, list):
        raise ValueError(f"cannot resume {out}: report.json has no runs/submissions")
    for run in runs:
        if not isinstance(run, dict):
            raise ValueError(f"cannot resume {out}: malformed run in report.json")
        if run.get("assignment") != assignment:
            raise ValueError(f"cannot resume {out}: it holds assignment {run.get('assignment')!r}, "
                             f"not {assignment!r}; grade into a new --out folder")
        if "source_checksum" not in run:
            raise ValueError(f"cannot resume {out}: report.json records no source checksum "
                             "(written by an older autograder); grade into a new --out folder")
        if run["source_checksum"] != source_checksum:
            raise ValueError(f"cannot resume {out}: source/{assignment} changed since it was graded "
                             f"(checksum {str(run['source_checksum'])[:12]}..., now "
                             f"{source_checksum[:12]}...); regrade everyone into a new --out folder")
        if run.get("seed") != seed:
            raise ValueError(f"cannot resume {out}: it was graded with --seed {run.get('seed')}, "
                             f"this run uses {seed}; pass --seed {run.get('seed')} to resume")
    done = {}
    for row in subs:
        if not isinstance(row, dict) or not isinstance(row.get("student"), str):
            raise ValueError(f"cannot resume {out}: malformed submission row in report.json")
        if row.get("assignment") != assignment:
            raise ValueError(f"cannot resume {out}: row of {row['student']!r} is for assignment "
                             f"{row.get('assignment')!r}")
        done[row["student"]] = row
    return done


def merge(outs, dest: Path) -> dict:
    """Join the outputs of several shards (or assignments) into ``dest``.

    Raises ``ValueError`` when an input lacks its files or when two inputs
    graded the same (student, assignment).
    """
    dest = Path(dest)
    runs, results, seen = [], [], {}
    for out in map(Path, outs):
        report_path = out / "report.json"
        if not report_path.is_file() or not (out / "grades.csv").is_file():
            raise ValueError(f"{out}: no grades.csv/report.json (not an autograder output)")
        try:
            report = json.loads(report_path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise ValueError(f"{out}: report.json is not valid JSON ({exc})") from None
        rows = read_grades(out / "grades.csv")
        if not isinstance(report, dict) or not isinstance(report.get("submissions"), list):
            raise ValueError(f"{out}: report.json has no submissions")
        if len(rows) != len(report["submissions"]):
            raise ValueError(f"{out}: grades.csv and report.json disagree")
        runs += report.get("runs", [])
        for result in report["submissions"]:
            result = clean_row(result)
            key = (result["student"], result["assignment"])
            if key in seen:
                raise ValueError(f"{key[0]} / {key[1]} graded twice ({seen[key]} and {out})")
            seen[key] = out
            results.append(result)
    dest.mkdir(parents=True, exist_ok=True)
    for out in map(Path, outs):
        if (out / "feedback").is_dir() and out.resolve() != dest.resolve():
            shutil.copytree(out / "feedback", dest / "feedback", dirs_exist_ok=True, symlinks=True)
    write_outputs(dest, results, {"runs": runs})
    return {"runs": runs, "submissions": results}
