"""Fonts for figures: the CJK font that Chinese labels need (bottom layer: no other ``helpers`` import).

Used by the lecture figures (:mod:`helpers.lectures.plots`) and by the class report
(:mod:`autograder.reports.classreport`).
"""

from __future__ import annotations

import functools

import matplotlib

__all__ = ["configure_fonts", "cjk_available", "SMALL_TEXT_PT", "TITLE_PT"]

#: Type size (points) of a figure's small text: legends, annotations, bar labels, notes.  A lecture
#: figure's PNG is scaled to the notebook's width: on a 1366-px laptop a 9-inch figure shows at about
#: 70 %, and 8 pt came out at 9 px; 10.5 pt is about 10-11 px there, as large as the axis labels.
SMALL_TEXT_PT = 10.5
#: Type size (points) of a panel's own title (one of several panels, a title a slider rewrites).
TITLE_PT = 11.5

# CJK glyphs: the first family matplotlib finds wins; DejaVu Sans is the fallback.
_CJK_FONTS = ["Noto Sans CJK SC", "Noto Sans SC", "WenQuanYi Zen Hei", "WenQuanYi Micro Hei",
              "Source Han Sans SC", "SimHei", "Microsoft YaHei", "PingFang SC", "DejaVu Sans"]


@functools.lru_cache(maxsize=1)
def _register_bundled_cjk_font() -> None:
    """Register Noto Sans CJK SC shipped by the ``mplfonts`` wheel (see requirements.txt).

    Registering the file directly (rather than running mplfonts' installer) leaves
    matplotlib's own font folder untouched; machines with a system CJK font need neither.
    """
    try:
        from importlib.resources import files

        from matplotlib import font_manager

        path = files("mplfonts") / "fonts" / "NotoSansCJKsc-Regular.otf"
        if path.is_file():
            font_manager.fontManager.addfont(str(path))
    except (ImportError, OSError):  # the English fallback labels still teach
        pass


def configure_fonts() -> None:
    """Make matplotlib find a CJK font (the bundled one if the machine has none): Chinese figure text, no tofu."""
    from matplotlib import font_manager

    _register_bundled_cjk_font()
    available = {f.name for f in font_manager.fontManager.ttflist}
    families = [f for f in _CJK_FONTS if f in available] or ["DejaVu Sans"]
    rest = [f for f in matplotlib.rcParams["font.sans-serif"] if f not in families]
    matplotlib.rcParams["font.sans-serif"] = families + rest
    # Glyph fallback works across the families named in font.family, not through the
    # "sans-serif" alias: CJK fonts lack some Greek letters (π) that DejaVu Sans has.
    matplotlib.rcParams["font.family"] = list(dict.fromkeys(families + ["DejaVu Sans"]))
    matplotlib.rcParams["axes.unicode_minus"] = False


@functools.lru_cache(maxsize=1)
def cjk_available() -> bool:
    """True when matplotlib can draw Chinese (a CJK font is installed or bundled)."""
    from matplotlib import font_manager

    _register_bundled_cjk_font()
    available = {f.name for f in font_manager.fontManager.ttflist}
    return any(f in available for f in _CJK_FONTS[:-1])
