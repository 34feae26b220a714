"""The student's own folder: copies of the lectures and assignments, and the file she uploads.

``python3 -m course lab`` never opens JupyterLab on the course's tracked files (autosave rewrote
``course/6.2-laplace.ipynb`` and made the next ``git pull`` abort, issue 33). It works in a folder
of the student's own, by default ``dp-course-work`` in her home folder (``C:\\Users\\<name>\\dp-course-work``
on Windows, ``DP_COURSE_WORKSPACE`` names another): outside the course folder, so that replacing
the course (a new zip of the student pack, a fresh clone, a ``git pull``) never touches her work,
and next to her other folders, where the file manager opens. Every launch prints its path.

Layout (all names valid on Windows, macOS and Linux)::

    README.md                         the course home (links to the copies below)
    6.1-basics.ipynb ... lab-*.ipynb  the Chinese lectures;  en/  the English ones
    作业/1-laplace/laplace.ipynb ...   the six assignments, numbered in the order of the course
    提交/<学号>_<assignment>.ipynb     what ``submit`` writes: the one file to upload to the LMS
    .dp-course/                       what was copied (digests) and the student id

:func:`sync` copies what is new and updates what the student has not changed; a file she changed
stays as it is and the course's new version goes next to it (``<name>-新版.ipynb``). It says what
it did. :func:`submit` copies a saved assignment to ``提交/`` under the student's id.
:func:`strip_widget_outputs` is JupyterLab's pre-save hook: saved notebooks keep no live-widget
output, whose model is gone when the notebook is reopened ("Error displaying widget: model not
found"); a figure keeps its picture, other widgets a Chinese note to run the cell again.

Standard library only, no POSIX-only call (tests/course/test_laptop_loop.py checks both).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
import shutil
from pathlib import Path

COURSE = Path(__file__).resolve().parent
ROOT = COURSE.parent
#: The graded assignments, in the order of the course.
ASSIGNMENTS = ("laplace", "exponential", "randomized_response", "private_mean", "privacy_budget",
               "local_frequency")
ASSIGNMENTS_DIR = "作业"
UPLOAD_DIR = "提交"
STATE_DIR = ".dp-course"
MANIFEST = "manifest.json"
STUDENT = "student.json"
NEW_SUFFIX = "-新版"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
RUN_AGAIN = "运行此单元格以显示交互图 / Run this cell to show the interactive figure"
#: 学号: letters, digits, '-' and '_' (the upload's file name is built from it).
STUDENT_ID = re.compile(r"^[A-Za-z0-9_-]{1,32}$")

SAY = {
    "where": "你的课程文件夹 / your course folder: {path}",
    "added": "课程更新：新增 {n} 个文件 / course update: {n} new file(s): {names}",
    "updated": "课程更新：更新了 {n} 个你没有改过的文件 / updated {n} file(s) you had not changed: {names}",
    "beside": ("课程更新：{n} 个文件你改过，你的版本保持不变，新版本放在旁边 / {n} file(s) you changed are kept "
               "as they are; the course's new version is next to each: {names}"),
    "restored": "恢复了 {n} 个被删除的文件 / restored {n} deleted file(s): {names}",
    "no_assignment": ("没有这个作业：“{name}”。作业有：{known} / no assignment {name!r}; the assignments are: {known}"),
    "no_notebook": ("找不到 {path}。请先启动课程（python -m course lab），它会把作业复制到这里 / {path} "
                    "is missing: start the course first (python -m course lab), it copies the assignments there"),
    "bad_notebook": ("{path} 不是完整的笔记本（{error}）。请在 JupyterLab 中打开它并保存（Ctrl+S）后再提交 / "
                     "{path} is not a readable notebook ({error}); open it in JupyterLab, save (Ctrl+S), submit again"),
    "bad_id": ("学号只能由字母、数字、“-”和“_”组成，最多 32 个字符，收到的是“{value}” / a student id is letters, "
               "digits, '-' and '_', at most 32 characters; got {value!r}"),
    "submitted": ("已生成要上传的文件 / the file to upload is ready:\n  {path}\n"
                  "作业 {assignment}，学号 {student}，保存于 {saved}（本机时间）。\n"
                  "请把这一个文件上传到课程平台（学习通、雨课堂、Moodle、Canvas……）的作业“{assignment}”中；"
                  "改了之后可以再次提交，文件会被覆盖，再上传一次即可。\n"
                  "Upload this one file to assignment {assignment!r} on the course platform (saved {saved}, "
                  "local time); after more changes submit again and upload the new file."),
    # JupyterLab's notices show 140 characters: the button's says the essentials
    "submitted_short": "已生成 {path}（{saved}）。请把它上传到课程平台的作业“{assignment}”中。/ Upload it.",
}


def say(key: str, **values) -> str:
    return SAY[key].format(**values)


def default_workspace() -> Path:
    """``DP_COURSE_WORKSPACE``, else ``dp-course-work`` in the student's home folder."""
    named = os.environ.get("DP_COURSE_WORKSPACE")
    return Path(named).expanduser() if named else Path.home() / "dp-course-work"


def assignment_folder(assignment: str) -> str:
    """``作业/<n>-<assignment>``: numbered, so that a folder listing is in the course's order."""
    return f"{ASSIGNMENTS_DIR}/{ASSIGNMENTS.index(assignment) + 1}-{assignment}"


def _readme(root: Path) -> bytes:
    """The course home with its links to ``release/`` pointing at the workspace's copies."""
    text = (root / "course" / "README.md").read_text(encoding="utf-8")
    for name in ASSIGNMENTS:
        text = text.replace(f"../release/{name}/{name}.ipynb", f"{assignment_folder(name)}/{name}.ipynb")
    return text.encode("utf-8")


def _without_widgets(data: bytes) -> bytes:
    """A notebook as copied: widget outputs replaced as :func:`strip_widget_outputs` does on save
    (the course's notebooks are kept without outputs; this holds if one ever is not)."""
    if WIDGET_MIME.encode() not in data and b'"widgets"' not in data:
        return data
    model = {"type": "notebook", "content": json.loads(data.decode("utf-8"))}
    strip_widget_outputs(model)
    return (json.dumps(model["content"], ensure_ascii=False, indent=1) + "\n").encode("utf-8")


def _unlink_missing(text: str, present: set[str]) -> str:
    """Links of the course home to what the workspace does not hold (the instructor's
    ``_src/plan.toml``) become their text: no "file not found" for the student."""
    def keep(match: re.Match) -> str:
        target = match.group(2).split("#")[0]
        return match.group(0) if not target or re.match(r"[a-z]+:", target) or target in present else match.group(1)
    return re.sub(r"(?<!!)\[([^\]\n]*)\]\(([^)\s]+)\)", keep, text)


def course_files(root: Path = ROOT) -> dict[str, bytes]:
    """What a workspace holds of the course: workspace path (``/``-separated) -> content."""
    files: dict[str, bytes] = {}
    for sub, prefix in ((root / "course", ""), (root / "course" / "en", "en/")):
        for path in sorted(sub.glob("*.ipynb")):
            files[prefix + path.name] = _without_widgets(path.read_bytes())
    if (root / "course" / "data" / "README.md").is_file():     # where the datasets come from
        files["data/README.md"] = (root / "course" / "data" / "README.md").read_bytes()
    for name in ASSIGNMENTS:
        release = root / "release" / name
        for path in sorted(release.rglob("*")):
            if path.is_file() and ".ipynb_checkpoints" not in path.parts and "__pycache__" not in path.parts:
                files[f"{assignment_folder(name)}/{path.relative_to(release).as_posix()}"] = path.read_bytes()
    readme = _unlink_missing(_readme(root).decode("utf-8"), set(files))
    return {"README.md": readme.encode("utf-8"), **files}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _content_sha(rel: str, data: bytes) -> str | None:
    """The digest of what a reader of a notebook wrote: its cells' types and sources.

    Opening a notebook rewrites it (autosave adds the kernel's ``language_info``; running adds
    outputs and execution counts): none of that is the student's work, and a notebook that differs
    from the copied one only there takes the course's update. Other files: None (bytes decide)."""
    if not rel.endswith(".ipynb"):
        return None
    try:
        cells = json.loads(data.decode("utf-8"))["cells"]
        text = [[c.get("cell_type"), "".join(c["source"]) if isinstance(c.get("source"), list) else c.get("source")]
                for c in cells]
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError):
        return None
    return _sha(json.dumps(text, ensure_ascii=False).encode("utf-8"))


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _write(path: Path, data: bytes) -> None:
    """Write through a temporary file and a rename: an interrupted launch leaves no half file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(data)
    os.replace(partial, path)


def beside(rel: str) -> str:
    """Where the course's new version of a file the student changed goes: ``<stem>-新版<suffix>``."""
    head, _, name = rel.rpartition("/")
    stem, dot, ext = name.rpartition(".")
    new = f"{stem}{NEW_SUFFIX}.{ext}" if dot else f"{name}{NEW_SUFFIX}"
    return f"{head}/{new}" if head else new


def sync(workspace: Path, root: Path = ROOT) -> dict[str, list[str]]:
    """Bring ``workspace`` up to date with the course; never overwrite what the student changed.

    Returns ``{"added", "updated", "beside", "restored"}`` -> workspace paths. A file is the
    student's changed copy when its digest differs from the digest of what was last copied
    (``.dp-course/manifest.json``); for a notebook, when its cells' sources differ (opening or
    running it, which changes metadata and outputs, is not a change).
    """
    state = workspace / STATE_DIR
    manifest_path = state / MANIFEST
    saved = _read_json(manifest_path)
    manifest: dict[str, str] = saved.get("files", {})
    contents: dict[str, str] = saved.get("content", {})   # absent in a manifest of before 2026-11-29
    done: dict[str, list[str]] = {"added": [], "updated": [], "beside": [], "restored": []}
    for rel, data in course_files(root).items():
        digest, dest = _sha(data), workspace / rel
        copied = manifest.get(rel)
        if not dest.exists():
            _write(dest, data)
            done["restored" if copied else "added"].append(rel)
        elif copied != digest:       # the course changed this file since it was copied (or never copied it)
            current = dest.read_bytes()
            content = _content_sha(rel, current)
            if _sha(current) in (copied, digest) or (content is not None and content in (
                    contents.get(rel), _content_sha(rel, data))):
                _write(dest, data)
                if copied:
                    done["updated"].append(rel)
            else:
                _write(workspace / beside(rel), data)
                done["beside"].append(beside(rel))
        manifest[rel] = digest
        content = _content_sha(rel, data)
        if content is not None:
            contents[rel] = content
    (workspace / UPLOAD_DIR).mkdir(parents=True, exist_ok=True)
    state.mkdir(parents=True, exist_ok=True)
    _write(manifest_path, json.dumps({"files": manifest, "content": contents}, ensure_ascii=False,
                                     indent=1).encode("utf-8"))
    return done


def report(workspace: Path, done: dict[str, list[str]], first: bool) -> list[str]:
    """What :func:`sync` did, in Chinese then English (one line each; a first copy is not news)."""
    lines = [say("where", path=workspace)]
    for key in ("added", "updated", "beside", "restored"):
        names = done[key]
        if names and not (first and key == "added"):
            shown = ", ".join(names[:8]) + (" …" if len(names) > 8 else "")
            lines.append(say(key, n=len(names), names=shown))
    return lines


def student_id(workspace: Path) -> str | None:
    """The student id remembered in the workspace, or None."""
    value = _read_json(workspace / STATE_DIR / STUDENT).get("student_id")
    return value if isinstance(value, str) and STUDENT_ID.match(value) else None


def remember_student_id(workspace: Path, value: str) -> str:
    """Check and keep the student id; raises ValueError (Chinese, then English) when it is not one."""
    value = value.strip()
    if not STUDENT_ID.match(value):
        raise ValueError(say("bad_id", value=value))
    _write(workspace / STATE_DIR / STUDENT, json.dumps({"student_id": value}).encode("utf-8"))
    return value


def resolve_assignment(name: str) -> str:
    """An assignment's id from what the student typed: its id, its number (1-6) or its folder."""
    name = name.strip().strip("/\\")
    name = name.rsplit("/", 1)[-1].rsplit("\\", 1)[-1]
    if name.endswith(".ipynb"):
        name = name[:-len(".ipynb")]
    if name.isdigit() and 1 <= int(name) <= len(ASSIGNMENTS):
        return ASSIGNMENTS[int(name) - 1]
    name = re.sub(r"^\d+-", "", name)
    if name not in ASSIGNMENTS:
        raise ValueError(say("no_assignment", name=name, known="、".join(ASSIGNMENTS)))
    return name


def local_time(timestamp: float) -> str:
    """A time as the student reads it: her own time zone, to the second, with its UTC offset."""
    when = datetime.datetime.fromtimestamp(timestamp).astimezone()
    offset = when.strftime("%z")
    return f"{when:%Y-%m-%d %H:%M:%S} (UTC{offset[:3]}:{offset[3:]})"


def submit(workspace: Path, assignment: str, student: str, source: Path | None = None) -> tuple[Path, str]:
    """Copy the saved ``作业/<n>-<assignment>/<assignment>.ipynb`` (or ``source``, the notebook the
    student has on screen) to ``提交/<student>_<assignment>.ipynb``.

    Returns the file written and the notice to show (Chinese, then English). Raises ValueError
    with a message for the student when the notebook is missing or not a readable notebook.
    """
    assignment = resolve_assignment(assignment)
    source = source or workspace / assignment_folder(assignment) / f"{assignment}.ipynb"
    if not source.is_file():
        raise ValueError(say("no_notebook", path=source))
    data = source.read_bytes()
    try:
        notebook = json.loads(data.decode("utf-8"))
        if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
            raise ValueError("no cells")
    except ValueError as error:        # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise ValueError(say("bad_notebook", path=source, error=error)) from None
    target = workspace / UPLOAD_DIR / f"{student}_{assignment}.ipynb"
    _write(target, data)
    return target, say("submitted", path=target, assignment=assignment, student=student,
                       saved=local_time(source.stat().st_mtime))


def short_notice(target: Path, assignment: str, saved: float) -> str:
    """The button's notice (at most JupyterLab's 140 characters): the file and what to do with it.

    The file's full path when it fits (a browser's upload dialog needs the folder on disk, which
    JupyterLab's own paths do not give), else its path in the course folder."""
    when = local_time(saved).split(" (")[0]
    full = say("submitted_short", path=str(target.resolve()), assignment=assignment, saved=when)
    if len(full) <= 140:
        return full
    return say("submitted_short", path=f"{UPLOAD_DIR}/{target.name}", assignment=assignment, saved=when)


def strip_widget_outputs(model: dict, **_) -> None:
    """JupyterLab's pre-save hook (``ContentsManager.pre_save_hook``): no live-widget output on disk.

    A saved widget output points at a model that lives only in the running kernel; reopened, it
    showed "Error displaying widget: model not found" (in English, whatever the language). An
    ipympl figure keeps its picture (``image/png``, which ipympl puts in the same output); any other
    widget output becomes a note to run the cell again. Widget state in the notebook's metadata goes
    too. What is on screen is unchanged until the notebook is reopened.
    """
    if model.get("type") != "notebook" or not isinstance(model.get("content"), dict):
        return
    notebook = model["content"]
    metadata = notebook.get("metadata")
    if isinstance(metadata, dict):
        metadata.pop("widgets", None)
    for cell in notebook.get("cells") or []:
        outputs = cell.get("outputs") if isinstance(cell, dict) else None
        for output in outputs or []:
            data = output.get("data") if isinstance(output, dict) else None
            if not isinstance(data, dict) or WIDGET_MIME not in data:
                continue
            if "image/png" in data:
                output["data"] = {"image/png": data["image/png"], "text/plain": RUN_AGAIN}
            else:
                output["data"] = {"text/plain": RUN_AGAIN}
