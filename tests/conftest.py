"""Shared by every test module: the class server of the hub tests (``support/hubserver.py``), the
``make lab`` of the lone student's and instructor's browser tests (``support/labserver.py``), the
course root after ``nbgrader generate_assignment laplace`` (``generated_laplace``), and the marks
that ``make test-fast`` leaves out, given here by folder and by fixture so that no new test can
forget them:

* ``browser``: every test under ``tests/browser/`` and every test of the shared ``make lab``;
* ``hub``: every test of the class server (its fixtures, or the "hub" xdist group: OS accounts).

``notebook`` (a whole notebook run) and ``slow`` (a batch through the sandboxed grader, a server
started) are set by the modules themselves (see pyproject.toml for the list of marks).

Session and module fixtures are made once per pytest-xdist worker that needs them, and with
``--dist loadgroup`` every test without an ``xdist_group`` is its own unit: a module whose module
fixture is expensive (a server, a build) puts itself in an ``xdist_group`` of its own.
"""

from pathlib import Path

import pytest

from tests.support.hubserver import _running_hub, class_server, hub  # noqa: F401  (fixtures)
from tests.support.labserver import make_lab  # noqa: F401  (fixture)

TESTS = Path(__file__).resolve().parent
HUB_FIXTURES = {"class_server", "_running_hub", "hub"}


def pytest_collection_modifyitems(items):
    for item in items:
        path = Path(str(item.path)).resolve()
        fixtures = set(getattr(item, "fixturenames", ()))
        groups = {mark.args[0] for mark in item.iter_markers("xdist_group") if mark.args}
        if TESTS / "browser" in path.parents or "make_lab" in fixtures:
            item.add_marker(pytest.mark.browser)
        if fixtures & HUB_FIXTURES or "hub" in groups:
            item.add_marker(pytest.mark.hub)


@pytest.fixture(scope="session")
def generated_laplace(tmp_path_factory):
    """A course root after the instructor's ``nbgrader generate_assignment laplace``
    (``nbgrader_config.py``, ``source/laplace``, ``release/laplace``, ``gradebook.db``), made once per
    test process (each xdist worker); a test that starts from it copies it (``shutil.copytree``: the
    gradebook holds no paths). Six tests ran the same command in their own course roots (3-6 s each);
    the tests of the command itself (tests/course/test_instructor_loop.py's loop, test_assignments.py's
    release/) still run it."""
    from tests.support import corpus as build

    tmp = tmp_path_factory.mktemp("generated_laplace")
    course = build.make_course(tmp / "course", ["laplace"])
    build.run_nbgrader(course, "generate_assignment", "laplace", "--force",
                       env=build.nbgrader_env(HOME=str(tmp / "home")))
    return course



# --- where the suite's wall time goes (issue 36 §3) ------------------------------------------------
# With ``-n 2 --dist loadgroup`` the run ends when the slower worker does. The controller records
# when each test phase ran on which worker and prints, per worker, its busy time, its idle time and
# the tests it ended with (the critical path); ``artifacts/suite-timeline.tsv`` holds every phase.

_TIMELINE: list[tuple[str, str, str, float, float]] = []


def pytest_runtest_logreport(report):
    node = getattr(report, "node", None)  # set on the controller's copy of a worker's report
    worker = getattr(getattr(node, "gateway", None), "id", None) or getattr(report, "worker_id", None)
    if report.start and report.stop:
        _TIMELINE.append((worker or "main", report.nodeid, report.when, report.start, report.stop))


def pytest_terminal_summary(terminalreporter, config):
    if hasattr(config, "workerinput") or not _TIMELINE:
        return
    t0 = min(row[3] for row in _TIMELINE)
    end = max(row[4] for row in _TIMELINE)
    path = TESTS.parent / "artifacts" / "suite-timeline.tsv"
    path.parent.mkdir(exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        out.write("worker\tnodeid\twhen\tstart_s\tstop_s\n")
        for worker, nodeid, when, start, stop in sorted(_TIMELINE, key=lambda r: r[3]):
            out.write(f"{worker}\t{nodeid}\t{when}\t{start - t0:.2f}\t{stop - t0:.2f}\n")
    terminalreporter.write_sep("=", f"per-worker timeline ({path.relative_to(TESTS.parent)})")
    for worker in sorted({row[0] for row in _TIMELINE}):
        rows = [row for row in _TIMELINE if row[0] == worker]
        busy = sum(row[4] - row[3] for row in rows)
        last = max(row[4] for row in rows)
        tests: dict[str, float] = {}
        for _, nodeid, _, start, stop in rows:
            tests[nodeid] = max(tests.get(nodeid, 0.0), stop)
        tail = sorted(tests, key=tests.get)[-3:]
        terminalreporter.write_line(
            f"{worker}: {len(tests)} tests, busy {busy:.0f} s, done at {last - t0:.0f} s of {end - t0:.0f} "
            f"(idle {last - t0 - busy:.0f} s); last: " + ", ".join(f"{n} (ended {tests[n] - t0:.0f} s)" for n in tail))
