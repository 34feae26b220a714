"""Read an LMS bulk download (a zip or a folder) without trusting it.

:func:`walk` lists every file of the download as a :class:`Member` (its path from the top, its
size and time, a capped reader) and every entry it will not read as a :class:`Problem` (why).
Nothing is extracted: the importer writes only ``DIR/<student>/<assignment>/<notebook>`` with
names of its own, so a member's path never becomes a path on disk. Still, every refusal is
named, never silent:

* a member whose path is absolute, names a drive or climbs with ``..`` (path traversal) is
  refused;
* symlinks (a zip's Unix mode, a folder's ``lstat``), devices, FIFOs and encrypted members are
  refused, never followed or opened;
* a member larger than its cap is refused before it is read, and every read stops at the cap
  + 1 byte whatever the zip's header declared (zip bombs);
* zips inside the download (a student who zipped the notebook, an LMS that wraps each
  student's files) are opened in memory up to :data:`MAX_NESTED_BYTES` and
  :data:`MAX_DEPTH` levels; other archives (``.rar``, ``.7z``, ``.tar.gz``) are named as
  "unpack it and import the folder";
* at most :data:`MAX_MEMBERS` entries are looked at.

Zip names without the UTF-8 flag (a zip made again on a Chinese Windows) are decoded as UTF-8,
then GBK, before Python's cp437 guess: ``张三`` stays ``张三``.
"""

from __future__ import annotations

import io
import os
import re
import stat
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from autograder.students import MAX_NOTEBOOK_BYTES, read_regular, student_id

#: Largest notebook read (the grader refuses larger ones anyway).
MAX_FILE_BYTES = MAX_NOTEBOOK_BYTES
#: Largest zip inside the download that is opened (in memory).
MAX_NESTED_BYTES = 256 << 20
#: All zips inside the download together: past this, further nested zips are not opened.
MAX_NESTED_TOTAL = 2 << 30
#: Zips inside zips inside the download: at most this many levels below the top.
MAX_DEPTH = 3
#: Entries looked at, over the whole download (a class of 150 with a few files each is ~1,000).
MAX_MEMBERS = 50_000
#: Files every operating system adds to archives; listed as ignored, never read.
SYSTEM_FILES = re.compile(r"^(?:__MACOSX|\.DS_Store|Thumbs\.db|desktop\.ini|\._.*|\.ipynb_checkpoints)$",
                          re.IGNORECASE)
OTHER_ARCHIVES = (".rar", ".7z", ".tar", ".tar.gz", ".tgz", ".gz", ".bz2", ".xz")


@dataclass
class Member:
    """One file of the download: ``path`` from the top (zip names included), ``mtime`` in seconds."""

    path: tuple[str, ...]
    size: int
    mtime: float | None
    read: Callable[[], bytes] = field(repr=False)
    #: the time is a zip's zone-less wall-clock time (read as UTC), not a real instant
    wall_clock: bool = False

    @property
    def where(self) -> str:
        return "/".join(student_id(p) for p in self.path)


@dataclass
class Problem:
    """An entry not read: where it is and why (plain sentence, English; the CLI adds Chinese)."""

    where: str
    reason: str
    ignored: bool = False  # system files: listed, harmless


def _zip_name(info: zipfile.ZipInfo) -> str:
    if info.flag_bits & 0x800:
        return info.filename
    try:
        raw = info.filename.encode("cp437")
    except UnicodeEncodeError:
        return info.filename
    for encoding in ("utf-8", "gbk"):
        try:
            return raw.decode(encoding)
        except UnicodeDecodeError:
            continue
    return info.filename


def _safe_parts(name: str) -> tuple[str, ...] | None:
    """The components of a member's name, or ``None`` when it is absolute or climbs out."""
    name = name.replace("\\", "/")
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        return None
    parts = tuple(p for p in name.split("/") if p not in ("", "."))
    if any(p == ".." for p in parts):
        return None
    return parts


def _capped(opener, cap: int, declared: int) -> Callable[[], bytes]:
    def read() -> bytes:
        if declared > cap:
            raise ValueError(f"文件过大 / too large ({declared / 2**20:.1f} MiB > {cap >> 20} MiB)")
        with opener() as handle:
            data = handle.read(cap + 1)
        if len(data) > cap:
            raise ValueError(f"文件过大 / too large (> {cap >> 20} MiB, whatever its header says)")
        return data
    return read


class _Walker:
    def __init__(self):
        self.members: list[Member] = []
        self.problems: list[Problem] = []
        self.seen = 0
        self.nested_bytes = 0

    def _count(self, where: str) -> bool:
        self.seen += 1
        if self.seen > MAX_MEMBERS:
            if self.seen == MAX_MEMBERS + 1:
                self.problems.append(Problem(where, f"条目超过 {MAX_MEMBERS} 个，其余未读 / more than {MAX_MEMBERS} "
                                                    "entries: the rest is not read"))
            return False
        return True

    def _file(self, parts: tuple[str, ...], size: int, mtime, opener, depth: int, in_zip: bool = True) -> None:
        where = "/".join(student_id(p) for p in parts)
        name = parts[-1]
        lower = name.lower()
        if any(SYSTEM_FILES.match(p) for p in parts):
            self.problems.append(Problem(where, "系统文件，已忽略 / system file (macOS/Windows/Jupyter), ignored",
                                         ignored=True))
        elif lower.endswith(".zip"):
            if depth >= MAX_DEPTH:
                self.problems.append(Problem(where, f"压缩包嵌套超过 {MAX_DEPTH} 层，未打开 / zip nested more than "
                                                    f"{MAX_DEPTH} levels deep: not opened"))
                return
            if self.nested_bytes + size > MAX_NESTED_TOTAL:
                self.problems.append(Problem(where, f"内嵌压缩包合计超过 {MAX_NESTED_TOTAL >> 30} GiB，未打开 / "
                                                    f"nested zips past {MAX_NESTED_TOTAL >> 30} GiB in all: "
                                                    "not opened"))
                return
            try:
                data = _capped(opener, MAX_NESTED_BYTES, size)()
                self.nested_bytes += len(data)
                archive = zipfile.ZipFile(io.BytesIO(data))
            except (ValueError, zipfile.BadZipFile, OSError, EOFError) as exc:
                self.problems.append(Problem(where, f"压缩包无法打开 / zip not opened: {exc}"))
                return
            self.zip(archive, parts, depth + 1)  # left open: its members are read later (memory only)
        elif lower.endswith(OTHER_ARCHIVES):
            self.problems.append(Problem(where, "只读取 .zip：请先解压，再导入解压后的文件夹 / archive format not read "
                                                "(only .zip): unpack it and import the folder"))
        else:
            self.members.append(Member(parts, size, mtime, _capped(opener, MAX_FILE_BYTES, size),
                                       wall_clock=in_zip))

    def zip(self, archive: zipfile.ZipFile, prefix: tuple[str, ...], depth: int) -> None:
        for info in archive.infolist():
            name = _zip_name(info)
            where = "/".join(student_id(p) for p in prefix + (name,))
            if not self._count(where):
                return
            if info.is_dir():
                continue
            parts = _safe_parts(name)
            mode = info.external_attr >> 16
            if parts is None or not parts:
                self.problems.append(Problem(where, "压缩包中的路径不安全（绝对路径或 '..'），已拒绝 / unsafe path in the zip "
                                                    "(absolute or '..'): refused, nothing written for it"))
            elif stat.S_ISLNK(mode):
                self.problems.append(Problem(where, "符号链接，已拒绝 / symbolic link in the zip: refused, not followed"))
            elif mode and stat.S_IFMT(mode) and not stat.S_ISREG(mode):
                self.problems.append(Problem(where, "不是普通文件，已拒绝 / not a regular file in the zip: refused"))
            elif info.flag_bits & 0x1:
                self.problems.append(Problem(where, "加密的文件，已拒绝 / encrypted zip member: refused"))
            else:
                try:
                    mtime = _zip_time(info)
                except (ValueError, OverflowError):
                    mtime = None
                self._file(prefix + parts, info.file_size, mtime,
                           lambda info=info: archive.open(info), depth)

    def folder(self, root: Path) -> None:
        for path, dirs, files in os.walk(root, followlinks=False):
            here = Path(path)
            rel = here.relative_to(root).parts
            for name in sorted(dirs):
                if (here / name).is_symlink():
                    self.problems.append(Problem("/".join(student_id(p) for p in rel + (name,)),
                                                 "符号链接，已拒绝 / symbolic link: refused, not followed"))
            dirs[:] = sorted(d for d in dirs if not (here / d).is_symlink())
            for name in sorted(files):
                parts = rel + (name,)
                where = "/".join(student_id(p) for p in parts)
                if not self._count(where):
                    return
                try:
                    st = os.lstat(here / name)
                except OSError as exc:
                    self.problems.append(Problem(where, f"无法读取 / unreadable ({type(exc).__name__})"))
                    continue
                if stat.S_ISLNK(st.st_mode):
                    self.problems.append(Problem(where, "符号链接，已拒绝 / symbolic link: refused, not followed"))
                elif not stat.S_ISREG(st.st_mode):
                    self.problems.append(Problem(where, "不是普通文件，已拒绝 / not a regular file: refused"))
                else:
                    self._file(parts, st.st_size, st.st_mtime, _file_opener(here / name), 0, in_zip=False)


def _file_opener(path: Path):
    def opener():
        if hasattr(os, "O_NOFOLLOW"):  # refuses a file swapped for a link or a FIFO since the lstat above
            return io.BytesIO(read_regular(path, MAX_NESTED_BYTES))
        # Windows (no O_NOFOLLOW; import and export run there too, only grading needs Linux)
        if not stat.S_ISREG(os.lstat(path).st_mode):
            raise ValueError("不是普通文件 / not a regular file")
        with open(path, "rb") as handle:
            return io.BytesIO(handle.read(MAX_NESTED_BYTES + 1))
    return opener


def _zip_time(info: zipfile.ZipInfo) -> float:
    """The member's time as seconds: zip times are local and zone-less, so they are read as UTC and
    only ever compared with each other (resubmissions inside one download)."""
    import calendar

    return float(calendar.timegm(tuple(info.date_time) + (0, 0, -1)))


def walk(source: Path) -> tuple[list[Member], list[Problem]]:
    """Every file of ``source`` (a ``.zip`` or a folder) and every entry refused, in path order."""
    source = Path(source)
    walker = _Walker()
    st = os.lstat(source)
    if stat.S_ISLNK(st.st_mode):
        raise ValueError(f"{source} is a symbolic link; give the download itself")
    if stat.S_ISDIR(st.st_mode):
        walker.folder(source)
    elif stat.S_ISREG(st.st_mode) and zipfile.is_zipfile(source):
        # left open for the members' readers; closed when the last reader is dropped
        walker.zip(zipfile.ZipFile(source), (), 0)
    else:
        raise ValueError(f"{source} is neither a folder nor a zip file (an LMS's \"download all submissions\")")
    walker.members.sort(key=lambda m: m.path)
    return walker.members, walker.problems
