"""One term per concept (``course/_src/terms.toml``) and the generated parts of pages and notebooks
(``course/_src/assignments.toml``: the glossary, the assignment tables and the rules cells)."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

from .source import COURSE, SRC, SourceError
from .typography import _IDEOGRAPH, _lines, _prose_mask, _spans

# --- One term per concept (course/_src/terms.toml) ---------------------------------------------
TERMS_FILE = SRC / "terms.toml"
ASSIGNMENTS_FILE = SRC / "assignments.toml"
# A quotation of the textbook or a source keeps its words: "…", “…”, 「…」, 《…》 (one line).
_QUOTATION = re.compile(r'"[^"\n]*"|“[^”\n]*”|「[^」\n]*」|《[^》\n]*》')


def load_terms() -> list[dict]:
    """The glossary entries of course/_src/terms.toml (zh, en, first, variants)."""
    if not TERMS_FILE.exists():  # a course folder without a glossary (a test's scratch copy)
        return []
    return tomllib.loads(TERMS_FILE.read_text(encoding="utf-8"))["term"]


def term_problems(text: str, kind: str, where: str, first_line: int = 1, terms: list[dict] | None = None) -> list[str]:
    """One message per listed variant (course/_src/terms.toml) in Chinese ``text`` (markdown, or the
    Chinese strings and comments of code), outside quotations, math and code."""
    terms = load_terms() if terms is None else terms
    problems = []
    for a, b, _ in _spans(text, kind, False):
        segment = text[a:b]
        if kind == "code":
            segment = re.sub(r"^[A-Za-z]*('''|\"\"\"|'|\")|('''|\"\"\"|'|\")$", lambda m: " " * len(m[0]), segment)
        mask = _prose_mask(segment)
        prose = "".join(ch if keep else " " for ch, keep in zip(segment, mask))
        prose = _QUOTATION.sub(lambda m: " " * len(m[0]), prose)
        for term in terms:
            for variant in term.get("variants", []):
                for match in re.finditer(variant, prose):
                    line = text.count("\n", 0, a + match.start()) + first_line
                    problems.append(f"{where}, line {line}: {match[0]!r} is not the course's term: write "
                                    f"{term['zh']} ({term['en']}; course/_src/terms.toml), or quote the textbook "
                                    "in \"…\"")
    return problems


# --- Generated parts of pages and notebooks (course/_src/assignments.toml, terms.toml) -----------
def load_assignments() -> dict:
    """course/_src/assignments.toml: ``randomness`` rules by kind and the ordered ``assignment`` list."""
    return tomllib.loads(ASSIGNMENTS_FILE.read_text(encoding="utf-8"))


def _glossary(lang: str) -> str:
    rows = []
    for term in load_terms():
        first = term["first"]
        if (SRC / f"{first}.md").exists():
            link = f"[{first}]({'' if lang == 'zh' else 'en/'}{first}.ipynb)"
        else:
            link = f"[`{first}`](../release/{first}/{first}.ipynb)"
        rows.append(f"| {term['zh']} | {term['en']} | {link} |")
    head = "| 中文 | English | 首次讲到 |" if lang == "zh" else "| 中文 | English | first taught in |"
    return "\n".join([head, "|---|---|---|", *rows])


def _assignment_table(lang: str) -> str:
    data = load_assignments()
    if lang == "zh":
        head = ["| 作业 | 内容 | 对应章节 | 随机数 | 发布版本 |", "|---|---|---|---|---|"]
    else:
        head = ["| assignment | what you implement | sections | randomness | published version |", "|---|---|---|---|---|"]
    rows = []
    for a in data["assignment"]:
        rule = data["randomness"][a["randomness"]]["short_" + lang]
        sections = a["sections"] if lang == "zh" else a.get("sections_en", a["sections"])
        rows.append(f"| `{a['name']}` | {a[lang]} | {sections} | {rule} | "
                    f"[{a['name']}.ipynb](../release/{a['name']}/{a['name']}.ipynb) |")
    return "\n".join(head + rows)


def _student_list() -> str:
    data = load_assignments()["assignment"]
    names = "、".join(f"`{a['name']}`" for a in data)
    return (f"`release/` 中的 {len(data)} 个计分作业（按课程顺序）：{names}。\n"
            f"The {len(data)} graded assignments in `release/`, in the order of the course: "
            + ", ".join(f"`{a['name']}`" for a in data) + ".")


def _student_rule() -> str:
    data = load_assignments()
    by_kind: dict[str, list[str]] = {}
    for a in data["assignment"]:
        by_kind.setdefault(a["randomness"], []).append(f"`{a['name']}`")
    zh = "；".join(f"{'、'.join(names)} {data['randomness'][kind]['short_zh']}" for kind, names in by_kind.items())
    en = "; ".join(f"{', '.join(names)}: {data['randomness'][kind]['short_en']}" for kind, names in by_kind.items())
    return ("- 只在标有 `YOUR CODE HERE` / `在此处填写你的代码` 的单元格里写代码，用你自己的代码实现函数，"
            "不能调用 `helpers` 里现成的机制。随机性只能来自传入的 `rng`，不能用 `np.random.*`、`random` 模块或"
            f"自己新建的生成器：{zh}。每个作业的规则单元格写明细节。\n"
            "  Write code only in the solution cells and implement the functions yourself, without the ready-made "
            "mechanisms of `helpers`. Randomness comes only from the `rng` you are given, never `np.random.*`, the "
            f"`random` module or a generator of your own: {en}. Each assignment's rules cell gives the details.")


# A generated block of a Markdown page: <!-- BEGIN generated: NAME … --> … <!-- END generated: NAME -->
_BLOCK = re.compile(r"(<!-- BEGIN generated: (?P<name>[\w-]+)[^>]*-->\n)(?P<body>.*?)\n?(<!-- END generated: (?P=name) -->)", re.S)
BLOCKS = {
    "glossary-zh": lambda: _glossary("zh"),
    "glossary-en": lambda: _glossary("en"),
    "assignments-zh": lambda: _assignment_table("zh"),
    "assignments-en": lambda: _assignment_table("en"),
    "student-assignments": _student_list,
    "student-rules": _student_rule,
}


def render_page(text: str, where: str) -> str:
    """``text`` with every generated block rewritten from course/_src/*.toml (other text untouched)."""
    def fill(match: re.Match) -> str:
        if match["name"] not in BLOCKS:
            raise SourceError(f"{where}: unknown generated block {match['name']!r} (known: {', '.join(BLOCKS)})")
        return match[1] + BLOCKS[match["name"]]() + "\n" + match[4]
    return _BLOCK.sub(fill, text)


def rules_cell(source: str, kind: str, where: str) -> str:
    """The rules cell ``source`` (**规则 / Rules**, Chinese bullets, a blank line, English bullets)
    with the first bullet of each language replaced by the randomness rule of ``kind``."""
    rule = load_assignments()["randomness"][kind]
    lines = source.split("\n")
    bullets = [i for i, line in enumerate(lines) if line.startswith("- ")]
    zh = next((i for i in bullets if _IDEOGRAPH.search(lines[i])), None)
    en = next((i for i in bullets if zh is not None and i > zh and not lines[i - 1].strip()
               and not _IDEOGRAPH.search(lines[i])), None)
    if zh is None or en is None:
        raise SourceError(f"{where}: the rules cell needs a Chinese bullet list, a blank line and an English one")
    lines[zh], lines[en] = rule["zh"], rule["en"]
    return "\n".join(lines)


def assignment_targets() -> dict[Path, str]:
    """Every file with a part generated from course/_src/*.toml, mapped to the text it should have."""
    root = COURSE.parent
    result: dict[Path, str] = {}
    if not ASSIGNMENTS_FILE.exists():
        return result
    for page in (COURSE / "README.md", root / "autograder" / "STUDENT_README.md"):
        if page.exists():
            result[page] = render_page(page.read_text(encoding="utf-8"), str(page.relative_to(root)))
    for a in load_assignments()["assignment"]:
        path = root / "source" / a["name"] / f"{a['name']}.ipynb"
        if not path.exists():  # the student bundle has release/ only
            continue
        nb = json.loads(path.read_text(encoding="utf-8"))
        cell = next((c for c in nb["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "rules"), None)
        if cell is None:
            raise SourceError(f"{path.relative_to(root)}: no markdown cell with grade_id 'rules'")
        cell["source"] = _lines(rules_cell("".join(cell["source"]), a["randomness"], str(path.relative_to(root))))
        result[path] = json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    return result
