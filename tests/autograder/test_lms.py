"""Hand-in through an LMS and grading on a lecturer's own machine (issue 33 §3, §4).

Fixtures are built here, modelled on real bulk downloads (the formats are cited in
``autograder/lms/naming.py``): Moodle's folders and flat names with Chinese names and spaces, a
resubmission, a stray PDF, a notebook of another assignment, a zip inside the zip, a
``__MACOSX`` entry, a path that climbs out, a symlink; Canvas's lower-cased names with ``late``
and a ``-1`` resubmission, and its gradebook export as roster; a 学习通-style folder read with a
pattern. One batch goes through the real sandboxed grader (a corpus correct entry and a stub),
then out again as Moodle, Canvas and plain CSVs.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import sys
import time
import zipfile
from pathlib import Path

import pytest

from autograder import __main__ as cli
from autograder import hostcheck
from autograder.lms import naming
from autograder.lms.archive import walk
from autograder.lms.export import export_grades
from autograder.lms.importer import assignment_specs, import_submissions, notebook_grade_ids, which_assignment
from tests.support import corpus

REPO = Path(__file__).resolve().parents[2]


def _notebook(assignment: str, tmp: Path, solutions: dict | None = None) -> bytes:
    name = f"nb-{assignment}-{len(list(tmp.iterdir()))}.ipynb"
    path = corpus.make_submission(assignment, solutions or {}, tmp / name)
    return path.read_bytes()


@pytest.fixture(scope="module")
def notebooks(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("nbs")
    correct = corpus.corpus_entries("laplace")[0]
    assert correct["kind"] == "correct"
    return {"correct": _notebook("laplace", tmp, correct["solutions"]),
            "stub": _notebook("laplace", tmp),
            "exponential": _notebook("exponential", tmp)}


def _add(archive: zipfile.ZipFile, name: str, data: bytes, when=(2026, 11, 20, 10, 0, 0), mode=0o100644) -> None:
    info = zipfile.ZipInfo(name, date_time=when)
    info.external_attr = mode << 16
    info.flag_bits |= 0x800  # UTF-8 names, as Moodle and Canvas write them
    archive.writestr(info, data)


def moodle_zip(path: Path, nbs: dict) -> Path:
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as z:
        _add(z, "作业/2024004_laplace.ipynb", nbs["correct"])
    with zipfile.ZipFile(path, "w") as z:
        _add(z, "张三_1234567_assignsubmission_file_/2024001_laplace.ipynb", nbs["correct"])
        # resubmission: the older file has the lower time (the correct one), the newer is the stub
        _add(z, "李 四_1234568_assignsubmission_file_/laplace.ipynb", nbs["correct"], (2026, 11, 20, 9, 0, 0))
        _add(z, "李 四_1234568_assignsubmission_file_/laplace (1).ipynb", nbs["stub"], (2026, 11, 21, 9, 0, 0))
        _add(z, "王五_1234569_assignsubmission_file_/2024003_exponential.ipynb", nbs["exponential"])
        _add(z, "王五_1234569_assignsubmission_file_/说明.pdf", b"%PDF-1.4 stray")
        _add(z, "Participant_1234570_assignsubmission_file_work.zip", inner.getvalue())
        _add(z, "__MACOSX/._laplace.ipynb", b"\x00\x05")
        _add(z, "../evil.ipynb", nbs["correct"])
        _add(z, "赵六_1234571_assignsubmission_file_/link.ipynb", b"/etc/passwd", mode=0o120777)
        _add(z, "laplace.ipynb", nbs["correct"])  # at the top, nobody's
        _add(z, "readme.txt", b"stray")
    return path


def _outcomes(manifest) -> dict[str, tuple]:
    return {r["file"]: (r["outcome"], r.get("student")) for r in manifest["records"]}


def test_names_of_the_lms_formats():
    assignments = ("laplace", "randomized_response", "exponential")
    ident = naming.identify(("张三_1234567_assignsubmission_file_", "2024001_laplace.ipynb"), assignments)
    assert (ident.lms, ident.lms_id, ident.name, ident.own_id, ident.own_assignment) == \
        ("moodle", "1234567", "张三", "2024001", "laplace")
    flat = naming.identify(("Anna Li_77_assignsubmission_file_2024002_randomized_response-2.ipynb",), assignments)
    assert (flat.lms, flat.lms_id, flat.original, flat.own_id, flat.own_assignment, flat.counter) == \
        ("moodle", "77", "2024002_randomized_response-2.ipynb", "2024002", "randomized_response", 2)
    canvas = naming.identify(("lisi_late_12346_67892_laplace-1.ipynb",), assignments)
    assert (canvas.lms, canvas.lms_id, canvas.late, canvas.original, canvas.counter, canvas.own_id) == \
        ("canvas", "12346", True, "laplace-1.ipynb", 1, None)
    anonymous = naming.identify(("12346_67892_2024009_laplace.ipynb",), assignments)
    assert (anonymous.lms, anonymous.lms_id, anonymous.own_id) == ("canvas", "12346", "2024009")
    underscore = naming.identify(("A_11_assignsubmission_file_", "2024_001_randomized_response.ipynb"), assignments)
    assert (underscore.own_id, underscore.own_assignment) == ("2024_001", "randomized_response")
    own = naming.identify(("2024001_laplace (2).ipynb",), assignments)
    assert (own.lms, own.own_id, own.counter) == (None, "2024001", 2)
    pattern = naming.compile_pattern(r"^(?P<id>\d{7})_(?P<name>[^_]+)_(?P<time>\d{14})")
    xxt = naming.identify(("2024001_张三_20261120093000_laplace.ipynb",), assignments, pattern)
    assert (xxt.lms, xxt.lms_id, xxt.name, xxt.time) == ("pattern", "2024001", "张三", 1795167000.0)
    with pytest.raises(ValueError, match=r"\(\?P<id>"):
        naming.compile_pattern(r"\d+")
    with pytest.raises(ValueError, match="not a regular expression"):
        naming.compile_pattern(r"(")


def test_wrong_assignment_is_told_by_cell_ids(notebooks):
    specs = assignment_specs(REPO)
    assert which_assignment(notebook_grade_ids(notebooks["exponential"]), specs, "laplace") == "exponential"
    assert which_assignment(notebook_grade_ids(notebooks["stub"]), specs, "laplace") == "laplace"
    # only the cells every assignment shares (intro, setup ...): nothing to tell by
    assert which_assignment({"intro", "setup", "explore"}, specs, "laplace") is None


@pytest.fixture
def shanghai_time(monkeypatch):
    """The lecturer's clock in China (UTC+8), whatever the test machine's zone."""
    monkeypatch.setenv("TZ", "Asia/Shanghai")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_moodle_download_is_laid_out_and_everything_is_accounted_for(tmp_path, notebooks, shanghai_time):
    download = moodle_zip(tmp_path / "moodle.zip", notebooks)
    out = tmp_path / "submitted"
    manifest = import_submissions(download, "laplace", out)
    got = _outcomes(manifest)
    assert got["张三_1234567_assignsubmission_file_/2024001_laplace.ipynb"] == ("placed", "2024001")
    assert got["李 四_1234568_assignsubmission_file_/laplace (1).ipynb"] == ("placed", "1234568")
    assert got["李 四_1234568_assignsubmission_file_/laplace.ipynb"] == ("older copy", "1234568")
    assert got["王五_1234569_assignsubmission_file_/2024003_exponential.ipynb"][0] == "wrong assignment"
    assert got["王五_1234569_assignsubmission_file_/说明.pdf"][0] == "not a notebook"
    assert got["Participant_1234570_assignsubmission_file_work.zip/作业/2024004_laplace.ipynb"] == \
        ("placed", "2024004")
    assert got["__MACOSX/._laplace.ipynb"][0] == "ignored"
    assert got["../evil.ipynb"][0] == "refused"
    assert got["赵六_1234571_assignsubmission_file_/link.ipynb"][0] == "refused"
    details = {r["file"]: r.get("detail") or "" for r in manifest["records"]}
    assert "symbolic link" in details["赵六_1234571_assignsubmission_file_/link.ipynb"]
    assert "'..'" in details["../evil.ipynb"]
    assert got["laplace.ipynb"][0] == "not placed"
    assert got["readme.txt"][0] == "not a notebook"
    with zipfile.ZipFile(download) as z:  # every entry once (the nested zip by its one member)
        assert len(manifest["records"]) == len(got) == len(z.namelist())
    kept = next(r for r in manifest["placed"] if r["student"] == "1234568")
    assert kept["time"] == "2026-11-21 09:00:00", "a zip's time is shown as the zip wrote it, to the second"
    older = next(r for r in manifest["records"] if r["outcome"] == "older copy")
    assert older["kept"].endswith("laplace (1).ipynb") and "older" in older["detail"]
    # exactly the grader's layout, under the name the assignment expects, and nothing else written
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert written == ["1234568/laplace/laplace.ipynb", "2024001/laplace/laplace.ipynb",
                       "2024004/laplace/laplace.ipynb", "import_laplace.csv", "import_laplace.json"]
    assert (out / "1234568/laplace/laplace.ipynb").read_bytes() == notebooks["stub"]
    assert (out / "2024001/laplace/laplace.ipynb").read_bytes() == notebooks["correct"]
    assert not (tmp_path / "evil.ipynb").exists()
    table = (out / "import_laplace.csv").read_bytes()
    assert table.startswith(b"\xef\xbb\xbf") and "王五".encode() in table
    # a roster (Moodle's grading worksheet with ID numbers) names the participant by 学号
    worksheet = tmp_path / "worksheet.csv"
    worksheet.write_text("Identifier,Full name,ID number,Email address,Grade,Maximum Grade,Last modified (grade)\n"
                         "Participant 1234568,李 四,2024002,li@x.cn,,10.00,-\n", encoding="utf-8-sig")
    again = import_submissions(download, "laplace", out, roster=worksheet)
    assert _outcomes(again)["李 四_1234568_assignsubmission_file_/laplace (1).ipynb"] == ("placed", "2024002")
    assert not (out / "1234568").exists(), "the previous import's folder of the renamed student stays behind"
    assert again["replaced_previous_import_of"] == ["1234568"]


def test_canvas_download_with_late_resubmission_and_gradebook_roster(tmp_path, notebooks):
    download = tmp_path / "submissions.zip"
    with zipfile.ZipFile(download, "w") as z:
        _add(z, "zhangsan_12345_67890_2024001_laplace.ipynb", notebooks["correct"])
        _add(z, "lisi_late_12346_67891_laplace.ipynb", notebooks["correct"])
        _add(z, "lisi_late_12346_67892_laplace-1.ipynb", notebooks["stub"])
        _add(z, "张三丰_12347_67893_2024009_laplace.ipynb", notebooks["correct"])
        _add(z, "wangwu_12348_67894_notes.txt", b"stray")
    roster = tmp_path / "gradebook.csv"
    roster.write_text("Student,ID,SIS User ID,SIS Login ID,Section,laplace (555)\n"
                      "    Points Possible,,,,,10\n"
                      "\"Li, Si\",12346,2024002,lisi@x.cn,DP 01,\n"
                      "\"Zhang, San\",12345,2024001,zs@x.cn,DP 01,\n", encoding="utf-8")
    out = tmp_path / "submitted"
    manifest = import_submissions(download, "laplace", out, roster=roster)
    got = _outcomes(manifest)
    assert got["zhangsan_12345_67890_2024001_laplace.ipynb"] == ("placed", "2024001")
    assert got["lisi_late_12346_67892_laplace-1.ipynb"] == ("placed", "2024002")
    assert got["lisi_late_12346_67891_laplace.ipynb"] == ("older copy", "2024002")
    assert got["张三丰_12347_67893_2024009_laplace.ipynb"] == ("placed", "2024009")
    assert got["wangwu_12348_67894_notes.txt"][0] == "not a notebook"
    placed = {r["student"]: r for r in manifest["placed"]}
    assert placed["2024002"]["late"] is True and placed["2024002"]["how"] == "roster"
    assert "not in the roster" in placed["2024009"]["detail"]
    assert (out / "2024002/laplace/laplace.ipynb").read_bytes() == notebooks["stub"]


def test_accounts_and_file_names_that_disagree_keep_the_lms_id(tmp_path, notebooks):
    download = tmp_path / "moodle.zip"
    with zipfile.ZipFile(download, "w") as z:  # two accounts hand in files named for the same 学号
        _add(z, "A_11_assignsubmission_file_/2024001_laplace.ipynb", notebooks["correct"])
        _add(z, "B_12_assignsubmission_file_/2024001_laplace.ipynb", notebooks["correct"])
    manifest = import_submissions(download, "laplace", tmp_path / "out")
    assert sorted(r["student"] for r in manifest["placed"]) == ["11", "12"]
    assert all("2 accounts' files name 2024001" in r["detail"] for r in manifest["placed"])


@pytest.mark.parametrize("windows", [False, True], ids=["posix", "windows-no-O_NOFOLLOW"])
def test_pattern_for_other_platforms_and_a_folder_download(tmp_path, notebooks, monkeypatch, windows):
    if windows:  # import and export run no student code: they must work on a lecturer's Windows too
        monkeypatch.delattr(os, "O_NOFOLLOW")
    folder = tmp_path / "学习通导出"
    folder.mkdir()
    (folder / "2024001_张三_20261120093000_laplace.ipynb").write_bytes(notebooks["stub"])
    (folder / "2024001_张三_20261121093000_laplace.ipynb").write_bytes(notebooks["correct"])
    (folder / "2024002_李四_20261120093000_作业.ipynb").write_bytes(notebooks["correct"])
    (folder / "link.ipynb").symlink_to(folder / "2024002_李四_20261120093000_作业.ipynb")
    older = folder / "2024001_张三_20261120093000_laplace.ipynb"
    os.utime(older, (time.time() + 1000, time.time() + 1000))  # the file's own time must not beat the LMS's
    manifest = import_submissions(folder, "laplace", tmp_path / "out",
                                  pattern=r"^(?P<id>\d{7})_(?P<name>[^_]+)_(?P<time>\d{14})")
    got = _outcomes(manifest)
    assert got["2024001_张三_20261121093000_laplace.ipynb"] == ("placed", "2024001")
    assert got["2024001_张三_20261120093000_laplace.ipynb"] == ("older copy", "2024001")
    assert got["2024002_李四_20261120093000_作业.ipynb"] == ("placed", "2024002")
    assert got["link.ipynb"][0] == "refused"
    assert "symbolic link" in next(r["detail"] for r in manifest["records"] if r["file"] == "link.ipynb")


def test_zip_caps_and_names(tmp_path, monkeypatch):
    from autograder.lms import archive

    path = tmp_path / "big.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        _add(z, "a_1_assignsubmission_file_/laplace.ipynb", b"{" + b" " * (1 << 20) + b"}")
        z.writestr(zipfile.ZipInfo("gbk名字_2_assignsubmission_file_/x.ipynb"), b"{}")  # no UTF-8 flag
    monkeypatch.setattr(archive, "MAX_FILE_BYTES", 1 << 19)
    members, problems = walk(path)
    big = next(m for m in members if m.path[-1] == "laplace.ipynb")
    with pytest.raises(ValueError, match="too large"):
        big.read()
    assert not problems and any(m.path[0].startswith("gbk名字") for m in members)
    raw = zipfile.ZipInfo("x")
    raw.filename = "张三.ipynb".encode("gbk").decode("cp437")
    assert archive._zip_name(raw) == "张三.ipynb"


def test_nested_zips_other_archives_and_out_inside_the_download(tmp_path, notebooks):
    data = notebooks["correct"]
    for level in range(5):  # 2024001_laplace.ipynb in a zip in a zip ... five deep
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as z:
            _add(z, f"level{level}.zip" if level else "2024001_laplace.ipynb", data)
        data = buffer.getvalue()
    folder = tmp_path / "download"
    folder.mkdir()
    (folder / "deep.zip").write_bytes(data)
    (folder / "2024002_laplace.rar").write_bytes(b"Rar!")
    manifest = import_submissions(folder, "laplace", tmp_path / "out")
    details = {r["file"]: (r["outcome"], r["detail"]) for r in manifest["records"]}
    assert details["deep.zip/level4.zip/level3.zip/level2.zip"][0] == "refused"
    assert "3" in details["deep.zip/level4.zip/level3.zip/level2.zip"][1]
    assert details["2024002_laplace.rar"][0] == "refused" and "unpack" in details["2024002_laplace.rar"][1]
    assert manifest["placed"] == []
    with pytest.raises(ValueError, match="inside the download"):
        import_submissions(folder, "laplace", folder / "out")


def test_refuses_a_download_that_is_neither(tmp_path):
    (tmp_path / "x.txt").write_text("x")
    with pytest.raises(ValueError, match="neither a folder nor a zip"):
        import_submissions(tmp_path / "x.txt", "laplace", tmp_path / "out")
    with pytest.raises(ValueError, match="unknown assignment"):
        import_submissions(tmp_path, "nope", tmp_path / "out")


# ---------------------------------------------------------------- §4: grading where no sandbox can run

@pytest.mark.parametrize("platform, system", [("darwin", "macOS"), ("win32", "Windows")])
def test_grade_refuses_without_a_sandbox_and_names_the_routes(platform, system, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(sys, "platform", platform)
    import autograder.grade

    def must_not_run(**kwargs):
        raise AssertionError("grading started on a system without a sandbox")

    monkeypatch.setattr(autograder.grade, "grade", must_not_run)
    status = cli.main(["grade", "--assignment", "laplace", "--submissions", str(tmp_path), "--out",
                       str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert status == 2
    assert system in err and "沙箱" in err and "sandbox" in err
    for route in ("Linux", "WSL 2", "班级服务器", "class server", "--no-sandbox", "sudo apt-get install bubblewrap",
                  "Grading on your own computer"):
        assert route in err, route
    assert err.index("沙箱") < err.index("sandbox"), "Chinese first"
    assert err.strip().splitlines()[-1] == hostcheck.SUMMARY, "the Formgrader shows the last line only"


def test_wsl1_and_missing_bubblewrap_messages(monkeypatch):
    wsl1 = "Linux version 4.4.0-19041-Microsoft (Microsoft@Microsoft.com) (gcc version 5.4.0)"
    wsl2 = "Linux version 5.15.153.1-microsoft-standard-WSL2 (root@x) (gcc)"
    assert hostcheck.wsl_version(wsl1) == 1 and hostcheck.wsl_version(wsl2) == 2
    assert hostcheck.wsl_version("Linux version 6.1.0-13-amd64 (debian-kernel@lists.debian.org)") is None
    assert "wsl --set-version" in hostcheck.platform_problem("linux", wsl1)
    assert hostcheck.platform_problem("linux", wsl2) is None
    import autograder.grade

    monkeypatch.setattr(autograder.grade, "probe", lambda: "bubblewrap (bwrap) is not installed")
    monkeypatch.setattr(autograder.grade, "sweep_stale", lambda: [])
    with pytest.raises(ValueError) as err:
        autograder.grade.grade(assignment="laplace", submissions=REPO / "source", out=REPO / "never-written")
    text = str(err.value)
    assert "沙箱无法启动" in text and "bubblewrap (bwrap) is not installed" in text and "class server" in text
    assert not (REPO / "never-written").exists()


def test_the_readme_section_the_message_points_to_exists():
    readme = (REPO / "autograder" / "README.md").read_text(encoding="utf-8")
    assert "## Grading on your own computer / 在自己的电脑上评分" in readme
    section = readme.split("## Grading on your own computer / 在自己的电脑上评分")[1].split("\n## ")[0]
    for step in ("wsl --install", "sudo apt-get install", "bubblewrap", "python3", "make install", "--no-sandbox"):
        assert step in section, step


# ---------------------------------------------------------------- import -> grade -> export

@pytest.mark.slow
def test_import_grade_export_through_the_real_grader(tmp_path, notebooks):
    from autograder.grade import grade
    from autograder.jail import probe

    if probe():
        pytest.skip(f"bubblewrap cannot run here: {probe()}")
    download = moodle_zip(tmp_path / "moodle.zip", notebooks)
    submitted = tmp_path / "submitted"
    worksheet = tmp_path / "worksheet.csv"
    worksheet.write_text("Identifier,Full name,ID number,Status,Grade,Maximum Grade,Grade can be changed,"
                         "Last modified (submission),Last modified (grade),Feedback comments\n"
                         "Participant 1234567,张三,2024001,Submitted,,10.00,Yes,-,-,\n"
                         "Participant 1234568,李 四,2024002,Submitted,,10.00,Yes,-,-,\n"
                         "Participant 1234569,王五,2024003,Submitted,,10.00,Yes,-,-,\n", encoding="utf-8")
    import_submissions(download, "laplace", submitted, roster=worksheet)
    # one small batch: the corpus's correct entry (2024001) and the resubmitted stub (2024002)
    shutil.rmtree(submitted / "2024004")
    out = tmp_path / "graded"
    result = grade(assignment="laplace", submissions=submitted, out=out, jobs=2, seed=corpus.CORPUS_SEED, quiet=True)
    scores = {r["student"]: (r["score"], r["max_score"]) for r in result["submissions"]}
    assert scores == {"2024001": (10.0, 10.0), "2024002": (0.0, 10.0)}, scores

    summary = export_grades(out, "plain", submissions=submitted)[0]
    plain = (out / "lms" / "成绩_laplace.csv").read_bytes()
    assert plain.startswith(b"\xef\xbb\xbf")
    assert plain.decode("utf-8-sig").splitlines() == ["学号,成绩", "2024001,10", "2024002,0"]
    assert sorted(Path(p).name for p in summary["feedback"]) == ["2024001_laplace_feedback.html",
                                                                 "2024002_laplace_feedback.html"]
    page = (out / "lms" / "feedback" / "2024001_laplace_feedback.html").read_text(encoding="utf-8")
    assert page == (out / "feedback" / "2024001" / "laplace" / "laplace.html").read_text(encoding="utf-8")

    moodle = export_grades(out, "moodle", roster=worksheet, submissions=submitted)[0]
    rows = list(csv.DictReader(io.StringIO((out / "lms" / "moodle_laplace.csv").read_text(encoding="utf-8-sig"))))
    assert [(r["Identifier"], r["Grade"]) for r in rows] == [("Participant 1234567", "10"),
                                                             ("Participant 1234568", "0"),
                                                             ("Participant 1234569", "")]
    assert rows[0]["Last modified (grade)"] == "-" and moodle["unmatched"] == []
    with zipfile.ZipFile(out / "lms" / "moodle_feedback_laplace.zip") as z:
        assert sorted(z.namelist()) == ["张三_1234567_assignfeedback_file_/2024001_laplace_feedback.html",
                                        "李 四_1234568_assignfeedback_file_/2024002_laplace_feedback.html"]

    # no worksheet: the participant ids come from the import's manifest
    export_grades(out, "moodle", submissions=submitted, points=100)
    rows = list(csv.DictReader(io.StringIO((out / "lms" / "moodle_laplace.csv").read_text(encoding="utf-8-sig"))))
    assert [(r["Identifier"], r["Grade"], r["Maximum Grade"]) for r in rows] == \
        [("Participant 1234567", "100", "100"), ("Participant 1234568", "0", "100")]

    gradebook = tmp_path / "canvas.csv"
    gradebook.write_text("Student,ID,SIS User ID,SIS Login ID,Section,laplace (555)\n"
                         "    Points Possible,,,,,10\n"
                         "\"Zhang, San\",12345,2024001,zs@x.cn,DP 01,\n", encoding="utf-8")
    canvas = export_grades(out, "canvas", roster=gradebook, submissions=submitted)[0]
    rows = list(csv.reader(io.StringIO((out / "lms" / "canvas_laplace.csv").read_text(encoding="utf-8-sig"))))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "laplace (555)"]
    assert rows[1][0] == "Points Possible" and rows[2] == ["Zhang, San", "12345", "2024001", "zs@x.cn", "DP 01", "10"]
    assert canvas["unmatched"] == ["2024002"], "a student Canvas cannot match is named, not dropped"


def test_command_line_summary_and_usage_errors(tmp_path, notebooks, capsys):
    download = moodle_zip(tmp_path / "moodle.zip", notebooks)
    assert cli.main(["import-submissions", str(download), "--assignment", "laplace", "--out",
                     str(tmp_path / "sub")]) == 0
    err = capsys.readouterr().err
    assert err.index("已放置 3") < err.index("placed 3") and "其他作业的笔记本" in err
    assert "--roster" in err and "1234568" in err, "the hint to map Moodle participant ids is missing"
    for argv in (["import-submissions", str(download), "--assignment", "nope", "--out", str(tmp_path / "x")],
                 ["import-submissions", str(download), "--assignment", "laplace", "--out", str(tmp_path / "x"),
                  "--pattern", "[0-9]+"],
                 ["export-grades", str(tmp_path), "--format", "plain"]):
        with pytest.raises(SystemExit) as exit_:
            cli.main(argv)
        assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "unknown assignment 'nope'" in err and "(?P<id>" in err and "no grades.csv" in err


def test_notebooks_without_nbgrader_ids_are_judged_by_their_name(tmp_path, notebooks):
    bare = json.loads(notebooks["correct"])
    for cell in bare["cells"]:
        cell["metadata"].pop("nbgrader", None)  # pasted into a fresh notebook: the cell ids are gone
    data = json.dumps(bare).encode()
    folder = tmp_path / "download"
    folder.mkdir()
    (folder / "2024001_laplace.ipynb").write_bytes(data)
    (folder / "2024002_exponential.ipynb").write_bytes(data)
    (folder / "2024003_laplace.ipynb").write_bytes(b"not json")
    manifest = import_submissions(folder, "laplace", tmp_path / "out")
    got = {r["file"]: r for r in manifest["records"]}
    assert got["2024001_laplace.ipynb"]["outcome"] == "placed"
    assert "no nbgrader cell ids" in got["2024001_laplace.ipynb"]["detail"]
    assert got["2024002_exponential.ipynb"]["outcome"] == "wrong assignment"
    assert got["2024003_laplace.ipynb"]["outcome"] == "placed"
    assert "not a Jupyter notebook" in got["2024003_laplace.ipynb"]["detail"]
