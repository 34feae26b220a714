#!/usr/bin/env python3
"""Write the generated parts of the instructor's guide, ``docs/teacher-guide.md`` (教师指南).

    python docs/build_guide.py          # rewrite the generated blocks and the exam papers (docs/exam/) in place
    python docs/build_guide.py --check  # exit 1 when the guide or a paper is out of date (tests/course/)

The guide is hand-written Markdown with blocks between ``<!-- BEGIN generated:NAME -->`` and
``<!-- END generated:NAME -->`` that this script owns:

* ``meetings``: both paths, meeting by meeting (sections, labels, minutes, assignment), from the
  teaching plan (``python course/build.py --plan-json``, i.e. ``course/_src/plan.toml``), with the
  teaching notes of :data:`NOTES` for every notebook a meeting uses;
* ``cells``: per assignment, every graded test cell with its points, the checks it runs
  (visible and hidden) and what it checks, read from the nbgrader metadata of ``source/*/*.ipynb``;
* ``diagnoses``: every diagnosis id, from ``helpers/checks/diagnoses.py``;
* ``requirements``: the chapter's 学习要求 and where each path meets them (the plan's ``[[requirement]]``);
* ``questions``: the question bank, from ``docs/questions.toml`` (:mod:`question_bank`), tagged with
  path, 学习要求 and difficulty, with answers and 评分细则.

It also writes the exam papers ``docs/exam/<unit>-<A|B>.md`` and their keys (``…-key.md``) from the
same bank (:func:`question_bank.build_papers`).

The build refuses (exit 2) a graded cell without a description in :data:`CELLS`, a
description of a cell that no longer exists, points that do not add up to 10, a statistical check
count that disagrees with the cell's stated false-failure bound, and a bank or paper that does not hold
(:class:`question_bank.BankError`).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))  # docs/ is not a package: question_bank.py sits here
import question_bank  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
GUIDE = REPO / "docs" / "teacher-guide.md"
ASSIGNMENTS = ("laplace", "exponential", "randomized_response", "private_mean", "privacy_budget", "local_frequency")
BLOCK = re.compile(r"(<!-- BEGIN generated:(?P<name>[a-z]+) [^>]*-->\n)(?P<body>.*?)(<!-- END generated:(?P=name) -->)",
                   re.S)

#: What each graded test cell checks, in Chinese, and the check functions it calls (visible and hidden,
#: sorted): (assignment, grade_id) -> (text, checks). The build refuses a cell whose checks changed, so
#: that the text is reread when the cell is.
CELLS = {
    ("laplace", "test_laplace_noise_basics"): ("形状、dtype、有限值；b ≤ 0、nan、inf 抛出 ValueError（确定性）",
        "check_laplace_noise_basics check_laplace_noise_invalid"),
    ("laplace", "test_laplace_noise_distribution"): ("10 万个样本对 Lap(0, 3/0.7) 的 KS 检验；隐藏：尺度与形状由本次评分的种子抽取（以 1/10 的概率取可见的 3/0.7，否则在 [0.05, 20] 上对数均匀；10 万个样本，12 种形状之一，含一维）",
        "check_laplace_noise_distribution"),
    ("laplace", "test_laplace_noise_rng"): ("同种子同输出、异种子异输出、确实用了 rng.random；隐藏：只用 rng.random、输出由抽样决定",
        "check_laplace_noise_only_rng_random check_laplace_noise_rng"),
    ("laplace", "test_laplace_mechanism_basics"): ("标量返回 float、数组返回同形状数组，ε、Δ ≤ 0 抛出 ValueError；隐藏：ε、Δ 为 nan",
        "check_laplace_mechanism_basics check_laplace_mechanism_invalid"),
    ("laplace", "test_laplace_mechanism_distribution"): ("Δ = 3、ε = 0.7 时 10 万次发布的噪声对 Lap(Δ/ε) 的 KS 检验；隐藏：Δ、ε 与取值由本次评分的种子抽取（Δ、ε 各以 1/10 的概率取可见值，否则在 [0.1, 10] 上对数均匀；取值在 [−100, 100] 上均匀）",
        "check_laplace_mechanism_distribution"),
    ("laplace", "test_laplace_mechanism_rng"): ("laplace_mechanism 的随机性全部来自 rng",
        "check_laplace_mechanism_rng"),
    ("exponential", "test_probabilities_table"): ("复现表 6-4（ε = 0、0.1、1）；隐藏：其他分数、ε、Δq 下的精确公式",
        "check_exponential_probabilities_formula check_exponential_probabilities_table"),
    ("exponential", "test_probabilities_stable"): ("分数 10⁶ 不溢出、平移不变、单个候选概率为 1",
        "check_exponential_probabilities_stable"),
    ("exponential", "test_probabilities_invalid"): ("ε < 0 或 nan、Δq ≤ 0、空的或二维的分数、含 nan 的分数抛出 ValueError",
        "check_exponential_probabilities_invalid"),
    ("exponential", "test_mechanism_basics"): ("返回范围内的整数下标，单个候选返回 0，分数差距极大时必选最高分；隐藏：非法参数",
        "check_exponential_mechanism_basics check_exponential_mechanism_invalid"),
    ("exponential", "test_mechanism_distribution"): ("1 万次抽样的卡方检验（Δq = 3、ε = 0.7）；隐藏：表 6-4 的分数（ε = 0.1、Δq = 1）与另一组分数（ε = 2、Δq = 0.5）",
        "check_exponential_mechanism_distribution"),
    ("exponential", "test_mechanism_rng"): ("随机性全部来自 rng，只用 rng.random",
        "check_exponential_mechanism_rng"),
    ("randomized_response", "test_keep_probability"): ("p(ln 4) = 0.8（教材的例子）、p(0.7)、p(3)；隐藏：ε = 800 不溢出，ε ≤ 0 或 nan 抛出 ValueError",
        "check_rr_keep_probability_edge check_rr_keep_probability_values"),
    ("randomized_response", "test_perturb_basics"): ("一维、二维输入的形状与 0/1 整数输出，ε ≤ 0 或比特不是 0/1 时抛出 ValueError；隐藏：ε 为 nan、小数比特",
        "check_rr_perturb_basics check_rr_perturb_invalid"),
    ("randomized_response", "test_perturb_distribution"): ("3 万个 1、7 万个 0 的保留率（ε = 0.7）；隐藏：ε、1 的比例与形状由本次评分的种子抽取（ε 以 1/10 的概率取 0.7，否则在 [0.3, 3] 上对数均匀；6 万个答案，1 的比例在 [0.2, 0.8] 内；10 种形状之一，含一维）",
        "check_rr_perturb_distribution"),
    ("randomized_response", "test_perturb_rng"): ("随机性全部来自 rng，每个比特独立",
        "check_rr_perturb_rng"),
    ("randomized_response", "test_correct_values"): ("教材 §6.4.2 的例子（20 人、p = 0.8：14 → 16.7，6 → 3.3）；隐藏：p < 1/2、n1 = 0、n1 = n 等精确值",
        "check_rr_correct_formula check_rr_correct_textbook"),
    ("randomized_response", "test_correct_invalid"): ("p = 1/2、p ∉ [0, 1]、p 为 nan、n1 < 0、n1 > n 抛出 ValueError",
        "check_rr_correct_invalid"),
    ("private_mean", "test_clip"): ("截断的值、返回新数组；隐藏：lower ≥ upper 抛出 ValueError",
        "check_clip_invalid check_clip_values"),
    ("private_mean", "test_sum_sensitivity"): ("可见：返回非负的数，示例区间上两种相邻关系的值与定义 6-2 相符；隐藏：更多区间上的精确值",
        "check_sum_sensitivity_basics check_sum_sensitivity_example check_sum_sensitivity_values"),
    ("private_mean", "test_count_sensitivity"): ("可见：返回非负的数，两种相邻关系的值与定义 6-2 相符（增删为 1、替换为 0）；隐藏：精确值",
        "check_count_sensitivity_basics check_count_sensitivity_example check_count_sensitivity_values"),
    ("private_mean", "test_private_mean_basics"): ("列表、数组、空数据集都返回 [lower, upper] 内的 float，非法边界与 ε 抛出 ValueError；隐藏：nan、inf",
        "check_private_mean_basics check_private_mean_invalid"),
    ("private_mean", "test_private_mean_rng"): ("同一 rng 状态同结果、不同状态不同结果、rng 前进",
        "check_private_mean_rng"),
    ("private_mean", "test_private_mean_accuracy"): ("误差中位数不超过最优 ε 分配的 1.5 倍（精确二项检验）",
        "check_private_mean_accuracy"),
    ("private_mean", "test_private_mean_privacy"): ("隐私审计：相邻数据集上以 1 - 10⁻⁶ 置信度证明 ε 超过声称值则不通过（一个可见，其余隐藏）",
        "check_private_mean_privacy"),
    ("privacy_budget", "test_accountant_basics"): ("账本只含基本类型、精确计数（严格的 >）、非法参数、rng 的使用（确定性）",
        "check_accountant_basics"),
    ("privacy_budget", "test_budget_boundary"): ("0.1 + 0.2 + 0.7 = 1 等恰好用完预算的查询被接受，再多一个被拒绝；被拒绝的查询不记账",
        "check_budget_boundary"),
    ("privacy_budget", "test_noise_matches_budget"): ("噪声与消耗的 ε 相符：Lap(1/ε) 的 KS 检验（ε = 0.5 与 2）",
        "check_noise_matches_budget"),
    ("privacy_budget", "test_histogram_parallel"): ("直方图按并行组合记 ε、每类独立的 Lap(1/ε)、与计数共用预算",
        "check_histogram_parallel"),
    ("privacy_budget", "test_attack"): ("平均攻击的值与成功率（对表 6-3 的精确概率 0.2773、0.9995 做二项检验）",
        "check_attack_success_rate check_attack_values"),
    ("local_frequency", "test_perturb_basics"): ("形状与 dtype（一维、二维、列表输入）、非法参数、rng 的使用（确定性）",
        "check_grr_perturb_basics"),
    ("local_frequency", "test_perturb_distribution"): ("报告分布的卡方检验（k = 4、ε = 1）；隐藏：k = 10、ε = 2",
        "check_grr_perturb_distribution"),
    ("local_frequency", "test_perturb_privacy"): ("ε-本地化差分隐私审计（置信度 1 - 10⁻⁶）",
        "check_grr_perturb_privacy"),
    ("local_frequency", "test_estimate_values"): ("报告次数恰等于期望时的精确值；600 次估计的平均对真实人数（无偏）",
        "check_grr_estimate_unbiased check_grr_estimate_values"),
    ("local_frequency", "test_variance"): ("方差公式对 4000 次模拟估计的样本方差；隐藏：精确值（含 f = 0、f = 1）",
        "check_grr_variance_simulation check_grr_variance_values"),
    ("local_frequency", "test_asymmetric"): ("两个骰子方案（a = 13/36、b = 1/36）的校正值与非法参数",
        "check_asymmetric_correct_invalid check_asymmetric_correct_values"),
}

#: Teaching notes per section of the teaching plan (its ids, course/_src/plan.toml): what to run live,
#: a question for the class (with its answer), where students stumble. Every section a path teaches
#: for 3 minutes or more needs one; a note for a section id the plan does not have is refused.
NOTES = {
    "attack": {
        "live": "表 6-1 的四个查询单元格：两次“合法”的统计查询相减，当场得到 Aisha 的成绩。",
        "ask": "“服务器只回答对多人的查询，为什么还是泄露了个人成绩？”",
        "stumble": "以为“只发布统计结果”就安全；分不清差分攻击与链接攻击。",
    },
    "uniform-noise": {
        "live": "均匀噪声 [-1, 1] 下相邻数据集的两个输出区间。",
        "ask": "“输出落在 n + 1.5 时，攻击者能断定什么？”（答：一定不是计数为 n 的那个数据集，概率之比无界）",
        "stumble": "以为“加了噪声就是差分隐私”，不看概率之比。",
    },
    "neighbours": {
        "live": "增删关系与替换关系的对照表。",
        "ask": "“替换一条记录时，记录数的灵敏度是多少？”（答：0）",
        "stumble": "两种相邻关系混用，灵敏度随之算错（作业 private_mean 会考到）。",
    },
    "definition": {
        "live": "定义 6-1 的概率比滑块：拖动 ε，看两条输出分布之比始终不超过 e^ε。",
        "ask": "“ε = 0 意味着什么？可用性如何？”（答：输出与数据无关，没有可用性）",
        "stumble": "把 ε 理解为“泄露的概率”，而不是概率之比的界；以为 ε 是数据集的属性，而不是机制的属性。",
    },
    "properties": {
        "live": "后处理单元格；串行组合的记账器：连续查询，看已消耗的隐私预算累加。",
        "ask": "“把结果四舍五入后再发布，隐私预算要不要多消耗？”（答：不要，后处理不变性）",
        "stumble": "并行组合要求各子集互不相交，学生常忽略这个前提。",
    },
    "release-models": {
        "live": "交互式与非交互式发布的准确度对比图。",
        "ask": "“发布一次合成数据后可以无限次查询吗？”（答：可以，之后都是后处理）",
        "stumble": "以为交互式可以无限次回答（课后习题 1 的 A 选项）。",
    },
    "sensitivity": {
        "live": "灵敏度表：计数、求和、均值。",
        "ask": "“计数查询的灵敏度为什么是 1？年龄求和呢？”（答：求和没有上界，要先截断）",
        "stumble": "把灵敏度当作数据的取值范围，或忘了先截断。",
    },
    "laplace-mechanism": {
        "live": "Lap(Δf/ε) 密度随 ε 的滑块。",
        "ask": "“ε 减半，噪声的标准差变为多少？”（答：加倍）",
        "stumble": "尺度写成 ε/Δf；把尺度 b 当成标准差（标准差是 √2·b）。",
    },
    "generating-noise": {
        "live": "逆变换抽样单元格；教材 §6.2.2 印刷公式（多加了 u₂）与更正后的对比直方图。",
        "ask": "“印刷公式得到的噪声均值是多少？”（答：约 0.5，不是 0）",
        "stumble": "ln 0：rng.random() 可能返回 0，要用 1 - u。这正是作业 laplace 的内容。",
    },
    "experiment-6-1": {
        "live": "实验 6-1 方案一：交互式加噪查询，再演示重复查询平均攻击（表 6-3）。",
        "ask": "“同一查询问 100 次再取平均，按串行组合一共消耗了多少隐私预算？”（答：100ε）",
        "stumble": "以为每次独立加噪就安全，忘了预算会累加。",
    },
    "histogram": {
        "live": "实验 6-2：直方图随 ε 从 0.1 到 10 的变化。",
        "ask": "“直方图有 k 个桶，整个发布消耗多少隐私预算？”（答：ε，并行组合）",
        "stumble": "误以为要消耗 k·ε，或给每个桶加 Lap(k/ε) 的噪声。",
    },
    "pumpkins": {
        "live": "南瓜定价：3 位买家，各价格下的收益；给最优价格加拉普拉斯噪声的后果。",
        "ask": "“为什么不能对价格本身加拉普拉斯噪声？”（答：价格略高一点，收益可能骤降为 0）",
        "stumble": "不清楚什么时候用指数机制：输出是候选项而不是数值时。",
    },
    "em-how": {
        "live": "表 6-4 三列（ε = 0、0.1、1）的滑块。",
        "ask": "“ε = 0 时四个体育项目被选中的概率各是多少？”（答：均匀，各 1/4）；“指数里为什么有 2Δq？”",
        "stumble": "忘了归一化；分数大时 exp 溢出（要先减去最大值）。",
    },
    "voting-attack": {
        "live": "投票攻击的表格。",
        "ask": "“多投一票能把被选中的概率提高多少倍？”（答：最多 e^(ε/2)）",
        "stumble": "把这里的界与 ε 本身混淆。",
    },
    "rr-when": {
        "live": "敏感问题调查的例子。",
        "ask": "“为什么随机响应不需要可信的数据收集者？”",
        "stumble": "分不清中心化与本地化差分隐私。",
    },
    "rr-mechanism": {
        "live": "掷硬币的随机化演示（可请全班真的掷一次）；扰动后统计与校正；ε ↔ p 的滑块。",
        "ask": "“p = 0.5 时能估计出什么？”（答：什么也不能，2p - 1 = 0）；“p = 0.75 对应的 ε 是多少？”（答：ln 3 ≈ 1.10）",
        "stumble": "p 与 1-p 弄反；校正公式漏括号；以为校正后的人数一定在 [0, n] 内。",
    },
    "summary-6-4": {
        "live": "",
        "ask": "“随机响应与拉普拉斯机制的误差各随 n 怎样变化？”（答：随机响应估计的人数，标准差按 √n 增长；拉普拉斯机制给计数加的噪声与 n 无关）",
        "stumble": "",
    },
    "rappor": {
        "live": "RAPPOR 三步（布隆过滤器、永久随机响应、瞬时随机响应）的单用户演示。",
        "ask": "“每天上报一次，为什么需要永久随机响应（记忆化）？”（答：否则反复上报可被平均，隐私预算耗尽）",
        "stumble": "混淆 ε∞（长期）与单次上报的 ε。",
    },
    "rappor-population": {
        "live": "一群用户的上报与解码。",
        "ask": "“用户越多，解码出的频率越准还是越不准？”",
        "stumble": "以为解码得到的是每个人的真实值。",
    },
    "esa": {
        "live": "先讲编码、洗牌、分析三步（教材图 6-13），再运行洗牌器打乱上报的演示：计数与解码结果不变。",
        "ask": "“洗牌器看到了什么，看不到什么？”",
        "stumble": "以为洗牌本身就提供差分隐私：隐私放大的前提是每个用户已在本地扰动。",
    },
    "synth-one-column": {
        "live": "表 6-5 → 表 6-6 的单列合成。",
        "ask": "“合成数据可以被查询无限次吗？隐私预算消耗在哪一步？”（答：可以，预算只在给各年龄的计数加噪时消耗一次，之后的采样与查询都是后处理）",
        "stumble": "以为合成数据“不含真实记录”就天然是隐私的。",
    },
    "synth-marginals": {
        "live": "只用一维边缘分布合成时，属性之间的相关性消失。",
        "ask": "“为什么要测量二维边缘分布？”",
        "stumble": "",
    },
    "synth-select-measure": {
        "live": "选择–测量–估计的一轮迭代。",
        "ask": "“选择哪个边缘分布，这一步要不要消耗隐私预算？”（答：要，它也访问了数据）",
        "stumble": "忽略“选择”这一步本身也消耗隐私预算。",
    },
}


#: The checks that decide by a statistical test: each call fails a correct implementation with
#: probability at most 1e-6 (its docstring says how; the chi-square ones asymptotically, see §5).
STATISTICAL = {"check_laplace_noise_distribution", "check_laplace_mechanism_distribution",
               "check_exponential_mechanism_distribution", "check_rr_perturb_distribution",
               "check_private_mean_accuracy", "check_private_mean_privacy", "check_noise_matches_budget",
               "check_histogram_parallel", "check_attack_success_rate", "check_grr_perturb_distribution",
               "check_grr_perturb_privacy", "check_grr_estimate_unbiased"}
#: Statistical checks with an asymptotic (chi-square) p-value; and one whose tolerance is 8.9 standard errors.
CHI_SQUARE = {"check_exponential_mechanism_distribution", "check_grr_perturb_distribution"}
FAR_BELOW = {"check_grr_variance_simulation"}


def _calls(source: str) -> list[str]:
    return re.findall(r"^\s*(check_[a-z0-9_]+)\(", source, re.M)


def _stated_bound(source: str) -> int | None:
    """The cell's stated false-failure bound in units of 1e-6 (its Chinese comments), or None."""
    total = re.search(r"总误判概率 ≤ (\d+)e-6", source)
    if total:
        return int(total.group(1))
    return 1 if re.search(r"误判概率 ≤ 1e-6", source) else None


def _describe_checks(source: str) -> tuple[list[str], list[str]]:
    """The check functions a test cell calls: (visible, hidden)."""
    visible, hidden, in_hidden = [], [], False
    for line in source.splitlines():
        if "BEGIN HIDDEN TESTS" in line:
            in_hidden = True
        elif "END HIDDEN TESTS" in line:
            in_hidden = False
        for name in re.findall(r"^\s*(check_[a-z0-9_]+)\(", line):
            target = hidden if in_hidden else visible
            if name not in target:
                target.append(name)
    return visible, hidden


def graded_cells(repo: Path = REPO) -> dict[str, list[dict]]:
    """Per assignment, its graded cells in order: grade_id, points, checks, solution lines."""
    out = {}
    for assignment in ASSIGNMENTS:
        nb = nbformat.read(repo / "source" / assignment / f"{assignment}.ipynb", as_version=4)
        rows = []
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("grade") and cell.cell_type == "code":
                visible, hidden = _describe_checks(cell.source)
                calls = _calls(cell.source)
                rows.append({"grade_id": meta["grade_id"], "points": meta.get("points", 0),
                             "visible": visible, "hidden": hidden,
                             "tests": sum(c in STATISTICAL for c in calls),
                             "chi2": sum(c in CHI_SQUARE for c in calls),
                             "far_below": any(c in FAR_BELOW for c in calls),
                             "stated": _stated_bound(cell.source)})
        out[assignment] = rows
    return out


def solution_lines(repo: Path = REPO) -> dict[str, int]:
    """Non-blank, non-comment lines of the reference solutions of each assignment (a size measure)."""
    out = {}
    for assignment in ASSIGNMENTS:
        nb = nbformat.read(repo / "source" / assignment / f"{assignment}.ipynb", as_version=4)
        n = 0
        for cell in nb.cells:
            inside = False
            for line in cell.source.splitlines():
                if "BEGIN SOLUTION" in line:
                    inside = True
                elif "END SOLUTION" in line:
                    inside = False
                elif inside and line.strip() and not line.strip().startswith("#"):
                    n += 1
        out[assignment] = n
    return out


class GuideError(ValueError):
    """The guide's sources disagree (a graded cell without a description, points not 10, …)."""


def render_cells(repo: Path = REPO) -> str:
    cells = graded_cells(repo)
    lines_of = solution_lines(repo)
    problems = []
    known = set()
    parts = []
    for assignment, rows in cells.items():
        total = sum(r["points"] for r in rows)
        if total != 10:
            problems.append(f"source/{assignment}: the graded cells' points add up to {total:g}, not 10")
        tests = sum(r["tests"] for r in rows)
        chi2 = sum(r["chi2"] for r in rows)
        parts.append(f"#### `{assignment}`（{len(rows)} 个评分单元格，共 {total:g} 分；参考答案 {lines_of[assignment]} 行代码）\n")
        risk = (f"统计检验 {tests} 项，每项误判概率 ≤ 10⁻⁶，正确的实现在本作业被误判失分的概率合计 ≤ {tests}×10⁻⁶"
                if tests else "没有统计检验：全部是确定性检查，正确的实现不会被误判")
        if chi2:
            risk += f"（其中 {chi2} 项卡方检验的 10⁻⁶ 是渐近值，见本节开头）"
        if any(r["far_below"] for r in rows):
            risk += "，另有一项方差模拟（容差为 8.9 个标准误，误判概率远小于 10⁻⁶）"
        parts.append(risk + "。\n")
        parts.append("| 单元格 (grade_id) | 分值 | 检查什么 | 调用的检查函数（可见 / 隐藏） | 误判概率上界 |")
        parts.append("|---|---|---|---|---|")
        for r in rows:
            key = (assignment, r["grade_id"])
            known.add(key)
            text, checks = CELLS.get(key, (None, None))
            if text is None:
                problems.append(f"source/{assignment}: graded cell {r['grade_id']!r} has no description in "
                                f"docs/build_guide.py CELLS")
                text = ""
            elif checks != " ".join(sorted(set(r["visible"] + r["hidden"]))):
                problems.append(f"source/{assignment}: graded cell {r['grade_id']!r} now calls "
                                f"{sorted(set(r['visible'] + r['hidden']))}, not {checks.split()}: reread what it "
                                f"checks and update its description in docs/build_guide.py CELLS")
            checks = "、".join(f"`{c}`" for c in r["visible"]) or "—"
            if r["hidden"]:
                checks += " / " + "、".join(f"`{c}`" for c in r["hidden"])
            if (r["stated"] or 0) != r["tests"]:
                problems.append(f"source/{assignment}: graded cell {r['grade_id']!r} runs {r['tests']} statistical "
                                f"checks but its comments state a false-failure bound of {r['stated']}e-6: make "
                                f"them agree (docs/build_guide.py STATISTICAL lists the statistical checks)")
            bound = f"{r['tests']}×10⁻⁶" if r["tests"] else ("≪ 10⁻⁶" if r["far_below"] else "0（确定性）")
            parts.append(f"| `{r['grade_id']}` | {r['points']:g} | {text} | {checks} | {bound} |")
        parts.append("")
    stale = sorted(set(CELLS) - known)
    if stale:
        problems.append(f"docs/build_guide.py CELLS describes cells that no longer exist: {stale}")
    if problems:
        raise GuideError("; ".join(problems))
    return "\n".join(parts)


def render_diagnoses() -> str:
    sys.path.insert(0, str(REPO))
    from helpers.checks.diagnoses import DIAGNOSES, GRADER_DIAGNOSES, GROUPS, group_of

    parts = ["#### 评分程序给出的诊断（没有检查说明原因时）\n", "| 诊断 id | 含义 | 对学生说 |", "|---|---|---|"]
    parts += [f"| `{d}` | {_cell(e.meaning_zh)} | {_cell(e.advice_zh)} |" for d, e in GRADER_DIAGNOSES.items()]
    parts.append("")
    for group, (title_zh, _title_en) in GROUPS.items():
        ids = [d for d in DIAGNOSES if group_of(d) == group]
        parts.append(f"#### {title_zh}（{len(ids)} 种）\n")
        parts.append("| 诊断 id | 含义 | 对学生说 |")
        parts.append("|---|---|---|")
        for d in ids:
            e = DIAGNOSES[d]
            parts.append(f"| `{d}` | {_cell(e.meaning_zh)} | {_cell(e.advice_zh)} |")
        parts.append("")
    return "\n".join(parts)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def plan_json(repo: Path = REPO) -> dict | None:
    """The teaching plan as data (``python course/build.py --plan-json``, from ``course/_src/plan.toml``),
    or None when the repository has no teaching plan yet."""
    if not (repo / "course" / "builder" / "teaching_plan.py").is_file():
        return None
    done = subprocess.run([sys.executable, str(repo / "course" / "build.py"), "--plan-json"], capture_output=True,
                          text=True, cwd=repo)
    if done.returncode:
        raise GuideError(f"course/build.py --plan-json failed: {done.stderr.strip()}")
    return json.loads(done.stdout)


LABEL_ZH = {"core": "核心", "4h": "4 课时", "optional": "选学"}


def render_meetings(plan: dict | None) -> str:
    if plan is None:
        return ("（教学计划数据 `course/_src/plan.toml` 尚未合入；合入后运行 `make guide`，"
                "这里会按计划逐次列出讲授的小节和分钟数。）\n")
    sections = {s["id"]: s for s in plan["sections"]}
    unknown = sorted(set(NOTES) - set(sections))
    taught = {sid for p in plan["paths"] for m in p["meetings"] for sid in m["sections"]}
    missing = sorted(sid for sid in taught if sid not in NOTES and sections[sid]["minutes"] >= 3)
    if unknown or missing:
        raise GuideError(f"docs/build_guide.py NOTES: notes for sections the plan does not have: {unknown}; "
                         f"sections taught without notes: {missing}")
    parts = []
    for path in plan["paths"]:
        name = path.get("zh", path["id"])
        parts.append(f"### {name}（共 {path['total_minutes']} 分钟，上限 {path['minutes']} 分钟）\n")
        for m in path["meetings"]:
            assignment = "、".join(f"`{a}`" for a in m.get("assignments", [])) or "无"
            parts.append(f"#### 第 {m['number']} 次课：{m['minutes']} 分钟；课后作业：{assignment}\n")
            parts.append("| 笔记本 | 小节 | 标签 | 分钟 |")
            parts.append("|---|---|---|---|")
            intros = dict(m.get("intro_minutes", {}))
            for sid in m["sections"]:
                s = sections[sid]
                if s["notebook"] in intros:
                    parts.append(f"| `{s['notebook']}` | （开头：学习目标与导入） | | {intros.pop(s['notebook'])} |")
                parts.append(f"| `{s['notebook']}` | {_cell(s['zh'])} | {LABEL_ZH.get(s['label'], s['label'])} "
                             f"| {s['minutes']} |")
            parts += [f"| `{stem}` | （开头：学习目标与导入） | | {minutes} |" for stem, minutes in intros.items()]
            if m.get("selfcheck_minutes"):
                parts.append(f"| | （末尾：自测，当场检查） | | {m['selfcheck_minutes']} |")
            parts.append("")
            for sid in m["sections"]:
                note = NOTES.get(sid)
                if not note:
                    continue
                said = [f"{label}：{note[key]}" for key, label in
                        (("live", "现场运行"), ("ask", "提问"), ("stumble", "易错")) if note.get(key)]
                parts.append(f"- **{_cell(sections[sid]['zh'])}**　" + "；".join(s.rstrip("。") for s in said) + "。")
            parts.append("")
    return "\n".join(parts)


def check_units(text: str, plan: dict | None) -> None:
    """The hand-written table of section 4 names, for each assignment, every path the plan gives it to."""
    if plan is None:
        return
    problems = []
    for path in plan["paths"]:
        for m in path["meetings"]:
            for assignment in m.get("assignments", []):
                row = re.search(rf"^\| `{re.escape(assignment)}` \|.*$", text, re.M)
                if row is None or path["zh"] not in row.group(0):
                    problems.append(f"the plan gives {assignment} to the {path['zh']} path (meeting {m['number']}), "
                                    f"but its row in section 4 of docs/teacher-guide.md does not say {path['zh']!r}")
    if problems:
        raise GuideError("; ".join(problems))


def _requirements(plan: dict | None) -> dict[str, dict]:
    return {r["id"]: r for r in (plan or {}).get("requirements", [])}


def bank(plan: dict | None) -> tuple[list, list]:
    """The checked question bank and its papers (:class:`question_bank.BankError` becomes a GuideError)."""
    try:
        questions, blueprints = question_bank.load(requirements=_requirements(plan) if plan else None)
        return questions, question_bank.build_papers(questions, blueprints)
    except question_bank.BankError as error:
        raise GuideError(str(error)) from None


OBJECTIVES = REPO / "docs" / "objectives.toml"


def render_objectives(repo: Path = REPO) -> str:
    """§10's table: each course objective, the 学习要求 it serves, its parts with weights and items."""
    sys.path.insert(0, str(repo))
    from autograder.reports.attainment import load_objectives

    try:
        objectives, threshold = load_objectives(OBJECTIVES)
    except ValueError as error:
        raise GuideError(str(error)) from None
    counts = {a: len(rows) for a, rows in graded_cells(repo).items()}
    rows = ["| 课程目标 | 支撑的学习要求 | 考核环节（权重）与考核项 |", "|---|---|---|"]
    for o in objectives:
        parts = []
        for part in o.parts:
            items = []
            by_assignment: dict[str, list[str]] = {}
            for cell in part.cells:
                assignment, grade_id = cell.split(":")
                by_assignment.setdefault(assignment, []).append(grade_id)
            for assignment, ids in by_assignment.items():
                items.append(f"`{assignment}` 全部 {len(ids)} 个评分单元格" if len(ids) == counts.get(assignment)
                             else f"`{assignment}` 的 " + "、".join(f"`{g}`" for g in ids))
            units: dict[str, list[str]] = {}
            for question in part.exam:
                unit, number = question.split(":")
                units.setdefault(unit, []).append(number)
            items += [f"{'2 课时' if u == '2h' else '4 课时'}试卷第 {'、'.join(n)} 题" for u, n in units.items()]
            parts.append(f"{part.name}（{part.weight:g}）：" + "；".join(items))
        rows.append(f"| **{o.id}**：{_cell(o.zh)} | {'、'.join(o.requirements)} | {'<br>'.join(parts)} |")
    rows.append("")
    rows.append(f"默认阈值 {threshold:g}（`--threshold` 可改）。")
    return "\n".join(rows) + "\n"


def scores_template(papers: list) -> str:
    """docs/exam/scores-template.csv: the header of the exam CSV `--exam` reads (学号,试卷,1,2,…)."""
    longest = max(len(p.questions) for p in papers)
    return "学号,试卷," + ",".join(str(n) for n in range(1, longest + 1)) + "\n"


def render(text: str, repo: Path = REPO, plan: dict | None = None) -> str:
    """``text`` with every generated block rewritten."""
    plan = plan_json(repo) if plan is None else plan
    check_units(text, plan)
    questions, _ = bank(plan)
    renderers = {"cells": lambda: render_cells(repo), "diagnoses": render_diagnoses,
                 "meetings": lambda: render_meetings(plan),
                 "requirements": lambda: question_bank.render_requirements(plan),
                 "questions": lambda: question_bank.render_bank(questions, _requirements(plan)),
                 "objectives": lambda: render_objectives(repo)}
    names = [m["name"] for m in BLOCK.finditer(text)]
    if sorted(names) != sorted(renderers):
        raise GuideError(f"docs/teacher-guide.md must hold the generated blocks {sorted(renderers)} once each; "
                         f"found {names}")
    return BLOCK.sub(lambda m: m.group(1) + renderers[m["name"]]().rstrip("\n") + "\n" + m.group(4), text)


def targets(repo: Path = REPO) -> dict[Path, str]:
    """Every file this script writes, with its text: the guide and the exam papers with their keys."""
    plan = plan_json(repo)
    out = {GUIDE: render(GUIDE.read_text(encoding="utf-8"), repo, plan)}
    _, papers = bank(plan)
    out.update(question_bank.paper_files(papers, _requirements(plan)))
    out[question_bank.EXAM_DIR / "scores-template.csv"] = scores_template(papers)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the guide or a paper is out of date")
    args = parser.parse_args(argv)
    try:
        wanted = targets()
    except GuideError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    stale = [path for path, text in wanted.items()
             if not path.exists() or path.read_text(encoding="utf-8") != text]
    extra = sorted((set(question_bank.EXAM_DIR.glob("*.md")) | set(question_bank.EXAM_DIR.glob("*.csv"))) - set(wanted))
    if args.check:
        if stale or extra:
            print("out of date (run `make guide`):", *[str(p.relative_to(REPO)) for p in stale + extra],
                  sep="\n  ", file=sys.stderr)
            return 1
        return 0
    for path in extra:
        path.unlink()
    for path in stale:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(wanted[path], encoding="utf-8")
        print(f"wrote {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
