"""Slider figures for the lecture notebooks (ipywidgets + matplotlib).

Every builder returns a :class:`LiveFigure` and displays nothing; the
notebook ends its cell with ``live.widget``.  The figure is created once;
moving a slider calls ``live.update(**slider_values)`` — a plain function of
the parameters that only changes the artists' data (axis limits are fixed,
so nothing jumps) — and then redraws:

* in a live JupyterLab kernel (``helpers.lectures.plots.use_backend()`` returned
  "widget") the figure has its own ipympl canvas widget, redrawn in place; a figure with one
  slider over a fixed list of values is instead rendered once per value and drawn by the
  browser (:mod:`helpers.lectures.browser_frames`: no kernel work per move);
* headless, the figure is rendered to a PNG in an ``Output`` widget at least
  as tall as the figure (``clear_output(wait=True)``, no flicker, nothing cut).

Errors raised while updating are printed in the widget's ``errors`` output
(never lost in the log console).  Random draws are made once, in the
builder, and only rescaled when ε moves, so the picture changes because ε
changed and not because new noise was drawn.

A slider move reaches the kernel as a widget message, and a kernel handles its messages in
order: while a cell runs (Run All still working through the cells below, or a second page on
the same kernel) the move waits for it, and the figure redraws only when the kernel is free
(measured: an update sent during a 5 s cell is handled 4.8 s later). That, not the redraw,
is the "figure stuck for 25–30 s" once seen in 6.2 and 6.4 (their Run All takes that long on
a loaded machine). A fast drag never builds a queue: ipywidgets' front end keeps one update
per widget in flight and merges the values moved meanwhile into the next one
(tests/browser/test_lectures.py checks both).

Tests call ``live.update(...)`` directly and inspect ``live.artists``;
``python -m helpers.lectures.widgets_bench`` times the redraws.
"""

from __future__ import annotations

import io
import itertools
import traceback
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Callable, Sequence

import ipywidgets as W
import numpy as np
import traitlets

from helpers import mechanisms as mech
from helpers.fonts import SMALL_TEXT_PT, TITLE_PT
from helpers.i18n import tr  # widget text; figure text uses label (CJK-font aware)
from helpers.lectures.plots import is_live_backend, label, new_figure, set_bar_heights
from helpers.lectures.browser_frames import frames_view, single_selection
from helpers.lectures.text_cache import TextPixelCache

__all__ = [
    "LiveFigure",
    "epsilon_slider",
    "RoundLogSlider",
    "round_log_values",
    "dp_ratio_widget",
    "laplace_density_widget",
    "averaging_attack_widget",
    "noisy_dataset_widget",
    "histogram_release_widget",
    "exponential_vote_widget",
    "rr_correction_widget",
    "png_bytes",
]


_SERIALS = itertools.count(1)


@dataclass
class LiveFigure:
    """A figure with sliders: what a builder returns (nothing is displayed).

    Attributes
    ----------
    widget : ipywidgets.Widget
        The box to display (sliders, figure, error output).
    sliders : dict
        Slider widgets by parameter name; setting ``.value`` redraws.
    fig : matplotlib.figure.Figure
    artists : dict
        The artists ``update`` changes (lines, bars, texts).  They are
        *animated*: a redraw restores the cached static background (axes,
        ticks, legend) and draws only these (blitting), which keeps a slider
        move far below 100 ms.
    update : callable
        ``update(**values)``: recompute and set the artists' data; returns a
        dict of the numbers shown (so tests can check them).
    errors : ipywidgets.Output
        Where an exception raised during an update is shown.
    """

    widget: Any
    sliders: dict[str, Any]
    fig: Any
    artists: dict[str, Any]
    update: Callable[..., dict]
    errors: Any
    view: Any = None
    last: dict = field(default_factory=dict)
    _background: Any = None
    _animated: list = field(default_factory=list)
    _texts: TextPixelCache = field(default_factory=TextPixelCache)
    serial: int = field(default_factory=lambda: next(_SERIALS))    # creation order (docs/measure_sliders.py)

    def values(self) -> dict[str, Any]:
        return {name: s.value for name, s in self.sliders.items()}

    def redraw(self) -> dict:
        """Update from the current slider values and refresh the display."""
        self.last = self.update(**self.values())
        self.blit()
        if not is_live_backend():
            _show_png(self.fig, self.view)
        return self.last

    def blit(self) -> None:
        """Draw the animated artists over the cached background (full draw the first time)."""
        canvas = self.fig.canvas
        if self._background is None:
            if is_live_backend():
                # Not shown yet: drawing an ipympl canvas before its view exists leaves the
                # view at 0x0 px. The first display triggers a full draw (see _on_draw).
                return
            canvas.draw()  # the draw_event handler caches the background and draws the artists
        else:
            canvas.restore_region(self._background)
            self._draw_animated()
        canvas.blit(self.fig.bbox)

    def _draw_animated(self) -> None:
        from matplotlib.text import Text

        for artist in self._animated:
            if isinstance(artist, Text):
                self._texts.draw(self.fig, artist)   # the numbers' text: 3-8 ms to draw, a copy if seen before
            else:
                self.fig.draw_artist(artist)

    def _on_draw(self, event) -> None:
        # After any full draw (first display, resize): re-cache the background
        # (animated artists are left out of it) and put the artists back on top.
        canvas = self.fig.canvas
        if self.fig.get_layout_engine() is not None and not _frozen(self.fig):
            # Solve the constrained layout once (this draw did), then freeze it: re-solving
            # on every slider move costs more than the redraw, and a frozen layout cannot jump.
            self.fig.set_layout_engine("none")
        self._background = canvas.copy_from_bbox(self.fig.bbox)
        self._draw_animated()

    def image(self) -> np.ndarray:
        """The current RGBA pixels (what a browser would show); tests compare these."""
        return np.asarray(self.fig.canvas.buffer_rgba()).copy()


def _in_kernel() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover
        return False
    shell = get_ipython()
    return shell is not None and hasattr(shell, "kernel")


def png_bytes(fig) -> bytes:
    """PNG of the figure's current canvas buffer (no re-render: blitted pixels as they are)."""
    from matplotlib.image import imsave

    buffer = io.BytesIO()
    imsave(buffer, np.asarray(fig.canvas.buffer_rgba()), format="png")
    return buffer.getvalue()


def _show_png(fig, view) -> None:
    if view is None or not _in_kernel():
        return  # plain Python (tests, benchmark): the pixels are already in the canvas buffer
    from IPython.display import Image, display

    data = png_bytes(fig)
    with view:
        view.clear_output(wait=True)
        display(Image(data=data, format="png"))


def _frozen(fig) -> bool:
    from matplotlib.layout_engine import PlaceHolderLayoutEngine

    return isinstance(fig.get_layout_engine(), PlaceHolderLayoutEngine)


def _flatten(artists: dict[str, Any]) -> list:
    from matplotlib.artist import Artist
    from matplotlib.container import Container

    out = []
    for value in artists.values():
        items = value if isinstance(value, (list, tuple, Container)) else [value]
        out.extend(a for a in items if isinstance(a, Artist))
    return sorted(out, key=lambda a: a.get_zorder())


def _assemble(fig, sliders: dict[str, Any], update: Callable[..., dict], artists: dict[str, Any],
              height_px: int = 0) -> LiveFigure:
    errors = W.Output()
    controls = W.HBox(list(sliders.values()), layout=W.Layout(flex_flow="row wrap"))
    # One slider over a fixed list of values: every position rendered once, shown by the browser
    # (helpers/lectures/browser_frames.py); a move costs the kernel nothing to draw.
    in_browser = is_live_backend() and single_selection(sliders) is not None
    if in_browser:
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        live_canvas = fig.canvas
        FigureCanvasAgg(fig)          # the frames are Agg's pixels; ipympl's canvas is not shown
        live_canvas.close()
    if is_live_backend():
        view = None
        body = W.Box() if in_browser else fig.canvas     # in_browser: the frames' Stack, below
    else:
        # The box is at least as tall as the PNG (figure height × dpi, plus the margin the
        # output area adds): a fixed smaller height clipped the bottom (axis labels).
        # ``min_height`` keeps the box from collapsing while the PNG is replaced.
        needed = int(np.ceil(fig.get_figheight() * fig.dpi)) + 12
        view = W.Output(layout=W.Layout(min_height=f"{max(height_px, needed)}px"))
        body = view
    live = LiveFigure(W.VBox([controls, body, errors]), sliders, fig, artists, update, errors, view)

    def on_change(_change: dict) -> None:
        try:
            if in_browser:
                live.last = live.update(**live.values())   # the numbers; the browser shows the frame
            else:
                live.redraw()
            if errors.outputs:
                errors.outputs = ()
        except Exception:  # shown to the student under the figure, not swallowed
            errors.outputs = ()
            errors.append_stderr(traceback.format_exc())

    for slider in sliders.values():
        slider.observe(on_change, names="value")
    live._animated = _flatten(artists)
    for artist in live._animated:
        artist.set_animated(True)
    fig.canvas.mpl_connect("draw_event", live._on_draw)
    live.last = live.update(**live.values())  # the numbers shown before any slider moves
    if in_browser:
        fig.canvas.draw()    # layout solved and frozen, background cached (_on_draw)
        live.widget.children = (controls, frames_view(live, single_selection(sliders)), errors)
    elif not is_live_backend():
        live.redraw()  # full draw (layout solved and frozen in _on_draw), then the PNG
    return live


#: Mantissas of the round values a log slider steps through: about ten per decade, evenly
#: spaced on the log scale to within ±10 %, each exact in decimal.
ROUND_MANTISSAS = (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0)


def round_log_values(low: float, high: float, mantissas: Sequence[float] = ROUND_MANTISSAS) -> list[float]:
    """The round values (``mantissas`` × 10^k) from ``low`` to ``high`` inclusive."""
    values = []
    for k in range(int(np.floor(np.log10(low))) - 1, int(np.ceil(np.log10(high))) + 1):
        for m in mantissas:
            v = float(f"{m:g}e{k}")
            if low * (1 - 1e-9) <= v <= high * (1 + 1e-9):
                values.append(v)
    return values


class RoundLogSlider(W.SelectionSlider):
    """A log-scale slider that only takes round values (0.1, 0.12, 0.15, 0.2, 0.25 ...).

    A ``FloatLogSlider`` steps through 10^(k·step): 0.501, 3.98 and 0.998 where a
    reader expects 0.5, 4 and 1, and its readout, the value ``update`` computes with
    and the figure title disagree in the last digit.  Here the value is always one of
    :func:`round_log_values` (shown exactly, ``{:g}``); setting any other number
    selects the nearest one on the log scale.
    """

    def __init__(self, value: float = 1.0, min_exp: float = -2.0, max_exp: float = 1.0, *,
                 mantissas: Sequence[float] = ROUND_MANTISSAS, **kwargs):
        values = round_log_values(10.0 ** min_exp, 10.0 ** max_exp, mantissas)
        super().__init__(options=[(f"{v:g}", v) for v in values], value=self._nearest(values, value), **kwargs)

    @staticmethod
    def _nearest(values, value) -> float:
        value = float(value)
        if not value > 0:
            return values[0]
        return min(values, key=lambda v: abs(np.log(v / value)))

    @traitlets.validate("value")
    def _validate_value(self, proposal):
        values = [v for _, v in self.options]
        return self._nearest(values, proposal["value"]) if values else proposal["value"]


def epsilon_slider(value: float = 1.0, min_exp: float = -2.0, max_exp: float = 1.0,
                   description: str = "ε", mantissas: Sequence[float] = ROUND_MANTISSAS) -> RoundLogSlider:
    """A log-scale ε slider from 10**min_exp to 10**max_exp through round values (see RoundLogSlider);
    ``mantissas=(1, 2, 5)`` gives a coarser grid (0.1, 0.2, 0.5, 1, …) for a figure computed per grid value."""
    return RoundLogSlider(value, min_exp, max_exp, mantissas=mantissas, description=description, continuous_update=True,
                          layout=W.Layout(width="420px"))


# --------------------------------------------------------------------- §6.1 Definition 6-1


def dp_ratio_widget(f_d: float = 3.0, f_d2: float = 2.0, sensitivity: float = 1.0,
                    epsilon: float = 0.5) -> LiveFigure:
    """Definition 6-1 live: densities of M(D) = f(D) + Lap(Δf/ε) and M(D′), and their ratio.

    The ratio p_D(y) / p_D′(y) stays inside [e^−ε, e^ε] for every output y
    (Theorem 6-4 with Δf = |f(D) − f(D′)|).
    """
    x = np.linspace(-3.0, 8.0, 551)
    fig, (ax_pdf, ax_ratio) = new_figure((9.0, 3.4), 1, 2)
    (line_d,) = ax_pdf.plot(x, 0 * x, color="C0", lw=2, label=f"M(D): f(D) = {f_d:g}")
    (line_d2,) = ax_pdf.plot(x, 0 * x, color="C3", lw=2, ls="--", label=f"M(D′): f(D′) = {f_d2:g}")
    ax_pdf.set_xlim(x[0], x[-1])
    ax_pdf.set_ylim(0, 1.65)
    ax_pdf.set_xlabel(label(zh="输出 y", en="output y"))
    ax_pdf.set_ylabel(label(zh="概率密度", en="density"))
    ax_pdf.legend(loc="upper left", fontsize=SMALL_TEXT_PT)
    (ratio,) = ax_ratio.plot(x, 1 + 0 * x, color="k", lw=2, label=r"$p_D(y)\,/\,p_{D'}(y)$")
    upper = ax_ratio.axhline(1, color="C2", ls=":", lw=1.5, label=r"$e^{\varepsilon}$, $e^{-\varepsilon}$")
    lower = ax_ratio.axhline(1, color="C2", ls=":", lw=1.5)
    ax_ratio.set_yscale("log")
    ax_ratio.set_ylim(np.exp(-3.4), np.exp(3.4))
    ax_ratio.set_xlim(x[0], x[-1])
    ax_ratio.set_xlabel(label(zh="输出 y", en="output y"))
    ax_ratio.legend(loc="upper left", fontsize=SMALL_TEXT_PT)
    title = ax_ratio.set_title("")

    def update(epsilon: float) -> dict:
        b = mech.laplace_scale(sensitivity, epsilon)
        p_d = mech.laplace_pdf(x - f_d, b)
        p_d2 = mech.laplace_pdf(x - f_d2, b)
        line_d.set_ydata(p_d)
        line_d2.set_ydata(p_d2)
        # log-densities subtract exactly: no 0/0 far in the tails
        log_ratio = (np.abs(x - f_d2) - np.abs(x - f_d)) / b
        ratio.set_ydata(np.exp(log_ratio))
        upper.set_ydata([np.exp(epsilon)] * 2)
        lower.set_ydata([np.exp(-epsilon)] * 2)
        worst = float(np.max(np.abs(log_ratio)))
        title.set_text(label(zh=f"ε = {epsilon:.3g}：最大 |ln 比值| = {worst:.3g}",
                          en=f"ε = {epsilon:.3g}: max |ln ratio| = {worst:.3g}"))
        return {"b": b, "max_abs_log_ratio": worst, "peak_density": float(p_d.max())}

    return _assemble(fig, {"epsilon": epsilon_slider(epsilon, -1.3, 0.5)}, update,
                     {"pdf_d": line_d, "pdf_d2": line_d2, "ratio": ratio, "upper": upper,
                      "lower": lower, "title": title})


# --------------------------------------------------------------------- §6.2 Fig. 6-3


def laplace_density_widget(epsilon: float = 1.0, sensitivity: float = 1.0) -> LiveFigure:
    """Fig. 6-3 live: Lap(x | b) with b = Δf/ε, over the book's three reference curves."""
    x = np.linspace(-10, 10, 801)
    fig, ax = new_figure((7.5, 3.4))
    for i, b in enumerate((1.0, 2.0, 4.0)):
        ax.plot(x, mech.laplace_pdf(x, b), color=f"C{i}", lw=1.5, ls="--", alpha=0.9, label=f"b = {b:g}")
    (line,) = ax.plot(x, 0 * x, color="k", lw=2.5, label="b = Δf/ε")
    # translucent: the span is redrawn on top of the static curves (blitting), which must show through
    span = ax.axvspan(-1, 1, color="0.6", alpha=0.18, lw=0, zorder=0, label="[−b, b]")
    top = 1.05
    # The axis is fixed (the reference curves stay put); a taller peak is marked at the top.
    peak_mark = ax.annotate("", xy=(0, top), xytext=(0.4, top * 0.9), ha="left", va="center", fontsize=SMALL_TEXT_PT,
                            arrowprops={"arrowstyle": "->", "color": "k"}, annotation_clip=False)
    ax.set_xlim(-10, 10)
    ax.set_ylim(0, top)
    ax.set_xlabel("x")
    ax.set_ylabel("Lap(x | b)")
    ax.legend(fontsize=SMALL_TEXT_PT, loc="upper right")
    title = ax.set_title("")

    def update(epsilon: float, sensitivity: float) -> dict:
        b = mech.laplace_scale(sensitivity, epsilon)
        line.set_ydata(mech.laplace_pdf(x, b))
        span.set_x(-b)
        span.set_width(2 * b)
        peak = 1 / (2 * b)
        peak_mark.set_visible(peak > top)
        peak_mark.set_text(label(zh=f"峰值 1/(2b) = {peak:.3g}，超出坐标轴", en=f"peak 1/(2b) = {peak:.3g}, off the axis"))
        title.set_text(label(zh=f"Δf = {sensitivity:g}，ε = {epsilon:.3g} → b = {b:.3g}，标准差 √2·b = {np.sqrt(2) * b:.3g}",
                          en=f"Δf = {sensitivity:g}, ε = {epsilon:.3g} → b = {b:.3g}, std √2·b = {np.sqrt(2) * b:.3g}"))
        return {"b": b, "peak": peak, "peak_off_axis": peak > top}

    sens = W.FloatSlider(value=sensitivity, min=0.5, max=5, step=0.5, description="Δf",
                         readout_format=".1f", layout=W.Layout(width="320px"))
    return _assemble(fig, {"epsilon": epsilon_slider(epsilon, -1, 1), "sensitivity": sens}, update,
                     {"line": line, "span": span, "peak": peak_mark, "title": title})


# --------------------------------------------------------------------- §6.2.3 experiment 6-1


def _stairs_counts(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    counts, _ = np.histogram(values, bins=edges)
    return counts / max(values.size, 1)


def _neighbour_histograms(edges: np.ndarray, d: tuple[float, str], d2: tuple[float, str], *,
                          xlabel: str, ylabel: str, legend_loc: str):
    """One axes with an (empty) step histogram and a true-value line for D and for D′."""
    fig, ax = new_figure((8.0, 3.4))
    zeros = np.zeros(edges.size - 1)
    steps = []
    for (value, text), color in ((d, "C0"), (d2, "C3")):
        steps.append(ax.stairs(zeros, edges, fill=True, alpha=0.45, color=color, label=text))
        ax.axvline(value, color=color, lw=1)
    ax.set_xlim(edges[0], edges[-1])
    ax.set_ylim(0, 1.0)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=SMALL_TEXT_PT, loc=legend_loc)
    return fig, steps[0], steps[1], ax.set_title("")


def averaging_attack_widget(true_d: int = 90, true_d2: int = 89, epsilon: float = 0.1, k: int = 100,
                            repeats: int = 1000, k_max: int = 1000, seed: int = 61) -> LiveFigure:
    """Scheme 1 of experiment 6-1: the attacker averages k noisy answers to the same count.

    Draws ``repeats × k_max`` unit Laplace noises once for D and once for D′
    (``helpers.mechanisms.laplace_noise``); an update rescales them to
    Lap(1/ε) — or Lap(k/ε) when the budget ε is split over the k queries —
    and histograms the attacker's averages.  The title gives the probability
    that the rounded average equals the true count (Table 6-3's right half).
    """
    rng = np.random.default_rng(seed)
    # cumulative sums: the average of the first k answers is one column, no re-summing
    cum_d = np.cumsum(mech.laplace_noise(1.0, (repeats, k_max), rng), axis=1)
    cum_d2 = np.cumsum(mech.laplace_noise(1.0, (repeats, k_max), rng), axis=1)
    edges = np.arange(true_d2 - 8.0, true_d + 8.0 + 1e-9, 0.25)
    fig, step_d, step_d2, title = _neighbour_histograms(
        edges, (true_d, f"D: {true_d}"), (true_d2, f"D′: {true_d2}"),
        xlabel=label(zh="攻击者对 k 次回答求平均", en="attacker's average of k answers"),
        ylabel=label(zh="比例（每格 0.25）", en="fraction (bins of 0.25)"), legend_loc="upper right")

    def update(epsilon: float, k: int, split: bool) -> dict:
        k = int(k)
        b = mech.laplace_scale(1.0, epsilon / k if split else epsilon)
        mean_d = true_d + b * cum_d[:, k - 1] / k
        mean_d2 = true_d2 + b * cum_d2[:, k - 1] / k
        step_d.set_data(_stairs_counts(mean_d, edges))
        step_d2.set_data(_stairs_counts(mean_d2, edges))
        hit = float(np.mean(np.abs(mean_d - true_d) < 0.5))
        rule = label(zh="每次 ε/k" if split else "每次 ε", en="ε/k per query" if split else "ε per query")
        title.set_text(label(zh=f"ε = {epsilon:.3g}，k = {k}（{rule}）：四舍五入后猜中真实值的比例 {hit:.1%}",
                          en=f"ε = {epsilon:.3g}, k = {k} ({rule}): rounded average = true count in {hit:.1%}"))
        return {"b": b, "hit_rate": hit, "mean_sd": float(np.std(mean_d))}

    ks = W.SelectionSlider(options=[1, 10, 100, 1000], value=k if k in (1, 10, 100, 1000) else 100,
                           description="k", layout=W.Layout(width="300px"))
    split = W.Checkbox(value=False, description=tr(zh="预算 ε 均分给 k 次查询", en="split ε over the k queries"))
    return _assemble(fig, {"epsilon": epsilon_slider(epsilon, -2, 0), "k": ks, "split": split}, update,
                     {"d": step_d, "d2": step_d2, "title": title})


def noisy_dataset_widget(carrots_d: np.ndarray, carrots_d2: np.ndarray, threshold: float = 55,
                         epsilon: float = 0.1, repeats: int = 400, seed: int = 62) -> LiveFigure:
    """Scheme 2 of experiment 6-1: noise on every record, then count records > threshold.

    ``repeats`` noisy copies of each dataset are drawn once (unit Laplace
    noise per record); an update rescales them to Lap(1/ε) and histograms
    the count the released noisy dataset answers.
    """
    rng = np.random.default_rng(seed)
    carrots_d = np.asarray(carrots_d, dtype=float)
    carrots_d2 = np.asarray(carrots_d2, dtype=float)
    unit_d = mech.laplace_noise(1.0, (repeats, carrots_d.size), rng)
    unit_d2 = mech.laplace_noise(1.0, (repeats, carrots_d2.size), rng)
    true_d = int((carrots_d > threshold).sum())
    true_d2 = int((carrots_d2 > threshold).sum())
    edges = np.arange(true_d2 - 14.5, true_d + 15.5, 1.0)
    fig, step_d, step_d2, title = _neighbour_histograms(
        edges, (true_d, f"D (zoo.csv): {true_d}"), (true_d2, f"D′ (zoo_nb.csv): {true_d2}"),
        xlabel=label(zh=f"加噪数据集中胡萝卜 > {threshold:g} 的动物数",
                     en=f"animals with > {threshold:g} carrots in the noisy dataset"),
        ylabel=label(zh="比例", en="fraction"), legend_loc="upper left")

    def update(epsilon: float) -> dict:
        b = mech.laplace_scale(1.0, epsilon)
        counts_d = ((carrots_d + b * unit_d) > threshold).sum(axis=1)
        counts_d2 = ((carrots_d2 + b * unit_d2) > threshold).sum(axis=1)
        step_d.set_data(_stairs_counts(counts_d, edges))
        step_d2.set_data(_stairs_counts(counts_d2, edges))
        title.set_text(label(zh=f"ε = {epsilon:.3g}：平均 {counts_d.mean():.1f}（D）与 {counts_d2.mean():.1f}（D′）",
                          en=f"ε = {epsilon:.3g}: mean {counts_d.mean():.1f} (D) vs {counts_d2.mean():.1f} (D′)"))
        return {"mean_d": float(counts_d.mean()), "mean_d2": float(counts_d2.mean()),
                "exact_d": float(np.mean(counts_d == true_d))}

    return _assemble(fig, {"epsilon": epsilon_slider(epsilon, -2, 1)}, update,
                     {"d": step_d, "d2": step_d2, "title": title})


# --------------------------------------------------------------------- §6.2.4 experiment 6-2


def histogram_release_widget(labels, counts_d: np.ndarray, counts_d2: np.ndarray, epsilon: float = 10.0,
                             seed: int = 64) -> LiveFigure:
    """Experiment 6-2 (Figs. 6-8 to 6-11): each bucket + Lap(1/ε), for D and its neighbour D′.

    Left: the two released histograms over the true counts; right: the
    difference M(D) − M(D′) per bucket, whose true value is 1 in the bucket
    the patient left and 0 elsewhere.  One unit-noise draw per bucket and
    dataset is made once and rescaled.
    """
    rng = np.random.default_rng(seed)
    labels = [str(s) for s in labels]
    counts_d = np.asarray(counts_d, dtype=float)
    counts_d2 = np.asarray(counts_d2, dtype=float)
    unit_d = mech.laplace_noise(1.0, counts_d.size, rng)
    unit_d2 = mech.laplace_noise(1.0, counts_d2.size, rng)
    fig, (ax, ax_diff) = new_figure((9.0, 3.4), 1, 2)
    pos = np.arange(len(labels))
    bars_d = ax.bar(pos - 0.2, counts_d, width=0.4, color="C0", label="M(D)  medicaldata.csv")
    bars_d2 = ax.bar(pos + 0.2, counts_d2, width=0.4, color="C3", label="M(D′) md_nb.csv")
    ax.plot(pos, counts_d, "k_", ms=22, mew=2, label=label(zh="真实值 D", en="true D"))
    ax.set_xticks(pos, labels)
    ax.set_ylim(340, 540)
    ax.set_ylabel(label(zh="患者人数", en="patients"))
    # Legends above the axes: the bars are redrawn over the axes' background at every move and
    # hid a legend inside them at small ε (browser walkthrough, s14); 9 pt is readable at 1366 x 768.
    ax.legend(fontsize=SMALL_TEXT_PT, loc="lower left", bbox_to_anchor=(0, 1.0), ncol=2, frameon=False, borderaxespad=0.2)
    diff_bars = ax_diff.bar(pos, counts_d - counts_d2, color="C2")
    ax_diff.plot(pos, counts_d - counts_d2, "k_", ms=22, mew=2, label=label(zh="真实差", en="true difference"))
    ax_diff.axhline(0, color="k", lw=0.6)
    ax_diff.set_xticks(pos, labels)
    ax_diff.set_ylim(-6, 6)  # fixed: at small ε the differences run off the axes, i.e. drown in noise
    ax_diff.set_ylabel("M(D) − M(D′)")
    ax_diff.legend(fontsize=SMALL_TEXT_PT, loc="lower left", bbox_to_anchor=(0, 1.0), frameon=False, borderaxespad=0.2)
    title = ax_diff.set_title("", loc="right", fontsize=TITLE_PT)

    def update(epsilon: float) -> dict:
        b = mech.laplace_scale(1.0, epsilon)
        noisy_d = counts_d + b * unit_d
        noisy_d2 = counts_d2 + b * unit_d2
        set_bar_heights(bars_d, noisy_d)
        set_bar_heights(bars_d2, noisy_d2)
        set_bar_heights(diff_bars, noisy_d - noisy_d2)
        title.set_text(f"ε = {epsilon:.3g}, b = {b:.3g}")
        return {"noisy_d": noisy_d, "noisy_d2": noisy_d2}

    return _assemble(fig, {"epsilon": epsilon_slider(epsilon, -1, 1)}, update,
                     {"bars_d": bars_d, "bars_d2": bars_d2, "diff": diff_bars, "title": title})


# --------------------------------------------------------------------- §6.3 Table 6-4


def exponential_vote_widget(items, scores, sensitivity: float = 1.0, epsilon: float = 0.1) -> LiveFigure:
    """Table 6-4 live: Pr[r] ∝ exp(ε q(D, r) / (2Δq)) for the sports vote, redrawn as ε moves."""
    items = [str(s) for s in items]
    scores = np.asarray(scores, dtype=float)
    fig, ax = new_figure((7.0, 3.2))
    bars = ax.bar(items, np.zeros(len(items)), color="C0")
    texts = [ax.text(i, 0, "", ha="center", va="bottom", fontsize=SMALL_TEXT_PT) for i in range(len(items))]
    ax.axhline(1 / len(items), color="0.5", ls=":", lw=1, label=label(zh="ε = 0：均匀", en="ε = 0: uniform"))
    # headroom above 1 for the value labels and the legend, which must never cover a bar
    ax.set_ylim(0, 1.35)
    ax.set_yticks(np.linspace(0, 1, 6))
    ax.set_ylabel(label(zh="被选中的概率", en="probability of being chosen"))
    ax.legend(fontsize=SMALL_TEXT_PT, loc="upper right")
    title = ax.set_title("")

    def update(epsilon: float) -> dict:
        probs = mech.exponential_probabilities(scores, epsilon, sensitivity)
        set_bar_heights(bars, probs, texts, fmt="{:.3g}")
        title.set_text(label(zh=f"ε = {epsilon:.3g}（打分 = 票数，Δq = {sensitivity:g}）",
                          en=f"ε = {epsilon:.3g} (score = votes, Δq = {sensitivity:g})"))
        return {"probs": probs}

    return _assemble(fig, {"epsilon": epsilon_slider(epsilon, -2, 1)}, update,
                     {"bars": bars, "texts": texts, "title": title})


# --------------------------------------------------------------------- §6.4 randomized response


def rr_correction_widget(true_fraction: float = 0.8, n: int = 100, p: float = 0.8, repeats: int = 600,
                         seed: int = 66) -> LiveFigure:
    """Perturbation and correction (§6.4.2) repeated ``repeats`` times: the spread of π̂.

    Every (n, p) of the sliders' grid runs ``helpers.mechanisms.rr_perturb`` on the same seed
    (common random numbers, so moving a slider changes the picture only
    through n and p) and corrects with ``rr_correct``, once, when the figure is built; the dashed lines are
    π ± one standard deviation from the formula Var(N̂) = n p(1−p)/(2p−1)².
    """
    edges = np.linspace(-0.6, 1.6, 111)
    fig, ax = new_figure((8.0, 3.4))
    step = ax.stairs(np.zeros(edges.size - 1), edges, fill=True, alpha=0.5, color="C0",
                     label=label(zh="模拟的 π̂", en="simulated π̂"))
    ax.axvline(true_fraction, color="k", lw=1.5, label=f"π = {true_fraction:g}")
    lo = ax.axvline(true_fraction, color="C3", ls="--", lw=1.2, label=label(zh="π ± 公式标准差", en="π ± formula sd"))
    hi = ax.axvline(true_fraction, color="C3", ls="--", lw=1.2)
    ax.set_xlim(edges[0], edges[-1])
    ax.set_ylim(0, 0.5)
    ax.set_xlabel(label(zh="校正后的比例 π̂ = N̂ / n", en="corrected proportion π̂ = N̂ / n"))
    ax.set_ylabel(label(zh="比例（每格 0.02）", en="fraction (bins of 0.02)"))
    ax.legend(fontsize=SMALL_TEXT_PT, loc="upper left")
    title = ax.set_title("")

    def simulate(n: int, p: float) -> tuple[np.ndarray, float, float]:
        ones = int(round(true_fraction * n))
        bits = np.zeros((repeats, n), dtype=np.int64)
        bits[:, :ones] = 1
        reports = mech.rr_perturb(bits, float(np.log(p / (1 - p))), np.random.default_rng(seed))
        estimate = mech.rr_correct(n, reports.sum(axis=1), p) / n
        return _stairs_counts(estimate, edges), float(estimate.std()), float(estimate.mean())

    ns = W.SelectionSlider(options=[20, 50, 100, 200, 500, 1000, 2000], value=n, description="n",
                           layout=W.Layout(width="320px"))
    ps = W.FloatSlider(value=p, min=0.55, max=0.95, step=0.05, description="p", readout_format=".2f",
                       layout=W.Layout(width="320px"))
    # repeats × n draws per move (≈ 60 ms at n = 2000): once per point of the sliders' grid
    # (63 points, ≈ 0.5 s when the figure is built), so a move is a lookup
    simulate = cache(simulate)
    for n_value in ns.options:
        for p_value in np.round(np.arange(ps.min, ps.max + ps.step / 2, ps.step), 9):
            simulate(int(n_value), float(p_value))

    def update(n: int, p: float) -> dict:
        n, p = int(n), round(float(p), 9)  # a browser sends 0.6000000000000001 for 0.6
        epsilon = float(np.log(p / (1 - p)))
        counts, sim_sd, mean = simulate(n, p)
        step.set_data(counts)
        sd = float(np.sqrt(n * p * (1 - p)) / abs(2 * p - 1) / n)
        lo.set_xdata([true_fraction - sd] * 2)
        hi.set_xdata([true_fraction + sd] * 2)
        title.set_text(label(zh=f"n = {n}，p = {p:.2f} (ε = {epsilon:.2f})：模拟标准差 {sim_sd:.3f}，公式 {sd:.3f}",
                          en=f"n = {n}, p = {p:.2f} (ε = {epsilon:.2f}): simulated sd {sim_sd:.3f}, formula {sd:.3f}"))
        return {"epsilon": epsilon, "sim_sd": sim_sd, "formula_sd": sd, "mean": mean}

    return _assemble(fig, {"n": ns, "p": ps}, update, {"hist": step, "lo": lo, "hi": hi, "title": title})
