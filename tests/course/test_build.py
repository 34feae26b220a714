"""course/build.py: one source -> Chinese + English notebooks, deterministic, with --check."""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "course" / "build.py"

spec = importlib.util.spec_from_file_location("course_build", BUILD)
build = importlib.util.module_from_spec(spec)
sys.modules["course_build"] = build  # dataclasses look their module up
spec.loader.exec_module(build)

SAMPLE = """note to authors
# %% [markdown] zh
# 标题 {{LANG}}
[数据]({{ROOT}}data/README.md)
# %% [markdown] en
# Title {{LANG}}
# %%
from helpers.lectures.i18n import set_lang
set_lang("{{LANG}}")
# %% [markdown]
$$x^2$$
# %% zh tags=a,b
print("中文")
# %% en tags=a,b
print("English")
"""


def test_repository_notebooks_are_up_to_date():
    """The committed notebooks equal what the sources build (exit 1 lists stale ones)."""
    result = subprocess.run([sys.executable, str(BUILD), "--check"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_parse_and_render_both_languages():
    cells = build.parse_source(SAMPLE, "sample")
    assert [(c.kind, c.lang) for c in cells] == [("markdown", "zh"), ("markdown", "en"), ("code", None),
                                                 ("markdown", None), ("code", "zh"), ("code", "en")]
    zh = json.loads(build.render(cells, "zh", "sample"))
    en = json.loads(build.render(cells, "en", "sample"))
    assert [c["id"] for c in zh["cells"]] == ["zh-000", "zh-001", "zh-002", "zh-003"]
    assert "".join(zh["cells"][0]["source"]) == "# 标题 zh\n[数据](data/README.md)"
    assert "".join(en["cells"][0]["source"]) == "# Title en"
    assert 'set_lang("en")' in "".join(en["cells"][1]["source"])
    assert zh["cells"][3]["metadata"] == {"tags": ["a", "b"]} and "中文" in "".join(zh["cells"][3]["source"])
    for nb in (zh, en):
        nbformat.validate(nbformat.from_dict(nb))
        for cell in nb["cells"]:
            if cell["cell_type"] == "code":
                assert cell["outputs"] == [] and cell["execution_count"] is None


def test_render_is_byte_identical_on_rebuild():
    cells = build.parse_source(SAMPLE, "sample")
    assert build.render(cells, "zh", "s") == build.render(build.parse_source(SAMPLE, "sample"), "zh", "s")


@pytest.mark.parametrize("text, message", [
    ("# %% [markdown] zh\nonly Chinese\n", "1 Chinese-only cells but 0 English-only"),
    ("# %% [markdown] fr\nbonjour\n", "malformed cell marker"),
    ("no markers at all\n", "no cells"),
])
def test_bad_sources_are_refused_with_a_clear_message(text, message):
    with pytest.raises(build.SourceError, match=message):
        build.parse_source(text, "bad.md")


# A course of one source without sections: the plan has only the method, README.md only the plan markers.
TINY_PLAN = ("[method]\nchars_per_minute = 200\nseconds_per_inline_formula = 2\nseconds_per_display_formula = 15\n"
             "seconds_per_code_cell = 20\nseconds_per_figure = 45\nseconds_per_live_figure = 90\nquestion_minutes = 2\n"
             "selfcheck_minutes = 3\n")


def _tiny_course(tmp_path: Path) -> Path:
    course = tmp_path / "course"
    (course / "_src").mkdir(parents=True)
    shutil.copy(BUILD, course / "build.py")
    shutil.copytree(BUILD.parent / "builder", course / "builder", ignore=shutil.ignore_patterns("__pycache__"))
    (course / "_src" / "plan.toml").write_text(TINY_PLAN, encoding="utf-8")
    (course / "README.md").write_text("<!-- plan:zh -->\n<!-- /plan:zh -->\n<!-- plan:en -->\n<!-- /plan:en -->\n",
                                      encoding="utf-8")
    return course


def test_check_fails_and_lists_a_stale_notebook(tmp_path):
    course = _tiny_course(tmp_path)
    (course / "_src" / "demo.md").write_text(SAMPLE, encoding="utf-8")
    run = lambda *a: subprocess.run([sys.executable, str(course / "build.py"), *a],
                                    capture_output=True, text=True, timeout=60)
    assert run("--check").returncode == 1                      # not built yet
    assert run().returncode == 0
    first = (course / "demo.ipynb").read_bytes()
    assert run("--check").returncode == 0
    assert run().returncode == 0 and (course / "demo.ipynb").read_bytes() == first   # byte-identical
    (course / "_src" / "demo.md").write_text(SAMPLE.replace("Title", "Heading"), encoding="utf-8")
    stale = run("--check")
    assert stale.returncode == 1 and "course/en/demo.ipynb" in stale.stderr
    assert "course/demo.ipynb" not in stale.stderr.replace("course/en/demo.ipynb", "")   # zh unchanged


def test_check_compares_content_so_a_run_and_saved_notebook_stays_up_to_date(tmp_path):
    """A student runs and saves a lecture notebook (outputs, counts, widget state): still up to date;
    an edited cell is not."""
    course = _tiny_course(tmp_path)
    (course / "_src" / "demo.md").write_text(SAMPLE, encoding="utf-8")
    run = lambda *a: subprocess.run([sys.executable, str(course / "build.py"), *a],
                                    capture_output=True, text=True, timeout=60)
    assert run().returncode == 0
    path = course / "demo.ipynb"
    nb = nbformat.read(path, as_version=4)
    for count, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
        cell.execution_count = count + 1
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="中文\n")]
        cell.metadata["execution"] = {"iopub.execute_input": "2026-01-01T00:00:00Z"}
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}, "version_major": 2}}
    nbformat.write(nb, path)
    assert run("--check").returncode == 0
    nb.cells[-1].source += "\nprint('edited')"
    nbformat.write(nb, path)
    stale = run("--check")
    assert stale.returncode == 1 and "course/demo.ipynb" in stale.stderr


def test_committed_notebooks_have_no_outputs():
    """What git holds is stored without outputs (the working tree may hold a student's run)."""
    listed = subprocess.run(["git", "ls-files", "course/*.ipynb", "course/en/*.ipynb"], cwd=ROOT,
                            capture_output=True, text=True)
    if listed.returncode != 0 or not listed.stdout.strip():
        pytest.skip("not a git checkout")
    for rel in listed.stdout.split():
        shown = subprocess.run(["git", "show", f"HEAD:{rel}"], cwd=ROOT, capture_output=True, text=True)
        if shown.returncode != 0:
            continue  # added but not committed yet
        nb = json.loads(shown.stdout)
        with_outputs = [c["id"] for c in nb["cells"] if c.get("outputs") or c.get("execution_count")]
        assert not with_outputs, f"{rel} is committed with outputs in cells {with_outputs}"


def test_localize_keeps_one_language_per_code_cell():
    """tr(zh=…, en=…) / label(zh=…, en=…) become one argument; '# zh:' comments stay in Chinese only."""
    code = ('# zh: 把 None 换成你的答案\n# en: replace None by your answer\nx = 2\n'
            'print(tr(zh=f"结果 {x}",\n         en=f"result {x}"), 3)\n'
            'assert x, tr(\n    zh="错", en="wrong")\n'
            'print(f"{name}: ({tr(zh=\'教材\', en=\'printed\')} {x})")\n'
            'ax.set_title(label(zh="噪声", en="noise"))\nitems = tr(zh=["甲",\n "乙"], en=["a", "b"])\n')
    zh, en = build.localize(code, "zh"), build.localize(code, "en")
    assert zh == ('# 把 None 换成你的答案\nx = 2\nprint(f"结果 {x}", 3)\nassert x, "错"\n'
                  'print(f"{name}: (教材 {x})")\nax.set_title("噪声")\nitems = (["甲",\n "乙"])\n')
    assert en == ('# replace None by your answer\nx = 2\nprint(f"result {x}", 3)\nassert x, "wrong"\n'
                  'print(f"{name}: (printed {x})")\nax.set_title("noise")\nitems = ["a", "b"]\n')
    with pytest.raises(build.SourceError, match="exactly these two keywords"):
        build.localize('print(tr("噪声", en="noise"))', "zh")


def _other_language_strings(cell_text: str, lang: str) -> set[str]:
    """The string pieces a shared code cell gives only to the language that is not ``lang``."""
    other = "en" if lang == "zh" else "zh"
    mine: set[str] = set()
    theirs: set[str] = set()
    for call in filter(None, map(build._variant_call, ast.walk(ast.parse(cell_text)))):
        for keyword in call.keywords:
            pieces = {n.value.strip() for n in ast.walk(keyword.value)
                      if isinstance(n, ast.Constant) and isinstance(n.value, str)}
            (theirs if keyword.arg == other else mine).update(pieces)
    # a piece that is a word of this language too (a shared formula, "ε") says nothing
    return {p for p in theirs - mine if re.search(r"[\u4e00-\u9fff]" if other == "zh" else r"[A-Za-z]{3}", p)}


def _text_of(code: str) -> str:
    """What a code cell prints or draws: its string literals, less those that are keys or
    names ("mean", "laplace_noise"); comments and docstrings are notes on the code, in English."""
    tree = ast.parse(code)
    docstrings = {id(n.body[0].value) for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))
                  and isinstance(n.body[0], ast.Expr)}
    strings = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
               and id(n) not in docstrings and not re.fullmatch(r"[\w.]*", n.value)]
    return "\n".join(strings)


@pytest.mark.parametrize("stem", sorted(p.stem for p in (ROOT / "course" / "_src").glob("*.md") if p.name != "README.md"))
def test_built_code_cells_hold_one_language_only(stem):
    """A student never reads tr(zh=…, en=…): each notebook's code has its own language's strings only."""
    cells = build.parse_source((ROOT / "course" / "_src" / f"{stem}.md").read_text(encoding="utf-8"), stem)
    for lang, folder in build.OUT_DIRS.items():
        nb = nbformat.read(folder / f"{stem}.ipynb", as_version=4)
        code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
        assert not re.search(r"\b(tr|label)\(", code), f"{stem} ({lang}) still calls tr()/label()"
        if lang == "en":
            assert not re.search(r"[\u4e00-\u9fff]", code), f"{stem} (en): Chinese characters in a code cell"
        text = "\n".join(_text_of(c.source) for c in nb.cells if c.cell_type == "code")
        comments = [m[3] for c in cells if c.kind == "code" for m in build._LANG_COMMENT.finditer(c.text) if m[2] != lang]
        assert not [m for m in comments if m in code], f"{stem} ({lang}): a comment of the other language is left"
        for cell in cells:
            if cell.kind == "code" and cell.lang is None:
                for piece in _other_language_strings(cell.text.replace("{{LANG}}", lang), lang):
                    assert not re.search(rf"(?<!\w){re.escape(piece)}(?!\w)", text), f"{stem} ({lang}): the other language's {piece!r} is in a code cell"


def test_a_comment_in_the_other_language_is_refused_with_file_cell_and_line():
    """An unmarked English comment would reach the Chinese notebook (and a Chinese one the English
    notebook): the build names the source file, the built cell and the source line of each."""
    source = ("# %% [markdown]\n$x$\n# %%\n\nx = 1\n"
              "period = f(2**20)            # one full period of pairs\n"
              "# 一个周期\ny = 2\n")
    cells = build.parse_source(source, "s.md")
    with pytest.raises(build.SourceError) as refused:
        build.render(cells, "zh", "6.9-demo")
    assert str(refused.value).splitlines() == [
        "course/_src/6.9-demo.md: zh code cell 1 (marker line 3), source line 6: English comment "
        "'# one full period of pairs' in the zh notebook: write it as '# zh: … # en: …' "
        "(or two whole-line comments '# zh: …' / '# en: …')"]
    with pytest.raises(build.SourceError, match=r"zh code cell|en code cell") as refused:
        build.render(cells, "en", "6.9-demo")
    assert "source line 7: Chinese comment '# 一个周期'" in str(refused.value)
    # one language at the end of a line is not a pair: the build keeps it in both notebooks
    with pytest.raises(build.SourceError, match="Chinese comment '# zh: 周期'"):
        build.render(build.parse_source("# %%\nx = 1  # zh: 周期\n", "s.md"), "en", "s")


def test_comments_marked_per_language_build_and_neutral_ones_pass():
    code = ("period = f(2**20)  # zh: 一个完整周期 # en: one full period\n"
            "# zh: 准备\n# en: setup\n"
            "p = 1  # Pr[M(D) >= 3.5]\n"
            "q = 2  # noqa: E731\n"
            "# def rdp_epsilon(sigma, k, delta):\n"
            "# `runs` 次抽样\n")
    cells = build.parse_source("# %% zh\n" + code + "# %% en\nx = 1  # Lap(1/ε)\n", "s.md")
    zh = json.loads(build.render(cells, "zh", "s"))
    assert "".join(zh["cells"][0]["source"]) == (
        "period = f(2**20)  # 一个完整周期\n# 准备\np = 1  # Pr[M(D) >= 3.5]\nq = 2  # noqa: E731\n"
        "# def rdp_epsilon(sigma, k, delta):\n# `runs` 次抽样")
    assert build.localize(code, "en").splitlines()[:2] == ["period = f(2**20)  # one full period", "# setup"]
    # what the rule refuses and allows, one comment at a time
    for text, zh_refused, en_refused in [
        ("# one full period of pairs", True, False), ("# Alice, Bob, Charlie", True, False),
        ("# Lap(k/ε) per answer", True, False), ("# 每个回答加 Lap(k/ε)", False, True),
        ("# Pr[1 | 1] = 13/36", False, False), ("# type: ignore", False, False),
        ("# y = f(x)", False, False), ("# `runs` draws", True, False),
        ("# note: not code", True, False), ("# 注意: 周期", False, True)]:
        assert (build.foreign_comment(text, "zh"), build.foreign_comment(text, "en")) == (zh_refused, en_refused), text


def test_built_notebooks_show_no_comment_in_the_other_language():
    """The committed notebooks themselves (not only the build's refusal): every comment of every code cell."""
    for lang, folder in build.OUT_DIRS.items():
        for path in sorted(folder.glob("*.ipynb")):
            nb = nbformat.read(path, as_version=4)
            for index, cell in enumerate(nb.cells):
                if cell.cell_type == "code":
                    foreign = [t for _, _, t in build._comments(cell.source) if build.foreign_comment(t, lang)]
                    assert not foreign, f"{path.relative_to(ROOT)} cell {index}: {foreign}"


def test_a_docstring_in_the_other_language_is_refused_and_tr_makes_one_per_language():
    """A docstring is text a student reads in the code: an English one is refused in the Chinese
    notebook, and ``tr(zh=\"\"\"…\"\"\", en=\"\"\"…\"\"\")`` builds into one docstring per language."""
    english = "# %%\ndef f(x):\n    \"\"\"Double x.\"\"\"\n    return 2 * x\n"
    with pytest.raises(build.SourceError, match="English docstring of f 'Double x.' in the zh notebook"):
        build.render(build.parse_source(english, "s.md"), "zh", "s")
    both = ("# %%\ndef f(x):\n    tr(zh=\"\"\"把 x 加倍。\"\"\",\n       en=\"\"\"Double x.\"\"\")\n"
            "    return 2 * x\n")
    for lang, doc in (("zh", "把 x 加倍。"), ("en", "Double x.")):
        built = "".join(json.loads(build.render(build.parse_source(both, "s.md"), lang, "s"))["cells"][0]["source"])
        namespace: dict = {}
        exec(built, namespace)  # noqa: S102 - the test's own code
        assert namespace["f"].__doc__ == doc and namespace["f"](2) == 4, built


def test_halfwidth_punctuation_next_to_chinese_is_refused_with_file_cell_and_line():
    """GB/T 15834: a Chinese reader sees ，；：？！（） next to Chinese.  The build refuses a half-width
    mark touching a Chinese character in a Chinese cell or string, naming file, cell and line."""
    source = ("# %% [markdown] zh\n标题\n\n第一句,第二句\n# %% [markdown] en\nTitle, with comma\n"
              "# %%\nprint(tr(zh=\"结果:\", en=\"result: (ok)\"))  # zh: 注释 # en: a, b\n")
    cells = build.parse_source(source, "s.md")
    with pytest.raises(build.SourceError) as refused:
        build.render(cells, "zh", "6.9-demo")
    lines = str(refused.value).splitlines()
    assert lines[0].startswith("course/_src/6.9-demo.md: zh markdown cell 0 (marker line 1), source, line 4: "
                               "half-width ',' next to Chinese")
    assert lines[1].startswith("course/_src/6.9-demo.md: zh code cell 1 (marker line 7), built, line 1: "
                               "half-width ':' next to Chinese")
    assert len(lines) == 2
    build.render(cells, "en", "6.9-demo")  # English text keeps its half-width marks


@pytest.mark.parametrize("text, fixed", [
    ("第一句,第二句;第三句:好吗?好!", "第一句，第二句；第三句：好吗？好！"),
    ("见教材(6.1 节)。", "见教材（6.1 节）。"),
    ("Alice(第 5 条)是否患癌", "Alice（第 5 条）是否患癌"),
    ("噪声 Lap(b) 与 F(j - 真值)。", "噪声 Lap(b) 与 F(j - 真值)。"),    # notation stays
    ("近似差分隐私 (ε, δ) 与 (0, δ)-DP。", "近似差分隐私 (ε, δ) 与 (0, δ)-DP。"),
    ("先验概率 p(例如 Alice)", "先验概率 p（例如 Alice）"),
    ("公式 $f(x), g(x)$ 与 `a,中` 不变", "公式 $f(x), g(x)$ 与 `a,中` 不变"),  # math and code stay
    ("见 [链接](http://a.b/c?d=中,e)。", "见 [链接](http://a.b/c?d=中,e)。"),  # link targets stay
    ("English, text (ok).", "English, text (ok)."),
    ("- (中文)", "- （中文）"),                                                 # a list marker keeps its space
])
def test_fix_halfwidth(text, fixed):
    assert build.fix_halfwidth(text) == fixed
    assert build.count_halfwidth(fixed, "markdown") == 0


@pytest.mark.parametrize("text, fixed", [
    ('为什么"只禁止对个体的查询"挡不住它', "为什么“只禁止对个体的查询”挡不住它"),     # straight quotes → “”
    ('1. "Ming 的成绩" —— 针对个体', "1. “Ming 的成绩”——针对个体"),                 # and —— takes no spaces
    ("受控 —— 这正是", "受控——这正是"),
    ("（McSherry & Talwar 2007;Dwork & Roth 2014）", "（McSherry & Talwar 2007；Dwork & Roth 2014）"),
    ("（Tang 等，2017,arXiv:1709.02753）", "（Tang 等，2017，arXiv:1709.02753）"),       # an identifier keeps its colon
    ("洗牌模型（ESA,6.5.2）的放大", "洗牌模型（ESA，6.5.2）的放大"),
    ("标准差不超过 0.0012:Gumbel 一行", "标准差不超过 0.0012：Gumbel 一行"),
    ("csdn.net:NNLS 给出 12", "csdn.net：NNLS 给出 12"),
    ("共 1,000 次，比例 3:2", "共 1,000 次，比例 3:2"),                             # numbers keep their separators
    ('English "quoted", 2007;Dwork — fine.', 'English "quoted", 2007;Dwork — fine.'),   # an English line stays
    ('代码 `f("a,b")` 与 $"x"$ 不变', '代码 `f("a,b")` 与 $"x"$ 不变'),
])
def test_quotes_dashes_and_glued_marks_in_chinese_text(text, fixed):
    """Issue 34 §5: straight quotes, spaced em dashes and glued half-width marks in Chinese text are
    refused by the build's typography rule and rewritten by its fixer."""
    assert build.fix_halfwidth(text) == fixed
    assert build.count_halfwidth(fixed, "markdown") == 0
    assert (build.count_halfwidth(text, "markdown") > 0) == (text != fixed)
    if text != fixed:
        assert build.halfwidth_problems(text, "markdown", "demo")


def test_a_python_string_keeps_its_quote_delimiters():
    code = 'print(tr(zh="拒绝 —— 预算不够,2007;Dwork", en="refused — no budget"))\n'
    assert build.fix_halfwidth_code(code) == 'print(tr(zh="拒绝——预算不够，2007；Dwork", en="refused — no budget"))\n'


def test_fix_halfwidth_in_chinese_only_text_reaches_across_spaces_math_and_emphasis():
    assert build.fix_halfwidth("中文 , 英文") == "中文 , 英文"
    assert build.fix_halfwidth("中文 , 英文", zh_only=True) == "中文，英文"
    assert build.fix_halfwidth("**小结**:$x$ 与 $\\delta$;", zh_only=True) == "**小结**：$x$ 与 $\\delta$；"


def test_fix_halfwidth_code_touches_only_chinese_strings_and_comments():
    code = 'x = f(a, b)  # zh: 注释:好 # en: note: ok\nprint(tr(zh=f"{x:.2f}:值", en="值: (en)"), "中,文")\n'
    fixed = build.fix_halfwidth_code(code)
    assert fixed == 'x = f(a, b)  # zh: 注释：好 # en: note: ok\nprint(tr(zh=f"{x:.2f}：值", en="值: (en)"), "中，文")\n'


def test_course_pages_and_assignment_notebooks_have_full_width_punctuation_next_to_chinese():
    """course/README.md (its Chinese part), the student bundle's README and every source notebook
    (markdown, Chinese strings and comments): no half-width mark touching Chinese."""
    problems = []
    for page in ("course/README.md", "autograder/STUDENT_README.md"):
        chinese, _ = build.zh_part((ROOT / page).read_text(encoding="utf-8"))
        problems += build.halfwidth_problems(chinese, "markdown", page, zh_only=page == "course/README.md")
    for path in sorted((ROOT / "source").glob("*/*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        for index, cell in enumerate(nb["cells"]):
            kind = "markdown" if cell["cell_type"] == "markdown" else "code"
            problems += build.halfwidth_problems("".join(cell["source"]), kind,
                                                 f"{path.relative_to(ROOT)} cell {index}")
    assert not problems, "\n".join(problems)


def test_a_listed_term_variant_is_refused_except_in_a_quotation():
    """course/_src/terms.toml: one term per concept.  A variant (敏感度 for 灵敏度, 花 for 消耗, 加入或删除
    for 增删, …) is refused in Chinese text and strings, naming file, cell and line; inside a quotation
    of the textbook ("…", “…”, 《…》) it stays."""
    source = ("# %% [markdown] zh\n标题\n\n计数的敏感度是 1。\n# %% [markdown] en\nTitle\n"
              "# %%\nprint(tr(zh=\"每次查询花掉 ε\", en=\"each query spends ε\"))\n"
              "# %% [markdown] zh\n教材说“其敏感度为 1”，见《满足本地差分隐私的……》。\n# %% [markdown] en\nQuote\n")
    with pytest.raises(build.SourceError) as refused:
        build.render(build.parse_source(source, "s.md"), "zh", "6.9-demo")
    lines = str(refused.value).splitlines()
    assert len(lines) == 2, lines
    assert lines[0].startswith("course/_src/6.9-demo.md: zh markdown cell 0 (marker line 1), source, line 4: "
                               "'敏感度' is not the course's term: write 灵敏度")
    assert lines[1].startswith("course/_src/6.9-demo.md: zh code cell 1 (marker line 7), built, line 1: "
                               "'花掉' is not the course's term: write 消耗")


def _chinese_texts():
    """(where, text, kind) of every Chinese text a student reads outside the lecture sources (which the build checks)."""
    for page in ("course/README.md", "autograder/STUDENT_README.md"):
        yield page, build.zh_part((ROOT / page).read_text(encoding="utf-8"))[0], "markdown"
    for path in sorted((ROOT / "source").glob("*/*.ipynb")):
        for index, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
            yield (f"{path.relative_to(ROOT)} cell {index}", "".join(cell["source"]),
                   "markdown" if cell["cell_type"] == "markdown" else "code")
    for path in sorted((ROOT / "helpers").rglob("*.py")):
        yield str(path.relative_to(ROOT)), path.read_text(encoding="utf-8"), "code"


def test_no_listed_term_variant_in_pages_assignments_or_helpers():
    problems = [p for where, text, kind in _chinese_texts() for p in build.term_problems(text, kind, where)]
    assert not problems, "\n".join(problems)


def test_glossary_lists_every_term_once_with_where_it_is_first_taught():
    terms = build.load_terms()
    assert len({t["zh"] for t in terms}) == len(terms)
    readme = (ROOT / "course" / "README.md").read_text(encoding="utf-8")
    for term in terms:
        assert f"| {term['zh']} | {term['en']} |" in readme
        first = term["first"]
        assert (ROOT / "course" / "_src" / f"{first}.md").exists() or (ROOT / "source" / first).is_dir(), first


def test_assignment_rules_and_lists_come_from_one_source():
    """course/_src/assignments.toml is the one list of assignments and randomness rules: the Makefile,
    course/README.md (both languages), autograder/STUDENT_README.md and every source and release rules
    cell agree with it (build.py --check rewrites the generated parts; this names what disagrees)."""
    data = build.load_assignments()
    names = [a["name"] for a in data["assignment"]]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^ASSIGNMENTS := (.*)$", makefile, re.M)[1].split() == names
    assert sorted(p.name for p in (ROOT / "source").iterdir() if p.is_dir()) == sorted(names)
    readme = (ROOT / "course" / "README.md").read_text(encoding="utf-8")
    student = (ROOT / "autograder" / "STUDENT_README.md").read_text(encoding="utf-8")
    assert build._assignment_table("zh") in readme and build._assignment_table("en") in readme
    assert build._student_list() in student and build._student_rule() in student
    for a in data["assignment"]:
        rule = data["randomness"][a["randomness"]]
        assert f"`{a['name']}`" in build._student_list()
        for version in ("source", "release"):
            nb = json.loads((ROOT / version / a["name"] / f"{a['name']}.ipynb").read_text(encoding="utf-8"))
            rules = next("".join(c["source"]) for c in nb["cells"]
                         if c["metadata"].get("nbgrader", {}).get("grade_id") == "rules")
            lines = rules.split("\n")
            assert rule["zh"] in lines and rule["en"] in lines, (version, a["name"])
            other = data["randomness"]["any_method" if a["randomness"] == "random_only" else "random_only"]
            assert other["zh"] not in lines and other["en"] not in lines
            if a["randomness"] == "random_only":  # the float64 rule, stated where rng.random is the only source
                assert "`dtype=np.float32` 会被拒绝" in rules and "`dtype=np.float32` is refused" in rules


def test_a_generated_block_out_of_date_is_rewritten_and_an_unknown_one_refused():
    page = "x\n<!-- BEGIN generated: student-assignments (note) -->\nold list\n<!-- END generated: student-assignments -->\ny"
    assert build.render_page(page, "p") == ("x\n<!-- BEGIN generated: student-assignments (note) -->\n"
                                            + build._student_list() + "\n<!-- END generated: student-assignments -->\ny")
    with pytest.raises(build.SourceError, match="unknown generated block 'nope'"):
        build.render_page("<!-- BEGIN generated: nope -->\n<!-- END generated: nope -->", "p")
