"""Execute every lecture notebook of sections 6.1-6.4 top to bottom, headless, in English (the
Chinese ones run in JupyterLab in tests/browser/test_lectures.py); check both languages' structure.

Each notebook must finish in under 60 s (the course's limit; most take a few seconds).
MPLBACKEND=Agg makes ``helpers.lectures.plots.use_backend`` choose the inline backend, the path
that nbgrader and CI take.  One extra run forces the ipympl path
(``DP_COURSE_BACKEND=widget``) to check that ``%matplotlib widget`` does not break a
headless kernel.  (The 6.5 / depth-lab notebooks are executed by their own test file.)
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from tests.support.notebooks import NotebookRun, assert_within_limit, run_notebook

ROOT = Path(__file__).resolve().parents[2]
COURSE = ROOT / "course"
LECTURES = sorted(COURSE.glob("6.[1-4]-*.ipynb")) + sorted((COURSE / "en").glob("6.[1-4]-*.ipynb"))
# Run headless in English only: the Chinese notebooks (the same code, built from the same
# sources by course/build.py) run in JupyterLab in tests/browser/test_lectures.py, Run All with
# no error output, never both for the same thing.
HEADLESS = [p for p in LECTURES if p.parent.name == "en"]


def _run(path: Path, monkeypatch, backend: str | None = None) -> tuple[nbformat.NotebookNode, NotebookRun]:
    monkeypatch.setenv("MPLBACKEND", "Agg")
    if backend:
        monkeypatch.setenv("DP_COURSE_BACKEND", backend)
    else:
        monkeypatch.delenv("DP_COURSE_BACKEND", raising=False)
    run = run_notebook(path)
    return run.nb, run


def _outputs_text(nb) -> str:
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            parts.append(out.get("text", "") if out.get("output_type") == "stream" else str(out.get("data", {}).get("text/plain", "")))
    return "\n".join(parts)


def test_the_four_sections_are_built_in_both_languages():
    stems = {p.stem for p in LECTURES if p.parent == COURSE}
    en = {p.stem for p in LECTURES if p.parent != COURSE}
    assert {s.split("-")[0] for s in stems} == {"6.1", "6.2", "6.3", "6.4"}
    assert stems == en


@pytest.mark.parametrize("path", LECTURES, ids=[str(p.relative_to(COURSE)) for p in LECTURES])
def test_notebook_structure(path: Path):
    """Goals and the chapter's schedule first; setup cell with set_lang; answers hidden; no
    global numpy randomness and no mechanism defined in the notebook."""
    nb = nbformat.read(path, as_version=4)
    zh = path.parent == COURSE
    first = nb.cells[0].source
    assert ("学习目标" if zh else "Learning goals") in first
    assert ("2 课时" if zh else "2-hour plan") in first and ("4 课时" if zh else "4-hour plan") in first
    setup = next(c for c in nb.cells if c.cell_type == "code").source
    assert f'set_lang("{"zh" if zh else "en"}")' in setup and "use_backend()" in setup and "default_rng(" in setup
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert markdown.count("<details>") >= 2 and markdown.count("<details>") == markdown.count("</details>")
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    for forbidden in ("np.random.laplace", "np.random.seed", "np.random.rand", "def laplace", "def exponential",
                      "def rr_", "np.random.exponential"):
        assert forbidden not in code, forbidden


@pytest.mark.notebook
@pytest.mark.parametrize("path", HEADLESS, ids=[str(p.relative_to(COURSE)) for p in HEADLESS])
def test_notebook_runs_headless(path: Path, monkeypatch):
    nb, run = _run(path, monkeypatch)
    print(f"{path.relative_to(ROOT)}: {run.total_s:.1f} s ({run.describe()})")
    assert_within_limit(run, path.name)
    text = _outputs_text(nb)
    assert "Traceback" not in text
    assert "inline" in text  # the setup cell printed the backend it chose
    # headless fallback: every slider figure was rendered as a PNG inside its Output widget
    state = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    views = [m for m in state.values() if m.get("model_name") == "OutputModel"
             and "image/png" in str(m["state"].get("outputs"))]
    sliders = sum(cell.source.count("widgets.") for cell in nb.cells if cell.cell_type == "code"
                  and "live_" in cell.source and "widget(" in cell.source)
    assert len(views) >= sliders >= 1, (len(views), sliders)


@pytest.mark.notebook
def test_widget_backend_path_runs_headless(monkeypatch):
    """``%matplotlib widget`` (ipympl) in a kernel without a browser: must not break."""
    path = COURSE / "en" / "6.1-basics.ipynb"
    nb, run = _run(path, monkeypatch, backend="widget")
    assert "widget" in _outputs_text(nb)
    assert_within_limit(run, path.name)
