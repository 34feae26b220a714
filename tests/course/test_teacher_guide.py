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
    # nor any copy of its text (the question bank's answers), the bank itself or the exam papers and keys
    assert not [p for p in files if p.name in ("questions.toml", "objectives.toml") or p.parent.name == "exam"]
    leaked = [p for p in files if p.suffix in {".md", ".ipynb", ".txt", ".html", ".py", ".toml"}
              and any(marker in p.read_text(encoding="utf-8", errors="replace")
                      for marker in ("题库（附答案）", "评分细则", "单元测验"))]
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
    from scipy.stats import norm

    from helpers.queries import danger_probability

    eps, k = 0.1, 100
    a = _answer(21)
    assert f"{k} × {eps:g} = {k * eps:g}" in a
    sd = math.sqrt(2) / (eps * math.sqrt(k))
    assert _has(a, math.sqrt(2) / eps, 1) and _has(a, sd, 2)
    # (3) the guide's own derivation: P(|mean noise| < 0.5), normal approximation and exact (Gamma integral)
    assert _has(a, 2 * norm.cdf(0.5 / sd) - 1, 2) and _has(a, danger_probability(eps, k), 4)
    assert _has(a, danger_probability(1.0, k), 4) and "较高概率" not in a


def test_q39_q40_laplace_scale_and_tail():
    a = _answer(39)
    b = 2 / 0.4
    assert f"b = Δf/ε = {b:g}" in a and f"2b² = {2 * b * b:g}" in a and _has(a, math.sqrt(2 * b * b), 2)
    a = _answer(40)
    assert "b = 2" in a and _has(a, math.exp(-4 / 2), 3)
    eps = math.log(20) / 4
    assert abs(math.exp(-4 * eps) - 0.05) < 1e-12 and _has(a, eps, 3)


def test_q41_histogram_parallel_composition():
    a = _answer(41)
    assert "ℓ₁ 灵敏度为 1" in a and "Lap(2)" in a and _has(a, math.sqrt(2) * 1 / 0.5, 2)
    assert _has(a, math.sqrt(2) * 5 / 0.5, 2) and "Lap(10)" in a


def test_q42_exponential_mechanism():
    from helpers.mechanisms import exponential_probabilities

    a = _answer(42)
    probs = exponential_probabilities([10, 9, 0], epsilon=2, sensitivity=1)
    assert _has(a, probs[0], 3) and _has(a, probs[1], 3) and f"{probs[2]:.1e}".startswith("3.3e-05")
    assert "3.3×10⁻⁵" in a


def test_review_corrections_are_in_the_bank():
    """issue 34 §3: Q5's relation, Q17's Apple ε, Q23's textbook example, Q25's sports, em-how's answer."""
    assert "增删一条记录" in _question(5)
    q17 = _question(17)
    assert "每次上报" in q17 and "每天最多 16" in q17 and "每天的 ε 为 2～8" not in q17
    q23 = _question(23)
    assert "性别" in q23 and "男" in q23 and "吸烟" not in q23
    q25 = _question(25)
    assert "足球" in q25 and "价格" not in q25
    assert "Aisha" in _question(8) and "Ming" not in _question(8)
    assert "四个体育项目" in build_guide.NOTES["em-how"]["ask"] and "价格" not in build_guide.NOTES["em-how"]["ask"]
    assert "Aisha" in build_guide.NOTES["attack"]["live"]
    assert "边缘分布" not in build_guide.NOTES["synth-one-column"]["ask"]  # 4-hour material, on a core slide


def test_every_question_is_tagged_and_course_only_ones_are_optional():
    questions, _ = build_guide.bank(build_guide.plan_json())
    requirements = {r["id"] for r in build_guide.plan_json()["requirements"]}
    for q in questions:
        assert q.path in ("2", "4", "选学") and q.difficulty in ("易", "中", "难"), q.id
        assert q.requirements and set(q.requirements) <= requirements, q.id
        block = _question(q.number)
        assert f"〔{ {'2': '2 课时', '4': '4 课时', '选学': '选学'}[q.path]}｜" in block, q.id
        if q.kind != "choice":
            assert "评分细则" in block, q.id
    by_id = {q.id: q for q in questions}
    for course_only in ("Q15", "Q24", "Q27"):  # material only in optional sections or 选做 assignments
        assert by_id[course_only].path == "选学"
    assert by_id["Q26"].path == "4"  # the 4-hour path's local_frequency assignment


def test_hidden_test_descriptions_are_not_the_old_fixed_parameters():
    """Those parameters are drawn from the run's seed now (hidden_*_case in helpers/checks)."""
    assert "Δ = 2、ε = 5" not in TEXT and "ε = 2、二维数组" not in TEXT
    assert TEXT.count("本次评分的种子抽取") >= 3


def test_scale_wrong_advice_avoids_log_of_zero():
    from helpers.checks.diagnoses import DIAGNOSES

    for text in (DIAGNOSES["laplace.scale_wrong"].advice_zh, DIAGNOSES["laplace.scale_wrong"].advice_en):
        assert "ln(1 - u)" in text and "ln(1 - 2|u - 1/2|)" not in text
    row = re.search(r"^\| `laplace\.scale_wrong` \|.*$", TEXT, re.M).group(0)
    assert "ln(1 - u)" in row and "ln(1 - 2\\|u - 1/2\\|)" not in row


def test_false_failure_totals_add_up():
    """Per assignment: the stated total is the number of statistical check calls (1e-6 each)."""
    cells = build_guide.graded_cells()
    totals = {a: sum(r["tests"] for r in rows) for a, rows in cells.items()}
    assert totals == {"laplace": 4, "exponential": 3, "randomized_response": 2, "private_mean": 9,
                      "privacy_budget": 6, "local_frequency": 5}
    for assignment, n in totals.items():
        assert f"合计 ≤ {n}×10⁻⁶" in TEXT
    assert "4×10⁻⁶。\n" not in TEXT.split("## 5.")[1].split("<!--")[0]  # the old "每个笔记本合计不超过 4×10⁻⁶"
    assert "1.03×10⁻⁶～1.29×10⁻⁶" in TEXT and "渐近" in TEXT


def test_build_refuses_a_stated_bound_that_disagrees_with_the_checks(monkeypatch):
    monkeypatch.setattr(build_guide, "STATISTICAL", build_guide.STATISTICAL - {"check_grr_estimate_unbiased"})
    with pytest.raises(build_guide.GuideError, match="test_estimate_values.*runs 0 statistical checks.*1e-6"):
        build_guide.render_cells()


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
