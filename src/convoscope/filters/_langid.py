"""Offline language identification by writing system.

The filter only needs to choose between its two pipelines, so counting letters per script is
enough and needs no model: Hangul means Korean, Latin means English, any other script is reported
as ``other`` (unsupported, never flagged). Hangul is counted in jamo, roughly one per typed key,
so a Korean answer that quotes a brand name ("iPhone 좋아요") still counts as Korean.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

Language = Literal["en", "ko", "other", "none"]
"""``en`` and ``ko`` have filters; ``other`` is a script the filter does not cover; ``none`` means
the text has no letters at all (empty, digits, punctuation, emoji)."""

SYLLABLE_FIRST, SYLLABLE_LAST = 0xAC00, 0xD7A3


def is_hangul_syllable(char: str) -> bool:
    return SYLLABLE_FIRST <= ord(char) <= SYLLABLE_LAST


def is_hangul_jamo(char: str) -> bool:
    """Compatibility jamo (what a keyboard types alone, ㅋ ㅏ) or conjoining jamo."""
    code = ord(char)
    return 0x3131 <= code <= 0x318E or 0x1100 <= code <= 0x11FF


def _is_latin_letter(char: str) -> bool:
    if char.isascii():
        return char.isalpha()
    return char.isalpha() and unicodedata.name(char, "").startswith("LATIN")


@dataclass(frozen=True)
class ScriptCounts:
    """Letters per script; Hangul syllables count as the jamo they are made of."""

    hangul: int = 0
    latin: int = 0
    other: int = 0

    @property
    def letters(self) -> int:
        return self.hangul + self.latin + self.other


_SYLLABLES = re.compile(r"[가-힣]")
_ASCII_LETTERS = re.compile(r"[A-Za-z]")
_JAMO = re.compile(r"[\u3131-\u318E\u1100-\u11FF]")
_OTHER_NON_ASCII = re.compile(r"[^\x00-\x7F가-힣\u3131-\u318E\u1100-\u11FF]")


def count_scripts(text: str) -> ScriptCounts:
    if text.isascii():  # the common case for English answers, and the fast one
        return ScriptCounts(latin=len(_ASCII_LETTERS.findall(text)))
    hangul = len(_JAMO.findall(text))
    for char in _SYLLABLES.findall(text):
        # An initial and a vowel, plus the final consonant when the syllable has one.
        hangul += 3 if (ord(char) - SYLLABLE_FIRST) % 28 else 2
    latin, other = len(_ASCII_LETTERS.findall(text)), 0
    for char in _OTHER_NON_ASCII.findall(text):
        if _is_latin_letter(char):
            latin += 1
        elif char.isalpha():
            other += 1
    return ScriptCounts(hangul, latin, other)


def language_of(counts: ScriptCounts) -> Language:
    """The script with the most letters decides; ties between Hangul and Latin go to Korean,
    whose filter ignores the Latin part instead of judging the Hangul part as English noise."""
    if counts.letters == 0:
        return "none"
    if counts.other > max(counts.hangul, counts.latin):
        return "other"
    return "ko" if counts.hangul >= counts.latin else "en"


def detect_language(text: str) -> Language:
    """``en``, ``ko``, ``other`` or ``none``, from the letters' scripts alone."""
    return language_of(count_scripts(text))


def is_mixed_script(counts: ScriptCounts, *, minority_share: float) -> bool:
    """True when the smaller of Hangul and Latin still holds at least ``minority_share`` of letters."""
    if counts.letters == 0:
        return False
    return min(counts.hangul, counts.latin) / counts.letters >= minority_share
