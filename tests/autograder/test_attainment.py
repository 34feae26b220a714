"""课程目标达成度 (issue 34 §4): `python -m autograder report … --objectives … --exam … --threshold …` on a
generated class whose attainment is worked out by hand below."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.reports import attainment, report

ROOT = Path(__file__).resolve().parents[2]

OBJECTIVES = """
[attainment]
threshold = 0.7

[[objective]]
id = "课程目标 A"
zh = "拉普拉斯机制"
requirements = ["R4", "R5"]
[[objective.part]]
name = "作业"
weight = 0.4
cells = ["lap:c1", "lap:c2"]
[[objective.part]]
name = "考试"
weight = 0.6
exam = [{question = "2h:1", max = 3}, {question = "2h:2", max = 12}]

[[objective]]
id = "课程目标 B"
zh = "只有一部分在本班考核"
requirements = ["R7"]
[[objective.part]]
name = "作业"
weight = 1
cells = ["lap:c2"]
[[objective.part]]
name = "考试"
weight = 3
exam = [{question = "4h:1", max = 3}]
"""

# s1..s3 submitted `lap` (cells c1: 2 points, c2: 3 points); s4 did not. s3 missed the exam.
LAP = {"s1": (2, 3), "s2": (0, 3), "s3": (2, 0)}
EXAM = "学号,试卷,1,2\ns1,2h-A,3,6\ns2,2h-B,1,12\ns4,2h-A,3,12\n"


def _rows() -> list[dict]:
    return [{"student": s, "assignment": "lap", "score": c1 + c2, "max_score": 5, "seed": 1, "errors": [],
             "flags": [], "notes": [], "repairs": [], "similarity": [], "seconds": 1.0, "feedback": [], "status": "ok",
             "cells": [{"notebook": "lap.ipynb", "grade_id": "c1", "points": 2, "score": c1, "hidden": False},
                       {"notebook": "lap.ipynb", "grade_id": "c2", "points": 3, "score": c2, "hidden": False}]}
            for s, (c1, c2) in LAP.items()]


@pytest.fixture()
def files(tmp_path):
    report.write_outputs(tmp_path / "out", _rows(), {"runs": []})
    (tmp_path / "objectives.toml").write_text(OBJECTIVES, encoding="utf-8")
    (tmp_path / "exam.csv").write_text(EXAM, encoding="utf-8")
    return tmp_path


def test_attainment_worked_by_hand(files):
    objectives, threshold = attainment.load_objectives(files / "objectives.toml")
    assert threshold == 0.7
    a, b = attainment.compute(objectives, _rows(), attainment.read_exam(files / "exam.csv"), threshold=0.6)
    # Objective A. 作业 (top 5): s1 5/5 = 1, s2 3/5 = 0.6, s3 2/5 = 0.4, s4 0 (no submission).
    # 考试 (top 15): s1 9/15 = 0.6, s2 13/15, s3 0 (absent), s4 15/15 = 1.
    # A(s) = 0.4·作业 + 0.6·考试: s1 0.76, s2 0.24 + 0.52 = 0.76, s3 0.16, s4 0.6.
    assert a["students"] == 4 and a["missing"] == 2
    assert a["attainment"] == pytest.approx((0.76 + 0.76 + 0.16 + 0.6) / 4)  # 0.57
    assert a["at_threshold"] == pytest.approx(3 / 4)  # s1, s2 and s4 (exactly 0.6)
    assert [p["attainment"] for p in a["parts"]] == pytest.approx([(1 + 0.6 + 0.4 + 0) / 4,
                                                                   (0.6 + 13 / 15 + 0 + 1) / 4])
    # weakest items by class score ratio: c1 4/8, c2 6/12, exam 1: 7/12 (exam 2: 30/48 is left out)
    assert a["weakest"] == [("lap:c1", pytest.approx(0.5)), ("lap:c2", pytest.approx(0.5)),
                            ("考试 2h:1", pytest.approx(7 / 12))]
    # Objective B: its exam part (4h) was not sat by this class, so only c2 counts: 1, 1, 0, 0.
    assert b["attainment"] == pytest.approx(0.5) and b["at_threshold"] == pytest.approx(0.5)
    assert b["parts"][1]["attainment"] is None


def test_report_command_adds_the_table_and_writes_the_csv(files):
    done = subprocess.run([sys.executable, "-m", "autograder", "report", str(files / "out"), "--out",
                           str(files / "report.html"), "--objectives", str(files / "objectives.toml"),
                           "--exam", str(files / "exam.csv"), "--threshold", "0.6"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    page = (files / "report.html").read_text(encoding="utf-8")
    assert "课程目标达成度" in page and "课程目标 A" in page and "0.570" in page and "本班未考核" in page
    raw = (files / "attainment.csv").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")  # Excel and WPS read the Chinese columns as UTF-8
    with open(files / "attainment.csv", newline="", encoding="utf-8-sig") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["课程目标"] for r in rows] == ["课程目标 A", "课程目标 B"]
    assert rows[0]["达成度"] == "0.570" and rows[0]["达到阈值的学生比例"] == "0.750" and rows[0]["阈值"] == "0.6"
    assert rows[0]["作业达成度（权重）"] == "0.500（0.4）" and rows[0]["考试达成度（权重）"] == "0.617（0.6）"
    assert rows[0]["缺交或缺考人数"] == "2" and rows[0]["最弱的评分项（班级得分率）"].startswith("lap:c1 0.50")
    assert rows[1]["达成度"] == "0.500" and rows[1]["考试达成度（权重）"] == "本班未考核（3）"


def test_bad_input_is_refused_with_what_was_expected(files):
    objectives, _ = attainment.load_objectives(files / "objectives.toml")
    (files / "over.csv").write_text("学号,试卷,1,2\ns1,2h-A,4,6\n", encoding="utf-8")
    with pytest.raises(ValueError, match="s1 的第 2h:1 题得 4 分，超过满分 3"):
        attainment.compute(objectives, _rows(), attainment.read_exam(files / "over.csv"), 0.6)
    (files / "header.csv").write_text("name,1,2\ns1,3,6\n", encoding="utf-8")
    with pytest.raises(ValueError, match="表头应为 学号,试卷,1,2"):
        attainment.read_exam(files / "header.csv")
    (files / "text.csv").write_text("学号,试卷,1\ns1,2h-A,三\n", encoding="utf-8")
    with pytest.raises(ValueError, match="第 2 行第 1 题：'三' 不是非负的分数"):
        attainment.read_exam(files / "text.csv")
    (files / "bad.toml").write_text('[[objective]]\nid = "x"\n[[objective.part]]\nname = "作业"\nweight = 0\n'
                                    'cells = ["lap:c1"]\n', encoding="utf-8")
    with pytest.raises(ValueError, match="needs weight > 0"):
        attainment.load_objectives(files / "bad.toml")
    missing = OBJECTIVES.replace('"lap:c1", "lap:c2"', '"lap:c1", "lap:gone"')
    (files / "missing.toml").write_text(missing, encoding="utf-8")
    with pytest.raises(ValueError, match="lap:gone"):
        attainment.compute(attainment.load_objectives(files / "missing.toml")[0], _rows(), None, 0.6)
    done = subprocess.run([sys.executable, "-m", "autograder", "report", str(files / "out"), "--out",
                           str(files / "r.html"), "--exam", str(files / "exam.csv")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "--exam and --threshold need --objectives" in done.stderr
