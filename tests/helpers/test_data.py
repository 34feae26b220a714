"""Tests of the committed course data (course/data) and its loaders (helpers.data).

These tests check every fact that course/data/README.md states about the files."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.data import (
    DATA_DIR,
    DataFileError,
    data_path,
    load_ages,
    load_medical,
    load_patients,
    load_students,
    load_zoo,
)

# The 24 rows printed in figures 6-4 / 6-6 of the textbook (§6.2.3), in printed order.
PRINTED_ZOO_ROWS = [
    ("Aardvark", 1), ("Albatross", 88), ("Alligator", 35), ("Alpaca", 99), ("Ant", 69),
    ("Anteater", 14), ("Antelope", 77), ("Ape", 53), ("Armadillo", 94), ("Baboon", 67),
    ("Badger", 92), ("Barracuda", 87), ("Bat", 70), ("Bear", 31), ("Beaver", 14), ("Bee", 14),
    ("Bison", 61), ("Boar", 57), ("Buffalo", 68), ("Butterfly", 13), ("Camel", 21),
    ("Caribou", 38), ("Cat", 92), ("Caterpillar", 39),
]


def test_table_6_1_students():
    s = load_students()
    assert s.name.tolist() == ["Aisha", "Benny", "Erica", "Fabio", "Johan", "Ming", "Orhan"]
    assert s.sex.tolist() == ["F", "M", "F", "M", "M", "M", "M"]
    assert s.passed.tolist() == [False, True, False, False, False, True, True]
    assert s.passed.dtype == bool


def test_table_6_2_patients():
    p = load_patients()
    assert p.name.tolist() == ["Tom", "Bob", "Amy", "Lily", "Alice"]
    assert p.cancer.tolist() == [True, False, True, False, True]


def test_zoo_printed_rows_and_size():
    zoo = load_zoo()
    assert list(zip(zoo.animal[:24].tolist(), zoo.carrots[:24].tolist())) == PRINTED_ZOO_ROWS
    assert zoo.animal.size == 182 and zoo.carrots.dtype == np.int64
    assert np.unique(zoo.animal).size == 182
    assert zoo.carrots.min() >= 0


def test_zoo_counts_agree_under_both_readings():
    """Book: 90 animals eat more than 55 carrots, 89 without Dugong. The C code tests >= 55;
    no animal eats exactly 55, so both readings agree."""
    zoo, nb = load_zoo(), load_zoo(neighbour=True)
    assert not np.any(zoo.carrots == 55)
    assert int(np.sum(zoo.carrots > 55)) == int(np.sum(zoo.carrots >= 55)) == 90
    assert int(np.sum(nb.carrots > 55)) == int(np.sum(nb.carrots >= 55)) == 89


def test_zoo_neighbour_is_zoo_without_dugong():
    zoo, nb = load_zoo(), load_zoo(neighbour=True)
    dugong = zoo.animal == "Dugong"
    assert dugong.sum() == 1 and zoo.carrots[dugong][0] > 55
    np.testing.assert_array_equal(nb.animal, zoo.animal[~dugong])
    np.testing.assert_array_equal(nb.carrots, zoo.carrots[~dugong])


# SHA-256 of Google's animals_and_carrots.csv (182 lines "Animal,carrots", no header,
# LF line endings, final newline: 1813 bytes), as transcribed from github.com/google/differential-privacy.
PUBLISHED_SHA256 = "262a6498f8816bb5b0453074cee66316d746968c3dd081272b2146ec53c74e9d"


def test_zoo_differs_from_the_published_file_only_as_documented():
    """README: header added, Elephant and Wren 55 -> 56, nothing else changed. Undo those
    edits and the bytes must hash to the published file."""
    import hashlib

    lines = data_path("zoo.csv").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "animal,carrots"
    undone = [{"Elephant,56": "Elephant,55", "Wren,56": "Wren,55"}.get(line, line) for line in lines[1:]]
    assert sum(a != b for a, b in zip(lines[1:], undone)) == 2
    published = ("\n".join(undone) + "\n").encode("utf-8")
    assert hashlib.sha256(published).hexdigest() == PUBLISHED_SHA256


def test_medical_histograms():
    md, nb = load_medical(), load_medical(neighbour=True)
    labels = ["20-30", "30-40", "40-50", "50-60", "60-70"]
    assert md.labels.tolist() == labels and nb.labels.tolist() == labels
    assert md.counts.tolist() == [405, 436, 421, 457, 463]
    assert nb.counts.tolist() == [405, 435, 421, 457, 463]
    assert np.abs(md.counts - nb.counts).sum() == 1  # one patient left: sensitivity 1


def test_medical_counts_recovered_from_printed_epsilon_10_output():
    """Figure 6-8 prints noise and noisy count; their difference is the true count."""
    printed = [  # (noise, noisy count) of the first block: medicaldata.csv
        (0.646580, 405.646580), (-0.026983, 435.973017), (0.079167, 421.079167),
        (0.456931, 457.456931), (0.171980, 463.171980),
    ]
    recovered = [round(noisy - noise) for noise, noisy in printed]
    assert recovered == load_medical().counts.tolist()
    neighbour = [(0.501617, 405.501617), (0.911548, 435.911548), (0.229845, 421.229845),
                 (-0.146756, 456.853244), (-0.104379, 462.895621)]
    assert [round(y - x) for x, y in neighbour] == load_medical(neighbour=True).counts.tolist()


def test_table_6_5_ages():
    ages = load_ages()
    assert ages.record.tolist() == [1, 2, 3, 4, 5, 6]
    assert ages.age.tolist() == [12, 13, 15, 13, 15, 12]


def test_data_path():
    assert data_path("zoo.csv") == DATA_DIR / "zoo.csv"
    assert (DATA_DIR / "README.md").is_file()
    with pytest.raises(DataFileError, match=r"data file 'nope.csv' not found.*available: .*zoo.csv"):
        data_path("nope.csv")
    for bad in ("../zoo.csv", "", 3):
        with pytest.raises(ValueError, match=r"data_path: parameter 'name'"):
            data_path(bad)


@pytest.mark.parametrize(
    "content,match",
    [
        ("", r"file is empty"),
        ("name,carrots\nAnt,3\n", r"line 1: header must be 'animal,carrots'"),
        ("animal,carrots\n", r"no data rows"),
        ("animal,carrots\nAnt,3\nBee\n", r"line 3: expected 2 fields"),
        ("animal,carrots\nAnt,3\nBee,many\n", r"line 3: column 'carrots' must be an integer >= 0; got 'many'"),
        ("animal,carrots\nAnt,3\nBee,-2\n", r"line 3: column 'carrots' must be an integer >= 0"),
        ("animal,carrots\nAnt,3\nAnt,4\n", r"line 3: duplicate animal 'Ant' \(first on line 2\)"),
        ("animal,carrots\nAnt,3\n\nBee,4\n", r"line 3: expected 2 fields"),
    ],
)
def test_malformed_zoo_file_errors_name_file_line_and_expectation(tmp_path, content, match):
    path = tmp_path / "zoo.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DataFileError, match=match) as info:
        load_zoo(path=path)
    assert str(path) in str(info.value)


def test_other_malformed_files(tmp_path):
    bad = tmp_path / "students.csv"
    bad.write_text("name,sex,result\nAisha,X,Fail\n", encoding="utf-8")
    with pytest.raises(DataFileError, match=r"line 2: column 'sex' must be one of F, M; got 'X'"):
        load_students(bad)
    bad.write_text("name,cancer\nTom,maybe\n", encoding="utf-8")
    with pytest.raises(DataFileError, match=r"column 'cancer' must be one of yes, no"):
        load_patients(bad)
    bad.write_text("age_range,count\n20-30,4.5\n", encoding="utf-8")
    with pytest.raises(DataFileError, match=r"column 'count' must be an integer"):
        load_medical(path=bad)
    bad.write_bytes(b"record,age\n1,\xff\n")
    with pytest.raises(DataFileError, match=r"not UTF-8"):
        load_ages(bad)
    with pytest.raises(DataFileError, match=r"file not found"):
        load_ages(tmp_path / "missing.csv")
    with pytest.raises(ValueError, match=r"load_zoo: parameter 'neighbour'"):
        load_zoo(neighbour="yes")


def test_docstring_examples_of_helpers_data():
    import doctest

    import helpers.data

    result = doctest.testmod(helpers.data, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
