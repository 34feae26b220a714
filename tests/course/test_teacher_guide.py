"""The instructor's guide (docs/teacher-guide.md, 教师指南): generated parts up to date, linked,
kept out of the student bundle, Chinese typography, and every number of the question bank recomputed."""

from __future__ import annotations

import importlib.util
import math
import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "docs" / "teacher-guide.md"
TEXT = GUIDE.read_text(encoding="utf-8")

_spec = importlib.util.spec_from_file_location("build_guide", REPO / "docs" / "build_guide.py")
build_guide = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build_guide)


def test_generated_parts_are_up_to_date():
    assert build_guide.render(TEXT) == TEXT, "docs/teacher-guide.md is out of date: run `make guide`"


def test_readme_links_the_guide_with_its_chinese_name():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\[([^\]]*)\]\(docs/teacher-guide\.md\)", readme)
    assert any("教师指南" in text for text in links), links


def test_the_student_bundle_leaves_the_guide_out(tmp_path):
    """Through the instructor's entry point: `python -m autograder bundle`."""
    out = tmp_path / "bundle"
    subprocess.run([sys.executable, "-m", "autograder", "bundle", "--out", str(out)], cwd=REPO, check=True,
                   capture_output=True)
    files = [p for p in out.rglob("*") if p.is_file()]
    assert len(files) > 20 and (out / "release").is_dir()
    assert not [p for p in files if "teacher-guide" in p.name or "build_guide" in p.name]
    # nor any copy of its text (the question bank's answers)
    marker = "题库（附答案）"
    leaked = [p for p in files if p.suffix in {".md", ".ipynb", ".txt", ".html", ".py"}
              and marker in p.read_text(encoding="utf-8", errors="replace")]
    assert not leaked, leaked


def _prose(text: str) -> str:
    """The guide without code blocks, inline code and HTML comments."""
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    return re.sub(r"`[^`\n]*`", " ", text)


def test_chinese_typography_and_terms():
    prose = _prose(TEXT)
    ascii_after_cjk = re.findall(r".{0,12}[\u4e00-\u9fff][,;:?!()].{0,12}", prose)
    assert not ascii_after_cjk, ascii_after_cjk[:10]
    ascii_before_cjk = re.findall(r".{0,12}[,;:?!(][\u4e00-\u9fff].{0,12}", prose)
    assert not ascii_before_cjk, ascii_before_cjk[:10]
    for wrong in ("敏感度", "顺序组合", "花掉", "花费", "本地差分隐私"):
        assert wrong not in prose, wrong
    for term in ("灵敏度", "串行组合", "并行组合", "本地化差分隐私", "隐私预算", "消耗"):
        assert term in prose, term


def test_the_guide_has_every_part_the_issue_asks_for():
    for heading in ("逐次课安排", "先修知识", "哪些作业配哪种方案", "评分单元格", "诊断", "150 人", "题库"):
        assert re.search(r"^## \d+\. .*" + re.escape(heading), TEXT, re.M), heading
    for way in ("学习平台", "sudo make hub", "Zero to JupyterHub"):
        assert way in TEXT
    assert "`laplace` 和 `randomized_response`" in TEXT


def test_build_refuses_a_graded_cell_without_description(monkeypatch):
    cells = dict(build_guide.CELLS)
    del cells[("laplace", "test_laplace_noise_rng")]
    monkeypatch.setattr(build_guide, "CELLS", cells)
    with pytest.raises(build_guide.GuideError, match="test_laplace_noise_rng"):
        build_guide.render_cells()


def test_build_refuses_a_description_of_a_cell_that_is_gone(monkeypatch):
    monkeypatch.setattr(build_guide, "CELLS", {**build_guide.CELLS, ("laplace", "test_gone"): ("x", "")})
    with pytest.raises(build_guide.GuideError, match="test_gone"):
        build_guide.render_cells()


def test_build_refuses_a_description_whose_cell_now_calls_other_checks(monkeypatch):
    text, _ = build_guide.CELLS[("laplace", "test_laplace_noise_rng")]
    monkeypatch.setattr(build_guide, "CELLS", {**build_guide.CELLS,
                                               ("laplace", "test_laplace_noise_rng"): (text, "check_laplace_noise_rng")})
    with pytest.raises(build_guide.GuideError, match="test_laplace_noise_rng.*check_laplace_noise_only_rng_random"):
        build_guide.render_cells()


def test_cells_table_has_every_graded_cell_with_its_points():
    cells = build_guide.graded_cells()
    for assignment, rows in cells.items():
        assert sum(r["points"] for r in rows) == 10
        for r in rows:
            assert re.search(rf"\| `{r['grade_id']}` \| {r['points']:g} \|", TEXT), (assignment, r["grade_id"])


PLAN = {"paths": [{"id": "2h", "zh": "2 课时", "minutes": 90, "total_minutes": 16, "meetings": [
    {"number": 1, "notebooks": ["6.2-laplace"], "assignments": ["laplace"], "minutes": 16,
     "intro_minutes": {"6.2-laplace": 2}, "sections": ["sensitivity", "laplace-mechanism", "esa"]}]}],
        "sections": [{"id": "sensitivity", "notebook": "6.2-laplace", "zh": "6.2.1 全局灵敏度", "label": "core",
                      "minutes": 5},
                     {"id": "laplace-mechanism", "notebook": "6.2-laplace", "zh": "拉普拉斯机制", "label": "core",
                      "minutes": 9},
                     {"id": "esa", "notebook": "6.5a-rappor-shuffle", "zh": "6.5.2 ESA", "label": "core",
                      "minutes": 0}]}


def test_meetings_are_rendered_from_plan_data(monkeypatch):
    """The meeting-by-meeting part from a plan in the shape of `python course/build.py --plan-json`."""
    import copy

    monkeypatch.setattr(build_guide, "NOTES", {k: build_guide.NOTES[k] for k in ("sensitivity", "laplace-mechanism")})
    text = build_guide.render_meetings(PLAN)
    assert "第 1 次课：16 分钟；课后作业：`laplace`" in text
    lines = text.splitlines()
    intro = lines.index("| `6.2-laplace` | （开头：学习目标与导入） | | 2 |")
    assert lines[intro + 1] == "| `6.2-laplace` | 6.2.1 全局灵敏度 | 核心 | 5 |"  # the intro before its sections
    assert build_guide.NOTES["sensitivity"]["ask"] in text and build_guide.NOTES["laplace-mechanism"]["live"].rstrip("。") in text
    plan = copy.deepcopy(PLAN)
    plan["sections"][1]["id"] = plan["paths"][0]["meetings"][0]["sections"][1] = "renamed"
    with pytest.raises(build_guide.GuideError, match="renamed"):  # a taught section without notes
        build_guide.render_meetings(plan)
    with pytest.raises(build_guide.GuideError, match="laplace-mechanism"):  # notes for a section that is gone
        build_guide.render_meetings(plan)


def test_section_4_must_agree_with_the_plan_on_units():
    build_guide.check_units(TEXT, PLAN)
    wrong = TEXT.replace(re.search(r"^\| `laplace` \|.*$", TEXT, re.M).group(0),
                         "| `laplace` | 掌握拉普拉斯机制 | 是 | 4 课时 | 1 小时 |")
    with pytest.raises(build_guide.GuideError, match="laplace"):
        build_guide.check_units(wrong, PLAN)


# --- the question bank ------------------------------------------------------------------------


def _question(number: int) -> str:
    match = re.search(rf"^\*\*Q{number}\*\*(.*?)(?=^\*\*Q\d+\*\*|^## |\Z)", TEXT, re.S | re.M)
    assert match, f"Q{number} not found"
    return match.group(1)


def _answer(number: int) -> str:
    block = _question(number)
    assert "> 答案" in block or "> 参考" in block, f"Q{number} has no answer"
    return block[block.index("> "):]


def test_question_bank_has_at_least_20_questions_of_three_kinds():
    numbers = [int(n) for n in re.findall(r"^\*\*Q(\d+)\*\*", TEXT, re.M)]
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= 20
    for kind in ("### 选择题", "### 简答题", "### 计算题"):
        assert kind in TEXT
    for n in numbers:
        _answer(n)


def test_question_bank_covers_the_chapters_learning_requirements():
    """学习要求 of the chapter: 差分攻击; 概念、性质、模型; 拉普拉斯机制 and its use in 统计查询 and
    直方图; 指数机制; 随机响应; ESA and 数据合成; plus the two 课后习题."""
    bank = TEXT[TEXT.index("## 8. 题库"):]
    for topic in ("差分攻击", "ε-差分隐私", "后处理", "串行组合", "并行组合", "交互式", "非交互式", "拉普拉斯机制",
                  "计数查询", "直方图", "指数机制", "随机响应", "本地化差分隐私", "ESA", "RAPPOR", "数据合成",
                  "课后习题 1", "课后习题 2"):
        assert topic in bank, topic


def _has(text: str, value: float, digits: int) -> bool:
    return f"{value:.{digits}f}" in text


def test_q18_laplace_scale_variance_sd():
    b = 1 / 0.5
    a = _answer(18)
    assert f"b = Δf/ε = {b:g}" in a and f"2b² = {2 * b * b:g}" in a and _has(a, math.sqrt(2 * b * b), 2)


def test_q19_laplace_tail():
    b = 1 / 0.1
    a = _answer(19)
    assert f"b = {b:g}" in a
    assert _has(a, math.exp(-10 / b), 3) and _has(a, math.exp(-20 / b), 3)


def test_q20_sequential_composition_budget():
    a = _answer(20)
    total, spent = Fraction(1), [Fraction("0.5"), Fraction("0.3"), Fraction("0.2")]
    assert f"= {float(total - spent[0] - spent[1]):g}" in a
    assert total - sum(spent) == 0 and "（2）0；" in a
    assert f"{float(sum(spent) + Fraction('0.1')):g} > 1" in a


def test_q21_repeated_queries():
    eps, k = 0.1, 100
    a = _answer(21)
    assert f"{k} × {eps:g} = {k * eps:g}" in a
    assert _has(a, math.sqrt(2) / eps, 1) and _has(a, math.sqrt(2) / (eps * math.sqrt(k)), 2)


def test_q22_randomized_response_p_and_epsilon():
    a = _answer(22)
    p = math.exp(math.log(3)) / (math.exp(math.log(3)) + 1)
    assert abs(p - 0.75) < 1e-12 and "= 0.75" in a
    assert _has(a, math.log(0.8 / 0.2), 3)


def test_q23_textbook_correction():
    from helpers.mechanisms import rr_correct

    a = _answer(23)
    assert _has(a, rr_correct(n=20, n1=14, p=0.8), 1) and _has(a, rr_correct(n=20, n1=6, p=0.8), 1)


def test_q24_randomized_response_variance():
    n, p, yes = 1000, 0.75, 300
    var = n * p * (1 - p) / (2 * p - 1) ** 2
    a = _answer(24)
    assert f"E[N̂] = {yes}" in a and f"p(1 − p) = {p * (1 - p):g}" in a and f"np(1 − p) = {n * p * (1 - p):g}" in a
    assert f"/0.25 = {var:g}" in a and _has(a, math.sqrt(var), 1)
    eps = math.log(3)
    assert abs(n * math.exp(eps) / math.expm1(eps) ** 2 - var) < 1e-9 and abs(math.exp(eps) / (math.exp(eps) + 1) - p) < 1e-12
    # the estimator's variance by simulation (fixed seed, 20,000 runs: relative sd of the sample variance 1%)
    rng = np.random.default_rng(24)
    truth = (np.arange(n) < yes).astype(np.int8)
    keep = rng.random((20_000, n)) < p
    n1 = np.where(keep, truth, 1 - truth).sum(axis=1)
    estimates = ((p - 1) * n + n1) / (2 * p - 1)
    assert abs(estimates.mean() - yes) < 1 and abs(estimates.var() / var - 1) < 0.05


def test_q25_table_6_4():
    from helpers.mechanisms import exponential_probabilities

    a = _answer(25)
    for eps in (1, 0.1):
        probs = exponential_probabilities([30, 25, 8, 2], epsilon=eps, sensitivity=1)
        assert _has(a, probs[0], 3) and _has(a, probs[1], 3), (eps, probs)
    assert "0.25" in a


def test_q26_generalized_randomized_response():
    k, e, n, c = 4, 3.0, 1200, 400
    p, q = Fraction(3, 3 + k - 1), Fraction(1, 3 + k - 1)
    a = _answer(26)
    assert f"= 3/{3 + k - 1} = {float(p):g}" in a and f"= 1/{q.denominator}" in a
    estimate = (c - n * q) / (p - q)
    assert f"= {float(estimate):g}" in a and f"{c} − {n * q}" in a
    assert abs(math.exp(math.log(e)) - 3) < 1e-12


def test_q27_sensitivities():
    a = _answer(27)
    assert "都是 100" in a and "max(5, 10) = 10" in a and "10 − (−5) = 15" in a
    assert max(abs(-5), abs(10)) == 10 and 10 - (-5) == 15 and max(0, 100) == 100 - 0 == 100
