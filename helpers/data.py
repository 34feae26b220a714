"""Loaders for the small datasets of textbook chapter 6 (files in ``course/data``).

Each loader reads one committed CSV file. It checks the header, the number of fields and the
type of every value, and returns numpy arrays in a ``NamedTuple``. A missing or malformed file
raises :class:`DataFileError` (a ``ValueError``). The message names the file and the line, and
says what was expected. Where each file comes from is explained in ``course/data/README.md``.

Examples
--------
>>> from helpers.data import load_zoo
>>> zoo = load_zoo()
>>> int((zoo.carrots > 55).sum())
90
>>> int((load_zoo(neighbour=True).carrots > 55).sum())   # without Dugong
89
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import NamedTuple

import numpy as np

from helpers._validation import fail

__all__ = [
    "DataFileError",
    "DATA_DIR",
    "data_path",
    "read_csv",
    "Students",
    "Patients",
    "Zoo",
    "Histogram",
    "Ages",
    "load_students",
    "load_patients",
    "load_zoo",
    "load_medical",
    "load_ages",
]

#: ``course/data`` in the repository (the package is installed editable, so this is the checkout).
DATA_DIR: Path = Path(__file__).resolve().parent.parent / "course" / "data"


class DataFileError(ValueError):
    """A course data file is missing or does not have the expected layout."""


def data_path(name: str) -> Path:
    """Absolute path of the course data file ``name`` (e.g. ``"zoo.csv"``).

    Raises
    ------
    DataFileError
        If ``name`` is not a plain file name or the file does not exist.
    """
    if not isinstance(name, str) or not name or Path(name).name != name:
        raise fail("data_path", "name", "a plain file name such as 'zoo.csv'", name)
    path = DATA_DIR / name
    if not path.is_file():
        available = ", ".join(sorted(p.name for p in DATA_DIR.glob("*.csv"))) or "none"
        raise DataFileError(
            f"data_path: data file '{name}' not found in {DATA_DIR} (available: {available})."
        )
    return path


def read_csv(path: str | Path, columns: tuple[str, ...]) -> list[tuple[int, list[str]]]:
    """Read a CSV file whose header must be exactly ``columns``.

    Returns the data rows as ``(line_number, fields)`` pairs, so that callers can report the
    line of a bad value. Blank lines are rejected, not skipped: a blank line in a committed data
    file is a mistake.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")  # tolerate a BOM (files saved by Excel)
    except FileNotFoundError:
        raise DataFileError(f"{path}: file not found (expected columns {', '.join(columns)}).") from None
    except UnicodeDecodeError as exc:
        raise DataFileError(f"{path}: not UTF-8 text ({exc.reason}).") from None
    rows = list(csv.reader(text.splitlines()))
    if not rows:
        raise DataFileError(f"{path}: file is empty; expected a header line '{','.join(columns)}'.")
    header = [field.strip() for field in rows[0]]
    if tuple(header) != columns:
        raise DataFileError(
            f"{path}, line 1: header must be '{','.join(columns)}'; got '{','.join(rows[0])}'."
        )
    out = []
    for number, fields in enumerate(rows[1:], start=2):
        if len(fields) != len(columns):
            raise DataFileError(
                f"{path}, line {number}: expected {len(columns)} fields "
                f"({','.join(columns)}); got {len(fields)}: {fields!r}."
            )
        out.append((number, [field.strip() for field in fields]))
    if not out:
        raise DataFileError(f"{path}: no data rows after the header.")
    return out


def _int_field(path: Path, line: int, column: str, text: str, minimum: int = 0) -> int:
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or value < minimum:
        raise DataFileError(
            f"{path}, line {line}: column '{column}' must be an integer >= {minimum}; got {text!r}."
        )
    return value


def _choice_field(path: Path, line: int, column: str, text: str, allowed: tuple[str, ...]) -> str:
    if text not in allowed:
        raise DataFileError(
            f"{path}, line {line}: column '{column}' must be one of {', '.join(allowed)}; got {text!r}."
        )
    return text


def _unique(path: Path, rows: list[tuple[int, list[str]]], column: str, index: int) -> None:
    seen: dict[str, int] = {}
    for line, fields in rows:
        key = fields[index]
        if key in seen:
            raise DataFileError(
                f"{path}, line {line}: duplicate {column} {key!r} (first on line {seen[key]})."
            )
        seen[key] = line


class Students(NamedTuple):
    """Table 6-1: ``name``, ``sex`` ('F'/'M') and ``passed`` (bool) arrays."""

    name: np.ndarray
    sex: np.ndarray
    passed: np.ndarray


class Patients(NamedTuple):
    """Table 6-2: ``name`` and ``cancer`` (bool) arrays, in the printed order."""

    name: np.ndarray
    cancer: np.ndarray


class Zoo(NamedTuple):
    """Experiment 6-1: ``animal`` names and ``carrots`` eaten per day (int64)."""

    animal: np.ndarray
    carrots: np.ndarray


class Histogram(NamedTuple):
    """Experiment 6-2: bucket ``labels`` (e.g. '20-30') and their ``counts`` (int64)."""

    labels: np.ndarray
    counts: np.ndarray


class Ages(NamedTuple):
    """Table 6-5: ``record`` numbers and ``age`` values (int64)."""

    record: np.ndarray
    age: np.ndarray



def _named_counts(path: Path, name: str, count: str) -> tuple[np.ndarray, np.ndarray]:
    """Read a two-column CSV of unique names and non-negative integer counts."""
    rows = read_csv(path, (name, count))
    _unique(path, rows, name, 0)
    names = np.array([fields[0] for _, fields in rows])
    counts = np.array([_int_field(path, line, count, fields[1]) for line, fields in rows], dtype=np.int64)
    return names, counts

def load_students(path: str | Path | None = None) -> Students:
    """Table 6-1 (textbook §6.1.1): seven students, their sex and exam result.

    Used for the differential attack: "how many passed" minus "how many passed, Aisha excluded".
    """
    path = Path(path) if path is not None else data_path("table6_1_students.csv")
    rows = read_csv(path, ("name", "sex", "result"))
    _unique(path, rows, "name", 0)
    sex = [_choice_field(path, n, "sex", f[1], ("F", "M")) for n, f in rows]
    result = [_choice_field(path, n, "result", f[2], ("Pass", "Fail")) for n, f in rows]
    return Students(
        name=np.array([f[0] for _, f in rows]),
        sex=np.array(sex),
        passed=np.array([r == "Pass" for r in result]),
    )


def load_patients(path: str | Path | None = None) -> Patients:
    """Table 6-2 (textbook §6.1.2): five patients and whether each has cancer.

    The query ``f(i)`` of §6.1.2 counts the first ``i`` patients with cancer:
    ``np.cumsum(load_patients().cancer)``.
    """
    path = Path(path) if path is not None else data_path("table6_2_patients.csv")
    rows = read_csv(path, ("name", "cancer"))
    _unique(path, rows, "name", 0)
    cancer = [_choice_field(path, n, "cancer", f[1], ("yes", "no")) for n, f in rows]
    return Patients(
        name=np.array([f[0] for _, f in rows]),
        cancer=np.array([c == "yes" for c in cancer]),
    )


def load_zoo(neighbour: bool = False, path: str | Path | None = None) -> Zoo:
    """Experiment 6-1 (textbook §6.2.3): animals and the carrots each eats per day.

    Parameters
    ----------
    neighbour : bool, default False
        ``False`` loads ``zoo.csv`` (182 animals, 90 eat more than 55 carrots).
        ``True`` loads ``zoo_nb.csv``, the neighbouring dataset without Dugong (89).
    path : path-like, optional
        Read this file instead (same layout); used by tests.
    """
    if not isinstance(neighbour, (bool, np.bool_)):
        raise fail("load_zoo", "neighbour", "True or False", neighbour)
    if path is None:
        path = data_path("zoo_nb.csv" if neighbour else "zoo.csv")
    path = Path(path)
    animal, carrots = _named_counts(path, "animal", "carrots")
    return Zoo(animal=animal, carrots=carrots)


def load_medical(neighbour: bool = False, path: str | Path | None = None) -> Histogram:
    """Experiment 6-2 (textbook §6.2.4): patients per age bucket, a histogram.

    ``neighbour=True`` loads ``md_nb.csv``, where one patient of 30-40 left (436 -> 435).
    The buckets are disjoint, so one person changes one count by 1: sensitivity 1.
    """
    if not isinstance(neighbour, (bool, np.bool_)):
        raise fail("load_medical", "neighbour", "True or False", neighbour)
    if path is None:
        path = data_path("md_nb.csv" if neighbour else "medicaldata.csv")
    path = Path(path)
    labels, counts = _named_counts(path, "age_range", "count")
    return Histogram(labels=labels, counts=counts)


def load_ages(path: str | Path | None = None) -> Ages:
    """Table 6-5 (textbook §6.5.3): six middle-school students' ages (12, 13, 15, 13, 15, 12)."""
    path = Path(path) if path is not None else data_path("table6_5_ages.csv")
    rows = read_csv(path, ("record", "age"))
    _unique(path, rows, "record", 0)
    return Ages(
        record=np.array([_int_field(path, n, "record", f[0], 1) for n, f in rows], dtype=np.int64),
        age=np.array([_int_field(path, n, "age", f[1]) for n, f in rows], dtype=np.int64),
    )
