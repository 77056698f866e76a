"""Rules that hold in any language, for answers in languages the filter has no model for.

A Portuguese or German answer must never be flagged for not being English, so only two kinds of
noise are judged: keyboard mashes (runs along a keyboard row: asdf, qwer, hjkl) and letters
repeated or recycled with almost no variety (aaaaaaa, ababab). Laughter such as Brazilian
"kkkkkk" is one run among real words, so it stays under the share that flags an answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# QWERTY, AZERTY and QWERTZ rows, each read both ways: a mash slides along a row.
_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm", "azertyuiop", "qsdfghjklm", "wxcvbn", "qwertzuiop",
         "yxcvbnm")
_ROW_PAIRS = frozenset(pair for row in _ROWS for word in (row, row[::-1])
                       for pair in zip(word, word[1:], strict=False))
_REPEATS = re.compile(r"(\w)\1{3,}")


@dataclass(frozen=True)
class NeutralSignals:
    letters: int
    mash_share: float  # share of letters inside keyboard-row runs of 4 or more
    repeat_share: float  # share of letters inside runs of one letter repeated 4+ times
    distinct_letters: int


def _row_run_letters(word: str) -> int:
    covered, run = 0, 1
    for left, right in zip(word, word[1:], strict=False):
        if (left, right) in _ROW_PAIRS:
            run += 1
            continue
        covered += run if run >= 4 else 0
        run = 1
    return covered + (run if run >= 4 else 0)


def neutral_signals(text: str) -> NeutralSignals:
    words = [word for word in re.findall(r"[^\W\d_]+", text.lower()) if word]
    letters = sum(map(len, words))
    if not letters:
        return NeutralSignals(0, 0.0, 0.0, 0)
    mashed = sum(_row_run_letters(word) for word in words)
    repeated = sum(len(match.group(0)) for word in words for match in _REPEATS.finditer(word))
    return NeutralSignals(letters, mashed / letters, repeated / letters,
                          len({char for word in words for char in word}))


def neutral_reasons(signals: NeutralSignals, *, max_noise_share: float) -> tuple[str, ...]:
    """``keyboard_mash`` / ``repeated_characters`` / ``few_distinct_letters`` when they fire."""
    reasons = []
    if signals.mash_share > max_noise_share:
        reasons.append("keyboard_mash")
    if signals.repeat_share > max_noise_share:
        reasons.append("repeated_characters")
    if signals.letters >= 8 and signals.distinct_letters <= 2:
        reasons.append("few_distinct_letters")
    return tuple(reasons)
