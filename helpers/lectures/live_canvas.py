"""The live (ipympl) canvas of the slider figures, with a cheaper frame encoder.

After each slider move ipympl sends the browser a PNG of the pixels that changed (matplotlib's
``FigureCanvasWebAggCore.get_diff_image``: the changed pixels, every other pixel transparent
black, the browser draws it over the previous frame). Pillow encodes that PNG with adaptive
row filters and zlib level 6, which took 13-25 ms per frame for the course's 750-860 px wide
figures, more than the course's update and blit together (issue 36). :func:`png_rgba` writes
the same image with no row filter and zlib level 1: 2-5 ms, and the message hardly grows (a
diff frame is mostly zero bytes; 7-26 kB either way). The frames, the diff/full protocol and the
browser side are ipympl's own; only the encoding of each frame changes.

Imported only when ipympl is (see :func:`helpers.lectures.plots.new_figure`).
"""

from __future__ import annotations

import struct
import zlib

import numpy as np
from ipympl.backend_nbagg import Canvas as _IpymplCanvas

__all__ = ["Canvas", "png_rgba"]

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_rgba(pixels: np.ndarray, level: int = 1) -> bytes:
    """A PNG (8-bit RGBA, no interlace) of ``pixels``, shape ``(height, width, 4)``, dtype uint8.

    Every scanline gets filter type 0 (None) and the whole image one zlib stream at ``level``
    (PNG specification, ISO/IEC 15948, §§ 9-11): what a browser decodes like any other PNG.

    Parameters
    ----------
    pixels : numpy.ndarray
        Shape ``(height, width, 4)``, uint8, RGBA (straight alpha, as Agg's buffer).
    level : int
        zlib compression level (1: fastest).

    Returns
    -------
    bytes
        The PNG file.
    """
    pixels = np.ascontiguousarray(pixels, dtype=np.uint8)
    if pixels.ndim != 3 or pixels.shape[2] != 4:
        raise ValueError(f"png_rgba: pixels of shape (height, width, 4) expected, got {pixels.shape}")
    height, width, _ = pixels.shape
    rows = np.zeros((height, 1 + 4 * width), dtype=np.uint8)   # column 0: each row's filter byte (0)
    rows[:, 1:] = pixels.reshape(height, 4 * width)
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)   # 8 bits, colour type 6 = RGBA
    return (_PNG_SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(rows.tobytes(), level))
            + _chunk(b"IEND", b""))


class Canvas(_IpymplCanvas):
    """ipympl's canvas widget (same model and view in the browser) whose frames are encoded by
    :func:`png_rgba`. The logic of :meth:`get_diff_image` is matplotlib's (3.11) unchanged."""

    def get_diff_image(self):
        if not self._png_is_old:
            return None
        pixels = np.asarray(self.get_renderer().buffer_rgba())
        # whole pixels compared as uint32, as matplotlib does
        buff = pixels.view(np.uint32).squeeze(2)
        if (self._force_full or buff.shape != self._last_buff.shape
                # a transparent pixel cannot be laid over the previous frame
                or (pixels[:, :, 3] != 255).any()):
            self.set_image_mode("full")
            output = buff
        else:
            self.set_image_mode("diff")
            output = np.where(buff != self._last_buff, buff, 0)
        self._last_buff = buff.copy()
        self._force_full = False
        self._png_is_old = False
        return png_rgba(output.view(dtype=np.uint8).reshape((*output.shape, 4)))
