"""One entry of the table of diagnoses."""

from __future__ import annotations

from typing import NamedTuple


class Diagnosis(NamedTuple):
    """What a diagnosis id means and the advice for the student, in both languages."""

    meaning_zh: str
    advice_zh: str
    meaning_en: str
    advice_en: str
