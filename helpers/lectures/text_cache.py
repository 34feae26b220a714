"""Slider figures' changing texts drawn from a cache of their pixels (issue 36).

A slider figure's title or label that shows the slider's numbers is redrawn at every move.
With matplotlib 3.11 drawing one such line (text shaping with font fallback, then the
glyphs) costs 3-8 ms, up to two thirds of a move's redraw in the kernel (Fig. 6-3: 8 of
13 ms at a load of 5 on 2 cores), while the lines and patches together cost under 1 ms.
A slider offers a fixed grid of values, so the same strings come back whenever a student
drags back and forth, and a text drawn over the same pixels gives the same pixels again.

:class:`TextPixelCache` keys a text's drawing by everything that decides its pixels: the
artist, its string, colour, alpha, font, rotation, alignment, its rounded window extent
(position and size), its clip box, and a digest (BLAKE2b, 128 bits) of the pixels already
under it (the cached background and whatever was drawn before it in this frame). The
first time, the text is drawn by matplotlib and the buffer is compared whole before and
after; if every changed pixel lies inside the text's extent (plus a margin), the changed
rectangle is kept. The next time the key matches, the rectangle is copied into the buffer
instead of drawing: the same pixels as drawing it (a test compares every move's frame
with an uncached draw). Texts with a box, an arrow or path effects are always drawn.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict

import numpy as np

__all__ = ["TextPixelCache"]

#: Pixels around a text's window extent that its antialiased glyphs may touch.
MARGIN_PX = 3


class TextPixelCache:
    """Pixels of texts already drawn, by what they are drawn over (see the module docstring).

    Parameters
    ----------
    max_bytes : int
        Memory kept for one figure's texts; the least recently used go first.
    """

    def __init__(self, max_bytes: int = 4 << 20) -> None:
        self.max_bytes = max_bytes
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[tuple, tuple[int, int, np.ndarray] | None] = OrderedDict()
        self._bytes = 0

    def draw(self, fig, text) -> None:
        """Draw ``text`` (a matplotlib ``Text``) into ``fig``'s Agg buffer, from the cache when it can."""
        if (not text.get_visible() or not text.get_text() or text.get_bbox_patch() is not None
                or getattr(text, "arrow_patch", None) is not None or text.get_path_effects()
                or text.get_usetex() or text.get_clip_path() is not None):
            fig.draw_artist(text)
            return
        renderer = fig.canvas.get_renderer()
        pixels = np.asarray(renderer.buffer_rgba())
        height, width = pixels.shape[:2]
        extent = text.get_window_extent(renderer)
        x0 = max(0, int(np.floor(extent.x0)) - MARGIN_PX)
        x1 = min(width, int(np.ceil(extent.x1)) + MARGIN_PX)
        top = max(0, height - int(np.ceil(extent.y1)) - MARGIN_PX)      # buffer rows run downwards
        bottom = min(height, height - int(np.floor(extent.y0)) + MARGIN_PX)
        if x1 <= x0 or bottom <= top:
            fig.draw_artist(text)
            return
        clip = text.get_clip_box()
        key = (id(text), text.get_text(), str(text.get_color()), text.get_alpha(), hash(text.get_fontproperties()),
               text.get_rotation(), text.get_horizontalalignment(), text.get_verticalalignment(),
               text._multialignment, text._linespacing, text.get_antialiased(), text.get_clip_on(),
               None if clip is None else tuple(np.round(clip.bounds, 3)), (x0, x1, top, bottom),
               hashlib.blake2b(pixels[top:bottom, x0:x1].tobytes(), digest_size=16).digest())
        if key in self._entries:
            self.hits += 1
            self._entries.move_to_end(key)
            entry = self._entries[key]
            if entry is not None:
                row, col, patch = entry
                pixels[row:row + patch.shape[0], col:col + patch.shape[1]] = patch
            return
        self.misses += 1
        words = pixels.view(np.uint32)[..., 0]
        before = words.copy()
        fig.draw_artist(text)
        changed = words != before
        rows = np.flatnonzero(changed.any(axis=1))
        if rows.size == 0:
            self._store(key, None)
            return
        cols = np.flatnonzero(changed.any(axis=0))
        if rows[0] < top or rows[-1] >= bottom or cols[0] < x0 or cols[-1] >= x1:
            return                          # drew outside its extent: not cached, drawn every time
        patch = pixels[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1].copy()
        self._store(key, (int(rows[0]), int(cols[0]), patch))

    def _store(self, key: tuple, entry: tuple[int, int, np.ndarray] | None) -> None:
        self._entries[key] = entry
        self._bytes += 0 if entry is None else entry[2].nbytes
        while self._bytes > self.max_bytes and self._entries:
            _, old = self._entries.popitem(last=False)
            self._bytes -= 0 if old is None else old[2].nbytes
