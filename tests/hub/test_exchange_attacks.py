"""Issue 16's attacks on the class server's exchange, accounts and host, as tests.

The class is the session's class server (``tests/support/hubserver.py``: provisioned once with
``hub/provision.py`` into a temporary ``--srv``; these tests use its ``dpx-*`` accounts, so
that the other hub tests' students are not touched; the hub itself is needed only by the test of a
handed-in page in the Formgrader). Students act with the
powers their JupyterLab terminal gives them: a shell as their OS user (``runuser``) and
nbgrader as that user with the hub's student configuration. The instructor acts as the
Formgrader does: ``NbGraderAPI.collect`` (what its Collect button posts to) as the course
account, then ``SRV/grade.sh`` (the trusted grader and the gradebook import).

Attacks (issue 16): graded as someone else, back-dated, hijacked the exchange, filled the
disk through the inbound, logged in as the instructor with a demo password, left the host looser. Each must fail, and the
controls' grades stay exact (bob 8, carol 10, the attacker alice her own 10).

Needs root (useradd, runuser); skipped with the reason otherwise. CI runs as root.
"""

from __future__ import annotations

import csv
import datetime
import hashlib
import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest

from tests.support.hubserver import ROOT, SIZES, course_record, course_venv, modes_above, released

ASSIGNMENT = "laplace"
GRADER = "grader-dp-course"
ALICE, BOB, CAROL, TEACHER = "dpx-alice", "dpx-bob", "dpx-carol", "dpx-teacher"
SOLUTIONS = {   # tests/corpus variants; alice attacks with a correct notebook of her own
    ALICE: {"laplace_noise": "inverse_cdf", "laplace_mechanism": "vectorized"},
    BOB: {"laplace_noise": "inverse_cdf", "laplace_mechanism": "eps_over_delta"},
    CAROL: {"laplace_noise": "inverse_cdf", "laplace_mechanism": "vectorized"},
}
EXPECTED = {ALICE: 10.0, BOB: 8.0, CAROL: 10.0}
FUTURE = "2099-01-01 00:00:00.000000 UTC"
PAST = "2026-01-01 00:00:00.000000 UTC"

# the first test carries the setup: building the course's Python on a fresh machine (minutes) and grading
# One worker runs every class-server test in turn (they share OS accounts and the course account).
pytestmark = [pytest.mark.nbgrader, pytest.mark.timeout(1800), pytest.mark.xdist_group("hub")]


class Class:
    def __init__(self, srv: Path):
        self.srv, self.course, self.exchange = srv, srv / "course", srv / "exchange"
        self.bin = course_venv() / "bin"
        self.inbound = self.exchange / "dp-course" / "inbound"

    def env(self, user: str, kind: str) -> dict:
        home = pwd.getpwnam(user).pw_dir
        return {"HOME": home, "USER": user, "LOGNAME": user, "LANG": "C.UTF-8",
                "PATH": f"{self.bin}:/usr/local/bin:/usr/bin:/bin", "MPLBACKEND": "Agg",
                "NBGRADER_EXCHANGE": str(self.exchange), "JUPYTER_CONFIG_PATH": str(self.srv / "jupyter" / kind),
                "DP_PYTHON": str(self.bin / "python")}

    def run(self, user: str, *cmd, kind: str = "student", cwd=None, check=True) -> subprocess.CompletedProcess:
        """``cmd`` as the OS account ``user`` (what their terminal runs), with the hub's environment."""
        env = self.env(user, kind)
        result = subprocess.run(["runuser", "-u", user, "--", "env", "-i", *(f"{k}={v}" for k, v in env.items()),
                                 *map(str, cmd)], cwd=cwd or env["HOME"], capture_output=True, text=True)
        if check and result.returncode != 0:
            raise AssertionError(f"{user}: {cmd} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
        return result

    def entries(self) -> set[str]:
        """Every submission folder of the exchange: ``space/name`` in the students' own spaces, else ``name``."""
        found = set()
        for entry in self.inbound.iterdir():
            if "+" in entry.name:
                found.add(entry.name)
            elif entry.is_dir():
                found |= {f"{entry.name}/{sub.name}" for sub in entry.iterdir()}
        return found

    def shell(self, user: str, script: str) -> subprocess.CompletedProcess:
        return self.run(user, "bash", "-c", script, check=False)

    def nbgrader(self, user: str, *args, check=True):
        return self.run(user, self.bin / "nbgrader", *args, check=check)

    def collect(self) -> dict:
        """The Formgrader's Collect: ``NbGraderAPI.collect`` as the course account, in the course root."""
        script = ("import json; from nbgrader.apps import NbGrader, NbGraderAPI; "
                  "from nbgrader.coursedir import CourseDirectory\n"
                  "app = NbGrader(); app.load_config_file()\n"
                  "api = NbGraderAPI(CourseDirectory(config=app.config), config=app.config)\n"
                  f"print('RESULT' + json.dumps(api.collect({ASSIGNMENT!r})))")
        out = self.run(GRADER, self.bin / "python", "-c", script, kind="grader", cwd=self.course).stdout
        return json.loads(out.split("RESULT", 1)[1])


def write_solution(path: Path, student: str) -> None:
    """Put the student's solutions into their fetched notebook (what typing in JupyterLab does)."""
    nb = nbformat.read(path, as_version=4)
    for function, variant in SOLUTIONS[student].items():
        cell = next(c for c in nb.cells if c.cell_type == "code" and f"def {function}(" in c.source)
        cell.source = (ROOT / "tests" / "corpus" / ASSIGNMENT / function / f"{variant}.py").read_text(encoding="utf-8")
    nbformat.write(nb, path)


@pytest.fixture(scope="module")
def klass(class_server):
    return {"class": Class(class_server.srv), "provision": class_server.provision, "above": class_server.above,
            "srv": class_server.srv, "server": class_server}


@pytest.fixture(scope="module")
def graded(klass):
    """Release, students fetch and submit, alice attacks, the instructor collects and grades."""
    c: Class = klass["class"]
    if not released(c.course, c.exchange, ASSIGNMENT):      # (the shared class's earlier tests released it)
        c.run(GRADER, c.bin / "nbgrader", "generate_assignment", ASSIGNMENT, "--force", kind="grader", cwd=c.course)
        c.run(GRADER, c.bin / "nbgrader", "release_assignment", ASSIGNMENT, "--force", kind="grader", cwd=c.course)
    before = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    # the three fetch at once, as a class does (each into her own home), then bob and carol submit at once
    # (each into her own inbound space): two nbgrader start-ups of 4-20 s each under load fewer in a row
    with ThreadPoolExecutor(3) as pool:
        list(pool.map(lambda student: c.nbgrader(student, "fetch_assignment", ASSIGNMENT), (BOB, CAROL, ALICE)))
    for student in (BOB, CAROL, ALICE):
        notebook = Path(pwd.getpwnam(student).pw_dir) / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        write_solution(notebook, student)
        os.chown(notebook, pwd.getpwnam(student).pw_uid, pwd.getpwnam(student).pw_gid)
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda student: c.nbgrader(student, "submit", ASSIGNMENT), (BOB, CAROL)))
    names = c.entries()
    attacks = {}
    alice_home = pwd.getpwnam(ALICE).pw_dir
    own = c.inbound / ALICE        # her own inbound space (hub/provision.py), where her submit writes
    # Graded as someone else: a submission named for bob, dated in the future (issue 16)
    blank = c.exchange / "dp-course" / "outbound" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    attacks["as_bob"] = c.shell(ALICE, f"""set -e
        d="{own}/{BOB}+{ASSIGNMENT}+{FUTURE}+aaaa"; mkdir "$d"; cp "{blank}" "$d/"
        echo "{FUTURE}" > "$d/timestamp.txt"; echo s > "$d/submission_secret.txt"; chmod -R a+rX "$d" """)
    # nbgrader's own --student: the same claim through the official client
    attacks["as_bob_nbgrader"] = c.nbgrader(ALICE, "submit", ASSIGNMENT, f"--student={BOB}", check=False)
    # her real submission, then back-dated: timestamp.txt and the folder name say 2026-01-01
    c.nbgrader(ALICE, "submit", ASSIGNMENT)
    mine = next(p for p in own.iterdir() if p.name.startswith(f"{ALICE}+") and f"{ALICE}/{p.name}" not in names)
    attacks["backdate"] = c.shell(ALICE, f"""set -e
        echo "{PAST}" > "{mine}/timestamp.txt"; touch -d 2026-01-01 "{mine}"/*
        mv "{mine}" "{own}/{ALICE}+{ASSIGNMENT}+{PAST}+bbbb" """)
    # a newer submission of her own whose notebook is a symlink to the instructor's solution
    attacks["symlink"] = c.shell(ALICE, f"""set -e
        d="{own}/{ALICE}+{ASSIGNMENT}+{FUTURE}+cccc"; mkdir "$d"
        ln -s "{c.course}/source/{ASSIGNMENT}/{ASSIGNMENT}.ipynb" "$d/{ASSIGNMENT}.ipynb"
        echo "{FUTURE}" > "$d/timestamp.txt"; echo s > "$d/submission_secret.txt" """)
    # ... and one holding a notebook owned by carol (copied in by carol's account: collusion)
    # (her space is hers to open: collusion)
    c.shell(ALICE, f'd="{own}/{ALICE}+{ASSIGNMENT}+{FUTURE}+dddd"; mkdir "$d"; chmod 777 "$d" "{own}"')
    attacks["other_owned"] = c.shell(CAROL, f'cp ~/{ASSIGNMENT}/{ASSIGNMENT}.ipynb '
                                            f'"{own}/{ALICE}+{ASSIGNMENT}+{FUTURE}+dddd/"')
    c.shell(ALICE, f'chmod 750 "{own}"')
    bob_entry = next(c.inbound / n for n in names if n.startswith(f"{BOB}/{BOB}+"))
    attacks["move_bob"] = c.shell(ALICE, f'mv "{bob_entry}" "{c.inbound}/gone"')
    attacks["delete_bob"] = c.shell(ALICE, f'rm -rf "{bob_entry}"')
    attacks["write_bob"] = c.shell(ALICE, f'echo x > "{bob_entry}/planted.txt"')
    attacks["list_inbound"] = c.shell(ALICE, f'ls "{c.inbound}"')
    attacks["list_bob"] = c.shell(ALICE, f'ls "{c.inbound / BOB}"')
    attacks["write_inbound"] = c.shell(ALICE, f'mkdir "{c.inbound}/{ALICE}+{ASSIGNMENT}+x+y"')
    collected = c.collect()
    after = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    grading = c.run(GRADER, "bash", c.srv / "grade.sh", ASSIGNMENT, kind="grader", cwd=c.course, check=False)
    return {"attacks": attacks, "collect": collected, "grading": grading, "before": before, "after": after,
            "alice_home": alice_home}


def test_graded_as_someone_else_is_refused_and_grades_stay_exact(klass, graded):
    c: Class = klass["class"]
    assert graded["attacks"]["as_bob"].returncode == 0, "the folder is made (inbound is writable), then refused"
    result = graded["collect"]
    assert result["success"] is False, "the Formgrader's Collect must show an error, not Success"
    message = result.get("log", "") + result.get("error", "")
    for marker in (f"{BOB}+{ASSIGNMENT}+{FUTURE}+aaaa", "owned by dpx-alice, not by dpx-bob",
                   "+cccc", "symlink", "+dddd", "owned by dpx-carol, not by dpx-alice"):
        assert marker in message, (marker, message)
    assert graded["grading"].returncode == 0, graded["grading"].stdout + graded["grading"].stderr
    with open(c.course / "autograder" / ASSIGNMENT / "grades.csv", encoding="utf-8") as handle:
        rows = {r["student"]: r for r in csv.DictReader(handle)}
    scores = {s: float(rows[s]["score"]) for s in rows}
    # the shared class's other students (tests/browser/test_hub_e2e.py submitted as alice and bob
    # before) are graded too; no one else, and this class's scores are exact
    others = {p.name for p in (c.course / "submitted").iterdir()} - set(EXPECTED)
    assert not others & {s for s in scores if s.startswith("dpx-")}, others
    assert set(scores) == set(EXPECTED) | others, (scores, others)
    assert {s: scores[s] for s in EXPECTED} == EXPECTED, scores
    # bob's collected notebook is bob's own (his owner, his solution), not alice's blank
    nb = nbformat.read(c.course / "submitted" / BOB / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    mine = (ROOT / "tests" / "corpus" / ASSIGNMENT / "laplace_mechanism" / "eps_over_delta.py").read_text(encoding="utf-8")
    assert any(cell.source == mine for cell in nb.cells)


def test_solution_symlink_never_reaches_submitted(klass, graded):
    c: Class = klass["class"]
    text = (c.course / "submitted" / ALICE / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text(encoding="utf-8")
    assert text != (c.course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text(encoding="utf-8")
    assert "### BEGIN SOLUTION" not in text


def test_back_dated_submission_keeps_the_servers_time(klass, graded):
    c: Class = klass["class"]
    from nbgrader.utils import parse_utc

    stamp = parse_utc((c.course / "submitted" / ALICE / ASSIGNMENT / "timestamp.txt").read_text().strip())
    slack = datetime.timedelta(seconds=2)     # ctime has the file system's granularity
    assert graded["before"] - slack <= stamp <= graded["after"] + slack, (stamp, graded["before"])
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{c.course / 'gradebook.db'}", course_id="dp-course") as gb:
        recorded = gb.find_submission(ASSIGNMENT, ALICE).timestamp
    assert graded["before"] - slack <= recorded <= graded["after"] + slack, recorded


def test_students_cannot_touch_each_others_submissions(graded):
    attacks = graded["attacks"]
    for name in ("move_bob", "delete_bob", "write_bob", "list_inbound", "list_bob", "write_inbound"):
        assert attacks[name].returncode != 0, (name, attacks[name].stdout, attacks[name].stderr)


def test_exchange_cannot_be_hijacked(klass, graded):
    """The course folder, outbound and feedback cannot be renamed, replaced or planted into."""
    c: Class = klass["class"]
    course = c.exchange / "dp-course"
    st = c.exchange.stat()
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (0, 0o1777)
    grader_uid = pwd.getpwnam(GRADER).pw_uid
    for sub in ("", "outbound", "inbound", "feedback"):
        assert (course / sub).stat().st_uid == grader_uid, sub
    for script in (f'mv "{course}" "{c.exchange}/old"',
                   f'mv "{course}/outbound" "{course}/x"',
                   f'mkdir "{course}/feedback2"',
                   f'echo x > "{course}/outbound/{ASSIGNMENT}/{ASSIGNMENT}.ipynb"',
                   f'mkdir "{course}/outbound/planted"',
                   f'echo x > "{course}/feedback/0123abcd.html"',
                   f'mv "{course}/outbound/{ASSIGNMENT}" "{course}/outbound/x"'):
        result = c.shell(ALICE, script)
        assert result.returncode != 0, script
    # carol's fetched notebook is the released one, byte for byte
    fetched = Path(pwd.getpwnam(CAROL).pw_dir) / ASSIGNMENT
    released = c.course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert nbformat.read(course / "outbound" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4) == \
        nbformat.read(released, as_version=4)
    assert fetched.is_dir()


def test_feedback_reaches_only_its_student(klass, graded):
    """Release feedback as the course account; bob fetches his; alice cannot plant in feedback/."""
    c: Class = klass["class"]
    c.run(GRADER, c.bin / "nbgrader", "release_feedback", ASSIGNMENT, kind="grader", cwd=c.course)
    c.nbgrader(BOB, "fetch_feedback", ASSIGNMENT)
    mine = list((Path(pwd.getpwnam(BOB).pw_dir) / ASSIGNMENT / "feedback").glob("*/*.html"))
    assert len(mine) == 1, mine
    feedback = c.exchange / "dp-course" / "feedback"
    assert c.shell(ALICE, f'ls "{feedback}"').returncode != 0
    for page in feedback.iterdir():
        assert page.stat().st_uid == pwd.getpwnam(GRADER).pw_uid


#: a 1x1 PNG: a figure that a notebook shows from its folder (what SubmissionFilesHandler is for)
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c63f8cfc0f01f0005000201a5f1c6"
                    "b40000000049454e44ae426082")


def test_a_handed_in_page_runs_no_script_in_the_formgrader(klass, graded, hub):
    """What a student hands in besides her notebook, the Formgrader serves without running a script.

    The Formgrader's Autograde copies every other file of the submission into ``autograded/``, and
    nbgrader serves that folder at ``formgrader/submissions/<id>/<path>`` (for the figures a notebook
    shows), in the Formgrader's own origin. Red team (session 13, live): alice's ``fig.html``, linked
    from a markdown cell of her notebook (``[full-size figure](fig.html)``, kept by the sanitizer),
    ran there when the instructor clicked it while grading, read ``source/`` (the hidden tests) and
    opened a terminal as the course account. Now its page has a sandbox policy with no script, and
    a figure still comes as an image.
    """
    import sqlite3

    from tests.support.hubserver import Student

    c: Class = klass["class"]
    with sqlite3.connect(c.course / "gradebook.db") as db:
        (submission,) = db.execute(
            "SELECT submitted_notebook.id FROM submitted_notebook JOIN submitted_assignment "
            "ON submitted_assignment.id = submitted_notebook.assignment_id WHERE submitted_assignment.student_id = ?",
            (BOB,)).fetchone()
    folder = c.course / "autograded" / BOB / ASSIGNMENT
    handed_in = {"fig.html": b"<script>document.title = 'ran'</script>",
                 "fig.svg": b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
                 "fig.png": PNG}
    grader = pwd.getpwnam(GRADER)
    for name, data in handed_in.items():      # what Autograde copies from bob's submission
        (folder / name).write_bytes(data)
        os.chown(folder / name, grader.pw_uid, grader.pw_gid)
    try:
        teacher = Student(hub, TEACHER)
        host = f"dp-course--service.hub.localhost:{hub['port']}"
        for name, data in handed_in.items():
            got = teacher.http.get(f"{hub['local']}/services/dp-course/formgrader/submissions/{submission}/{name}",
                                   headers={"Host": host}, allow_redirects=False)
            assert (got.status_code, got.content) == (200, data), (name, got.status_code, got.text[:300])
            policy = [d.strip() for d in got.headers.get("Content-Security-Policy", "").split(";")]
            assert "sandbox" in policy and not any("allow-scripts" in d for d in policy), (name, policy)
            assert got.headers.get("X-Content-Type-Options") == "nosniff", name
        assert got.headers["Content-Type"] == "image/png"
    finally:
        for name in handed_in:
            (folder / name).unlink(missing_ok=True)


def test_fetch_refuses_a_planted_release(klass, graded, tmp_path):
    """If the exchange's permissions were ever loosened, the student's fetch still refuses what
    someone other than the course account put there."""
    c: Class = klass["class"]
    outbound = c.exchange / "dp-course" / "outbound" / ASSIGNMENT
    planted = outbound / "planted.py"
    planted.write_text("print('alice was here')\n")
    os.chown(planted, pwd.getpwnam(ALICE).pw_uid, -1)
    try:
        result = c.run(CAROL, c.bin / "nbgrader", "fetch_assignment", ASSIGNMENT, check=False,
                       cwd=Path(pwd.getpwnam(CAROL).pw_dir) / "course")
        assert result.returncode != 0
        assert "owned by dpx-alice" in result.stdout + result.stderr
    finally:
        planted.unlink()


def test_host_is_not_loosened(klass, graded):
    c: Class = klass["class"]
    after = {**modes_above(ROOT), **modes_above(Path(sys.base_prefix))}
    assert after == klass["above"], "provisioning changed a folder above the checkout or the interpreter"
    for secret in (ROOT / "source", ROOT / "tests", ROOT / ".git", ROOT / "README.md", c.course,
                   c.course / "source" / ASSIGNMENT, Path(pwd.getpwnam(BOB).pw_dir)):
        result = c.shell(ALICE, f'ls "{secret}" || cat "{secret}"')
        assert result.returncode != 0, f"{ALICE} can read {secret}"
    # the students' servers run from the course's Python, which they can reach without /root
    ok = c.run(ALICE, c.bin / "python", "-c",
               "import helpers.data, autograder.nbgrader.exchange, nbgrader, jupyterhub; "
               "print(helpers.data.DATA_DIR.is_dir())")
    assert ok.stdout.strip() == "True"


def test_a_full_inbound_blocks_only_its_owner(klass, graded):
    """Each student submits into a file system of her own (hub/provision.py: ``inbound/<id>``, an
    image of DP_HUB_INBOUND_LIMIT bytes with its own inodes). alice writes without end into a
    submission folder there: ENOSPC at her space's size; the exchange's own file system, the host's
    disk, the course root and the homes are elsewhere. bob still submits, the course account still
    releases, and Collect refuses her folder as too large, naming her, and collects bob's.
    (Issue 26: before, one shared inbound: 1,928 MiB and 70,000 files of hers left bob's Submit
    with ENOSPC and the course account unable to write outbound/.)"""
    c: Class = klass["class"]
    from provision import size_bytes

    cap, shared = size_bytes(SIZES["DP_HUB_INBOUND_LIMIT"]), size_bytes(SIZES["DP_HUB_EXCHANGE_LIMIT"])
    own = c.inbound / ALICE
    assert os.path.ismount(c.exchange) and os.path.ismount(own)
    fs = os.statvfs(own)
    assert cap // 2 <= fs.f_blocks * fs.f_frsize <= cap, (fs.f_blocks * fs.f_frsize, cap)
    devices = {c.exchange.stat().st_dev, own.stat().st_dev, (c.inbound / BOB).stat().st_dev}
    assert len(devices) == 3 and not devices & {c.srv.stat().st_dev, c.course.stat().st_dev,
                                                Path(pwd.getpwnam(BOB).pw_dir).stat().st_dev}
    folder = own / f"{ALICE}+{ASSIGNMENT}+{FUTURE}+eeee"
    # files under nbgrader's max_file_size (100 MB), together over its max_dir_size (100 MB): her space
    # (160 MiB in the tests, 256 MiB by default) holds more than Collect takes
    chunk = cap // 8
    fill = c.shell(ALICE, f'mkdir "{folder}" && for i in $(seq 16); do head -c {chunk} /dev/zero > "{folder}/part-$i" || exit 1; done')
    try:
        assert fill.returncode != 0 and "No space left on device" in fill.stderr, (fill.returncode, fill.stderr)
        written = sum(f.stat().st_size for f in folder.iterdir())
        assert cap // 2 <= written <= cap, (written, cap)
        # ... and her inodes: as many empty files as her space holds
        inodes = c.shell(ALICE, f'cd "{own}" && mkdir many && cd many && for i in $(seq 70000); do : > $i || exit 1; done')
        assert "No space left on device" in inodes.stderr, inodes.stderr[-300:]
        assert c.shell(ALICE, f'head -c {shared} /dev/zero > "{c.inbound}/fill"').returncode != 0
        before = c.entries()
        c.nbgrader(BOB, "submit", ASSIGNMENT)
        assert len([e for e in c.entries() - before if e.startswith(f"{BOB}/{BOB}+")]) == 1
        c.run(GRADER, c.bin / "nbgrader", "release_assignment", ASSIGNMENT, "--force", kind="grader", cwd=c.course)
        stamp = (c.course / "submitted" / BOB / ASSIGNMENT / "timestamp.txt").read_text()
        result = c.collect()
        message = result.get("log", "") + result.get("error", "")
        assert "+eeee (made by dpx-alice)" in message and "larger than" in message, message
        assert not any("part-" in p.name for p in (c.course / "submitted" / ALICE / ASSIGNMENT).iterdir())
        assert (c.course / "submitted" / BOB / ASSIGNMENT / "timestamp.txt").read_text() != stamp, \
            "bob's submission made after alice filled her space was not collected"
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(own / "many", ignore_errors=True)


def test_provisioning_refuses_a_planted_course_python(klass, tmp_path):
    """alice plants the course's Python of a checkout whose hub tests have not run yet.

    The tests keep one course Python per checkout in /var/tmp (shared, sticky) under a name
    anyone can compute. With stamps that match (requirements.txt is public, the base interpreter
    is in every venv's pyvenv.cfg), provisioning used to adopt her folder: the hub then ran her
    ``bin/jupyterhub-singleuser`` as the course account and as every student.
    """
    c: Class = klass["class"]
    import provision

    checkout = f"/work/not-yet-tested-{os.getpid()}"
    venv = Path("/var/tmp") / f"dp-course-venv-{hashlib.sha256(checkout.encode()).hexdigest()[:10]}"
    base = provision.base_python()
    stamps = {".dp-course-requirements": hashlib.sha256(
                  (ROOT / "requirements.txt").read_bytes() + base.encode() + str(venv).encode()).hexdigest(),
              ".dp-course-app": hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + b"compat").hexdigest()}
    mine = Path("/var/tmp") / f"dpx-alice-venv-{os.getpid()}"
    try:
        planted = c.shell(ALICE, f"""set -e
            mkdir -p "{mine}/bin"; ln -s /usr/bin/python3 "{mine}/bin/python"
            printf '#!/bin/sh\\nid > "{mine}/ran"\\n' > "{mine}/bin/jupyterhub-singleuser"
            chmod 755 "{mine}/bin/jupyterhub-singleuser"
            """ + "".join(f'echo -n {v} > "{mine}/{k}"\n' for k, v in stamps.items()) + f'ln -s "{mine}" "{venv}"')
        assert planted.returncode == 0, planted.stderr
        provisioning = [*klass["provision"][:-1], "--demo-passwords"]        # the class's, without --reset
        at = provisioning.index("--venv")
        provisioning[at + 1] = str(venv)
        refused = subprocess.run(provisioning, env=klass["server"].env, capture_output=True, text=True)
        assert refused.returncode != 0 and f"{venv} is a symlink owned by {ALICE}" in refused.stderr, \
            refused.stdout + refused.stderr
        assert not (mine / "app").exists() and os.lstat(mine).st_uid == pwd.getpwnam(ALICE).pw_uid
    finally:
        venv.unlink(missing_ok=True)
        shutil.rmtree(mine, ignore_errors=True)


def test_reboot_and_restore_lose_nothing(klass, graded):
    """A backup (hub/backup.py), a reboot (nothing of the class runs or is mounted), a disk that lost
    the gradebook, the graded work, the exchange, alice's inbound space and a file of her home; the
    restore brings all of it back, and `sudo make hub`'s provisioning mounts the exchange again.
    Stops the shared hub (the next test, the last, needs it stopped)."""
    import backup
    import provision

    server, c = klass["server"], klass["class"]
    server.stop_hub()
    roster = provision.read_roster(server.roster)
    home = Path(pwd.getpwnam(ALICE).pw_dir)
    assert c.shell(ALICE, 'echo "my notes" > ~/notes.txt').returncode == 0
    record, theirs = course_record(c.course), c.entries()
    assert record["rows"]["grade"] and record["feedback"] and any(e.startswith(f"{ALICE}/") for e in theirs)
    stamps = {p.parent.parent.name: p.read_text() for p in (c.course / "submitted").glob(f"*/{ASSIGNMENT}/timestamp.txt")}
    assert {ALICE, BOB, CAROL} <= set(stamps)       # the shared class may hold other students' work too
    saved = backup.backup(c.srv, roster, Path(tempfile.mkdtemp(prefix="dp-hub-backup-", dir="/var/tmp")))
    try:
        provision.stop_class(c.srv, roster)          # a reboot
        assert not os.path.ismount(c.exchange)
        for lost in ("course/gradebook.db", "exchange.img", f"inbound/{ALICE}.img"):
            (c.srv / lost).unlink()
        for lost in ("submitted", "feedback", "autograded"):
            shutil.rmtree(c.course / lost, ignore_errors=True)
        (home / "notes.txt").unlink()
        backup.restore(c.srv, roster, saved)
        provision.stop_class(c.srv, roster)          # restored with the hub stopped; then `sudo make hub`
        again = subprocess.run([*[a for a in klass["provision"] if a != "--reset"], "--demo-passwords"],
                               env=server.env, capture_output=True, text=True)
        assert again.returncode == 0, again.stdout + again.stderr
        assert os.path.ismount(c.exchange) and os.path.ismount(c.inbound / ALICE)
        assert c.entries() == theirs, "submissions lost or added by the reboot and restore"
        assert course_record(c.course) == record, "the gradebook or the feedback did not come back"
        assert (home / "notes.txt").read_text() == "my notes\n"
        assert (home / "notes.txt").stat().st_uid == pwd.getpwnam(ALICE).pw_uid
        # The Formgrader's Collect after the restore (issue 38: it re-took every submission, dated by the
        # restore; bob became 482 s late): nothing re-taken, no time changed, the gradebook as before.
        c.collect()
        again_stamps = {p.parent.parent.name: p.read_text()
                        for p in (c.course / "submitted").glob(f"*/{ASSIGNMENT}/timestamp.txt")}
        assert again_stamps == stamps, "Collect after the restore changed a submission's time"
        assert course_record(c.course) == record, "Collect after the restore changed the gradebook"
    finally:
        shutil.rmtree(saved.parent, ignore_errors=True)


def test_provisioning_again_removes_demo_passwords_and_a_planted_exchange(klass):
    """Provisioning again without --demo-passwords leaves no account with demo-<id>, and a
    course folder someone else made in the exchange (as nbgrader's 0777 root allowed) is
    moved aside, not used.

    The last hub test of the session: it stops the shared hub first (Ctrl-C, as before
    running `sudo make hub` again), whose sessions and tokens this provisioning voids.
    """
    import provision

    server = klass["server"]
    server.stop_hub()
    c: Class = klass["class"]
    course = c.exchange / "dp-course"
    for space in c.inbound.iterdir():       # the students' own spaces (mounted) do not move with it
        if os.path.ismount(space):
            subprocess.run(["umount", str(space)], check=True)
    shutil.move(str(course), str(c.srv / "old-course"))     # what alice's `mv` did under the old layout
    planted = c.shell(ALICE, f'mkdir -p "{course}/outbound/{ASSIGNMENT}" && '
                             f'echo planted > "{course}/outbound/{ASSIGNMENT}/{ASSIGNMENT}.ipynb"')
    assert planted.returncode == 0, planted.stderr
    assert provision.has_demo_password(TEACHER)
    # `sudo make hub` again: without --demo-passwords, without --reset (which would delete the exchange)
    again = subprocess.run([arg for arg in klass["provision"] if arg != "--reset"], env=server.env,
                           capture_output=True, text=True)
    assert again.returncode == 0, again.stdout + again.stderr
    if server.hub_ran:      # the demo's logins and API tokens are void with the passwords, the hub's database kept
        assert "every login cookie of the demo is void" in again.stdout, again.stdout
        assert "API and OAuth token(s) of the demo deleted" in again.stdout, again.stdout
        assert (c.srv / "hub" / "jupyterhub.sqlite").exists(), "the hub's database was deleted (servers orphaned)"
        assert not (c.srv / "hub" / "jupyterhub_cookie_secret").exists()
    assert "moved to" in again.stdout
    assert course.stat().st_uid == pwd.getpwnam(GRADER).pw_uid
    assert not (course / "outbound" / ASSIGNMENT).exists()
    assert os.path.ismount(course / "inbound" / ALICE), "the students' own inbound spaces were not mounted again"
    assert "removed the demo passwords" in again.stdout and "no password yet" in again.stdout
    roster = [row.split(",")[0] for row in server.roster.read_text(encoding="utf-8").splitlines()[1:]]
    assert {TEACHER, ALICE, BOB, CAROL} <= set(roster)
    for person in roster:
        assert not provision.has_demo_password(person)
        assert not provision.password_set(person)
    import pamela

    with pytest.raises(pamela.PAMError):
        pamela.authenticate(TEACHER, f"demo-{TEACHER}", service="login")


def test_an_earlier_plain_exchange_moves_into_the_image(tmp_path):
    """`sudo make hub` on a class of an earlier version: the exchange, a plain folder there,
    moves into the new image with its owners and modes, and nothing of it stays on the host's
    disk; provisioning again mounts the same image (after a reboot, say)."""
    if os.geteuid() != 0 or not shutil.which("mkfs.ext4"):
        pytest.skip("needs root and mkfs.ext4 (loop mounts)")
    import provision

    srv = tmp_path / "srv"
    inbound = srv / "exchange" / "dp-course" / "inbound"
    inbound.mkdir(parents=True)
    inbound.chmod(0o3733)
    (inbound / "submission.ipynb").write_text("{}")
    os.chown(inbound / "submission.ipynb", 4321, 4321)
    try:
        assert provision.mount_exchange(srv, 64 * 2**20) == ""
        assert os.path.ismount(srv / "exchange") and (srv / "exchange.img").is_file()
        moved = srv / "exchange" / "dp-course" / "inbound"
        assert stat.S_IMODE(moved.stat().st_mode) == 0o3733
        assert (moved / "submission.ipynb").read_text() == "{}"
        assert (moved / "submission.ipynb").stat().st_uid == 4321
        assert not (srv / "exchange-moving-into-image").exists()
        provision.unmount_exchange(srv)
        assert list((srv / "exchange").iterdir()) == []     # the host's copy is gone
        assert provision.mount_exchange(srv, 64 * 2**20) == ""
        assert (moved / "submission.ipynb").stat().st_uid == 4321
    finally:
        provision.unmount_exchange(srv)


@pytest.mark.nbgrader
@pytest.mark.xdist_group("exchange-one-account")     # no class server, no OS accounts: any worker
def test_exchange_classes_work_for_one_account(tmp_path):
    """`make lab`'s setting: one OS account, the course-local exchange not laid out beforehand.

    Release creates the course folders itself (inbound/ sticky, the root 1777), and fetch,
    submit and collect succeed for the account's own name; runs as any user (no root).
    """
    import getpass

    from tests.support import corpus as build
    course = build.make_course(tmp_path / "course", [ASSIGNMENT])
    with open(course / "nbgrader_config.py", "a", encoding="utf-8") as handle:
        handle.write("\nfrom autograder.nbgrader.exchange import configure\nconfigure(c)\n")
    env = build.nbgrader_env(HOME=str(tmp_path / "home"))
    env.pop("NBGRADER_EXCHANGE", None)
    me = getpass.getuser()
    shutil.copytree(ROOT / "release" / ASSIGNMENT, course / "release" / ASSIGNMENT)   # = generate_assignment
    build.run_nbgrader(course, "release_assignment", ASSIGNMENT, "--force", env=env)
    exchange = course / "nbgrader_exchange"
    assert stat.S_IMODE(exchange.stat().st_mode) == 0o1777
    assert (exchange / "dp-course" / "inbound").stat().st_mode & stat.S_ISVTX
    build.run_nbgrader(course, "fetch_assignment", ASSIGNMENT, env=env)
    build.run_nbgrader(course, "submit", ASSIGNMENT, env=env)
    before = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    result = build.run_nbgrader(course, "collect", ASSIGNMENT, env=env)
    assert "Refused" not in result.stdout + result.stderr
    submitted = course / "submitted" / me / ASSIGNMENT
    assert (submitted / f"{ASSIGNMENT}.ipynb").exists()
    from nbgrader.utils import parse_utc

    stamp = parse_utc((submitted / "timestamp.txt").read_text().strip())
    assert before - datetime.timedelta(seconds=60) <= stamp <= before + datetime.timedelta(seconds=2)
    # the same account claiming another name is refused, and collect says so (exit 1)
    build.run_nbgrader(course, "submit", ASSIGNMENT, "--student=somebody-else", env=env)
    refused = build.run_nbgrader(course, "collect", ASSIGNMENT, "--update", env=env, check=False)
    assert refused.returncode != 0
    assert "no OS account named 'somebody-else'" in refused.stdout + refused.stderr
