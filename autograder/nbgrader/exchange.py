"""nbgrader's filesystem exchange, with identity and time taken from the OS, not from names.

nbgrader 0.9.6's default exchange trusts what a student writes: ``collect`` attributes a
submission to the user named in its folder name (a differing owner is one log line,
"cheating attempt?"), takes its time from that name and from the student's own
``timestamp.txt``, and copies symlinks as their targets. On a server where every student
has a terminal, that lets one student be graded as another and back-date work
(issue 16). These classes plug into nbgrader's own extension point
(``c.ExchangeFactory.<action> = "autograder.nbgrader.exchange.<Class>"``, see
``hub/jupyter/*/nbgrader_config.py``) and change only what is needed:

- **Collect** refuses (never just warns) a submission whose folder or any file in it is
  not owned by the OS account it names, that holds a symlink, a FIFO, a device or a
  socket, or that is larger than ``CourseDirectory.max_dir_size``. It copies through
  file descriptors opened with ``O_NOFOLLOW`` (a file swapped for a symlink while it is
  copied is refused too). The submission time is the newest *ctime* of the copied inodes:
  the kernel sets it on every change and no user can set it back (only the system
  clock could), so a student can make a submission look later, never earlier. That time,
  not the student's, goes into ``timestamp.txt`` of ``submitted/`` (what ``autograde``
  and late penalties read) and chooses the newest submission per student. A backup and
  restore gives every inode a new ctime, so Collect also keeps a ledger of arrivals in the
  course root (``collect_arrivals.json``, the course account's, backed up with the gradebook):
  per submission folder, the digest of its content and the trusted time it was first seen
  with that content. A folder whose content is unchanged keeps that time (a restore changes no
  time, no late penalty and re-takes nothing); any change of content is dated by ctime again.
  Refused
  submissions are skipped, the student's own valid submission is still collected, and
  the run ends with an error naming each refusal, so the Formgrader's Collect shows
  "Error", not "Success".
- **Release assignment / release feedback** never create or reuse a course folder, or
  its ``outbound/``, ``inbound/`` or ``feedback/``, that someone else owns or that is a
  symlink; ``inbound/`` gets the sticky bit (students cannot rename or delete each
  other's submissions); the exchange root is never loosened (nbgrader chmods it to
  0777, dropping the sticky bit).
- **Fetch assignment / fetch feedback** (the student's side) accept only files owned by
  the course folder's owner, not writable by others and not symlinks: what a classmate
  planted is refused, not fetched.
- **Submit** leaves the submission folder 0755 (nbgrader makes it 0777 "so the
  instructor can delete later", which lets anyone who learns its name write into it).

The exchange itself is laid out by ``hub/provision.py`` (root 1777, course folders owned
by the course account). Group-shared exchanges (``CourseDirectory.groupshared``) are not
supported: ownership is the identity here.
"""

from __future__ import annotations

import base64
import datetime
import fnmatch
import hashlib
import json
import os
import pwd
import shutil
import stat
from contextlib import suppress

from dateutil.tz import gettz
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.exchange import ExchangeError, default
from nbgrader.utils import check_mode, get_username, notebook_hash
from traitlets import Integer, Unicode

_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a FIFO swapped in after the check must not hang the collector
_OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def uid_for(name: str, base: int) -> int:
    """The uid of hub user ``name`` where there is no passwd entry (Kubernetes, hub/z2jh/).

    ``base + (first 4 bytes of sha256(name)) mod 2**30``; hub/z2jh/values.yaml's
    ``hub.extraConfig`` spawns each student's pod with the same formula (and refuses a
    spawn whose uid collides with another user's, so two users never share one).
    """
    return base + int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:4], "big") % (1 << 30)


#: The ledger of arrivals Collect keeps in the course root (module docstring).
ARRIVALS = "collect_arrivals.json"

#: Deepest folder nesting and most files and folders in one submission Collect accepts.
MAX_DEPTH, MAX_ENTRIES = 20, 10_000


def _check_secret(dirfd: int) -> None:
    """nbgrader's ``submission_secret.txt`` is written by the student's own ``submit``; an empty or
    odd one later fails *Release feedback* for the whole class (nbgrader asserts on it)."""
    try:
        fd = os.open("submission_secret.txt", os.O_RDONLY | os.O_NOFOLLOW, dir_fd=dirfd)
    except FileNotFoundError:
        return
    except OSError as error:
        raise Refused(f"submission_secret.txt cannot be opened safely ({error.strerror})") from None
    with os.fdopen(fd, "rb") as handle:
        secret = handle.read(257)
    if not 8 <= len(secret.strip()) <= 256 or not secret.strip().isascii() or not secret.strip().decode().isprintable():
        raise Refused("submission_secret.txt is not a secret nbgrader's submit writes (empty, too long or not text)")

def personal_spaces(inbound: str) -> list[str]:
    """The students' own inbound spaces: folders of ``inbound/`` named without '+' (hub/provision.py
    mounts each student's image there), sorted; a symlink is none."""
    try:
        names = sorted(os.listdir(inbound))
    except OSError:
        return []
    return [n for n in names if "+" not in n and not n.startswith(".")
            and stat.S_ISDIR(os.lstat(os.path.join(inbound, n)).st_mode)]


class Refused(Exception):
    """A submission or released file that is not what it claims to be."""


def _owner_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def check_tree(path: str, uid: int) -> None:
    """Raise `Refused` unless ``path`` and everything below it belong to ``uid``.

    Owned by ``uid``, not writable by others, no symlinks, only regular files
    and folders: what the course account releases, checked by the student before use.
    """
    below = (os.path.join(root, n) for root, dirs, files in os.walk(path) for n in dirs + files)
    for name in (path, *below):      # os.walk yields nothing for a file: check path itself first
        st = os.lstat(name)
        if stat.S_ISLNK(st.st_mode):
            raise Refused(f"{name} is a symlink")
        if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
            raise Refused(f"{name} is not a regular file or folder")
        if st.st_uid != uid:
            raise Refused(f"{name} is owned by {_owner_name(st.st_uid)}, not by {_owner_name(uid)}")
        if st.st_mode & 0o002:     # group-writable is the owner's private group (umask 002)
            raise Refused(f"{name} is writable by others (mode {stat.S_IMODE(st.st_mode):o})")


class _Checked(default.Exchange):
    """Shared rules: the root is never loosened; course folders are never someone else's."""

    def ensure_root(self):
        if self.coursedir.groupshared:
            self.fail("autograder.nbgrader.exchange does not support CourseDirectory.groupshared: "
                      "file ownership is the identity of a submission")
        if not os.path.isdir(self.root):
            try:
                os.makedirs(self.root)
                os.chmod(self.root, 0o1777)
            except PermissionError:
                self.fail(f"Could not create the exchange {self.root}: permission denied")
        st = os.stat(self.root)
        if st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) != 0o1777:
            # world-writable needs the sticky bit: no one renames or replaces another's folder
            os.chmod(self.root, 0o1777)
        super().ensure_root()

    def ensure_directory(self, path, mode):
        if os.path.islink(path):
            self.fail(f"{path} is a symlink: refused (the course account creates its own folders)")
        if not os.path.isdir(path):
            os.makedirs(path)
            os.chmod(path, mode)
            return
        st = os.stat(path)
        if st.st_uid != os.geteuid():
            self.fail(f"{path} is owned by {_owner_name(st.st_uid)}, not by you: refused "
                      "(someone else created it; the exchange's course folders belong to the course account)")
        if os.path.basename(path) == "inbound" and personal_spaces(path):
            return      # each student submits into a space of their own: inbound/ stays closed to them
        wanted = stat.S_IMODE(mode) | (st.st_mode & stat.S_ISVTX)   # never drop inbound/'s sticky bit
        if stat.S_IMODE(st.st_mode) != wanted:
            os.chmod(path, wanted)

    def course_owner(self) -> int:
        """The uid owning this course's folder in the exchange (the course account)."""
        course = os.path.join(self.root, self.coursedir.course_id)
        st = os.lstat(course)
        if not stat.S_ISDIR(st.st_mode):
            self.fail(f"{course} is not a folder: refused")
        if st.st_mode & 0o002:
            self.fail(f"{course} is writable by others (mode {stat.S_IMODE(st.st_mode):o}): refused")
        return st.st_uid


class ExchangeReleaseAssignment(_Checked, default.ExchangeReleaseAssignment):
    """nbgrader's release, with owned course folders and a sticky ``inbound/``."""

    def init_dest(self):
        super().init_dest()
        # nbgrader's 2733 lets any student rename or delete another's submission folder
        os.chmod(self.inbound_path, stat.S_IMODE(os.stat(self.inbound_path).st_mode) | stat.S_ISVTX)


class ExchangeReleaseFeedback(_Checked, default.ExchangeReleaseFeedback):
    """nbgrader's release of feedback, never into a ``feedback/`` someone else made."""

    def init_dest(self):
        course = os.path.join(self.root, self.coursedir.course_id)
        if os.path.isdir(course) and os.stat(course).st_uid != os.geteuid():
            self.fail(f"{course} is owned by {_owner_name(os.stat(course).st_uid)}, not by you: refused")
        super().init_dest()

    def copy_files(self):
        """nbgrader's, releasing only a regular file ``<notebook>.html`` per notebook of the assignment
        (its ``source/`` or ``release/`` folder).

        What a student hands in next to her notebook goes through Autograde and Generate feedback into
        ``feedback/<student>/<assignment>/``; nbgrader's copy took every ``*.html`` there, and a folder
        ``plots.html/`` stopped the release with IsADirectoryError for every student after her, at every
        later release (red team, session 15). Anything else is skipped and logged.
        """
        exclude = set(filter(None, (self.coursedir.student_id_exclude or "").split(",")))
        notebooks = {name[:-6] for step in (self.coursedir.source_directory, self.coursedir.release_directory)
                     if os.path.isdir(folder := self.coursedir.format_path(step, ".", self.coursedir.assignment_id))
                     for name in os.listdir(folder) if name.endswith(".ipynb")}
        feedback = self.coursedir.format_path(self.coursedir.feedback_directory, ".", ".")
        students = sorted(os.listdir(feedback)) if os.path.isdir(feedback) else []
        for student_id in fnmatch.filter(students, self.coursedir.student_id or "*"):
            folder = self.coursedir.format_path(self.coursedir.feedback_directory, student_id,
                                                self.coursedir.assignment_id)
            if student_id in exclude or not os.path.isdir(folder):
                continue
            for name in sorted(os.listdir(folder)):
                page = os.path.join(folder, name)
                if not name.endswith(".html"):
                    continue
                if name[:-5] not in notebooks or os.path.islink(page) or not os.path.isfile(page):
                    self.log.warning("Not releasing %s: not the feedback page of a notebook of %s", page,
                                     self.coursedir.assignment_id)
                    continue
                with open(os.path.join(folder, "timestamp.txt")) as fh:
                    timestamp = fh.read()
                with open(os.path.join(folder, "submission_secret.txt")) as fh:
                    checksum = notebook_hash(secret=fh.read(), notebook_id=name[:-5])
                self.log.info("Releasing feedback for student '%s' on assignment '%s/%s/%s' (%s)", student_id,
                              self.coursedir.course_id, self.coursedir.assignment_id, name[:-5], timestamp)
                temporary = os.path.join(self.dest_path, f"{checksum}-tmp.html")
                shutil.copy(page, temporary)
                shutil.move(temporary, os.path.join(self.dest_path, f"{checksum}.html"))


class ExchangeFetchAssignment(_Checked, default.ExchangeFetchAssignment):
    """nbgrader's fetch, accepting only what the course account released."""

    def init_src(self):
        super().init_src()
        owner = self.course_owner()
        try:
            st = os.lstat(self.outbound_path)
            if st.st_uid != owner or st.st_mode & 0o002 or not stat.S_ISDIR(st.st_mode):
                raise Refused(f"{self.outbound_path} is not the course account's own folder")
            check_tree(self.src_path, owner)
        except Refused as why:
            self.fail(f"Refused to fetch {self.coursedir.assignment_id}: {why}. Tell your instructor.")


class ExchangeFetchFeedback(_Checked, default.ExchangeFetchFeedback):
    """nbgrader's fetch of feedback, accepting only files the course account wrote."""

    def init_src(self):
        super().init_src()
        owner = self.course_owner()
        try:
            st = os.lstat(self.outbound_path)
            if st.st_uid != owner or st.st_mode & 0o002 or not stat.S_ISDIR(st.st_mode):
                raise Refused(f"{self.outbound_path} is not the course account's own folder")
            for _, _, path in self.feedback_files:
                check_tree(path, owner)
        except Refused as why:
            self.fail(f"Refused to fetch feedback: {why}. Tell your instructor.")


class ExchangeSubmit(_Checked, default.ExchangeSubmit):
    """nbgrader's submit into the student's own inbound space where there is one (``inbound/<account>``,
    a file system of its own: filling it blocks no one else), leaving the folder 0755 instead of 0777."""

    def init_dest(self):
        inbound = os.path.join(self.root, self.coursedir.course_id, "inbound")
        own = os.path.join(inbound, get_username())
        if self.coursedir.course_id == "" or not os.path.isdir(own) or os.path.islink(own):
            return super().init_dest()
        # nbgrader's init_dest, with the student's own space as the inbound
        if not self.authenticator.has_access(self.coursedir.student_id, self.coursedir.course_id):
            self.fail("You do not have access to this course.")
        if not check_mode(own, write=True, execute=True):
            self.fail(f"You don't have write permissions to your inbound folder: {own}")
        self.inbound_path = own
        self.cache_path = os.path.join(self.cache, self.coursedir.course_id)
        student_id = self.coursedir.student_id if self.coursedir.student_id != "*" else get_username()
        if "*" in student_id or "+" in student_id:
            self.fail(f"The student ID should contain no '*' nor '+'; got {student_id}")
        parts = [student_id, self.coursedir.assignment_id, self.timestamp]
        if self.add_random_string:
            parts.append(base64.urlsafe_b64encode(os.urandom(9)).decode("ascii"))
        self.assignment_filename = "+".join(parts)

    def copy_files(self):
        super().copy_files()
        with suppress(OSError):
            os.chmod(os.path.join(self.inbound_path, self.assignment_filename), 0o755)


class ExchangeCollect(_Checked, default.ExchangeCollect):
    """nbgrader's collect with identity from file ownership and time from ctime (module docstring)."""

    uid_base = Integer(
        0, help="0: a student's uid is that of their OS account (/etc/passwd). Otherwise: uid_for(name, "
                "uid_base), the uid their pod runs as (Kubernetes, hub/z2jh/values.yaml).").tag(config=True)
    roster_file = Unicode(
        "", help="the class's roster as provisioning applied it (SRV/roster.json of hub/roster_ops.py): the "
                 "folders of ids not among its students are skipped, with a log line (a student removed from "
                 "the class). Empty or missing: every student's folder is taken.").tag(config=True)

    def init_src(self):
        if self.coursedir.course_id == "":
            self.fail("No course id specified. Re-run with --course flag.")
        self.course_path = os.path.join(self.root, self.coursedir.course_id)
        self.inbound_path = os.path.join(self.course_path, "inbound")
        if not os.path.isdir(self.inbound_path):
            self.fail(f"Course not found: {self.inbound_path}")
        st = os.lstat(self.inbound_path)
        if stat.S_ISLNK(st.st_mode) or st.st_uid not in (os.geteuid(), 0):
            self.fail(f"{self.inbound_path} is not the course account's folder: refused")
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
            try:
                self.duedate = gb.find_assignment(self.coursedir.assignment_id).duedate
            except MissingEntry:
                self.duedate = None
        self.refused: list[str] = []
        self._arrivals = self._load_arrivals()
        # the name only says whom the folder claims to be; its time part is ignored (and may be junk)
        pattern = "{}+{}+*".format(self.coursedir.student_id or "*", self.coursedir.assignment_id)
        # inbound/ itself and each student's own space in it (inbound/<account>/, hub/provision.py)
        names = [name for name in sorted(os.listdir(self.inbound_path)) if "+" in name]
        for space in personal_spaces(self.inbound_path):
            try:
                names += [f"{space}/{name}" for name in sorted(os.listdir(os.path.join(self.inbound_path, space)))]
            except OSError as error:
                self.refused.append(f"{space}/: unreadable for the course account ({error.strerror})")
        pattern_records = [{"username": name.rsplit("/", 1)[-1].split("+", 1)[0], "filename": name}
                           for name in names if fnmatch.fnmatch(name.rsplit("/", 1)[-1], pattern)]
        on_roster = self._students()
        if on_roster is not None:
            for record in [r for r in pattern_records if r["username"] not in on_roster]:
                self.log.warning("Skipped %s: %s is not on the class's roster (%s)", record["filename"],
                                 record["username"], self.roster_file)
                pattern_records.remove(record)
        valid = []
        for record in pattern_records:
            try:
                record["timestamp"] = self._trusted_time(record)
            except Refused as why:
                self.refused.append(f"{record['filename']} (made by {self._maker(record)}): {why}")
                self.log.error("Refused submission %s: %s", record["filename"], why)
                continue
            valid.append(record)
        per_student: dict[str, list[dict]] = {}
        for record in valid:
            per_student.setdefault(record["username"], []).append(record)
        self.src_records = []
        for records in per_student.values():
            records = self._sort_by_timestamp(records)
            if self.duedate is not None and self.before_duedate:
                on_time = [r for r in records if r["timestamp"] <= self.duedate]
                records = on_time or records
            self.src_records.append(records[0])

    def _students(self) -> set[str] | None:
        """The students on the roster file, or None (no roster file: everyone's folder is taken)."""
        try:
            with open(self.roster_file, encoding="utf-8") as handle:
                return set(json.load(handle)["students"])
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as error:
            self.fail(f"{self.roster_file} cannot be read ({error}): provision the class again (sudo make hub)")

    def _maker(self, record: dict) -> str:
        """Whose a submission folder is: its owner (the account that made it), whatever its name says."""
        try:
            return _owner_name(os.lstat(os.path.join(self.inbound_path, record["filename"])).st_uid)
        except OSError:
            return "?"

    def _uid_of(self, student: str) -> int:
        if self.uid_base:
            return uid_for(student, self.uid_base)
        try:
            return pwd.getpwnam(student).pw_uid
        except KeyError:
            raise Refused(f"no OS account named {student!r}") from None

    def _trusted_time(self, record: dict) -> datetime.datetime:
        """The newest ctime of the submission's inodes (or its ledger time), after checking them (no copy)."""
        uid = self._uid_of(record["username"])
        newest, digest = self._walk(os.path.join(self.inbound_path, record["filename"]), uid, None)
        return self._as_datetime(self._arrival(record["filename"], uid, newest, digest))

    def _as_datetime(self, ctime: float) -> datetime.datetime:
        return datetime.datetime.fromtimestamp(ctime, tz=datetime.timezone.utc).replace(tzinfo=None)

    def _walk(self, src: str, uid: int, dest: str | None) -> tuple[float, str]:
        """Check (and copy to ``dest`` when given) the tree ``src`` through O_NOFOLLOW descriptors.

        Returns the newest ctime seen and a digest of the content (every folder's and file's
        relative name, every file's bytes, in sorted order); raises `Refused` at the first inode
        not owned by ``uid``, symlink or special file, or when the total size exceeds the limit.
        """
        limit = 1000 * self.coursedir.max_dir_size
        max_file = 1000 * self.coursedir.max_file_size
        state = {"newest": 0.0, "size": 0}
        digest = hashlib.sha256()

        def check(st, name):
            if st.st_uid != uid:
                raise Refused(f"{name} is owned by {_owner_name(st.st_uid)}, not by {_owner_name(uid)}")
            state["newest"] = max(state["newest"], st.st_ctime)

        def visit(dirfd: int, rel: str, out: str | None, depth: int = 0) -> None:
            check(os.fstat(dirfd), rel or ".")
            # A student's own folder must not be able to stop Collect for the class (3000 nested
            # folders made the recursion fail; a million empty files would take hours).
            if depth > MAX_DEPTH:
                raise Refused(f"folders nested deeper than {MAX_DEPTH}")
            if out is not None:
                os.makedirs(out, exist_ok=True)
            entries = os.listdir(dirfd)
            state["entries"] = state.get("entries", 0) + len(entries)
            if state["entries"] > MAX_ENTRIES:
                raise Refused(f"more than {MAX_ENTRIES} files and folders")
            for entry in sorted(entries):
                name = os.path.join(rel, entry)
                if any(fnmatch.fnmatch(entry, glob) for glob in self.coursedir.ignore):
                    continue
                st = os.stat(entry, dir_fd=dirfd, follow_symlinks=False)
                if stat.S_ISLNK(st.st_mode):
                    raise Refused(f"{name} is a symlink")
                if stat.S_ISDIR(st.st_mode):
                    digest.update(b"D" + name.encode("utf-8", "surrogateescape") + b"\0")
                    fd = os.open(entry, _OPEN_DIR, dir_fd=dirfd)
                    try:
                        visit(fd, name, None if out is None else os.path.join(out, entry), depth + 1)
                    finally:
                        os.close(fd)
                elif stat.S_ISREG(st.st_mode):
                    try:
                        fd = os.open(entry, _OPEN_FILE, dir_fd=dirfd)
                    except OSError as error:      # ELOOP: swapped for a symlink meanwhile
                        raise Refused(f"{name} cannot be opened safely ({error.strerror})") from None
                    try:
                        fst = os.fstat(fd)
                        if not stat.S_ISREG(fst.st_mode):
                            raise Refused(f"{name} is not a regular file")
                        check(fst, name)
                        if fst.st_size > max_file:
                            self.log.warning("Ignoring %s: larger than %d kB (CourseDirectory.max_file_size)",
                                             name, self.coursedir.max_file_size)
                            continue
                        state["size"] += fst.st_size
                        if state["size"] > limit:
                            raise Refused(f"larger than {self.coursedir.max_dir_size} kB (CourseDirectory.max_dir_size)")
                        digest.update(b"F" + name.encode("utf-8", "surrogateescape") + b"\0")
                        with os.fdopen(os.dup(fd), "rb") as source:
                            target = open(os.path.join(out, entry), "wb") if out is not None else None
                            try:
                                while chunk := source.read(1 << 20):
                                    digest.update(chunk)
                                    if target is not None:
                                        target.write(chunk)
                            finally:
                                if target is not None:
                                    target.close()
                        digest.update(b"\0")
                        check(os.fstat(fd), name)       # a change while copying moves the time forward
                    finally:
                        os.close(fd)
                else:
                    raise Refused(f"{name} is not a regular file or folder")

        try:
            top = os.open(src, _OPEN_DIR)
        except OSError as error:
            raise Refused(f"cannot be opened safely ({error.strerror}; a symlink or not a folder?)") from None
        try:
            visit(top, "", dest)
            _check_secret(top)
        except PermissionError as error:
            raise Refused(f"unreadable for the course account ({error.filename or error.strerror})") from None
        finally:
            os.close(top)
        return state["newest"], digest.hexdigest()

    # The ledger of arrivals (module docstring): {folder: {"digest", "uid", "time"}}.
    def _arrivals_path(self) -> str:
        return os.path.join(self.coursedir.root, ARRIVALS)

    def _load_arrivals(self) -> dict:
        try:
            with open(self._arrivals_path(), encoding="utf-8") as handle:
                ledger = json.load(handle)
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as error:
            # A ledger that cannot be read must not silently date every submission anew.
            self.fail(f"{self._arrivals_path()} cannot be read ({error}): restore it from the backup, "
                      "or move it away to date every submission by its files' ctime again")
        return ledger if isinstance(ledger, dict) else {}

    def _save_arrivals(self) -> None:
        path = self._arrivals_path()
        tmp = f"{path}.tmp-{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump(self._arrivals, handle, indent=0, sort_keys=True)
        os.replace(tmp, path)

    def _arrival(self, folder: str, uid: int, newest: float, digest: str) -> float:
        """The trusted time of ``folder``: its first sighting with this content, else ``newest``."""
        seen = self._arrivals.get(folder)
        if isinstance(seen, dict) and seen.get("digest") == digest and seen.get("uid") == uid \
                and isinstance(seen.get("time"), (int, float)):
            return min(float(seen["time"]), newest)
        self._arrivals[folder] = {"digest": digest, "uid": uid, "time": newest}
        return newest

    def do_copy(self, src, dest, log=None):
        """Copy a checked submission; ``timestamp.txt`` gets the trusted time."""
        uid = self._uid_of(self._current["username"])
        newest, digest = self._walk(src, uid, dest)
        when = self._as_datetime(self._arrival(self._current["filename"], uid, newest, digest))
        stamp = when.replace(tzinfo=datetime.timezone.utc).astimezone(gettz(self.timezone)).strftime(self.timestamp_format)
        with open(os.path.join(dest, "timestamp.txt"), "w") as handle:
            handle.write(stamp)

    def copy_files(self):
        try:
            self._copy_each()
        finally:
            self._save_arrivals()

    def _copy_each(self):
        records = self.src_records
        if not records:
            super().copy_files()        # nbgrader's "No submissions ... to collect"
        for record in records:
            self._current = record
            self.src_records = [record]
            dest = self.coursedir.format_path(self.coursedir.submitted_directory, record["username"],
                                              self.coursedir.assignment_id)
            try:
                super().copy_files()
            except Refused as why:
                shutil.rmtree(dest, ignore_errors=True)
                self.refused.append(f"{record['filename']} (made by {self._maker(record)}): {why}")
                self.log.error("Refused submission %s: %s", record["filename"], why)
        self.src_records = records
        if self.refused:
            raise ExchangeError(
                "Refused {} submission(s) of '{}' (not collected; every other submission was):\n  {}".format(
                    len(self.refused), self.coursedir.assignment_id, "\n  ".join(self.refused)))


def configure(c) -> None:
    """Select these classes in an nbgrader config ``c`` (``hub/jupyter/*/nbgrader_config.py``)."""
    for action, cls in (("release_assignment", ExchangeReleaseAssignment), ("release_feedback", ExchangeReleaseFeedback),
                        ("fetch_assignment", ExchangeFetchAssignment), ("fetch_feedback", ExchangeFetchFeedback),
                        ("submit", ExchangeSubmit), ("collect", ExchangeCollect)):
        setattr(c.ExchangeFactory, action, f"{__name__}.{cls.__name__}")
