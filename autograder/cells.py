"""What a notebook cell holds, read the same way everywhere in the grader."""

from __future__ import annotations


def source_text(value) -> str:
    """A cell's source, or an output's text, as one string.

    nbformat stores multi-line strings either as one ``str`` or as a list of lines; anything else
    (a value a hostile notebook put there) is shown through ``str``.
    """
    if isinstance(value, list):
        value = "".join(str(v) for v in value)
    return value if isinstance(value, str) else str(value)
