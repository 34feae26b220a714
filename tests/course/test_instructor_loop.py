"""The instructor's loop end to end on one machine, with a temporary exchange (issue 3).

generate → release → two students fetch, fill in, submit → collect → autograde →
generate_feedback → release_feedback → a student fetches feedback → export grades CSV.
The commands are exactly the ones in the README snippet; only the exchange
folder (``NBGRADER_EXCHANGE``) and the course root are temporary.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
from tests.support import corpus as build

pytestmark = [pytest.mark.nbgrader, pytest.mark.slow]

ASSIGNMENT = "laplace"
COURSE = "dp-course"


def _solutions(variants: dict[str, str]) -> dict[str, str]:
    return {function: build.snippet(ASSIGNMENT, function, variant) for function, variant in variants.items()}


def test_instructor_loop(tmp_path):
    exchange = tmp_path / "exchange"
    exchange.mkdir()
    exchange.chmod(0o777)
    course = build.make_course(tmp_path / "course", [ASSIGNMENT])
    env = build.nbgrader_env(NBGRADER_EXCHANGE=str(exchange), HOME=str(tmp_path / "instructor"))

    # Instructor: make the student version and put it in the exchange.
    build.run_nbgrader(course, "generate_assignment", ASSIGNMENT, "--force", env=env)
    build.run_nbgrader(course, "release_assignment", ASSIGNMENT, "--force", env=env)

    students = {
        # all correct: 10/10
        "alice": _solutions({"laplace_noise": "inverse_cdf", "laplace_mechanism": "vectorized"}),
        # scale ε/Δ in the mechanism: loses the 2-point distribution cell
        "bob": _solutions({"laplace_noise": "sign_exponential", "laplace_mechanism": "eps_over_delta"}),
    }
    for student, solutions in students.items():
        home = tmp_path / student
        home.mkdir()
        student_env = build.nbgrader_env(HOME=str(home), USER=student, LOGNAME=student)
        exchange_opts = (f"--Exchange.root={exchange}", f"--course={COURSE}")
        build.run_nbgrader(home, "fetch_assignment", ASSIGNMENT, *exchange_opts, env=student_env)
        fetched = build.notebook_path(home, ASSIGNMENT)
        assert fetched.exists(), f"{student} did not get {fetched}"
        assert "raise NotImplementedError()" in fetched.read_text(encoding="utf-8")
        # The student fills in the solution cells of the notebook they fetched.
        build.make_submission(ASSIGNMENT, solutions, fetched, release_dir=home)
        # Every account here is the same OS user: the student id is given explicitly.
        build.run_nbgrader(home, "submit", ASSIGNMENT, *exchange_opts, f"--student={student}", env=student_env)

    build.run_nbgrader(course, "collect", ASSIGNMENT, env=env)
    for student in students:
        assert build.notebook_path(course / "submitted" / student, ASSIGNMENT).exists()
    build.run_nbgrader(course, "autograde", ASSIGNMENT, env=env)
    build.run_nbgrader(course, "generate_feedback", ASSIGNMENT, env=env)
    build.run_nbgrader(course, "release_feedback", ASSIGNMENT, env=env)
    grades = course / "grades.csv"
    build.run_nbgrader(course, "export", f"--to={grades}", env=env)

    feedback = course / "feedback" / "bob" / ASSIGNMENT / f"{ASSIGNMENT}.html"
    assert feedback.exists()
    text = feedback.read_text(encoding="utf-8")
    assert "1/(ε·Δ)" in text or "ε/Δ" in text, "bob's feedback should name the scale mistake"

    bob_home = tmp_path / "bob"
    build.run_nbgrader(bob_home, "fetch_feedback", ASSIGNMENT, f"--Exchange.root={exchange}", f"--course={COURSE}",
                       "--student=bob", env=build.nbgrader_env(HOME=str(bob_home), USER="bob", LOGNAME="bob"))
    assert list((bob_home / ASSIGNMENT / "feedback").rglob(f"{ASSIGNMENT}.html")), "bob did not receive feedback"

    with grades.open(newline="", encoding="utf-8") as handle:
        rows = {row["student_id"]: row for row in csv.DictReader(handle)}
    assert set(rows) == {"alice", "bob"}
    assert float(rows["alice"]["score"]) == 10.0 and float(rows["alice"]["max_score"]) == 10.0
    assert float(rows["bob"]["score"]) == 8.0, rows["bob"]
