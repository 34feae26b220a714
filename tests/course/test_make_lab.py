"""What `make lab` and nbgrader_config.py give a student and an instructor out of the box (issue 13).

* the exchange exists without any setup (a git-ignored folder of the course root when
  ``NBGRADER_EXCHANGE`` is unset; a missing ``NBGRADER_EXCHANGE`` folder is created);
* feedback made by ``nbgrader generate_feedback`` — the converter the Formgrader's
  "Generate feedback" button runs — has no hidden tests (nbgrader issue #917) and
  its math is MathML (no script, no CDN);
* the Formgrader's grading view uses the same local MathJax;
* the plotting backend: a kernel started by JupyterLab (``JPY_SESSION_NAME``) gets the
  live ipympl canvas, headless runs (nbclient, nbgrader) the inline one.

Each nbgrader command runs in a temporary course root made from the repository's
``nbgrader_config.py`` (tests/support/corpus.py), never in the repository itself.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
from tests.support import corpus as build

LOCAL_MATHJAX = "static/jupyter_server_mathjax/MathJax.js"


def _env_without_exchange(**extra):
    env = build.nbgrader_env(**extra)
    env.pop("NBGRADER_EXCHANGE", None)
    return env


@pytest.mark.nbgrader
def test_exchange_exists_without_setup(tmp_path, generated_laplace):
    course = shutil.copytree(generated_laplace, tmp_path / "course")   # after generate_assignment
    env = _env_without_exchange(HOME=str(tmp_path / "home"))
    build.run_nbgrader(course, "release_assignment", "laplace", "--force", env=env)
    assert (course / "nbgrader_exchange" / "dp-course" / "outbound" / "laplace" / "laplace.ipynb").exists()
    # the student side (same machine, started in the course root) fetches into dp-course/,
    # the one folder .gitignore lists for fetched assignments
    build.run_nbgrader(course, "fetch_assignment", "laplace", env=env)
    assert (course / "dp-course" / "laplace" / "laplace.ipynb").exists()
    assert "/dp-course/" in (ROOT / ".gitignore").read_text().splitlines()

    missing = tmp_path / "not" / "yet"
    env = build.nbgrader_env(HOME=str(tmp_path / "home"), NBGRADER_EXCHANGE=str(missing))
    build.run_nbgrader(course, "release_assignment", "laplace", "--force", env=env)
    assert (missing / "dp-course" / "outbound" / "laplace").is_dir()


@pytest.mark.nbgrader
def test_generate_feedback_hides_hidden_tests_and_uses_local_mathjax(tmp_path, generated_laplace):
    from autograder.render.feedback import hidden_lines, leaked_lines

    course = shutil.copytree(generated_laplace, tmp_path / "course")   # after generate_assignment
    env = _env_without_exchange(HOME=str(tmp_path / "home"))
    # alice hands in the instructor's solution (so every hidden test ran and passed)
    source = ROOT / "source" / "laplace" / "laplace.ipynb"
    submitted = course / "submitted" / "alice" / "laplace"
    submitted.mkdir(parents=True)
    shutil.copy(source, submitted / "laplace.ipynb")
    graded = build.run_nbgrader(course, "autograde", "laplace", "--force", env=env)
    assert "SAWarning" not in graded.stderr, graded.stderr[-2000:]
    build.run_nbgrader(course, "generate_feedback", "laplace", "--force", env=env)
    html = course / "feedback" / "alice" / "laplace" / "laplace.html"
    text = html.read_text(encoding="utf-8")

    secrets = [line for cell in nbformat.read(source, as_version=4).cells for line in hidden_lines(cell.source)]
    assert secrets, "the source notebook should have hidden tests"
    assert leaked_lines(html, secrets) == []
    assert "BEGIN HIDDEN TESTS" not in text
    # one renderer for both paths (issue 28): nbgrader's page is the trusted grader's, Chinese
    # first, every test cell named with its score and ✓; not nbgrader's anonymous English page
    out = tmp_path / "headless"
    subprocess.run([sys.executable, "-m", "autograder", "grade", "--assignment", "laplace", "--submissions",
                    str(course / "submitted"), "--out", str(out), "--jobs", "1", "--course", str(course),
                    "--quiet"], check=True, env=env, timeout=600)
    headless = (out / "feedback" / "alice" / "laplace" / "laplace.html").read_text(encoding="utf-8")
    score = re.compile(r'<div class="dp-score">.*?</div>', re.S)
    assert score.search(text) and score.search(text).group(0) == score.search(headless).group(0)
    summary = score.search(text).group(0)
    assert "得分 / Score: 10 / 10" in summary and summary.index("得分") < summary.index("Score")
    tests = [c.metadata["nbgrader"]["grade_id"] for c in nbformat.read(source, as_version=4).cells
             if c.metadata.get("nbgrader", {}).get("grade") and not c.metadata["nbgrader"].get("solution")]
    assert len(tests) >= 5 and all(f"<code>{t}</code>" in summary for t in tests)
    assert summary.count("✓") == len(tests) and "Test cell (Score" not in text
    # math is MathML when the page is made: no script, no network, no LaTeX left
    assert "<math" in text and "<script" not in text and "cdnjs" not in text and "cdn.jsdelivr" not in text
    assert not re.search(r"\$\\mathrm|\\\(|\$[^$<]+\$", text), "LaTeX left in the feedback"


def test_formgrader_pages_use_local_mathjax():
    """The Formgrader renders with nbgrader's 'formgrade' template, feedback with 'feedback':
    their mathjax macro is ours (local MathJax; no script at all for feedback, whose math is MathML)."""
    from nbconvert.exporters import HTMLExporter
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()
    for template in ("formgrade", "feedback"):
        exporter = HTMLExporter(config=config, template_name=template)
        found = exporter.environment.get_template("mathjax.html.j2").filename
        assert Path(found).parent == ROOT / "nbgrader_templates" / template, found
        macro = exporter.environment.get_template("mathjax.html.j2").module.mathjax()
        if template == "formgrade":
            assert LOCAL_MATHJAX in macro
        else:
            assert "<script" not in macro and "pre-wrap" in macro


def test_mathjax_files_are_installed():
    import jupyter_server_mathjax

    static = Path(jupyter_server_mathjax.__file__).parent / "static"
    assert (static / "MathJax.js").is_file() and (static / "config" / "TeX-AMS-MML_HTMLorMML-full.js").is_file()


@pytest.mark.parametrize("env, expected", [
    ({"JPY_SESSION_NAME": "/course/6.1-basics.ipynb"}, "widget"),                      # JupyterLab
    ({"JPY_SESSION_NAME": "/x.ipynb", "MPLBACKEND": "module://matplotlib_inline.backend_inline"}, "widget"),
    ({}, "inline"),                                                                     # nbclient, nbconvert
    ({"JPY_SESSION_NAME": "/x.ipynb", "NBGRADER_EXECUTION": "autograde"}, "inline"),    # nbgrader
    ({"JPY_SESSION_NAME": "/x.ipynb", "MPLBACKEND": "Agg"}, "inline"),                 # make test
])
def test_live_frontend_detection(monkeypatch, env, expected):
    from helpers.lectures import plots

    for name in ("JPY_SESSION_NAME", "MPLBACKEND", "NBGRADER_EXECUTION"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert ("widget" if plots._live_frontend() else "inline") == expected


def test_graded_explorers_draw_chinese_without_tofu():
    """The explorers' bilingual legends get a font that has the Chinese glyphs (the bundled
    Noto Sans CJK SC), in a fresh process as in a student's kernel (nothing else configured
    the fonts first): every character of every legend is in one of the fonts matplotlib
    falls back through for that text."""
    import subprocess
    import sys

    code = (
        "from matplotlib import font_manager\n"
        "from matplotlib.ft2font import FT2Font\n"
        "from helpers import mechanisms\n"
        "from helpers.lectures import explorers\n"
        "for box in (explorers.laplace_explorer(mechanisms.laplace_mechanism, n=2000),\n"
        "            explorers.exponential_explorer(mechanisms.exponential_mechanism, n=200),\n"
        "            explorers.rr_explorer(mechanisms.rr_perturb, repeats=50)):\n"
        "    texts = box.figure.axes[0].get_legend().get_texts()\n"
        "    assert any('你' in t.get_text() for t in texts)\n"
        "    for t in texts:\n"
        "        fonts = [FT2Font(str(f)) for f in font_manager.fontManager._find_fonts_by_props(t.get_fontproperties())]\n"
        "        tofu = [ch for ch in t.get_text() if ch.strip() and not any(f.get_char_index(ord(ch)) for f in fonts)]\n"
        "        assert not tofu, (t.get_text(), tofu, [f.family_name for f in fonts])\n"
        "print('ok')\n"
    )
    env = dict(os.environ, MPLBACKEND="Agg")
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0 and "ok" in result.stdout, result.stderr[-2000:]
