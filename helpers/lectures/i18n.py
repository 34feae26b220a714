"""Old home of :mod:`helpers.i18n`, kept because notebooks already in students' hands import it.

The language is state of :mod:`helpers.i18n` alone: these names are the same objects.
"""

from helpers.i18n import LANGS, get_lang, set_lang, tr

__all__ = ["LANGS", "set_lang", "get_lang", "tr"]
