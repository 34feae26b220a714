"""Black-box attacks on ``python -m autograder grade`` (issue 9), with controls in the same batch.

One batch (``tests/fixtures/attacks/``: four controls, one submission per attack of every class of
issue 9) is graded by the real CLI with ``--jobs 4``. The grader is stopped with SIGTERM after a
few rows, then ``--resume`` finishes the batch (class 5). Then:

* the controls keep their exact grades (correct 10, the flag function set honestly 10, wrong 5,
  stub 0, all ``ok``);
* every attacker gets exactly one row and gains nothing (score <= what its honest code earns;
  escapes would switch its function to the correct one, see fixtures/attacks/README.md);
* OUT is byte-identical 10 s after the grader exits; no process started by the batch survives
  (marked by an environment token and an argv marker); the checkout and the venv are unchanged;
* no hidden-test line and nothing else from ``source/`` reaches any file of OUT; no feedback page
  holds the XSS marker in an active position.

All checks run inside ONE test function (like tests/autograder/test_fixture_batch.py) so that pytest-xdist never
builds the batch twice; failures are collected and reported together, one line per check.
"""

from __future__ import annotations

import csv
import hashlib
import html
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import pytest

from autograder import jail
from autograder.render import feedback
from autograder.reports import report
from autograder.students import student_id

from tests.fixtures.attacks import build as attacks  # noqa: E402

pytestmark = [pytest.mark.nbgrader, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]
SITE = Path(next(p for p in sys.path if p.endswith("site-packages")))
SEED = 20261123
#: --timeout: per cell and per call, in the sandbox's CPU time. The most any submission's sandbox used
#: for its whole notebook was 2.2 s (c7_big_image, c8_seeded_per_element: report.json timings).
TIMEOUT = 6
#: --sleep-limit: the wall-clock seconds a submission's sandboxes may sleep or block in all. The two
#: hanging submissions (c3_hang_cell, c3_hang_call: they sleep and ignore signals) are stopped by it,
#: before their steps' own backstops (3 x TIMEOUT + 10 s asleep): at the default 30 s they held two
#: slots for 32 s and were the resumed run's longest rows (56 s); at 15 they end at about 16 s. Honest
#: code only computes: the controls and the other attackers sleep well under a second (only time in
#: which a sandbox neither runs nor waits for a CPU counts, so a busy machine adds nothing).
SLEEP_LIMIT = 15
#: --jobs: 4 on two cores, because the two hanging submissions sleep through their limit in two of the
#: slots and the other 48 (about 2 s each) share the rest (at --jobs 2 they waited behind the sleepers).
JOBS = 4
MAX_SCORE, WRONG_SCORE = 10.0, 5.0  # laplace: the flag function unflagged passes 5 of 10 points
STOP_AFTER = 6  # rows graded before the grader is stopped (SIGTERM) and resumed
TOKEN_VAR = "AUTOGRADER_ATTACK_BATCH"
#: Files that legitimately change while tests run.
SKIP_PARTS = {"__pycache__", ".pytest_cache", ".ipynb_checkpoints", ".mypy_cache", ".ruff_cache"}
#: Top-level folders that other tests write meanwhile (screenshots; the student-use test saves lecture
#: notebooks and fetches into dp-course/); none of them is read by the grader.
# slides/ html and node_modules: `make slides` (the slides browser test) builds them while the batch runs
REPO_SKIP_TOP = {".venv", ".git", "artifacts", "course", "dp-course", "nbgrader_exchange", "slides/html", "slides/node_modules"}


# --- helpers --------------------------------------------------------------------------------

def snapshot(root: Path, skip_top=()) -> dict[str, tuple]:
    """``{relative path: (kind, size, mtime_ns, ctime_ns)}`` (ctime cannot be forged by a user)."""
    out = {}
    root = Path(root)
    for folder, dirs, files in os.walk(root):
        rel_folder = Path(folder).relative_to(root)
        dirs[:] = [d for d in dirs if d not in SKIP_PARTS
                   and (rel_folder / d).as_posix() not in skip_top]
        for name in dirs + files:
            path = Path(folder) / name
            try:
                st = os.lstat(path)
            except OSError:
                continue
            kind = "d" if name in dirs else ("l" if os.path.islink(path) else "f")
            out[(rel_folder / name).as_posix()] = (kind, st.st_size if kind != "d" else 0,
                                                   st.st_mtime_ns if kind == "f" else 0,
                                                   st.st_ctime_ns if kind == "f" else 0)
    return out


def digest_tree(root: Path) -> dict[str, str]:
    out = {}
    for path in sorted(Path(root).rglob("*")):
        if path.is_file() and not path.is_symlink():
            out[path.relative_to(root).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
        elif path.is_symlink():
            out[path.relative_to(root).as_posix()] = "link:" + os.readlink(path)
    return out


def batch_processes(token: str, marker: str, tmp: Path) -> list[tuple[int, str]]:
    """Processes carrying the batch's environment token, argv marker or temp path."""
    me = {os.getpid(), os.getppid()}
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in me:
            continue
        try:
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        try:
            env = Path(f"/proc/{entry}/environ").read_bytes()
        except OSError:
            env = b""
        if (f"{TOKEN_VAR}={token}".encode() in env or marker.encode() in cmd
                or str(tmp).encode() in cmd):
            try:
                state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                state = "?"
            if state != "Z":
                found.append((int(entry), cmd.replace(b"\0", b" ").decode("utf-8", "replace")[:160]))
    return found


def kill_processes(procs) -> None:
    for pid, _ in procs:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _sandboxed(pid: int) -> bool:
    """Whether ``pid`` runs inside bubblewrap (student side: its memory is capped by the sandbox)."""
    for _ in range(64):
        try:
            if b"bwrap" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]:
                return True
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            return False
        if pid <= 1:
            return False
    return False


class RssMonitor(threading.Thread):
    """Peak resident memory of any one grader-side batch process (sampled every 0.2 s).

    Processes inside bubblewrap are the student's side (capped by the sandbox) and not counted.
    """

    def __init__(self, token, marker, tmp):
        super().__init__(daemon=True)
        self.args, self.peak, self.where, self.stop = (token, marker, tmp), 0, "", threading.Event()

    def run(self):
        while not self.stop.wait(0.2):
            for pid, cmd in batch_processes(*self.args):
                try:
                    status = Path(f"/proc/{pid}/status").read_text()
                    rss = int(re.search(r"VmRSS:\s+(\d+)", status).group(1)) * 1024
                except (OSError, AttributeError):
                    continue
                if rss > self.peak and not _sandboxed(pid):
                    self.peak, self.where = rss, cmd


def hidden_lines() -> list[str]:
    nb = nbformat.read(REPO / "source" / attacks.ASSIGNMENT / f"{attacks.ASSIGNMENT}.ipynb", as_version=4)
    return [line for c in nb.cells if c.cell_type == "code" for line in feedback.hidden_lines(c.source)]


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def readable_text(path: Path) -> str:
    """A file's text as every reader would see it: raw, HTML-unescaped, JSON-decoded."""
    raw = path.read_bytes().decode("utf-8", "replace")
    parts = [raw, html.unescape(raw)]
    if path.suffix in (".json", ".ipynb"):
        try:
            parts += list(_strings(json.loads(raw)))
        except ValueError:
            pass
    return "\n".join(parts)


def active_marker(page: str, marker: str) -> list[str]:
    """Places where ``marker`` sits inside a tag (an attribute) or inside a ``<script>``."""
    hits = []
    lower = page.lower()
    for m in re.finditer(re.escape(marker), page):
        before = page[:m.start()]
        if before.rfind("<") > before.rfind(">"):
            hits.append("in a tag: " + page[max(0, before.rfind("<")):m.end() + 20][:120])
        elif lower.rfind("<script", 0, m.start()) > lower.rfind("</script", 0, m.start()):
            hits.append("in a script: " + page[max(0, m.start() - 60):m.end() + 20])
        elif lower.rfind("<style", 0, m.start()) > lower.rfind("</style", 0, m.start()):
            hits.append("in a style: " + page[max(0, m.start() - 60):m.end() + 20])
    return hits


def grades(out: Path) -> list[dict]:
    with open(out / "grades.csv", newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        assert header == ["student", "assignment", "score", "max_score", "status"], header
        rows = []
        for line in reader:
            assert len(line) == 5, f"grades.csv row with {len(line)} fields: {line!r}"
            row = dict(zip(header, line))
            row["student"] = report.unquote_field(row["student"])  # the formula guard's quote
            rows.append(row)
    return rows


def cli(args, env, **kw):
    return subprocess.Popen([sys.executable, "-m", "autograder", "grade", *map(str, args)],
                            env=env, cwd=kw.pop("cwd"), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, errors="replace", **kw)


# --- the batch ------------------------------------------------------------------------------

def undo_plants(run: dict) -> None:
    """Undo what a successful attack planted, so a failing run does not poison the checkout."""
    for path, text in run["checks_py"].items():
        if path.read_bytes() != text:
            path.write_bytes(text)
    for folder in (REPO, REPO / "helpers", SITE):
        for path in folder.glob(f"zz_{run['ctx']['TOKEN']}*"):
            path.unlink()


def settle(run: dict) -> None:
    """10 s after the grader exited (run_batch left at 1 s; the checks that read the results ran
    meanwhile): OUT byte-identical to what it was at 1 s, no process of the batch (nor at run_batch's
    end, before its kill), no temp folder holding source/, and the checkout and venv compared again."""
    run["settle_wait"] = max(0.0, 10 - (time.monotonic() - run["exited"]))
    time.sleep(run["settle_wait"])
    ctx, out = run["ctx"], Path(run["out"])
    run["out_changed"] = sorted(set(run["out_at_exit"].items()) ^ set((digest_tree(out) if out.is_dir() else {}).items()))
    run["survivors_10s"] = run.get("survivors_end", []) + batch_processes(ctx["TOKEN"], ctx["MARKER"], run["tmp"])
    kill_processes(run["survivors_10s"])
    run["temp_with_source"] = [p.as_posix() for p in Path(run["gtmp"]).rglob("source")]
    again = {
        "repo_changed": set(run["repo_before"].items()) ^ set(snapshot(REPO, skip_top=REPO_SKIP_TOP).items()),
        "venv_changed": set(run["venv_before"].items()) ^ set(snapshot(Path(sys.prefix)).items())}
    for key, changed in again.items():
        run[key] = sorted(set(run[key]) | changed)
    undo_plants(run)


def run_batch(tmp: Path) -> dict:
    token, marker = secrets.token_hex(8), "ATTACKMARK" + secrets.token_hex(6)
    subs, out, gtmp = tmp / "submitted", tmp / "out", tmp / "gtmp"
    gtmp.mkdir()
    ctx = {"REPO": REPO, "SITE": SITE, "SUBS": subs, "OUT": out, "TMP": gtmp, "TOKEN": token,
           "MARKER": marker, "XSS": "XSSMARK" + secrets.token_hex(4)}
    expect = attacks.build_batch(REPO, subs, ctx)
    env = dict(os.environ, **{TOKEN_VAR: token, "TMPDIR": str(gtmp), "MPLBACKEND": "Agg",
                              "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"})
    base = ["--assignment", attacks.ASSIGNMENT, "--submissions", subs, "--out", out, "--jobs", JOBS,
            "--timeout", TIMEOUT, "--sleep-limit", SLEEP_LIMIT]
    run = {"ctx": ctx, "expect": expect, "out": out, "tmp": tmp, "gtmp": gtmp, "notes": [],
           "failures": []}
    repo_before = snapshot(REPO, skip_top=REPO_SKIP_TOP)
    venv_before = snapshot(Path(sys.prefix))
    checks_py = {p: p.read_bytes() for p in (REPO / "helpers" / "checks").glob("*.py")}
    monitor = RssMonitor(token, marker, tmp)
    monitor.start()
    started = time.monotonic()
    try:
        # 1. Start, stop with SIGTERM after STOP_AFTER rows (the instructor's Ctrl-C / a killed job).
        proc = cli([*base, "--seed", SEED], env, cwd=tmp)
        lines, done = [], threading.Event()

        def reader():
            for line in proc.stderr:
                lines.append(line)
            done.set()

        threading.Thread(target=reader, daemon=True).start()
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None:
            if sum(bool(re.match(r"\[\d+/\d+\]", line)) for line in lines) >= STOP_AFTER:
                break
            time.sleep(0.2)
        stopped_rows = [line for line in lines if re.match(r"\[\d+/\d+\]", line)]
        batch_pids = [pid for pid, _ in batch_processes(token, marker, tmp)]
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            run["failures"].append("SIGTERM: the grader did not exit within 60 s")
            proc.kill()
            proc.wait()
        done.wait(10)
        time.sleep(1)
        run["stop"] = {"rows_seen": len(stopped_rows), "returncode": proc.returncode,
                       "cgroups_left": jail.owned_by(batch_pids)[0], "locks_left": jail.owned_by(batch_pids)[1],
                       "survivors": batch_processes(token, marker, tmp),
                       "temp_with_source": [p.as_posix() for p in gtmp.rglob("source")],
                       "stderr": "".join(lines[-20:])}
        kill_processes(run["stop"]["survivors"])
        try:
            run["stop"]["rows"] = {r["student"]: r for r in grades(out)}
            run["stop"]["report"] = {r["student"]: r for r in json.loads(
                (out / "report.json").read_text(encoding="utf-8"))["submissions"]}
        except (OSError, ValueError, AssertionError, KeyError) as exc:
            run["stop"]["rows"], run["stop"]["report"] = {}, {}
            run["stop"]["unreadable"] = f"{type(exc).__name__}: {exc}"
        # 2. Resume with another seed: refused with a clear message.
        wrong = subprocess.run([sys.executable, "-m", "autograder", "grade",
                                *map(str, [*base, "--seed", SEED + 1, "--resume"])], env=env, cwd=tmp,
                               capture_output=True, text=True, errors="replace", timeout=120)
        run["wrong_seed"] = (wrong.returncode, wrong.stderr[-1500:])
        # 3. Resume with the same seed: finishes the batch.
        final = subprocess.run([sys.executable, "-m", "autograder", "grade",
                                *map(str, [*base, "--seed", SEED, "--resume"])], env=env, cwd=tmp,
                               capture_output=True, text=True, errors="replace", timeout=600)
        if final.returncode == 2 and "--resume" in final.stderr:
            run["failures"].append("--resume is not supported: " + final.stderr.strip()[-300:])
            final = subprocess.run([sys.executable, "-m", "autograder", "grade",
                                    *map(str, [*base, "--seed", SEED])], env=env, cwd=tmp, capture_output=True,
                                   text=True, errors="replace", timeout=600)
        run["final"] = (final.returncode, final.stderr[-3000:])
        # OUT, the processes, the checkout and the venv are looked at again 10 s after this exit
        # (settle(), after the checks that read the results: they fill that wait)
        run["exited"] = time.monotonic()
        time.sleep(1)
        run["survivors"] = batch_processes(token, marker, tmp)
        run["out_at_exit"] = digest_tree(out) if out.is_dir() else {}
    finally:
        monitor.stop.set()
        left = batch_processes(token, marker, tmp)
        if "exited" in run:             # after the grader's exit: survivors, whatever this kill does
            run["survivors_end"] = left
        kill_processes(left)
        run["repo_before"], run["venv_before"], run["checks_py"] = repo_before, venv_before, checks_py
        run["repo_changed"] = sorted(set(repo_before.items()) ^ set(snapshot(REPO, skip_top=REPO_SKIP_TOP).items()))
        run["venv_changed"] = sorted(set(venv_before.items()) ^ set(snapshot(Path(sys.prefix)).items()))
        undo_plants(run)
    run["rss_peak"], run["rss_where"] = monitor.peak, monitor.where
    run["seconds"] = round(time.monotonic() - started, 1)
    try:
        rows = grades(out)
        run["report"] = json.loads((out / "report.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, AssertionError) as exc:
        pytest.fail(f"no readable grades.csv/report.json after the batch ({exc}); grader exit "
                    f"{run['final'][0]}, stderr:\n{run['final'][1][-2500:]}")
    run["rows"] = {r["student"]: r for r in rows}
    run["row_list"] = rows
    return run


def test_attack_batch(tmp_path):
    """Grade the attack batch once (stopped and resumed); run every check on the result."""
    run = run_batch(tmp_path)
    failures = list(run["failures"])
    for check in (check_controls_exact, check_one_row_each_and_no_gain, check_odd_folders,
                  check_stop_and_resume, check_nothing_from_source_in_out,
                  check_feedback_has_no_active_content, check_autograded_notebooks_are_inert,
                  check_memory, check_hidden_arguments_not_shown, check_no_host_paths_inside,
                  check_no_remote_images, check_csv_formulas_after_whitespace_and_full_width,
                  settle, check_out_stable_and_no_survivors, check_checkout_and_venv_unchanged):
        try:
            check(run)
        except AssertionError as exc:
            failures.append(f"{check.__name__}: {exc}")
    print(f"attack batch: {run['seconds']} s, {run.get('settle_wait', 0):.1f} s waited for the 10 s after the exit, peak RSS {run['rss_peak'] / 2**20:.0f} MiB "
          f"({run['rss_where'][:80]})")
    assert not failures, "\n\n".join(failures) + f"\n\n(grader stderr tail)\n{run['final'][1][-1500:]}"


# --- checks ---------------------------------------------------------------------------------

def _score(row) -> float:
    return float(row["score"])


def check_controls_exact(run):
    rows = run["rows"]
    want = {"ctl_correct": MAX_SCORE, "ctl_correct_flag": MAX_SCORE, "ctl_wrong": WRONG_SCORE,
            "ctl_stub": 0.0}
    problems = []
    for student, score in want.items():
        row = rows.get(student)
        if row is None:
            problems.append(f"{student}: no row")
        elif (_score(row), float(row["max_score"]), row["status"]) != (score, MAX_SCORE, "ok"):
            problems.append(f"{student}: {row['score']}/{row['max_score']} {row['status'][:200]!r}, "
                            f"want {score:g}/{MAX_SCORE:g} ok")
    assert not problems, "\n".join(problems)


def check_one_row_each_and_no_gain(run):
    rows, expect = run["rows"], run["expect"]
    ids = {student_id(name): want for name, want in expect.items()}
    problems = []
    assert len(run["row_list"]) == len(rows), "a student has two rows"
    if sorted(rows) != sorted(ids):
        problems.append(f"rows {sorted(set(rows) - set(ids))} unexpected, "
                        f"{sorted(set(ids) - set(rows))} missing")
    bound = {"correct": MAX_SCORE, "wrong": WRONG_SCORE, "zero": 0.0}
    for sid, want in sorted(ids.items()):
        row = rows.get(sid)
        if row is None or sid.startswith("ctl_"):
            continue
        limit = bound[want["baseline"]]
        if want.get("exact") and _score(row) != limit:
            problems.append(f"{sid}: score {row['score']}, want exactly {limit:g} ({row['status'][:150]!r})")
        elif _score(row) > limit:
            problems.append(f"{sid}: GAINED: score {row['score']} > {limit:g} that its honest code "
                            f"earns ({row['status'][:150]!r})")
        if want.get("status") and not row["status"].startswith(want["status"]):
            problems.append(f"{sid}: status {row['status'][:150]!r}, want {want['status']}...")
        if want.get("reason") and not any(r in row["status"] for r in want["reason"]):
            problems.append(f"{sid}: status {row['status'][:150]!r} names none of {want['reason']}")
        if want.get("zero_cells"):
            cells = {c["grade_id"]: c["score"] for r in run["report"]["submissions"] if r["student"] == sid
                     for c in r["cells"]}
            earned = {g: cells.get(g) for g in want["zero_cells"] if cells.get(g) != 0}
            if earned:
                problems.append(f"{sid}: GAINED the points for building the sampler: {earned}")
    assert not problems, "\n".join(problems)


def check_odd_folders(run):
    rows = run["rows"]
    for sid in rows:
        assert sid.isprintable() and "\udcff" not in sid, f"unprintable student id {sid!r}"
    assert student_id(os.fsdecode(b"c7_caf\xe9_latin1")) in rows
    assert ".c7_dot_folder" in rows
    assert "README.txt" not in rows


def check_stop_and_resume(run):
    stop = run["stop"]
    problems = []
    if stop["rows_seen"] < 1:
        problems.append(f"no row was graded before the stop: {stop['stderr'][-300:]!r}")
    if stop.get("unreadable"):
        problems.append(f"after SIGTERM OUT is unreadable ({stop['unreadable']})")
    elif len(stop["report"]) < stop["rows_seen"]:
        problems.append(f"after SIGTERM OUT holds {len(stop['report'])} rows but {stop['rows_seen']} "
                        "students were reported graded (lost on kill)")
    if stop["survivors"]:
        problems.append(f"processes survived SIGTERM: {stop['survivors'][:3]}")
    if stop["cgroups_left"] or stop["locks_left"]:
        problems.append(f"left after SIGTERM: cgroups {stop['cgroups_left'][:3]}, uid locks {stop['locks_left'][:3]}")
    if stop["temp_with_source"]:
        problems.append(f"temp folders holding source/ left after SIGTERM: {stop['temp_with_source'][:3]}")
    code, err = run["wrong_seed"]
    if code != 2 or "seed" not in err.lower():
        problems.append(f"--resume with another seed: exit {code}, want 2 naming the seed ({err[-200:]!r})")
    for student, before in stop["report"].items():
        after = next((r for r in run["report"]["submissions"] if r.get("student") == student), None)
        if after != before:
            problems.append(f"{student}: graded again by --resume (row changed)")
            break
    if run["final"][0] != 0:
        problems.append(f"resumed run exited {run['final'][0]}")
    assert not problems, "\n".join(problems)


def check_out_stable_and_no_survivors(run):
    problems = []
    if run["out_changed"]:
        problems.append(f"OUT changed after the grader exited: {run['out_changed'][:4]}")
    if run["survivors"] or run["survivors_10s"]:
        problems.append(f"processes of the batch survived: {(run['survivors'] or run['survivors_10s'])[:3]}")
    if run["temp_with_source"]:
        problems.append(f"temp folders holding source/ left: {run['temp_with_source'][:3]}")
    planted = [p for p in Path(run["out"]).rglob("*") if run["ctx"]["TOKEN"] in p.name]
    if planted:
        problems.append(f"files planted in OUT: {planted}")
    assert not problems, "\n".join(problems)


def check_checkout_and_venv_unchanged(run):
    assert not run["repo_changed"], f"checkout changed: {run['repo_changed'][:5]}"
    assert not run["venv_changed"], f"venv changed: {run['venv_changed'][:5]}"


def check_nothing_from_source_in_out(run):
    secrets_ = hidden_lines()
    assert secrets_, "the assignment has hidden tests"
    squashed = [re.sub(r"\s+", "", s) for s in secrets_] + ["BEGINHIDDENTESTS", "BEGINSOLUTION"]
    pages = sorted(p for p in Path(run["out"]).rglob("*") if p.is_file())
    feedback_pages = [p for p in pages if p.suffix == ".html"]
    assert any("ctl_correct" in p.parts for p in feedback_pages), "no feedback for ctl_correct"
    leaks = []
    for page in pages:
        text = re.sub(r"\s+", "", readable_text(page))
        leaks += [f"{page.relative_to(run['out'])}: {s[:60]}" for s in squashed if s in text]
    assert not leaks, "source/ content in OUT:\n" + "\n".join(leaks[:10])
    correct = [p for p in feedback_pages if "ctl_correct" in p.parts]
    visible = html.unescape(re.sub(r"<[^>]+>", "", correct[0].read_text(encoding="utf-8")))
    assert "check_laplace_noise_basics(laplace_noise)" in visible, \
        "the visible tests are missing from feedback (the leak check would test nothing)"


def check_feedback_has_no_active_content(run):
    marker = run["ctx"]["XSS"]
    hits = []
    for page in Path(run["out"]).rglob("*.html"):
        text = page.read_text(encoding="utf-8", errors="replace")
        hits += [f"{page.relative_to(run['out'])}: {h}" for h in active_marker(text, marker)]
    assert not hits, "active student content in feedback:\n" + "\n".join(hits[:8])


def check_autograded_notebooks_are_inert(run):
    """OUT/autograded/*.ipynb goes into the Formgrader, which renders markdown cells and rich
    outputs with markdown2html and no sanitizer: no student markup may stay active there."""
    marker = run["ctx"]["XSS"]
    hits = []
    for path in Path(run["out"]).glob("autograded/**/*.ipynb"):
        nb = json.loads(path.read_text(encoding="utf-8"))
        for cell in nb.get("cells", []):
            texts = []
            if cell.get("cell_type") in ("markdown", "raw"):
                texts.append("".join(cell.get("source", [])))
            for output in cell.get("outputs", []):
                for mime, value in (output.get("data") or {}).items():
                    if mime in ("application/javascript", "text/javascript"):
                        hits.append(f"{path.name}: {mime} output kept")
                    elif mime != "text/plain":
                        texts.append(value if isinstance(value, str) else "".join(value))
            for text in texts:
                where = active_marker(text, marker)
                where += [f"script URL: {m.group(0)[:60]}" for m in
                          re.finditer(r"(?i)(javascript|vbscript)\s*:[^)\s]*" + re.escape(marker), text)]
                hits += [f"{path.relative_to(run['out'])}: {w}" for w in where]
    assert not hits, "active student markup in autograded notebooks:\n" + "\n".join(hits[:8])


def check_memory(run):
    # A 300 MB image output must cost the sender only: no grader process near a GiB.
    assert run["rss_peak"] < 1.5 * 2**30, (f"a batch process reached {run['rss_peak'] / 2**30:.2f} GiB "
                                           f"RSS: {run['rss_where']}")


# --- issue 17 ------------------------------------------------------------------------------

def _shown_files(run, student: str) -> dict[str, str]:
    """What a student (feedback) and the Formgrader (autograded notebook) show, and grades.csv."""
    out = Path(run["out"])
    files = {"grades.csv": (out / "grades.csv").read_text(encoding="utf-8")}
    for page in list((out / "feedback" / student).rglob("*.html")) + list((out / "autograded" / student).rglob("*.ipynb")):
        files[str(page.relative_to(out))] = readable_text(page)
    return files


def check_hidden_arguments_not_shown(run):
    """The student's process remembers every call; the hidden calls happen in another process."""
    files = _shown_files(run, "c8_hidden_arg_leak")
    pages = {k: v for k, v in files.items() if k != "grades.csv"}
    assert len(pages) == 2, f"feedback and autograded notebook expected: {sorted(files)}"
    problems = []
    # The hidden call's b and size come from the submission's seed (issue 25): the values this run used.
    import os

    from autograder.grade import student_seed
    from helpers.checks.laplace import hidden_noise_case

    saved = os.environ.get("DP_COURSE_SEED")
    os.environ["DP_COURSE_SEED"] = str(student_seed(SEED, "laplace", "c8_hidden_arg_leak"))
    try:
        case = hidden_noise_case()
    finally:
        os.environ.pop("DP_COURSE_SEED") if saved is None else os.environ.update(DP_COURSE_SEED=saved)
    for name, text in pages.items():
        if "SEEN[b=" not in text:  # the channel works: the visible calls' record is shown
            problems.append(f"{name}: the record of visible calls is not shown (the check would test nothing)")
        for hidden in (f"b={case['b']!r} size={case['size']!r}",):
            if hidden in text:
                problems.append(f"{name}: a hidden test's argument {hidden!r} is shown")
    row = run["rows"]["c8_hidden_arg_leak"]
    if _score(row) != 6.0 or row["status"] != "ok":  # laplace_noise correct (hidden tests too), mechanism fails
        problems.append(f"c8_hidden_arg_leak: {row['score']} {row['status'][:120]!r}, want 6 ok")
    assert not problems, "\n".join(problems)


def check_no_host_paths_inside(run):
    files = _shown_files(run, "c8_host_paths")
    pages = [v for k, v in files.items() if k.endswith(".html")]
    assert pages and "HOSTPATHS pid1:" in pages[0] and "HOSTPATHS numpy:" in pages[0], "the probe printed nothing"
    host = {str(REPO), str(SITE), sys.prefix, str(Path(sys.base_prefix).resolve()), sys.base_prefix,
            str(run["gtmp"]), str(run["out"])}
    shown = re.findall(r"HOSTPATHS[^\n]*", pages[0])
    leaks = [f"{h} in {line[:160]}" for line in shown for h in host if h in line]
    assert not leaks, "host paths visible inside the sandbox:\n" + "\n".join(leaks[:6])


def check_no_remote_images(run):
    host = f"{run['ctx']['XSS'].lower()}.tracker.example"
    files = _shown_files(run, "c8_remote_images")
    assert any("pixel" in v for k, v in files.items() if k.endswith(".html")), "the Markdown cell is not shown"
    leaks = [k for k, v in files.items() if host in v]
    assert not leaks, f"remote image URLs kept in {leaks}"


def check_csv_formulas_after_whitespace_and_full_width(run):
    text = (Path(run["out"]) / "grades.csv").read_text(encoding="utf-8")
    for name in (" =1+1", "\uff1d1+1"):
        assert f"\n'{name}," in text, f"{name!r} not quoted in grades.csv"
    back = {r["student"] for r in report.read_grades(Path(run["out"]) / "grades.csv")}
    assert {" =1+1", "\uff1d1+1"} <= back, "read_grades does not give back the exact ids"
