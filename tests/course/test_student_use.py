"""The course used the way a student uses it, then the suite's own up-to-date checks (issue 13).

In the repository checkout itself (that is where `make lab` puts a student):

1. run a lecture notebook in each language top to bottom and save it with its outputs
   (what Run All + Ctrl-S in JupyterLab leaves: outputs, counts, widget state);
2. open the release notebooks and a lecture notebook: the Jupyter server's checkpoints
   (``.ipynb_checkpoints/``) appear next to them;
3. fetch an assignment through the exchange from the course root (nbgrader's Assignments
   panel does the same): it lands in ``dp-course/<assignment>/``;

then, with the checkout in that state, run the checks that used to fail after ordinary use
(``test_repository_notebooks_are_up_to_date``, ``test_release_is_up_to_date``,
``test_committed_notebooks_have_no_outputs``) in a separate pytest, and check that git
sees nothing new but the saved notebooks (checkpoints, fetched folders, exchange and
gradebook are ignored).

Isolation (``make test`` runs on two xdist workers): notebooks are written atomically
(a reader sees the old or the new file, never half of one) and keep their sources, so a
notebook test running meanwhile executes the same cells; everything is put back
afterwards byte for byte. The instructor side (release to the exchange) runs in a
temporary course root with a temporary exchange: the repository's gradebook is never
touched. Cost: 130 s measured on 2 cores under a load average of 13 (two notebook runs,
nbgrader, and the inner pytest that regenerates release/); less on an idle machine.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
from tests.support.notebooks import run_notebook  # noqa: E402

from tests.support import corpus as build

pytestmark = [pytest.mark.notebook, pytest.mark.nbgrader]

SAVED = [ROOT / "course" / "6.4-randomized-response.ipynb", ROOT / "course" / "en" / "6.3-exponential.ipynb"]
ASSIGNMENT = "laplace"


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.student-use.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _git(*args: str) -> str:
    result = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
    if result.returncode != 0:
        pytest.skip("not a git checkout: " + result.stderr.strip())
    return result.stdout


def _untracked() -> set[str]:
    return set(_git("ls-files", "--others", "--exclude-standard").split("\n")) - {""}


@pytest.fixture()
def used_checkout(tmp_path, monkeypatch, generated_laplace):
    """The checkout after a student's session; restored afterwards."""
    originals = {path: path.read_bytes() for path in SAVED}
    created: list[Path] = []

    def remember(path: Path) -> None:
        path = path.resolve()
        if not path.exists():
            # the outermost folder that does not exist yet is what we must remove again
            while not path.parent.exists():
                path = path.parent
            created.append(path)

    untracked_before = _untracked()
    try:
        # 1. Run All and save, in each language
        monkeypatch.setenv("MPLBACKEND", "Agg")
        for path in SAVED:
            run = run_notebook(path)
            _atomic_write(path, nbformat.writes(run.nb).encode("utf-8"))

        # 2. open notebooks: the server's checkpoints appear (what JupyterLab asks for on open)
        from jupyter_server.services.contents.filemanager import FileContentsManager

        contents = FileContentsManager(root_dir=str(ROOT))
        opened = [f"release/{a}/{a}.ipynb" for a in build.ASSIGNMENTS] + ["course/6.1-basics.ipynb"]
        for rel in opened:
            remember(ROOT / Path(rel).parent / ".ipynb_checkpoints")
            contents.create_checkpoint(rel)
            assert list((ROOT / Path(rel).parent / ".ipynb_checkpoints").glob("*-checkpoint.ipynb"))

        # 3. fetch an assignment through the exchange, from the course root
        exchange = tmp_path / "exchange"
        course = shutil.copytree(generated_laplace, tmp_path / "instructor")   # after generate_assignment
        env = build.nbgrader_env(NBGRADER_EXCHANGE=str(exchange), HOME=str(tmp_path / "home"))
        build.run_nbgrader(course, "release_assignment", ASSIGNMENT, "--force", env=env)
        fetched = ROOT / "dp-course" / ASSIGNMENT
        if fetched.exists():
            pytest.skip(f"{fetched} exists already (a real student's copy): not touching it")
        remember(fetched)
        build.run_nbgrader(ROOT, "fetch_assignment", ASSIGNMENT, env=env)
        assert (fetched / f"{ASSIGNMENT}.ipynb").exists()
        yield untracked_before
    finally:
        for path, data in originals.items():
            if path.read_bytes() != data:
                _atomic_write(path, data)
        for path in reversed(created):
            shutil.rmtree(path, ignore_errors=True)


def test_suite_passes_after_a_students_session(used_checkout):
    untracked_before = used_checkout
    new_untracked = _untracked() - untracked_before
    assert not new_untracked, f"git shows what a student's session left behind: {sorted(new_untracked)}"
    modified = {line[3:] for line in _git("status", "--porcelain").splitlines() if line[:2].strip() == "M"}
    saved = {p.relative_to(ROOT).as_posix() for p in SAVED}
    assert saved <= modified, "the saved notebooks should differ from git (they hold outputs now)"

    checks = ["tests/course/test_build.py::test_repository_notebooks_are_up_to_date",
              "tests/course/test_build.py::test_committed_notebooks_have_no_outputs",
              "tests/checks/test_assignments.py::test_release_is_up_to_date"]
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", *checks],
                            cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "3 passed" in result.stdout
