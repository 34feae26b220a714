"""Slider figures drawn in the browser from frames the kernel sent once (issue 36).

A slider figure with one slider over a fixed list of values (a ``SelectionSlider``: the round
ε values of :class:`helpers.lectures.widgets.RoundLogSlider`, the range bounds of a lab) is a
function of that slider's position only: the builders draw their noise once and a move
only re-evaluates formulas. Such a figure is rendered by matplotlib once per position when
it is built (update, blit: the same pixels the live canvas would show), each frame a PNG in
an ``ipywidgets.Image``; the images are the children of an ``ipywidgets.Stack`` whose
``selected_index`` follows the slider's ``index`` through ``ipywidgets.jslink``, in the
browser. A move then costs no kernel round trip and no rendering: JupyterLab shows another
image it already holds. (The slider's value still reaches the kernel, which updates
``live.last``: nothing is drawn there.)

What is kept: matplotlib's rendering (the frames are its pixels), the Chinese labels, the
ipywidgets slider. What is given up for these figures: ipympl's canvas (its toolbar was
hidden anyway) and sharper pixels on a high-density screen (frames are rendered at the
figure's dpi; ipympl renders at the screen's pixel ratio). Only in a live JupyterLab kernel
(:func:`helpers.lectures.plots.is_live_backend`); headless runs keep their PNG output.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as W
import numpy as np

__all__ = ["MAX_FRAMES", "single_selection", "frames_view"]

#: Most positions a slider may have to be drawn in the browser (each frame about 20-60 kB).
MAX_FRAMES = 41


def single_selection(sliders: dict[str, Any]) -> str | None:
    """The name of the figure's one control if it is a slider over at most ``MAX_FRAMES`` values, else None."""
    if len(sliders) != 1:
        return None
    (name, slider), = sliders.items()
    if isinstance(slider, W.SelectionSlider) and 2 <= len(slider.options) <= MAX_FRAMES:
        return name
    return None


def frames_view(live, name: str) -> W.Stack:
    """Render ``live`` at every position of its slider ``name`` and return the Stack that shows them.

    ``live.fig`` must have an Agg canvas with its background cached (a full draw happened).
    """
    from helpers.lectures.live_canvas import png_rgba   # imports ipympl: only on the live path

    slider = live.sliders[name]
    canvas = live.fig.canvas
    width, height = canvas.get_width_height()
    images = []
    for value in slider._options_values:         # ipywidgets: the values of (label, value) or plain options
        live.update(**{name: value})
        canvas.restore_region(live._background)
        live._draw_animated()
        images.append(W.Image(value=png_rgba(np.asarray(canvas.buffer_rgba()), level=6), format="png",
                              layout=W.Layout(width=f"{width}px", height=f"{height}px")))
    live.last = live.update(**live.values())
    canvas.restore_region(live._background)
    live._draw_animated()
    stack = W.Stack(images, selected_index=slider.index)
    stack.link = W.jslink((slider, "index"), (stack, "selected_index"))   # kept for the tests
    return stack
