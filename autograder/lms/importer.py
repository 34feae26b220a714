"""``import-submissions``: an LMS's bulk download -> ``DIR/<student>/<assignment>/<notebook>.ipynb``.

Every file of the download ends in exactly one outcome, listed in ``DIR/import_<assignment>.json``
and ``DIR/import_<assignment>.csv`` (UTF-8 with BOM, opens in Excel/WPS):

``placed``
    the student's notebook, written under the name the grader expects
    (``source/<assignment>/<notebook>.ipynb``), whatever it was called;
``older copy``
    the same student handed in more than once: the newest is kept (the pattern's ``time``,
    else the file's time in the download, else the LMS's copy counter ``-1``, ``-2``, ``(1)``),
    and the record says which was kept and why; identical copies are said to be identical;
``wrong assignment``
    a notebook whose nbgrader cell ids (``grade_id``) belong to another assignment of
    ``source/`` (or, when it has none, whose ``<学号>_<assignment>.ipynb`` name says so);
``not placed``
    nobody can be named (no LMS name, no ``<学号>_<assignment>.ipynb`` name, the pattern did
    not match), or the id cannot be a folder name;
``not a notebook``, ``refused``, ``ignored``
    other files, unsafe or unreadable entries (:mod:`autograder.lms.archive`), system files.

Whose file: the LMS account (Moodle participant id, Canvas user id, the pattern's ``id``) mapped
through ``--roster`` when given; else the 学号 of a ``<学号>_<assignment>.ipynb`` name, unless
accounts and names disagree (one account's files name two 学号, or two accounts name the same
学号: then each keeps its LMS id and the record says why); else the LMS id itself. A pattern's
``id`` is taken as the student id. The download is never extracted: nothing of it is written
but the chosen notebooks' bytes, under ``DIR/<student>/<assignment>/``. Importing the same
assignment again replaces what the previous import of it wrote (its manifest lists it) and
nothing else.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import shutil
import stat
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from autograder.lms.archive import walk
from autograder.lms.naming import SAFE_ID, compile_pattern, identify
from autograder.lms.roster import read_roster
from autograder.reports.report import csv_field, write_atomic

MANIFEST = "import_{assignment}.json"


def default_course() -> Path:
    """The course root holding ``source/`` (this repository)."""
    return Path(__file__).resolve().parents[2]


def assignment_specs(course: Path) -> dict[str, dict[str, set[str]]]:
    """``{assignment: {notebook name: its nbgrader grade ids}}`` for every folder of ``source/``."""
    specs = {}
    for path in sorted(Path(course, "source").glob("*/*.ipynb")):
        specs.setdefault(path.parent.name, {})[path.name] = notebook_grade_ids(path.read_bytes()) or set()
    return specs


def notebook_grade_ids(data: bytes) -> set[str] | None:
    """The nbgrader ``grade_id`` of every cell, or ``None`` when ``data`` is not a notebook's JSON."""
    try:
        nb = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        return None
    ids = set()
    for cell in nb["cells"]:
        meta = cell.get("metadata") if isinstance(cell, dict) else None
        grader = meta.get("nbgrader") if isinstance(meta, dict) else None
        if isinstance(grader, dict) and isinstance(grader.get("grade_id"), str):
            ids.add(grader["grade_id"])
    return ids


def which_assignment(ids: set[str], specs: dict, target: str) -> str | None:
    """The assignment whose own cell ids (those not shared by every assignment) the notebook holds most of;
    ``target`` on a tie, ``None`` when it holds none."""
    sets = {a: set().union(*nbs.values()) for a, nbs in specs.items()}
    common = set.intersection(*sets.values()) if sets else set()
    scores = {a: len(ids & (s - common)) for a, s in sets.items()}
    best = max(scores.values(), default=0)
    if best == 0:
        return None
    return target if scores.get(target) == best else max(scores, key=lambda a: (scores[a], a))


def _notebook_name(ids: set[str] | None, notebooks: dict[str, set[str]]) -> str:
    if len(notebooks) == 1 or not ids:
        return sorted(notebooks)[0]
    return max(sorted(notebooks), key=lambda n: len(ids & notebooks[n]))


def _write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _when(seconds: float | None, wall_clock: bool) -> str | None:
    """A time to the second: a zip's or an LMS name's zone-less time as written there, a file's in local time."""
    if seconds is None:
        return None
    if wall_clock:
        return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    return datetime.fromtimestamp(seconds).astimezone().strftime("%Y-%m-%d %H:%M:%S %z")


def _candidates(members, specs, assignment, pattern, records):
    """Notebooks of the download that may be ``assignment``'s, with what their names say."""
    found = []
    for member in members:
        ident = identify(member.path, specs, pattern)
        base = {"file": member.where, "lms": ident.lms, "lms_id": ident.lms_id, "name": ident.name,
                "uploaded_as": ident.original}
        if not ident.original.lower().endswith(".ipynb"):
            records.append(dict(base, outcome="not a notebook",
                                detail=f"不是 .ipynb 文件，不评分 / not a .ipynb file "
                                       f"({Path(ident.original).suffix or 'no extension'}): not graded"))
            continue
        try:
            data = member.read()
        except (ValueError, OSError) as exc:
            records.append(dict(base, outcome="refused", detail=f"未读取 / not read: {exc}"))
            continue
        ids = notebook_grade_ids(data)
        looks = which_assignment(ids, specs, assignment) if ids else None
        notes = []
        if looks and looks != assignment:
            records.append(dict(base, outcome="wrong assignment", looks_like=looks,
                                detail=f"这是作业 {looks} 的笔记本，不是 {assignment} 的 / its cells are those of "
                                       f"'{looks}', not '{assignment}'"))
            continue
        if not looks and ident.own_assignment and ident.own_assignment != assignment:
            records.append(dict(base, outcome="wrong assignment", looks_like=ident.own_assignment,
                                detail=f"文件名写的是作业 {ident.own_assignment}，且没有 nbgrader 单元格标识 / "
                                       f"named for '{ident.own_assignment}' and has no nbgrader cell ids"))
            continue
        if ids is None:
            notes.append("不是 Jupyter 笔记本（内容不是笔记本的 JSON），评分时会报错 / not a Jupyter notebook "
                         "(not notebook JSON): the grader will report it")
        elif not looks:
            notes.append(f"没有 nbgrader 单元格标识（复制到了新笔记本里？），无法确认是 {assignment} / no nbgrader "
                         f"cell ids (copied into a new notebook?): cannot confirm it is '{assignment}'")
        elif ident.own_assignment and ident.own_assignment != assignment:
            notes.append(f"文件名写的是 {ident.own_assignment}，内容是 {assignment} / named for "
                         f"'{ident.own_assignment}' but its cells are '{assignment}'s")
        # only the hash is kept: the chosen copy is read again when written (memory stays one notebook)
        found.append({"member": member, "ident": ident, "notes": notes, "base": base,
                      "notebook": _notebook_name(ids, specs[assignment]),
                      "sha256": hashlib.sha256(data).hexdigest()})
    return found


def _students(found, roster_map, records):
    """Give each candidate its student id (see the module's docstring), or record why it has none."""
    accounts, claims = {}, {}
    for c in found:
        ident = c["ident"]
        if ident.lms in ("moodle", "canvas") and ident.own_id:
            accounts.setdefault((ident.lms, ident.lms_id), set()).add(ident.own_id)
            claims.setdefault(ident.own_id, set()).add((ident.lms, ident.lms_id))
    placed = []
    for c in found:
        ident, notes = c["ident"], c["notes"]
        account = (ident.lms, ident.lms_id)
        student, how = None, None
        if ident.lms and ident.lms_id in roster_map:
            student, how = roster_map[ident.lms_id], "roster"
        elif ident.lms == "pattern":
            student, how = ident.lms_id, "pattern"
        elif ident.own_id and (ident.lms is None or (len(accounts[account]) == 1
                                                     and len(claims[ident.own_id]) == 1)):
            student, how = ident.own_id, "file name"
        elif ident.lms:
            student, how = ident.lms_id, f"{ident.lms} id"
            if ident.own_id:
                notes.append(f"学号与账号对不上，按 {ident.lms} 账号放置，请人工核对 / file named for "
                             f"{ident.own_id}, but "
                             + (f"this account's files name {sorted(accounts[account])}"
                                if len(accounts[account]) > 1 else
                                f"{len(claims[ident.own_id])} accounts' files name {ident.own_id}")
                             + f": kept under the {ident.lms} id; check by hand")
        if ident.lms and roster_map and ident.lms_id not in roster_map:
            notes.append(f"名单中没有 {ident.lms} 账号 {ident.lms_id} / {ident.lms} account {ident.lms_id} "
                         "is not in the roster")
        if ident.own_id and student not in (None, ident.own_id) and how in ("roster", "pattern"):
            notes.append(f"文件名写的学号是 {ident.own_id}，由 {student} 提交 / file named for {ident.own_id}, "
                         f"handed in by {student}")
        if student is None:
            records.append(dict(c["base"], outcome="not placed",
                                detail="无法确定是谁的文件：既不是学习平台的命名（Moodle、Canvas、--pattern），"
                                       "也不是 <学号>_<作业名>.ipynb / cannot tell whose file it is: no LMS name "
                                       "(Moodle, Canvas, --pattern) and not named <学号>_<assignment>.ipynb"))
        elif not SAFE_ID.match(student):
            records.append(dict(c["base"], outcome="not placed",
                                detail=f"学号 {student!r} 不能用作文件夹名 / student id {student!r} cannot be a "
                                       "folder name (letters, digits, '_', '-')"))
        else:
            placed.append(dict(c, student=student, how=how))
    return placed


def _newest(group):
    def key(c):
        time = c["ident"].time if c["ident"].time is not None else c["member"].mtime
        return (time if time is not None else float("-inf"), c["ident"].counter, c["member"].path)
    ordered = sorted(group, key=key)
    kept = ordered[-1]
    for c in ordered[:-1]:
        same = key(c)[:2] == key(kept)[:2]
        why = ("内容相同的副本 / identical copy" if c["sha256"] == kept["sha256"] else
               "时间和副本编号相同，保留了路径排在后面的一份，请人工核对 / same time and copy number: kept the "
               "last by path; check by hand" if same else
               "较早的版本（按下载中的时间或副本编号）/ older (time in the download, or a lower copy number)")
        c["why"] = why
    return kept, ordered[:-1]


def _remove_previous(out: Path, assignment: str) -> list[str]:
    path = out / MANIFEST.format(assignment=assignment)
    if not path.is_file():
        return []
    try:
        previous = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return []
    removed = []
    for row in previous.get("placed", []):
        student = row.get("student")
        if not isinstance(student, str) or not SAFE_ID.match(student):
            continue
        folder = out / student
        try:
            if stat.S_ISLNK(os.lstat(folder).st_mode):
                continue
        except FileNotFoundError:
            continue
        shutil.rmtree(folder / assignment, ignore_errors=True)
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
        removed.append(student)
    return removed


def _csv(records) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(["file", "outcome", "student", "kept", "detail"])
    for r in records:
        writer.writerow([csv_field(str(r.get(k) or "")) for k in ("file", "outcome", "student", "kept", "detail")])
    return "\ufeff" + buffer.getvalue()


def import_submissions(source, assignment: str, out, *, pattern: str | None = None, roster=None,
                       course=None) -> dict:
    """Lay out ``source`` (an LMS's bulk download: zip or folder) as ``out/<student>/<assignment>/``.

    Returns the manifest written to ``out/import_<assignment>.json`` (``placed``, ``records``:
    one per file of the download, ``counts``). ``ValueError`` for an unknown assignment, a bad
    pattern or roster, or a source that is neither a zip nor a folder.
    """
    course = Path(course) if course else default_course()
    specs = assignment_specs(course)
    if assignment not in specs:
        raise ValueError(f"unknown assignment {assignment!r}; the course has {sorted(specs)}")
    compiled = compile_pattern(pattern)
    roster_map = {}
    if roster:
        roster_map = {e.lms_id: e.student for e in read_roster(roster) if e.lms_id and e.student}
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} exists and is not a folder")
    if Path(source).is_dir() and (out.resolve() == Path(source).resolve()
                                  or Path(source).resolve() in out.resolve().parents):
        raise ValueError(f"--out {out} is inside the download {source}: choose a folder outside it")
    members, problems = walk(Path(source))
    records = [{"file": p.where, "outcome": "ignored" if p.ignored else "refused", "detail": p.reason}
               for p in problems]
    found = _candidates(members, specs, assignment, compiled, records)
    by_student = {}
    for c in _students(found, roster_map, records):
        by_student.setdefault(c["student"], []).append(c)
    out.mkdir(parents=True, exist_ok=True)
    replaced = _remove_previous(out, assignment)
    placed = []
    for student in sorted(by_student):
        kept, older = _newest(by_student[student])
        folder = out / student
        if folder.is_symlink():
            records.append(dict(kept["base"], outcome="not placed", student=student,
                                detail=f"--out 中的 {student}/ 是符号链接，未写入 / {student}/ in --out is a "
                                       "symbolic link: not written through"))
            continue
        try:
            data = kept["member"].read()
        except (ValueError, OSError):
            data = None
        if data is None or hashlib.sha256(data).hexdigest() != kept["sha256"]:  # a folder changed under us
            records.append(dict(kept["base"], outcome="refused", student=student,
                                detail="两次读取的内容不同，未写入 / changed between two reads, not written"))
            continue
        target = folder / assignment / kept["notebook"]
        _write_bytes(target, data)
        ident, member = kept["ident"], kept["member"]
        row = dict(kept["base"], outcome="placed", student=student, how=kept["how"], late=ident.late,
                   notebook=f"{student}/{assignment}/{kept['notebook']}", sha256=kept["sha256"],
                   time=_when(ident.time, True) if ident.time is not None else _when(member.mtime, member.wall_clock),
                   detail="; ".join(kept["notes"]) or None)
        placed.append(row)
        records.append(row)
        for c in older:
            records.append(dict(c["base"], outcome="older copy", student=student, kept=kept["base"]["file"],
                                detail=c["why"] + ("; " + "; ".join(c["notes"]) if c["notes"] else "")))
    counts = {}
    for r in records:
        counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
    manifest = {"assignment": assignment, "source": str(source), "pattern": pattern,
                "roster": str(roster) if roster else None,
                "imported": datetime.now().astimezone().strftime("%Y-%m-%d %H:%M:%S %z"),
                "replaced_previous_import_of": sorted(set(replaced) - set(by_student)),
                "counts": counts, "placed": placed,
                "records": sorted(records, key=lambda r: (r["outcome"] != "placed", r["file"]))}
    write_atomic(out / MANIFEST.format(assignment=assignment),
                 json.dumps(manifest, indent=1, ensure_ascii=False))
    write_atomic(out / f"import_{assignment}.csv", _csv(manifest["records"]))
    return manifest
