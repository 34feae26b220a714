"""Sanitize a submission before nbgrader sees it.

Only the assignment's notebooks are copied into the grading course root, so a
``helpers.py`` or ``numpy.py`` dropped next to a notebook can never shadow a
module. Each notebook is validated, then rebuilt cell by cell against the
release version that nbgrader generated from ``source/``:

* instructor cells (read-only text, setup code, test cells) are restored from
  the release version, and any change to their source or nbgrader metadata
  (``points``, ``grade``, ``locked`` ...) is *flagged*;
* deleted instructor cells are put back where they belong (nbgrader's own
  ``add_missing_cells`` crashes when the previous cell is not a grade cell);
* a ``grade_id`` that appears twice (a copied cell, nbgrader issue #1083)
  keeps its first cell; the copies become ordinary student cells (*repair*);
* outputs are cleared and the kernelspec is reset to the grading kernel.

Every function here is pure apart from reading and writing the files it is
given, so each rule is testable alone.
"""

from __future__ import annotations

import codecs
import copy
import json
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from autograder.students import MAX_NOTEBOOK_BYTES, pick_notebooks, read_regular, student_id

#: Files that would be importable as modules when placed next to a notebook.
MODULE_SUFFIXES = (".py", ".pyc", ".pth", ".so", ".pyd")
#: nbgrader metadata keys that the student may not change.
GUARDED_KEYS = ("grade", "solution", "locked", "points", "task")


@dataclass
class Issues:
    """What sanitizing found: ``flags`` cost trust, ``repairs`` do not."""

    flags: list[str] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def extend(self, other: "Issues") -> None:
        self.flags += other.flags
        self.repairs += other.repairs
        self.errors += other.errors

    def as_dict(self) -> dict:
        return {"flags": self.flags, "repairs": self.repairs, "errors": self.errors}


def nbgrader_meta(cell) -> dict | None:
    meta = cell.get("metadata", {}).get("nbgrader")
    return meta if isinstance(meta, dict) else None


def is_solution(cell) -> bool:
    meta = nbgrader_meta(cell)
    return bool(meta and meta.get("solution"))


def is_test(cell) -> bool:
    """An autograded test cell: graded, not a solution, code."""
    meta = nbgrader_meta(cell)
    return bool(meta and meta.get("grade") and not meta.get("solution")
                and cell.get("cell_type") == "code")


def normalize_source(source) -> str:
    if isinstance(source, list):
        source = "".join(source)
    return "\n".join(line.rstrip() for line in str(source).strip().splitlines())


def _guarded(meta: dict | None) -> dict:
    meta = meta or {}
    out = {key: meta.get(key) for key in GUARDED_KEYS if key in meta}
    if "points" in out:
        try:
            out["points"] = float(out["points"])
        except (TypeError, ValueError):
            pass
    for key in ("grade", "solution", "locked", "task"):
        out[key] = bool(out.get(key, False))
    return out


def _plain(cell):
    """A student cell with every trace of nbgrader metadata removed."""
    cell = copy.deepcopy(cell)
    cell.metadata.pop("nbgrader", None)
    for key in ("editable", "deletable"):
        cell.metadata.pop(key, None)
    return cell


def _clear(cell):
    if cell.cell_type == "code":
        cell.outputs = []
        cell.execution_count = None
    return cell


def read_notebook(path: Path, max_bytes: int = MAX_NOTEBOOK_BYTES):
    """Read and validate a notebook; returns ``(nb, None)`` or ``(None, reason)``.

    The size is checked on the open file before anything is read (a symlink
    or a FIFO is refused, never followed or blocked on), a UTF-8 byte-order
    mark is tolerated (some editors on Windows write one), and the JSON is
    parsed only then. Stored outputs are cleared by :func:`sanitize_notebook`
    anyway, so the total cap bounds what any one output can cost.
    """
    name = student_id(Path(path).name)
    try:
        data = read_regular(path, max_bytes)
    except ValueError as exc:
        return None, f"notebook {name} {exc}"
    except OSError as exc:
        if Path(path).is_symlink():
            return None, f"notebook {name} is not a regular file (symlink refused)"
        return None, f"unreadable notebook {name} ({type(exc).__name__})"
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"unreadable notebook {name} (not UTF-8 at byte {exc.start})"
    del data
    try:
        json.loads(text)
    except ValueError as exc:
        return None, f"malformed notebook {name} (not JSON: {getattr(exc, 'msg', exc)})"
    except RecursionError:
        return None, f"malformed notebook {name} (JSON nested too deeply)"
    try:
        nb = nbformat.reads(text, as_version=4)
        nbformat.validate(nb)
    except Exception as exc:  # nbformat raises several unrelated types
        reason = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
        return None, f"malformed notebook {name} (invalid nbformat: {reason})"
    return nb, None


def sanitize_notebook(student, release, name: str = "notebook"):
    """Rebuild ``student`` on the skeleton of ``release``.

    Returns ``(nb, issues)``. ``nb`` holds the student's solution cells and
    free cells, and the release version of every instructor cell.
    """
    issues = Issues()
    release_cells = {}
    order = []
    for cell in release.cells:
        meta = nbgrader_meta(cell)
        if meta and meta.get("grade_id"):
            release_cells[meta["grade_id"]] = cell
            order.append(meta["grade_id"])

    out = []
    seen: set[str] = set()
    for cell in student.cells:
        meta = nbgrader_meta(cell)
        gid = meta.get("grade_id") if meta else None
        if meta is not None and not gid:
            if meta.get("grade") or meta.get("locked"):
                issues.flags.append(f"{name}: nbgrader metadata without grade_id")
            out.append(_clear(_plain(cell)))
            continue
        if gid is None:
            out.append(_clear(_plain(cell)))
            continue
        if gid in seen:
            issues.repairs.append(f"{name}: duplicated grade_id '{gid}' (copied cell) made an ordinary cell")
            out.append(_clear(_plain(cell)))
            continue
        if gid not in release_cells:
            issues.flags.append(f"{name}: unknown grade_id '{gid}'")
            out.append(_clear(_plain(cell)))
            continue
        seen.add(gid)
        ref = release_cells[gid]
        if _guarded(meta) != _guarded(nbgrader_meta(ref)) or cell.cell_type != ref.cell_type:
            issues.flags.append(f"{name}: metadata of cell '{gid}' changed")
        new = copy.deepcopy(ref)
        if is_solution(ref):
            new.source = cell.source
            # an image pasted into a written answer is the student's work too (nbgrader keeps the
            # whole answer cell); the Formgrader's copy keeps PNG and JPEG (gradebook_notebook)
            new.pop("attachments", None)
            if new.cell_type == "markdown" and cell.cell_type == "markdown" and cell.get("attachments"):
                new.attachments = copy.deepcopy(cell.attachments)
        elif normalize_source(cell.source) != normalize_source(ref.source):
            if is_test(ref):
                issues.flags.append(f"{name}: test cell '{gid}' edited (restored)")
            elif ref.cell_type == "code":
                issues.flags.append(f"{name}: read-only code cell '{gid}' edited (restored)")
            else:
                issues.repairs.append(f"{name}: read-only text cell '{gid}' restored")
        out.append(_clear(new))

    # Put deleted instructor cells back after the previous known cell.
    last = -1
    for gid in order:
        positions = [i for i, c in enumerate(out)
                     if (nbgrader_meta(c) or {}).get("grade_id") == gid]
        if positions:
            last = positions[0]
            continue
        ref = release_cells[gid]
        last += 1
        out.insert(last, _clear(copy.deepcopy(ref)))
        if is_test(ref):
            issues.flags.append(f"{name}: test cell '{gid}' deleted (restored)")
        elif is_solution(ref):
            issues.repairs.append(f"{name}: solution cell '{gid}' deleted (stub restored)")
        elif ref.cell_type == "code":
            issues.flags.append(f"{name}: read-only code cell '{gid}' deleted (restored)")
        else:
            issues.repairs.append(f"{name}: read-only text cell '{gid}' restored")

    nb = copy.deepcopy(release)
    nb.cells = out
    used: set[str] = set()
    for index, cell in enumerate(nb.cells):
        if not cell.get("id") or cell.id in used:
            cell.id = f"ag-{index}"
        used.add(cell.id)
    nbformat.validate(nb)
    return nb, issues


def find_module_files(folder: Path) -> list[str]:
    """Files in a submission that Python could import instead of a real module."""
    found = []
    for path in sorted(Path(folder).rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if ".ipynb_checkpoints" in rel.split("/"):
            continue
        if path.is_file() and path.name.endswith(MODULE_SUFFIXES):
            found.append(student_id(rel))
    return found


def sanitize_submission(src: Path, release_dir: Path, dest: Path) -> dict:
    """Copy the sanitized notebooks of one submission from ``src`` to ``dest``.

    Returns a JSON-able dict: ``notebooks`` written (names), ``missing``
    notebooks, and the ``flags``/``repairs``/``errors`` lists.
    """
    src, release_dir, dest = Path(src), Path(release_dir), Path(dest)
    issues = Issues()
    expected = sorted(p.name for p in release_dir.glob("*.ipynb"))
    written = []
    if src.is_symlink():
        return {"notebooks": [], "missing": expected,
                **Issues(errors=["symlinked assignment folder refused (a link may point outside "
                                 "the student's folder; not followed)"]).as_dict()}
    if not src.is_dir():
        return {"notebooks": [], "missing": expected,
                **Issues(errors=["no submission folder"]).as_dict()}
    for rel in find_module_files(src):
        issues.flags.append(f"file '{rel}' could shadow a module (ignored)")
    picked = pick_notebooks(src, expected)
    issues.repairs += picked["repairs"]
    issues.errors += picked["errors"]
    missing = picked["missing"]
    dest.mkdir(parents=True, exist_ok=True)
    for name, path in picked["notebooks"].items():
        student, reason = read_notebook(path)
        if student is None:
            issues.errors.append(reason)
            continue
        release = nbformat.read(release_dir / name, as_version=4)
        try:
            nb, found = sanitize_notebook(student, release, name=Path(name).stem)
        except Exception as exc:  # a notebook nbformat accepts but we cannot rebuild
            issues.errors.append(f"malformed notebook {name} ({type(exc).__name__})")
            continue
        issues.extend(found)
        nbformat.write(nb, dest / name)
        written.append(name)
    return {"notebooks": written, "missing": missing, **issues.as_dict()}
