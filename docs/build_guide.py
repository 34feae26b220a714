#!/usr/bin/env python3
"""Write the generated parts of the instructor's guide, ``docs/teacher-guide.md`` (教师指南).

    python docs/build_guide.py          # rewrite the generated blocks in place
    python docs/build_guide.py --check  # exit 1 when the guide is out of date (tests/course/test_teacher_guide.py)

The guide is hand-written Markdown with blocks between ``<!-- BEGIN generated:NAME -->`` and
``<!-- END generated:NAME -->`` that this script owns:

* ``meetings``: both paths, meeting by meeting (sections, labels, minutes, assignment), from the
  teaching plan (``python course/plan.py --json``), with the teaching notes of :data:`NOTES`
  for every notebook a meeting uses;
* ``cells``: per assignment, every graded test cell with its points, the checks it runs
  (visible and hidden) and what it checks, read from the nbgrader metadata of ``source/*/*.ipynb``;
* ``diagnoses``: every diagnosis id, from ``helpers/checks/diagnoses.py``.

The build refuses (exit 2) a graded cell without a description in :data:`CELLS`, a
description of a cell that no longer exists, and points that do not add up to 10.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[1]
GUIDE = REPO / "docs" / "teacher-guide.md"
ASSIGNMENTS = ("laplace", "exponential", "randomized_response", "private_mean", "privacy_budget", "local_frequency")
BLOCK = re.compile(r"(<!-- BEGIN generated:(?P<name>[a-z]+) [^>]*-->\n)(?P<body>.*?)(<!-- END generated:(?P=name) -->)",
                   re.S)

#: What each graded test cell checks, in Chinese: (assignment, grade_id) -> text.
CELLS = {
    ("laplace", "test_laplace_noise_basics"): "形状、dtype、有限值；b ≤ 0、nan、inf 抛出 ValueError（确定性）",
    ("laplace", "test_laplace_noise_distribution"): "10 万个样本对 Lap(0, 3/0.7) 的 KS 检验；隐藏：另一个尺度与元组 size",
    ("laplace", "test_laplace_noise_rng"): "同种子同输出、异种子异输出、确实用了 rng.random；隐藏：只用 rng.random、输出由抽样决定",
    ("laplace", "test_laplace_mechanism_basics"): "标量返回 float、数组返回同形状数组，ε、Δ ≤ 0 抛出 ValueError；隐藏：ε、Δ 为 nan",
    ("laplace", "test_laplace_mechanism_distribution"): "Δ = 3、ε = 0.7 时噪声对 Lap(Δ/ε) 的 KS 检验；隐藏：Δ = 2、ε = 5",
    ("laplace", "test_laplace_mechanism_rng"): "laplace_mechanism 的随机性全部来自 rng",
    ("exponential", "test_probabilities_table"): "复现表 6-4（ε = 0、0.1、1）；隐藏：其他分数、ε、Δq 下的精确公式",
    ("exponential", "test_probabilities_stable"): "分数 10⁶ 不溢出、平移不变、单个候选概率为 1",
    ("exponential", "test_probabilities_invalid"): "ε < 0 或 nan、Δq ≤ 0、空的或二维的分数、含 nan 的分数抛出 ValueError",
    ("exponential", "test_mechanism_basics"): "返回范围内的整数下标，单个候选返回 0，分数差距极大时必选最高分；隐藏：非法参数",
    ("exponential", "test_mechanism_distribution"): "1 万次抽样的卡方检验（Δq = 3、ε = 0.7）；隐藏：表 6-4 的分数（ε = 0.1）与 ε = 2",
    ("exponential", "test_mechanism_rng"): "随机性全部来自 rng，只用 rng.random",
    ("randomized_response", "test_keep_probability"): "p(ln 4) = 0.8（教材的例子）、p(0.7)、p(3)；隐藏：ε = 800 不溢出，ε ≤ 0 或 nan 抛出 ValueError",
    ("randomized_response", "test_perturb_basics"): "一维、二维输入的形状与 0/1 整数输出，ε ≤ 0 或比特不是 0/1 时抛出 ValueError；隐藏：ε 为 nan、小数比特",
    ("randomized_response", "test_perturb_distribution"): "3 万个 1、7 万个 0 的保留率（ε = 0.7）；隐藏：ε = 2、二维数组",
    ("randomized_response", "test_perturb_rng"): "随机性全部来自 rng，每个比特独立",
    ("randomized_response", "test_correct_values"): "教材 §6.4.2 的例子（20 人、p = 0.8：14 → 16.7，6 → 3.3）；隐藏：p < 1/2、n1 = 0、n1 = n 等精确值",
    ("randomized_response", "test_correct_invalid"): "p = 1/2、p ∉ [0, 1]、p 为 nan、n1 < 0、n1 > n 抛出 ValueError",
    ("private_mean", "test_clip"): "截断的值、返回新数组；隐藏：lower ≥ upper 抛出 ValueError",
    ("private_mean", "test_sum_sensitivity"): "可见：返回非负的数；隐藏：两种相邻关系下和的灵敏度的精确值",
    ("private_mean", "test_count_sensitivity"): "可见：返回非负的数；隐藏：增删关系为 1、替换关系为 0",
    ("private_mean", "test_private_mean_basics"): "列表、数组、空数据集都返回 [lower, upper] 内的 float，非法边界与 ε 抛出 ValueError；隐藏：nan、inf",
    ("private_mean", "test_private_mean_rng"): "同一 rng 状态同结果、不同状态不同结果、rng 前进",
    ("private_mean", "test_private_mean_accuracy"): "误差中位数不超过最优 ε 分配的 1.5 倍（精确二项检验）",
    ("private_mean", "test_private_mean_privacy"): "隐私审计：相邻数据集上以 1 - 10⁻⁶ 置信度证明 ε 超过声称值则不通过（一个可见，其余隐藏）",
    ("privacy_budget", "test_accountant_basics"): "账本是普通数据、精确计数（严格的 >）、非法参数、rng 的使用（确定性）",
    ("privacy_budget", "test_budget_boundary"): "0.1 + 0.2 + 0.7 = 1 等恰好用完预算的查询被接受，再多一个被拒绝；被拒绝的查询不记账",
    ("privacy_budget", "test_noise_matches_budget"): "噪声与消耗的 ε 相符：Lap(1/ε) 的 KS 检验（ε = 0.5 与 2）",
    ("privacy_budget", "test_histogram_parallel"): "直方图按并行组合记 ε、每类独立的 Lap(1/ε)、与计数共用预算",
    ("privacy_budget", "test_attack"): "平均攻击的值与成功率（对表 6-3 的精确概率 0.2773、0.9995 做二项检验）",
    ("local_frequency", "test_perturb_basics"): "形状与 dtype（一维、二维、列表输入）、非法参数、rng 的使用（确定性）",
    ("local_frequency", "test_perturb_distribution"): "报告分布的卡方检验（k = 4、ε = 1）；隐藏：k = 10、ε = 2",
    ("local_frequency", "test_perturb_privacy"): "ε-本地化差分隐私审计（置信度 1 - 10⁻⁶）",
    ("local_frequency", "test_estimate_values"): "报告次数恰等于期望时的精确值；600 次估计的平均对真实人数（无偏）",
    ("local_frequency", "test_variance"): "方差公式对 4000 次模拟估计的样本方差；隐藏：精确值（含 f = 0、f = 1）",
    ("local_frequency", "test_asymmetric"): "两个骰子方案（a = 13/36、b = 1/36）的校正值与非法参数",
}

#: Teaching notes per lecture notebook: what to run live, questions for the class, where students stumble.
NOTES = {
    "6.1-basics": {
        "live": "表 6-1 的四个查询单元格（差分攻击当场算出 Ming 的成绩）；定义 6-1 的概率比滑块（拖动 ε 看两条分布的比值）；串行组合的记账器单元格。",
        "ask": "“只回答对女生的查询，为什么还是泄露了个人成绩？”；“均匀噪声 [-1, 1] 为什么不满足任何有限的 ε？”；“ε = 0 意味着什么？可用性如何？”",
        "stumble": "把 ε 理解为“泄露的概率”而不是概率之比的界；混淆增删关系与替换关系（灵敏度不同）；以为后处理可以“找回”精确值。",
    },
    "6.2-laplace": {
        "live": "灵敏度表；Lap(Δf/ε) 密度随 ε 的滑块；实验 6-1 的交互式加噪与重复查询平均攻击；实验 6-2 直方图（ε 从 0.1 到 10）。",
        "ask": "“计数查询的灵敏度为什么是 1？求和呢？”；“ε 减半，噪声的标准差变为多少？”（答：加倍）；“同一查询问 100 次再取平均，隐私预算消耗了多少？”",
        "stumble": "尺度写成 ε/Δf；把 b 当成标准差（标准差是 √2·b）；教材 §6.2.2 印刷公式多加了 u₂（课程已勘误）；直方图误以为要消耗 k·ε（并行组合只需 ε）。",
    },
    "6.3-exponential": {
        "live": "南瓜定价：四个价格的可用性与选择概率；表 6-4 三列（ε = 0、0.1、1）的滑块。",
        "ask": "“为什么不能对价格本身加拉普拉斯噪声？”；“ε = 0 时各价格被选中的概率是多少？”（答：均匀，各 1/4）；“指数里为什么有 2Δq？”",
        "stumble": "忘了归一化；分数大时 exp 溢出（要先减去最大值）；把灵敏度 Δq 与拉普拉斯机制的 Δf 混为一谈。",
    },
    "6.4-randomized-response": {
        "live": "掷硬币的随机化演示（可请全班真的掷一次）；扰动后统计与校正；ε ↔ p 的滑块；估计量方差的模拟。",
        "ask": "“p = 0.5 时能估计出什么？”（答：什么也不能，2p - 1 = 0）；“p = 0.75 对应的 ε 是多少？”（答：ln 3 ≈ 1.10）；“为什么随机响应不需要可信的数据收集者？”",
        "stumble": "p 与 1-p 弄反；校正公式漏括号；以为校正后的人数一定在 [0, n] 内（无偏估计可以越界）。",
    },
    "6.5a-rappor-shuffle": {
        "live": "RAPPOR 三步（布隆过滤器、永久随机响应、瞬时随机响应）单用户演示；一群用户的解码；洗牌后的隐私放大曲线。",
        "ask": "“每天上报一次，为什么需要‘永久随机响应’（记忆化）？”；“本地模型的误差为什么比中心化模型大约 √n 倍？”；“洗牌器看到了什么，看不到什么？”",
        "stumble": "混淆 ε∞（长期）与单次上报的 ε；以为洗牌本身就提供差分隐私（放大的前提是每个用户已做本地扰动）。",
    },
    "6.5b-synthetic-data": {
        "live": "表 6-5 → 表 6-6 的单列合成；多列时一维边缘分布丢失相关性；可用性随 ε 变化的曲线。",
        "ask": "“合成数据可以被查询无限次吗？隐私预算消耗在哪一步？”（答：可以，预算只在测量边缘分布时消耗，合成与查询都是后处理）；“为什么要测量二维边缘分布？”",
        "stumble": "以为合成数据“不含真实记录”就天然是隐私的；忽略选择边缘分布本身也消耗隐私预算。",
    },
}


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
                rows.append({"grade_id": meta["grade_id"], "points": meta.get("points", 0),
                             "visible": visible, "hidden": hidden})
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
        parts.append(f"#### `{assignment}`（{len(rows)} 个评分单元格，共 {total:g} 分；参考答案 {lines_of[assignment]} 行代码）\n")
        parts.append("| 单元格 (grade_id) | 分值 | 检查什么 | 调用的检查函数（可见 / 隐藏） |")
        parts.append("|---|---|---|---|")
        for r in rows:
            key = (assignment, r["grade_id"])
            known.add(key)
            text = CELLS.get(key)
            if text is None:
                problems.append(f"source/{assignment}: graded cell {r['grade_id']!r} has no description in "
                                f"docs/build_guide.py CELLS")
                text = ""
            checks = "、".join(f"`{c}`" for c in r["visible"]) or "—"
            if r["hidden"]:
                checks += " / " + "、".join(f"`{c}`" for c in r["hidden"])
            parts.append(f"| `{r['grade_id']}` | {r['points']:g} | {text} | {checks} |")
        parts.append("")
    stale = sorted(set(CELLS) - known)
    if stale:
        problems.append(f"docs/build_guide.py CELLS describes cells that no longer exist: {stale}")
    if problems:
        raise GuideError("; ".join(problems))
    return "\n".join(parts)


def render_diagnoses() -> str:
    sys.path.insert(0, str(REPO))
    from helpers.checks.diagnoses import DIAGNOSES, GROUPS, group_of

    parts = []
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
    """The teaching plan as data (``course/plan.py --json``), or None when the repository has no plan yet."""
    script = repo / "course" / "plan.py"
    if not script.is_file():
        return None
    done = subprocess.run([sys.executable, str(script), "--json"], capture_output=True, text=True, cwd=repo)
    if done.returncode:
        raise GuideError(f"course/plan.py --json failed: {done.stderr.strip()}")
    return json.loads(done.stdout)


LABEL_ZH = {"core": "核心", "4h": "4 课时", "optional": "选学"}


def render_meetings(plan: dict | None) -> str:
    if plan is None:
        return ("（教学计划数据 `course/plan.py` 尚未合入；合入后运行 `python docs/build_guide.py`，"
                "这里会按计划逐次列出讲授的小节和分钟数。）\n")
    sections = {s["id"]: s for s in plan["sections"]}
    used = {stem for p in plan["paths"] for m in p["meetings"] for stem in m["notebooks"]}
    if used - set(NOTES):
        raise GuideError(f"docs/build_guide.py NOTES has no teaching notes for {sorted(used - set(NOTES))}")
    parts = []
    for path in plan["paths"]:
        name = path.get("zh", path["id"])
        parts.append(f"### {name}（共 {path['total_minutes']} 分钟，上限 {path['minutes']} 分钟）\n")
        for m in path["meetings"]:
            assignment = "、".join(f"`{a}`" for a in m.get("assignments", [])) or "无"
            parts.append(f"#### 第 {m['number']} 次课：{m['minutes']} 分钟；课后作业：{assignment}\n")
            parts.append("| 笔记本 | 小节 | 标签 | 分钟 |")
            parts.append("|---|---|---|---|")
            for stem, minutes in m.get("intro_minutes", {}).items():
                parts.append(f"| `{stem}` | （开头：学习目标与导入） | | {minutes} |")
            for sid in m["sections"]:
                s = sections[sid]
                parts.append(f"| `{s['notebook']}` | {_cell(s['zh'])} | {LABEL_ZH.get(s['label'], s['label'])} | {s['minutes']} |")
            parts.append("")
            for stem in m["notebooks"]:
                note = NOTES[stem]
                parts.append(f"- **`{stem}` 现场运行：** {note['live']}")
                parts.append(f"- **提问：** {note['ask']}")
                parts.append(f"- **学生易错：** {note['stumble']}")
            parts.append("")
    return "\n".join(parts)


def render(text: str, repo: Path = REPO) -> str:
    """``text`` with every generated block rewritten."""
    renderers = {"cells": lambda: render_cells(repo), "diagnoses": render_diagnoses,
                 "meetings": lambda: render_meetings(plan_json(repo))}
    names = [m["name"] for m in BLOCK.finditer(text)]
    if sorted(names) != sorted(renderers):
        raise GuideError(f"docs/teacher-guide.md must hold the generated blocks {sorted(renderers)} once each; "
                         f"found {names}")
    return BLOCK.sub(lambda m: m.group(1) + renderers[m["name"]]().rstrip("\n") + "\n" + m.group(4), text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when docs/teacher-guide.md is out of date")
    args = parser.parse_args(argv)
    text = GUIDE.read_text(encoding="utf-8")
    try:
        new = render(text)
    except GuideError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.check:
        if new != text:
            print("docs/teacher-guide.md is out of date: run python docs/build_guide.py", file=sys.stderr)
            return 1
        return 0
    if new != text:
        GUIDE.write_text(new, encoding="utf-8")
        print("wrote docs/teacher-guide.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
