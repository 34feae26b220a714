"""The student bundle: everything a student needs, nothing they must not see.

Contents: ``course/`` (lecture notebooks and data), ``release/`` (the
student versions of the graded notebooks; ``course/`` also holds the launcher,
``python3 -m course lab``), ``helpers/`` (the package, including
``helpers/checks/``: the visible tests import it; hidden tests live only in
``source/``), ``requirements.txt`` and ``requirements-student.txt``,
``pyproject.toml`` (packages reduced to ``helpers`` and ``course``: the launcher, the student's server extension), ``Makefile``,
``.lab-settings/`` (JupyterLab in Chinese) and ``README.md`` (from
``autograder/STUDENT_README.md``).

Never included: ``source/``, ``autograder/``, ``tests/``, gradebooks,
submissions, feedback. :func:`find_secrets` scans a built bundle for
nbgrader solution/hidden-test markers, for every solution block and every
hidden-test block of ``source/`` (whitespace-insensitive), for any
hidden-test line inside the shipped notebooks, and for the answers of the
instructor's question bank (``docs/questions.toml``: every sentence of an
answer of 25 characters or more); :func:`build_bundle` refuses to finish
when it finds one.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import tomllib
from pathlib import Path

import nbformat

from autograder.grade import default_course

INCLUDE = ("course", "release", "helpers", "requirements.txt", "requirements-student.txt", "pyproject.toml",
           "Makefile", ".lab-settings")
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints", ".pytest_cache",
                                "gradebook.db*", "*.egg-info")
#: The maintainer's build in course/ (the lecture sources, the build and the teaching plan): not a
#: student's (issue 34: the folder students open holds the course, not the tools that make it).
MAINTAINER = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints", ".pytest_cache", "gradebook.db*", "_src",
                                    "builder", "build.py")
MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _blocks(source: str, begin: str, end: str) -> list[str]:
    blocks, current = [], None
    for line in source.splitlines():
        if begin in line:
            current = []
        elif end in line and current is not None:
            blocks.append("\n".join(current))
            current = None
        elif current is not None:
            current.append(line)
    return blocks


def secrets_of(source_root: Path) -> dict[str, list[str]]:
    """Solution blocks, hidden-test blocks and hidden-test lines of ``source/``."""
    solutions, hidden, hidden_lines = [], [], []
    for path in sorted(Path(source_root).glob("*/*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            solutions += _blocks(cell.source, "BEGIN SOLUTION", "END SOLUTION")
            blocks = _blocks(cell.source, "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
            hidden += blocks
            for block in blocks:
                hidden_lines += [line.strip() for line in block.splitlines()
                                 if len(line.strip()) >= 8 and not line.strip().startswith("#")]
    return {"solutions": [b for b in solutions if _squash(b)],
            "hidden": [b for b in hidden if _squash(b)], "hidden_lines": hidden_lines}


def answers_of(bank: Path) -> list[tuple[str, str]]:
    """``(question id, sentence)`` for every sentence of 25 or more characters (whitespace removed)
    of the answers in the question bank ``bank`` (docs/questions.toml); empty without one."""
    if not Path(bank).is_file():
        return []
    found = []
    for question in tomllib.loads(Path(bank).read_text(encoding="utf-8")).get("question", []):
        for sentence in re.split(r"[。；;]", question.get("answer", "")):
            if len(_squash(sentence)) >= 25:
                found.append((question.get("id", "?"), _squash(sentence)))
    return found


#: What a student pack never holds: the instructor's sources, the guide, the tests, the class server.
FORBIDDEN = ("source", "docs", "tests", "hub", "autograder")
#: A clause of a question-bank answer this long (characters, whitespace removed) is the guide's own text.
MIN_ANSWER_CLAUSE = 20


def guide_answers(guide: Path) -> list[str]:
    """The question bank's answers of the teacher's guide (``> 答案：``, ``> 参考答案：``, ``> 参考要点：``
    and the blockquote lines after them), cut at 。；; into clauses of at least
    :data:`MIN_ANSWER_CLAUSE` characters, whitespace removed."""
    answers, current = [], None
    for line in Path(guide).read_text(encoding="utf-8").splitlines():
        start = re.match(r"^> (?:参考)?(?:答案|要点)：(.*)", line)
        if start:
            current = [start.group(1)]
            answers.append(current)
        elif current is not None and line.startswith(">"):
            current.append(line[1:].strip())
        else:
            current = None
    clauses = (_squash(c) for a in answers for c in re.split(r"[。；;]", " ".join(a)))
    return [c for c in clauses if len(c) >= MIN_ANSWER_CLAUSE]


def find_secrets(bundle: Path, source_root: Path, bank: Path | None = None) -> list[str]:
    """Every place in ``bundle`` that shows a marker, a solution, a hidden test, an answer of the
    question bank (``bank``: default ``docs/questions.toml`` beside ``source/``) or any other answer
    of the teacher's guide (``docs/teacher-guide.md``), or a folder of :data:`FORBIDDEN`."""
    secrets = secrets_of(source_root)
    answers = answers_of(bank or Path(source_root).parent / "docs" / "questions.toml")
    squashed_solutions = [_squash(b) for b in secrets["solutions"]]
    squashed_hidden = [_squash(b) for b in secrets["hidden"]]
    guide = Path(source_root).parent / "docs" / "teacher-guide.md"
    in_bank = {a for _, a in answers}
    guide_only = [a for a in (guide_answers(guide) if guide.is_file() else []) if a not in in_bank]
    found = [f"{name}/: the instructor's, not the student's" for name in FORBIDDEN if (Path(bundle) / name).exists()]
    for path in sorted(Path(bundle).rglob("*")):
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        rel = path.relative_to(bundle).as_posix()
        if path.suffix == ".ipynb":
            try:
                nb = nbformat.reads(text, as_version=4)
                text = "\n".join(c.source for c in nb.cells)
            except Exception:
                pass
            for line in secrets["hidden_lines"]:
                if line in text:
                    found.append(f"{rel}: hidden test line {line[:60]!r}")
        for marker in MARKERS:
            if marker in text:
                found.append(f"{rel}: marker {marker!r}")
        squashed = _squash(text)
        found += [f"{rel}: solution block {i}" for i, b in enumerate(squashed_solutions) if b in squashed]
        found += [f"{rel}: hidden test block {i}" for i, b in enumerate(squashed_hidden) if b in squashed]
        found += [f"{rel}: answer of {qid} in the question bank" for qid, a in answers if a in squashed]
        found += [f"{rel}: answer of the teacher's guide {a[:30]!r}" for a in guide_only if a in squashed]
    return found


def _release_complete(course: Path) -> bool:
    for folder in (course / "source").iterdir():
        if folder.is_dir() and list(folder.glob("*.ipynb")):
            for nb in folder.glob("*.ipynb"):
                if not (course / "release" / folder.name / nb.name).is_file():
                    return False
    return True


def build_bundle(out, course=None) -> Path:
    """Write the student bundle to the folder ``out`` (or ``out`` ending in .zip)."""
    course = Path(course) if course else default_course()
    out = Path(out)
    if not (course / "source").is_dir():
        raise ValueError(f"{course} has no source/ folder (not a course root)")
    if not _release_complete(course):
        raise ValueError(f"{course / 'release'} is incomplete: run `make release` first")
    with tempfile.TemporaryDirectory(prefix="bundle-") as tmp:
        target = Path(tmp) / "dp-course" if out.suffix == ".zip" else out
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        for name in INCLUDE:
            src = course / name
            if src.is_dir():
                shutil.copytree(src, target / name, ignore=MAINTAINER if name == "course" else IGNORE)
            elif src.is_file():
                shutil.copy2(src, target / name)
        pyproject = target / "pyproject.toml"
        if pyproject.is_file():
            text = pyproject.read_text(encoding="utf-8")
            text = re.sub(r'include\s*=\s*\[[^\]]*\]', 'include = ["helpers", "helpers.*", "course"]', text)
            pyproject.write_text(text, encoding="utf-8")
        readme = Path(__file__).with_name("STUDENT_README.md")
        shutil.copy2(readme, target / "README.md")
        problems = find_secrets(target, course / "source")
        if problems:
            if out.suffix != ".zip":
                shutil.rmtree(target)
            raise ValueError("student bundle would leak:\n  " + "\n  ".join(problems[:20]))
        if out.suffix == ".zip":
            out.parent.mkdir(parents=True, exist_ok=True)
            archive = shutil.make_archive(str(out.with_suffix("")), "zip", root_dir=tmp,
                                          base_dir="dp-course")
            return Path(archive)
    return out
