"""The two release packs a lecturer downloads: ``make dist`` = ``python -m autograder dist --out dist``.

* ``dp-course-student-<version>.zip``: what students get (the student bundle, :mod:`autograder.bundle`:
  lectures in Chinese and English, the six student notebooks, the launcher, the student requirements,
  ``helpers/``, a Chinese-first README), checked for solutions, hidden tests and the question bank's
  answers before it is written;
* ``dp-course-lecturer-<version>.zip``: what the lecturer teaches and grades with, **not for students**:
  the slide decks as offline HTML (open ``slides/index.html`` from disk), one PDF per deck and the
  editable PowerPoint files where ``make slides`` made them, the teacher's guide and the exam papers
  (Markdown and HTML), and the grader (``autograder/``, ``helpers/``, ``source/`` with the solutions and
  hidden tests, ``release/``, the nbgrader configuration, the requirements).

``<version>`` is the project's version and the commit (``0.1.0+g1a2b3c4``; ``.dirty`` when the checkout
has changes). Build the slides first (``make slides``: the Makefile's ``dist`` target does).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

from autograder.bundle import IGNORE, build_bundle

#: The grader's part of the lecturer pack: enough to install and run ``python -m autograder grade``.
GRADER = ("autograder", "helpers", "source", "release", "nbgrader_config.py", "nbgrader_templates",
          "requirements.txt", "requirements-student.txt", "pyproject.toml")

LECTURER_README = """# 差分隐私课程 · 教师包 / Differential privacy course · lecturer pack ({version})

**仅供教师使用：`grader/source/` 含全部参考答案和隐藏测试，请勿发给学生。**
**For instructors only: `grader/source/` holds every solution and hidden test; never give it to students.**

| 文件夹 / folder | 内容 / contents |
|---|---|
| `slides/` | 六套课堂幻灯片（2 课时 2 套、4 课时 4 套）：双击 `slides/index.html` 离线打开（F 全屏，S 演讲者视图）；`slides/pdf/` 每套一个 PDF（可上传到学习通、雨课堂、Moodle）；`slides/<课次>.pptx` 可编辑的 PowerPoint/WPS 文件 / the decks, offline; PDFs; editable PPTX beside each deck |
| `guide/` | 教师指南（`teacher-guide.html` 用浏览器打开，`.md` 为原文）与试卷、评分细则（`exam/`，若已生成）/ the teacher's guide, exam papers and rubrics |
| `grader/` | 自动评分程序：在 Linux 或 Windows 的 WSL2 中运行（见 `grader/autograder/README.md`）/ the sandboxed grader: Linux or WSL2 |

## 评分 / Grading

```bash
cd grader
python3 -m venv .venv && .venv/bin/pip install -r requirements.txt -e .
sudo apt-get install bubblewrap        # 学生代码在沙箱中运行 / student code runs sandboxed
.venv/bin/python -m autograder grade --assignment laplace --submissions 提交目录 --out 结果目录 --jobs 2
```

学生的提交如何从学习通、Moodle、Canvas 导入，成绩如何导回，见 `grader/autograder/README.md`。
How to import submissions from the LMS and export grades back: `grader/autograder/README.md`.
"""

PAGE = """<!doctype html>
<html lang="zh-CN"><head><meta charset="utf-8"><title>{title}</title>
<style>body{{max-width:60rem;margin:2rem auto;padding:0 1rem;font:16px/1.7 "Noto Sans CJK SC","Microsoft YaHei",
"PingFang SC",sans-serif}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:.3rem .5rem;
vertical-align:top}}code,pre{{font-family:"Noto Sans Mono CJK SC",Consolas,monospace;background:#f6f6f6}}
pre{{padding:.6rem;overflow-x:auto}}h1{{text-align:center}}
.opt{{white-space:nowrap}}
@page{{size:A4;margin:16mm 18mm}}
@media print{{body{{margin:0 auto}}h2{{break-after:avoid}}.answer,.q{{break-inside:avoid}}}}</style></head><body>
{body}
</body></html>
"""


def version(course: Path) -> str:
    """``<project version>+g<commit>`` (``.dirty`` with uncommitted changes), or the version alone."""
    text = (course / "pyproject.toml").read_text(encoding="utf-8")
    base = re.search(r'^version\s*=\s*"([^"]+)"', text, re.M).group(1)
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=course, capture_output=True,
                                text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=course,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return base
    return f"{base}+g{commit}{'.dirty' if dirty else ''}"


def markdown_page(source: Path, target: Path) -> None:
    """``source`` (Markdown) as a standalone HTML page a lecturer opens from disk."""
    import mistune

    text = source.read_text(encoding="utf-8")
    title = next((line.lstrip("# ").strip() for line in text.splitlines() if line.startswith("#")), source.stem)
    body = mistune.create_markdown(plugins=["table", "strikethrough"], escape=False)(text)
    target.write_text(PAGE.format(title=title, body=_questions(body)), encoding="utf-8")


_QUESTION = re.compile(r"<p><strong>\d+\.</strong>")
_OPTIONS = re.compile(r"<p>(A\. .*?)</p>", re.S)


def _questions(body: str) -> str:
    """An exam paper's questions, each with its options and answer space, as ``<section class="q">`` that
    printing keeps on one page (a question's answer space printed alone at the top of the next page, an
    option broken over two lines: session 15's walkthrough); other pages are left as they are."""
    starts = [m.start() for m in _QUESTION.finditer(body)]
    if not starts:
        return body
    ends = sorted({m.start() for m in re.finditer(r"<h[12]", body)} | {len(body)})
    out, at = [], 0
    for start in starts:
        end = min([e for e in ends if e > start] + [s for s in starts if s > start] or [len(body)])
        out += [body[at:start], '<section class="q">', body[start:end].rstrip(), "</section>\n"]
        at = end
    out.append(body[at:])
    return _OPTIONS.sub(_options, "".join(out))


def _options(match: re.Match) -> str:
    # short options on one line ("A. 链接攻击　B. 差分攻击 ..."): each kept whole; a long one wraps as text
    parts = match.group(1).split("　")
    if len(parts) < 2 or max(len(part) for part in parts) > 40:
        return match.group(0)
    return "<p>" + "　".join(f'<span class="opt">{part}</span>' for part in parts) + "</p>"


def _zip(folder: Path, archive: Path) -> Path:
    archive.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                z.write(path, path.relative_to(folder.parent).as_posix())
    return archive


def lecturer_pack(course: Path, out: Path, tag: str) -> Path:
    """Write ``out/dp-course-lecturer-<tag>.zip``; refuses without built slides."""
    html = course / "slides" / "html"
    if not (html / "index.html").is_file():
        raise ValueError(f"{html} has no decks: run `make slides` first")
    with tempfile.TemporaryDirectory(prefix="lecturer-pack-") as tmp:
        root = Path(tmp) / f"dp-course-lecturer-{tag}"
        shutil.copytree(html, root / "slides", ignore=IGNORE)
        pdfs = sorted((course / "slides" / "pdf").glob("*.pdf"))   # the PPTX files are in html/ already
        if pdfs:
            (root / "slides" / "pdf").mkdir(parents=True)
            for path in pdfs:
                shutil.copy2(path, root / "slides" / "pdf" / path.name)
        guide = root / "guide"
        guide.mkdir()
        for name in ("teacher-guide.md", "class_report.png"):
            if (course / "docs" / name).is_file():
                shutil.copy2(course / "docs" / name, guide / name)
        markdown_page(course / "docs" / "teacher-guide.md", guide / "teacher-guide.html")
        if (course / "docs" / "exam").is_dir():
            shutil.copytree(course / "docs" / "exam", guide / "exam", ignore=IGNORE)
            for paper in sorted((guide / "exam").rglob("*.md")):
                markdown_page(paper, paper.with_suffix(".html"))
        for name in GRADER:
            src = course / name
            if src.is_dir():
                shutil.copytree(src, root / "grader" / name, ignore=IGNORE)
            elif src.is_file():
                shutil.copy2(src, root / "grader" / name)
        (root / "README.md").write_text(LECTURER_README.format(version=tag), encoding="utf-8")
        return _zip(root, out / f"dp-course-lecturer-{tag}.zip")


def build_dist(out: Path, course: Path | None = None, student_only: bool = False) -> list[Path]:
    """Both packs (or the student's alone) into ``out``; returns their paths, student first."""
    from autograder.grade import default_course

    course = Path(course) if course else default_course()
    out = Path(out)
    tag = version(course)
    student = Path(build_bundle(out / f"dp-course-student-{tag}.zip", course)).resolve()
    return [student] if student_only else [student, lecturer_pack(course, out, tag).resolve()]
