"""Plotting for the lecture notebooks: one function per figure of the chapter.

Each function draws on an ``Axes`` it is given (or makes one) and returns the
artists it created, so the interactive versions in :mod:`helpers.lectures.widgets`
can reuse it and then only update the artists' data when a slider moves.
Labels go through :func:`helpers.i18n.tr`, so the same code draws Chinese or
English figures.

:func:`use_backend` chooses how slider figures are shown: a live ``ipympl``
canvas each in a JupyterLab kernel, static PNGs headless (tests, nbgrader), so
that the same notebook runs in both. Figures without sliders are inline PNGs
everywhere.
"""

from __future__ import annotations

import itertools
import os
from typing import Any

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from helpers._validation import fail
from helpers.fonts import cjk_available as _cjk_available  # the name label() looks up (tests replace it)
from helpers.fonts import SMALL_TEXT_PT, TITLE_PT, configure_fonts
from helpers.i18n import get_lang, tr

__all__ = [
    "use_backend",
    "configure_fonts",
    "SMALL_TEXT_PT",
    "TITLE_PT",
    "label",
    "set_bar_heights",
    "is_live_backend",
    "new_figure",
    "plot_density_pair",
    "plot_laplace_densities",
    "plot_histogram_vs_pdf",
    "plot_bars",
    "plot_grouped_bars",
    "plot_uniform_noise_overlap",
    "plot_pmf_pair",
    "plot_composition",
    "plot_lcg",
    "plot_sensitivity",
    "plot_laplace_generators",
    "plot_variance_check",
    "plot_revenue",
    "plot_likelihood",
    "plot_rr_p_epsilon",
    "plot_variance_vs_epsilon",
    "plot_release_models",
]

#: Widest live (ipympl) figure in CSS pixels: fits JupyterLab's output area next to the file browser.
LIVE_MAX_WIDTH_PX = 860

def _live_frontend() -> bool:
    """True in a kernel that a Jupyter server started for a browser session.

    ipykernel sets ``MPLBACKEND`` to its inline backend whenever the variable is
    empty, so that variable cannot tell a browser from a headless run.  What does:
    jupyter_server starts every notebook/console kernel with ``JPY_SESSION_NAME``
    (the document's path) in its environment; nbclient, nbconvert and nbgrader
    (which also sets ``NBGRADER_EXECUTION``) start kernels without it.
    """
    if os.environ.get("NBGRADER_EXECUTION"):
        return False
    if os.environ.get("MPLBACKEND", "").lower() == "agg":  # an explicit headless choice (make test)
        return False
    return bool(os.environ.get("JPY_SESSION_NAME"))


def use_backend(mode: str | None = None) -> str:
    """Select the matplotlib backend for this notebook and return "widget" or "inline".

    ``widget`` (ipympl's live canvas, redrawn in place) is used in a kernel that
    JupyterLab started for a browser (see :func:`_live_frontend`) when ipympl is
    installed; headless runs (nbclient, nbconvert, nbgrader, ``MPLBACKEND=Agg``)
    get ``inline``.  ``mode`` or the environment variable ``DP_COURSE_BACKEND``
    ("widget" / "inline") forces a choice.  Outside IPython nothing is changed
    and "inline" is returned.
    """
    configure_fonts()
    mode = mode or os.environ.get("DP_COURSE_BACKEND") or None
    if mode not in (None, "widget", "inline"):
        raise fail("use_backend", "mode", "None, 'widget' or 'inline'", mode)
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency of the course
        return "inline"
    shell = get_ipython()
    if shell is None or not hasattr(shell, "kernel"):
        return "inline"
    global _LIVE_CANVAS
    if mode is None:
        mode = "widget" if _live_frontend() else "inline"
    _LIVE_CANVAS = False
    if mode == "widget":
        try:
            import ipympl.backend_nbagg  # noqa: F401

            _LIVE_CANVAS = True
        except Exception:  # ipympl missing or broken: the static fallback still teaches
            mode = "inline"
    # Figures without sliders stay static PNGs (inline): they scale with the window, are
    # cropped to their content and are kept in a saved notebook. Slider figures get their
    # own ipympl canvas from new_figure() when the live canvas is available.
    shell.run_line_magic("matplotlib", "inline")
    configure_fonts()
    return mode


_LIVE_CANVAS = False  # set by use_backend(): slider figures get ipympl canvases


def is_live_backend() -> bool:
    """True when slider figures are ipympl canvases (use_backend() chose "widget", or ``%matplotlib widget``)."""
    if _LIVE_CANVAS:
        return True
    backend = matplotlib.get_backend().lower()
    return "ipympl" in backend or backend == "widget"


_FIGURE_NUMBERS = itertools.count(1000)


def new_figure(figsize: tuple[float, float] = (7.0, 3.6), nrows: int = 1, ncols: int = 1,
               **kwargs: Any) -> tuple[Figure, Any]:
    """A figure that is not auto-displayed (the caller shows it), and its axes.

    With ipympl the figure gets a live canvas widget; otherwise a plain Agg
    canvas (no pyplot registration, so nothing leaks into the inline output).
    """
    if is_live_backend():
        from ipympl.backend_nbagg import FigureManager

        from helpers.lectures.live_canvas import Canvas  # ipympl's, with a cheaper frame encoder

        fig = Figure(figsize=figsize)
        # A canvas widget of its own, not registered with pyplot (nothing is auto-shown).
        FigureManager(Canvas(fig), next(_FIGURE_NUMBERS))
        fig.canvas.header_visible = False
        fig.canvas.toolbar_visible = False
        fig.canvas.resizable = False
        # An ipympl canvas keeps its pixel size (a PNG would be scaled down to the output
        # area): keep wide figures within a notebook's output width on a laptop screen.
        fig.set_dpi(min(fig.dpi, LIVE_MAX_WIDTH_PX / figsize[0]))
    else:
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        fig = Figure(figsize=figsize)
        FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, **kwargs)
    fig.set_layout_engine("constrained")
    return fig, axes


# --------------------------------------------------------------------------- figures


def plot_density_pair(ax: Axes, x: np.ndarray, pdf_d: np.ndarray, pdf_d2: np.ndarray,
                      label_d: str = "M(D)", label_d2: str = "M(D′)") -> dict[str, Any]:
    """Two output densities (Definition 6-1): M(D) and M(D′) on one axes."""
    (line_d,) = ax.plot(x, pdf_d, color="C0", lw=2, label=label_d)
    (line_d2,) = ax.plot(x, pdf_d2, color="C3", lw=2, ls="--", label=label_d2)
    ax.set_xlabel(label(zh="查询输出 y", en="query output y"))
    ax.set_ylabel(label(zh="概率密度", en="probability density"))
    ax.legend(loc="upper right")
    return {"pdf_d": line_d, "pdf_d2": line_d2}


def plot_laplace_densities(ax: Axes, x: np.ndarray, scales: list[float], pdf) -> list[Any]:
    """Fig. 6-3: Laplace densities Lap(x|b) for several scales b."""
    lines = []
    for i, b in enumerate(scales):
        (line,) = ax.plot(x, pdf(x, b), lw=2, color=f"C{i}", label=f"b = {b:g}")
        lines.append(line)
    ax.set_xlabel("x")
    ax.set_ylabel("Lap(x | b)")
    ax.legend()
    ax.set_title(label(zh="图 6-3 拉普拉斯分布概率密度函数", en="Fig. 6-3 Laplace probability density"))
    return lines


def plot_histogram_vs_pdf(ax: Axes, samples: np.ndarray, x: np.ndarray, pdf: np.ndarray,
                          bins: np.ndarray, name: str, color: str = "C0") -> dict[str, Any]:
    """Histogram of samples (as a density) against the density they should follow."""
    _, _, patches = ax.hist(samples, bins=bins, density=True, alpha=0.45, color=color, label=name)
    (line,) = ax.plot(x, pdf, color="k", lw=1.5, label=label(zh="拉普拉斯密度", en="Laplace density"))
    ax.legend(fontsize=SMALL_TEXT_PT)
    return {"patches": patches, "pdf": line}


def plot_bars(ax: Axes, labels: list[str], heights: np.ndarray, color: str = "C0",
              annotate: bool = True, fmt: str = "{:.3g}") -> dict[str, Any]:
    """Bar chart whose heights (and annotations) a widget can later update."""
    bars = ax.bar(labels, heights, color=color)
    texts = []
    if annotate:
        for bar, h in zip(bars, heights):
            texts.append(ax.text(bar.get_x() + bar.get_width() / 2, h, fmt.format(h),
                                 ha="center", va="bottom", fontsize=SMALL_TEXT_PT))
    return {"bars": bars, "texts": texts}


def plot_grouped_bars(ax: Axes, labels: list[str], series: dict[str, np.ndarray],
                      width: float = 0.38, legend: bool = True) -> dict[str, Any]:
    """Side-by-side bars, one group per label, one colour per series (``legend=False``: a row of
    panels shows one legend, where no bar is under it)."""
    positions = np.arange(len(labels))
    containers = {}
    k = len(series)
    for i, (name, heights) in enumerate(series.items()):
        offset = (i - (k - 1) / 2) * width
        containers[name] = ax.bar(positions + offset, heights, width=width, label=name, color=f"C{i}")
    ax.set_xticks(positions, labels)
    if legend:
        ax.legend(fontsize=SMALL_TEXT_PT)
    return containers


def plot_uniform_noise_overlap(ax: Axes, answers_d: np.ndarray, answers_d2: np.ndarray) -> dict[str, Any]:
    """§6.1.2: f'(5) with uniform noise on [-1, 1] under D (true 3) and D′ (true 2).

    The shaded band (3, 4] is reachable only from D: there the ratio of Definition 6-1 is infinite.
    """
    edges = np.linspace(0.5, 4.5, 81)
    _, _, p1 = ax.hist(answers_d, bins=edges, density=True, alpha=0.5, color="C0",
                       label=label(zh="D：含 Alice（患癌），计数 3", en="D: Alice (cancer) included, count 3"))
    _, _, p2 = ax.hist(answers_d2, bins=edges, density=True, alpha=0.5, color="C3",
                       label=label(zh="D′：去掉 Alice，计数 2", en="D′: Alice removed, count 2"))
    band = ax.axvspan(3, 4, color="C0", alpha=0.12, lw=0)
    ax.axvspan(1, 2, color="C3", alpha=0.12, lw=0)
    ax.text(3.5, 0.58, label(zh="只可能来自 D", en="only from D"), ha="center", fontsize=SMALL_TEXT_PT)
    ax.text(1.5, 0.58, label(zh="只可能来自 D′", en="only from D′"), ha="center", fontsize=SMALL_TEXT_PT)
    ax.set_ylim(0, 0.9)
    ax.set_xlabel("f'(5) = f(5) + U(-1, 1)")
    ax.set_ylabel(label(zh="概率密度", en="density"))
    ax.legend(fontsize=SMALL_TEXT_PT, loc="upper left")
    return {"d": p1, "d2": p2, "band": band}


def plot_pmf_pair(ax: Axes, outputs: np.ndarray, pmf_d: np.ndarray, pmf_d2: np.ndarray,
                  bound: float) -> dict[str, Any]:
    """Theorem 6-1: probabilities of the rounded output under D and D′ (bars), ratio (line)."""
    bars = plot_grouped_bars(ax, [str(o) for o in outputs], {"round(M(D))": pmf_d, "round(M(D′))": pmf_d2})
    ax.legend(fontsize=SMALL_TEXT_PT, loc="upper left")
    ax.set_xlabel(label(zh="取整后的输出", en="rounded output"))
    ax.set_ylabel(label(zh="概率", en="probability"))
    twin = ax.twinx()
    (ratio,) = twin.plot(np.arange(len(outputs)), pmf_d / pmf_d2, "k.-", label=label(zh="比值", en="ratio"))
    twin.axhline(bound, color="C2", ls=":", label=r"$e^{\varepsilon}$")
    twin.axhline(1 / bound, color="C2", ls=":")
    twin.set_ylim(0, bound * 1.6)  # the legend sits above the ratio's e^ε plateau, not on it
    twin.set_ylabel(label(zh="概率之比 D / D′", en="ratio D / D′"))
    twin.legend(fontsize=SMALL_TEXT_PT, loc="upper right")
    return {"bars": bars, "ratio": ratio}


def plot_composition(ax: Axes, epsilons: list[float]) -> dict[str, Any]:
    """Theorems 6-2 and 6-3: total ε of the same queries, sequential (sum) vs parallel (max)."""
    epsilons = list(epsilons)
    bottom = 0.0
    stacks = []
    for i, e in enumerate(epsilons):
        stacks.append(ax.bar(0, e, bottom=bottom, color=f"C{i}", edgecolor="w", label=f"M{i + 1}: ε = {e:g}"))
        bottom += e
    for i, e in enumerate(epsilons):
        stacks.append(ax.bar(1 + (i - (len(epsilons) - 1) / 2) * 0.25, e, width=0.22, color=f"C{i}"))
    ax.axhline(max(epsilons), xmin=0.55, color="k", ls="--", lw=1)
    ax.set_xticks([0, 1], [label(zh=f"串行：总和 {sum(epsilons):g}", en=f"sequential: sum {sum(epsilons):g}"),
                           label(zh=f"并行：最大 {max(epsilons):g}", en=f"parallel: max {max(epsilons):g}")])
    ax.set_ylabel(label(zh="总隐私损失 ε", en="total privacy loss ε"))
    ax.legend(fontsize=SMALL_TEXT_PT, loc="upper right")
    return {"bars": stacks}


def plot_lcg(ax_hist: Axes, ax_pairs: Axes, u: np.ndarray) -> dict[str, Any]:
    """§6.2.2: the LCG's uniforms — flat histogram, but consecutive pairs fall on a lattice."""
    _, _, patches = ax_hist.hist(u, bins=50, density=True, color="C0", alpha=0.7)
    ax_hist.axhline(1, color="k", lw=1)
    ax_hist.set_xlabel("u")
    ax_hist.set_ylabel(label(zh="密度", en="density"))
    ax_hist.set_title(label(zh="直方图：看起来很均匀", en="histogram: looks uniform"), fontsize=TITLE_PT)
    # zoom on u_n < 0.002: u_{n+1} = 2045 u_n + 1/m (mod 1), so about 4 lines are visible
    near = u[:-1] < 0.002
    pairs = ax_pairs.scatter(u[:-1][near], u[1:][near], s=4, color="C3")
    ax_pairs.set_xlim(0, 0.002)
    ax_pairs.set_ylim(0, 1)
    ax_pairs.set_xlabel("$u_n$")
    ax_pairs.set_ylabel("$u_{n+1}$")
    ax_pairs.set_title(label(zh="相邻两数（$u_n$，$u_{n+1}$）：落在直线上", en="pairs ($u_n$, $u_{n+1}$): on straight lines"),
                       fontsize=TITLE_PT)
    return {"patches": patches, "pairs": pairs}


def plot_sensitivity(ax: Axes, diffs: dict[str, np.ndarray]) -> dict[str, Any]:
    """Definition 6-2: |f(D) − f(D′)| over every neighbour D′; its maximum is GS_f."""
    artists = {}
    for i, (name, d) in enumerate(diffs.items()):
        artists[name] = ax.plot(np.arange(1, len(d) + 1), d, "o-", color=f"C{i}",
                                label=f"{name}: GS = {np.max(d):g}")[0]
    ax.set_xlabel(label(zh="被改动的记录编号（每个编号对应一个相邻数据集 D′）",
                        en="record changed (one neighbour D′ per record)"))
    ax.set_ylabel("|f(D) − f(D′)|")
    ax.set_ylim(0, 3.5)
    ax.legend(fontsize=SMALL_TEXT_PT)
    return artists


def plot_laplace_generators(axes, samples: dict[str, np.ndarray], b: float, pdf) -> dict[str, Any]:
    """§6.2.2: histograms of several generators against the Laplace density Lap(x | b)."""
    x = np.linspace(-6 * b - 1, 6 * b + 1.5, 400)
    edges = np.linspace(x[0], x[-1], 81)
    out = {}
    for i, (ax, (name, values)) in enumerate(zip(np.atleast_1d(axes), samples.items())):
        # The panel's title names the generator; a short legend stays clear of the peak at 0.
        out[name] = plot_histogram_vs_pdf(ax, values, x, pdf(x, b), edges, label(zh="样本", en="samples"),
                                          color=f"C{i}")
        ax.axvline(float(np.mean(values)), color="C3", ls="--", lw=1)
        ax.set_ylim(0, 1.5 * float(np.max(pdf(x, b))))  # the legend above the density's peak
        ax.set_title(label(zh=f"{name}\n样本均值 {np.mean(values):+.3f}", en=f"{name}\nsample mean {np.mean(values):+.3f}"),
                     fontsize=TITLE_PT)
        ax.set_xlabel("x")
    return out


def plot_variance_check(ax: Axes, ns: np.ndarray, simulated: dict[str, np.ndarray],
                        formula: dict[str, np.ndarray]) -> dict[str, Any]:
    """§6.4: simulated variance of the RR estimate (dots) against the formula (lines), log-log."""
    out = {}
    for i, name in enumerate(simulated):
        out[name] = ax.loglog(ns, formula[name], "-", color=f"C{i}", label=f"{name}")[0]
        ax.loglog(ns, simulated[name], "o", color=f"C{i}", ms=5)
    ax.set_xlabel("n")
    ax.set_ylabel("Var(N̂)")
    ax.set_title(label(zh="点：模拟；线：公式 n p(1−p)/(2p−1)²", en="dots: simulation; lines: n p(1−p)/(2p−1)²"),
                 fontsize=TITLE_PT)
    ax.legend(fontsize=SMALL_TEXT_PT)
    return out


def plot_revenue(ax: Axes, prices: np.ndarray, revenue: np.ndarray, marks: dict[str, float]) -> dict[str, Any]:
    """§6.3.1 pumpkins: revenue as a function of the price (a step function), with marked prices."""
    (line,) = ax.plot(prices, revenue, color="C0", lw=2)
    for i, (name, price) in enumerate(marks.items()):
        r = float(np.interp(price, prices, revenue))
        ax.plot([price], [r], "o", color=f"C{i + 1}", label=f"{name}: {price:g} → {r:.2f}")
    ax.set_xlabel(label(zh="定价（元）", en="price (yuan)"))
    ax.set_ylabel(label(zh="收益（元）", en="revenue (yuan)"))
    ax.set_ylim(0, 3.6)
    ax.legend(fontsize=SMALL_TEXT_PT, loc="upper right")
    return {"line": line}


def plot_likelihood(ax: Axes, pis: np.ndarray, loglik: np.ndarray, pi_hat: float) -> dict[str, Any]:
    """§6.4.2: the log-likelihood ln L(π) of the randomized answers, maximal at the formula's π̂."""
    (line,) = ax.plot(pis, loglik, color="C0", lw=2, label="ln L(π)")
    mark = ax.axvline(pi_hat, color="C3", ls="--", label=f"π̂ = {pi_hat:.3f}")
    ax.set_xlabel("π")
    ax.set_ylabel("ln L(π)")
    ax.legend(fontsize=SMALL_TEXT_PT)
    return {"line": line, "mark": mark}


def plot_rr_p_epsilon(ax: Axes, epsilons: np.ndarray, p: np.ndarray,
                      marks: dict[str, tuple[float, float]]) -> dict[str, Any]:
    """Theorem 6-6: keep probability p = e^ε/(e^ε+1), i.e. ε = ln(p/(1−p)), with marked schemes."""
    (line,) = ax.plot(epsilons, p, color="C0", lw=2, label=r"$p = e^{\varepsilon}/(e^{\varepsilon}+1)$")
    for i, (name, (e, pp)) in enumerate(marks.items()):
        ax.plot([e], [pp], "o", color=f"C{i + 1}", label=f"{name}: p = {pp:.3g}, ε = {e:.3g}")
    ax.set_xlabel("ε")
    ax.set_ylabel(label(zh="如实回答的概率 p", en="probability p of answering truthfully"))
    ax.set_ylim(0.45, 1.0)
    ax.legend(fontsize=SMALL_TEXT_PT, loc="lower right")
    return {"line": line}


def plot_variance_vs_epsilon(ax: Axes, epsilons: np.ndarray, formula: np.ndarray,
                             sim_eps: np.ndarray, simulated: np.ndarray, n: int) -> dict[str, Any]:
    """§6.4: Var(N̂) = n e^ε/(e^ε − 1)² against ε at fixed n (line), with simulated points."""
    (line,) = ax.semilogy(epsilons, formula, color="C0", lw=2, label=r"$n\,e^{\varepsilon}/(e^{\varepsilon}-1)^2$")
    ax.semilogy(sim_eps, simulated, "o", color="C3", label=label(zh="模拟", en="simulation"))
    ax.set_xlabel("ε")
    ax.set_ylabel("Var(N̂)")
    ax.set_title(f"n = {n}", fontsize=TITLE_PT)
    ax.legend(fontsize=SMALL_TEXT_PT)
    return {"line": line}


def plot_release_models(ax: Axes, ks: np.ndarray, interactive_sd: np.ndarray, release_sd: np.ndarray,
                        sim_interactive: np.ndarray | None = None, sim_release: np.ndarray | None = None,
                        epsilon: float = 1.0) -> dict[str, Any]:
    """§6.1.4: error of each answer vs number of queries k, total budget ε fixed.

    Interactive: every query gets ε/k, so its noise grows with k; non-interactive: one
    release with ε, every later query is post-processing and as accurate as the first.
    """
    (inter,) = ax.loglog(ks, interactive_sd, "-", color="C3",
                         label=label(zh=f"交互式：每次 ε/k（总 ε = {epsilon:g}）", en=f"interactive: ε/k each (total ε = {epsilon:g})"))
    (rel,) = ax.loglog(ks, release_sd, "-", color="C0",
                       label=label(zh=f"非交互式：一次发布 ε = {epsilon:g}", en=f"non-interactive: one release, ε = {epsilon:g}"))
    if sim_interactive is not None:
        ax.loglog(ks, sim_interactive, "o", color="C3", ms=4)
    if sim_release is not None:
        ax.loglog(ks, sim_release, "o", color="C0", ms=4)
    ax.set_xlabel(label(zh="回答的查询数 k", en="number of queries answered k"))
    ax.set_ylabel(label(zh="每个答案的噪声标准差", en="noise sd of each answer"))
    ax.legend(fontsize=SMALL_TEXT_PT)
    return {"interactive": inter, "release": rel}


def set_bar_heights(bars, heights: np.ndarray, texts: list | None = None, fmt: str = "{:.3g}") -> None:
    """Update a bar container (and its value labels) in place."""
    for i, (bar, h) in enumerate(zip(bars, heights)):
        bar.set_height(h)
        if texts:
            texts[i].set_y(h)
            texts[i].set_text(fmt.format(h))


def label(zh: str, en: str) -> str:
    """Text drawn in a figure: Chinese in a Chinese notebook *if* a CJK font is installed.

    The course installs Noto Sans CJK SC (``mplfonts`` in requirements.txt).
    Should no CJK font be found, matplotlib would draw empty boxes, so the
    English text is used instead.  Printed text uses :func:`helpers.i18n.tr` unconditionally.
    """
    if get_lang() == "zh" and _cjk_available():
        configure_fonts()  # a figure built outside use_backend() must find the glyphs too
        return zh
    return en


def language() -> str:
    """The language figures are labelled in (for captions built in code)."""
    return get_lang()
