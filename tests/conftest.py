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

