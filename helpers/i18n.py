"""One notebook source, two languages: the per-language strings of code cells.

The lecture notebooks are built in Chinese and in English from one source
(``course/build.py``).  Markdown is written twice in the source; code is
written once, and the few strings a code cell prints or draws (axis labels,
titles, printed sentences) go through :func:`tr`::

    from helpers.i18n import set_lang, tr
    set_lang("zh")                      # the build writes "zh" or "en" here
    ax.set_xlabel(tr(zh="噪声", en="noise"))

The language is a module-level setting because a notebook has one language
from its first cell to its last.  Before :func:`set_lang` is called the
language comes from the environment variable ``DP_COURSE_LANG`` (default
Chinese, the students' first language).
"""

from __future__ import annotations

import os

from helpers._validation import fail

__all__ = ["LANGS", "set_lang", "get_lang", "tr"]

LANGS = ("zh", "en")

_lang = os.environ.get("DP_COURSE_LANG", "zh") if os.environ.get("DP_COURSE_LANG", "zh") in LANGS else "zh"


def set_lang(lang: str) -> str:
    """Set the language of :func:`tr` ("zh" or "en") and return it."""
    global _lang
    if lang not in LANGS:
        raise fail("set_lang", "lang", f"one of {LANGS}", lang)
    _lang = lang
    return lang


def get_lang() -> str:
    """The current language, "zh" or "en"."""
    return _lang


def tr(zh: str, en: str) -> str:
    """The string for the current language: ``tr(zh="噪声", en="noise")``."""
    return zh if _lang == "zh" else en
