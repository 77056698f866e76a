"""Rules that hold in any language, for answers in languages the filter has no model for.

A Portuguese or German answer must never be flagged for not being English, so only three kinds
of noise are judged: keyboard mashes (runs along a keyboard row: asdf, qwer, hjkl, on QWERTY,
AZERTY, QWERTZ, the Spanish, Portuguese and German rows and the Japanese kana layout), letters
repeated or recycled with almost no variety (aaaaaaa) and a short stretch typed over and over
(asdasdasd, lkjlkjlkj, azeaze). Laughter is set aside before these rules run
(``_multilingual``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import regex

from convoscope.text import LETTERS

# What a key run looks like as typed: letters with their marks, and the home row's semicolon.
_TYPED = regex.compile(r"(?:[\p{L}\p{M}]|;)+")

# QWERTY, AZERTY and QWERTZ rows, each read both ways: a mash slides along a row.
_ROWS = ("qwertyuiop", "asdfghjkl;", "zxcvbnm", "azertyuiop", "qsdfghjklm", "wxcvbn", "qwertzuiop",
         "yxcvbnm", "asdfghjklñ", "asdfghjklç", "asdfghjklöä", "qwertzuiopü",
         # The Japanese kana layout (JIS), row by row.
         "ぬふあうえおやゆよわほへ", "たていすかんなにらせ", "ちとしはきくまのりれけむ",
         "つさそひこみもねるめろ")
_ROW_PAIRS = frozenset(pair for row in _ROWS for word in (row, row[::-1])
                       for pair in zip(word, word[1:], strict=False))
_REPEATS = re.compile(r"(\w)\1{3,}")
# A stretch of 2-4 letters typed three or more times, or of 3-4 letters typed twice or more.
_RECYCLED = re.compile(r"(\w{2})\1{2,}|(\w{3,4})\2+")
_RECYCLED_TYPED = re.compile(r"([\w;]{2})\1{2,}|([\w;]{3,4})\2+")


@dataclass(frozen=True)
class NeutralSignals:
    letters: int
    mash_share: float  # share of letters inside keyboard-row runs of 4 or more
    repeat_share: float  # share of letters inside runs of one letter repeated 4+ times
    distinct_letters: int
    recycled_share: float = 0.0  # share of letters in words that repeat one short stretch


def _row_run_letters(word: str) -> int:
    covered, run = 0, 1
    for left, right in zip(word, word[1:], strict=False):
        if (left, right) in _ROW_PAIRS:
            run += 1
            continue
        covered += run if run >= 4 else 0
        run = 1
    return covered + (run if run >= 4 else 0)


def neutral_signals(text: str, *, keys: str | None = None,
                    known: Callable[[str], bool] | None = None) -> NeutralSignals:
    """Measurements on ``text``; ``keys`` is what typed it where that differs (a Japanese input
    method's romaji), and a mash may show in either. Words ``known`` to the language's word list
    ("bonbon", "papa") count as letters but never as noise."""
    words = LETTERS.findall(text.lower())
    letters = sum(map(len, words))
    if not letters:
        return NeutralSignals(0, 0.0, 0.0, 0)
    if known is not None:
        noisy = [word for word in words if not known(word)]
        if len(noisy) < len(words):
            signals = neutral_signals(" ".join(noisy), keys=None if keys is None else
                                      " ".join(k for k in keys.split() if not known(k)))
            return NeutralSignals(letters, signals.mash_share * signals.letters / letters,
                                  signals.repeat_share * signals.letters / letters,
                                  len({char for word in words for char in word}),
                                  signals.recycled_share * signals.letters / letters)
    mashed = sum(_row_run_letters(word) for word in words) / letters
    recycled = sum(len(word) for word in words if _RECYCLED.fullmatch(word)) / letters
    if keys is not None:
        # The semicolon sits on the home row: "jkl;jkl;" is a mash as typed.
        typed = [word for word in _TYPED.findall(keys.lower()) if word.strip(";")]
        if typed:
            size = sum(map(len, typed))
            mashed = max(mashed, sum(_row_run_letters(word) for word in typed) / size)
            recycled = max(recycled, sum(len(w) for w in typed if _RECYCLED_TYPED.fullmatch(w)) / size)
    repeated = sum(len(match.group(0)) for word in words for match in _REPEATS.finditer(word))
    return NeutralSignals(letters, mashed, repeated / letters,
                          len({char for word in words for char in word}), recycled)


def neutral_reasons(signals: NeutralSignals, *, max_noise_share: float) -> tuple[str, ...]:
    """``keyboard_mash`` / ``repeated_characters`` / ``few_distinct_letters`` when they fire."""
    reasons = []
    if signals.mash_share > max_noise_share:
        reasons.append("keyboard_mash")
    if signals.repeat_share > max_noise_share:
        reasons.append("repeated_characters")
    if signals.letters >= 8 and signals.distinct_letters <= 2:
        reasons.append("few_distinct_letters")
    if signals.recycled_share > max_noise_share:
        reasons.append("repeated_pattern")
    return tuple(reasons)
