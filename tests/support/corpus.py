"""Build and grade submission notebooks for the graded assignments (issue 3).

The corpus itself (``manifest.json``, ``<assignment>/<function>/<variant>.py``) is in
``tests/corpus/``. Importable by any test or tool run from the repository root::

    from tests.support import corpus

Main entry points

* :func:`make_submission` ``(assignment, solutions, out_path)``: copy the
  *release* notebook of ``assignment`` and replace the source of each
  solution cell named in ``solutions`` (``{grade_id: code}``; the solution
  cells' grade ids are the function names, e.g. ``"laplace_noise"``). Cells
  not named keep the release stub (``raise NotImplementedError()``).
* :func:`corpus_entries` ``(assignment)``: the corpus of realistic wrong and
  differently written correct solutions listed in ``manifest.json``, each
  as ``{"id", "kind" ("correct"/"wrong"), "solutions", "expect_zero", "why", "names"}``
  (``names``: the cells whose message must say which function the mistake is in;
  :func:`naming_problems`).
* :func:`grade` ``(assignment, submissions, root)``: grade many submissions
  through the real path (the trusted grader of ``python -m autograder
  grade``: student code sandboxed, tests in the trusted process), return
  ``{student: {"score", "max_score", "cells", "status", "messages"}}``.
* :func:`generate_release` ``(root)``: run ``nbgrader generate_assignment``
  for every assignment in a temporary course root.

Command line (from the repository root)::

    .venv/bin/python -m tests.support.corpus release   # regenerate release/ from source/
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat

from autograder import corpus as _corpus

REPO = Path(__file__).resolve().parents[2]
HERE = REPO / "tests" / "corpus"  # the corpus: manifest.json, <assignment>/<function>/<variant>.py
VENV_BIN = REPO / ".venv" / "bin"
ASSIGNMENTS = ("laplace", "exponential", "randomized_response", "private_mean")


def nbgrader_env(**extra: str) -> dict[str, str]:
    """Environment for nbgrader: the venv's bin/ first on PATH (nbgrader runs ``alembic``)."""
    env = dict(os.environ)
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    env.setdefault("MPLBACKEND", "Agg")
    env.update(extra)
    return env


def run_nbgrader(root: Path, *args: str, env: dict | None = None, check: bool = True) -> subprocess.CompletedProcess:
    """Run ``nbgrader <args>`` with ``root`` as working directory (the course root)."""
    result = subprocess.run(
        [str(VENV_BIN / "nbgrader"), *args], cwd=root, env=env or nbgrader_env(),
        capture_output=True, text=True,
    )
    if check and result.returncode != 0:
        raise RuntimeError(f"nbgrader {' '.join(args)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result


def make_course(root: Path, assignments=ASSIGNMENTS) -> Path:
    """A fresh course root: ``nbgrader_config.py`` and ``source/<assignment>`` copied from the repo."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "nbgrader_config.py", root / "nbgrader_config.py")
    for assignment in assignments:
        shutil.copytree(REPO / "source" / assignment, root / "source" / assignment, dirs_exist_ok=True)
    return root


def generate_release(root: Path) -> Path:
    """``nbgrader generate_assignment`` for every assignment of ``root``; returns ``root/release``."""
    run_nbgrader(root, "generate_assignment", "*", "--force")
    return Path(root) / "release"


def notebook_path(base: Path, assignment: str) -> Path:
    return Path(base) / assignment / f"{assignment}.ipynb"


def solution_cell_ids(assignment: str, release_dir: Path = REPO / "release") -> list[str]:
    nb = nbformat.read(notebook_path(release_dir, assignment), as_version=4)
    return [c.metadata["nbgrader"]["grade_id"] for c in nb.cells
            if c.metadata.get("nbgrader", {}).get("solution")]


def make_submission(assignment: str, solutions: dict[str, str], out_path: Path,
                    release_dir: Path = REPO / "release") -> Path:
    """Write the release notebook of ``assignment`` with solution cells filled in.

    ``solutions`` maps a solution cell's grade id (the function name) to the
    complete code of that cell (usually one ``def``). Unknown names raise
    ``KeyError``, so a renamed cell cannot silently leave a stub in place.
    """
    nb = nbformat.read(notebook_path(release_dir, assignment), as_version=4)
    remaining = dict(solutions)
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and meta.get("grade_id") in remaining:
            cell.source = remaining.pop(meta["grade_id"]).strip("\n")
    if remaining:
        raise KeyError(f"{assignment}: no solution cell named {sorted(remaining)}")
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, out_path)
    return out_path


def load_manifest() -> dict:
    """``manifest.json`` plus one ``<assignment>/manifest.json`` per newer assignment."""
    return _corpus.load_manifest(HERE)


def snippet(assignment: str, function: str, variant: str) -> str:
    return _corpus.snippet(HERE, assignment, function, variant)


#: How a check's message says where the mistake is (issue 35, §5), Chinese and English: a helper
#: blamed instead of the function checked ("错误多半在 F，不在 G"), or the function checked named as
#: the place after the judge asked its helper ("所以错误在 F 本身").
_BLAMES = (re.compile(r"错误多半在 (\w+)，不在 "), re.compile(r"The mistake is most likely in (\w+), not "),
           re.compile(r"所以错误在 (\w+) 本身"), re.compile(r"so the mistake is in (\w+)"))


def blamed(message: str) -> tuple[set[str], set[str]]:
    """The functions ``message`` says the mistake is in: ``(named in Chinese, named in English)``."""
    zh = {name for pattern in _BLAMES[0::2] for name in pattern.findall(message)}
    en = {name for pattern in _BLAMES[1::2] for name in pattern.findall(message)}
    return zh, en


def naming_problems(entry: dict, messages: dict[str, str]) -> list[str]:
    """The cells of ``entry["names"]`` whose message does not say, in both languages, that the mistake
    is in the function the manifest names there (and in no other)."""
    problems = []
    for grade_id, function in entry.get("names", {}).items():
        message = messages.get(grade_id)
        if message is None:
            problems.append(f"{entry['id']}: {grade_id} passed; its message was to name {function}")
        elif blamed(message) != ({function}, {function}):
            zh, en = blamed(message)
            problems.append(f"{entry['id']}: {grade_id} names {sorted(zh)} / {sorted(en)}, not {function}: "
                            f"{message[:300]}")
    return problems


def corpus_problems(assignment: str, failing_cells) -> list[str]:
    """What is wrong with the checks on ``assignment``'s corpus, run directly (empty when nothing).

    ``failing_cells(solutions)`` returns ``{grade_id: message}`` for the graded cells that fail.
    Correct solutions must pass every cell; each wrong one must fail the cells the manifest
    names, with a bilingual message (no crash of the check itself).
    """
    problems = []
    for entry in corpus_entries(assignment):
        failed = failing_cells(entry["solutions"])
        if entry["kind"] == "correct" and failed:
            problems.append(f"{entry['id']} ({entry['why']}) failed {failed}")
        if entry["kind"] == "wrong":
            missing = set(entry["expect_zero"]) - set(failed)
            if missing:
                problems.append(f"{entry['id']} ({entry['why']}) passed {sorted(missing)}")
            problems += naming_problems(entry, failed)
            for grade_id, message in failed.items():
                if message.startswith("CRASH") or not any("\u4e00" <= ch <= "\u9fff" for ch in message):
                    problems.append(f"{entry['id']}: {grade_id}: not a bilingual check message: {message[:200]}")
    return problems


def corpus_entries(assignment: str) -> list[dict]:
    """Every corpus submission of ``assignment`` (``autograder.corpus.corpus_entries``)."""
    return _corpus.corpus_entries(HERE, assignment)


#: Run seed of corpus grading: fixed, so every run of the tests judges the same samples.
CORPUS_SEED = 20261123


def grade(assignment: str, submissions: dict[str, dict[str, str]], root: Path,
          env: dict | None = None, release_dir: Path = REPO / "release", jobs: int = 2,
          seed: int = CORPUS_SEED) -> dict[str, dict]:
    """Grade ``submissions`` (``{student_id: {grade_id: code}}``) with the trusted grader.

    The student notebooks are built from ``release_dir`` by :func:`make_submission`
    under ``root/submitted/`` and graded by ``python -m autograder grade``'s
    function (student code in the bubblewrap sandbox, the source notebook's
    tests, hidden ones included, in the trusted process), with output in
    ``root`` (``root/grades.csv``, ``root/autograded/<student>/...``).
    ``env`` is accepted for compatibility and ignored (the grader sets the
    seed itself, from ``seed``). Returns ``{student_id: {"score",
    "max_score", "cells": {grade_id: score}, "status"}}``.
    """
    from autograder.grade import grade as trusted_grade

    root = Path(root)
    for student, solutions in submissions.items():
        make_submission(assignment, solutions, notebook_path(root / "submitted" / student, assignment), release_dir)
    graded = trusted_grade(assignment=assignment, submissions=root / "submitted", out=root, jobs=jobs,
                           seed=seed, quiet=True)
    results = {}
    for row in graded["submissions"]:
        results[row["student"]] = {"score": row["score"], "max_score": row["max_score"], "status": row["status"],
                                   "cells": {c["grade_id"]: c["score"] for c in row["cells"]},
                                   "messages": {c["grade_id"]: c["message"] for c in row["cells"] if c["message"]}}
    return results


def regenerate_repo_release() -> None:
    """Rebuild ``release/`` of the repository from ``source/`` (through a temporary course root)."""
    with tempfile.TemporaryDirectory() as tmp:
        release = generate_release(make_course(Path(tmp)))
        for assignment in ASSIGNMENTS:
            target = REPO / "release" / assignment
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(release / assignment, target)
            print(f"release/{assignment} regenerated")


if __name__ == "__main__":
    if sys.argv[1:] == ["release"]:
        regenerate_repo_release()
    else:
        print(__doc__)
        sys.exit(2)
