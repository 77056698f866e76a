"""MTLD, the measure of textual lexical diversity (McCarthy and Jarvis, 2010), and tokenising.

MTLD walks through the tokens keeping a running type-token ratio; each time the ratio falls to
the threshold (0.72) a "factor" is complete and the count starts again. What is left at the end
counts as a partial factor, ``(1 - ttr) / (1 - threshold)``. The text length divided by the
number of factors is computed forwards and backwards, and MTLD is their mean. Unlike the raw
type-token ratio, it barely depends on how long the text is.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

_CHARACTER_LANGUAGES = {"zh", "ja"}
_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*", re.UNICODE)
_HAN_OR_KANA = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def counts_characters(language: str | None) -> bool:
    """Chinese and Japanese are written without spaces: length and tokens are characters."""
    return (language or "").split("-")[0] in _CHARACTER_LANGUAGES


def tokens(text: str, language: str | None = None) -> list[str]:
    """Lower-cased word tokens; for Chinese and Japanese, each Han or kana character (plus any
    words in other scripts)."""
    lowered = text.lower()
    if counts_characters(language):
        found = _HAN_OR_KANA.findall(lowered)
        found.extend(_WORD.findall(_HAN_OR_KANA.sub(" ", lowered)))
        return found
    return _WORD.findall(lowered)


def utterance_length(text: str, language: str | None = None) -> int:
    """Characters (no spaces or punctuation) for Chinese / Japanese, words otherwise."""
    if counts_characters(language):
        return sum(1 for char in text if char.isalnum())
    return len(_WORD.findall(text))


def mtld(words: Sequence[str], *, threshold: float = 0.72) -> float:
    """MTLD of a token sequence; NaN for an empty one. Higher means more diverse vocabulary."""
    if not 0.0 < threshold < 1.0:
        raise ValueError(f"threshold must lie strictly between 0 and 1, got {threshold}")
    if not words:
        return math.nan
    forward = _one_direction(words, threshold)
    backward = _one_direction(list(reversed(words)), threshold)
    return (forward + backward) / 2


def _one_direction(words: Sequence[str], threshold: float) -> float:
    types: set[str] = set()
    count = 0
    factors = 0.0
    ttr = 1.0
    for word in words:
        count += 1
        types.add(word)
        ttr = len(types) / count
        if ttr <= threshold:
            factors += 1
            types, count = set(), 0
    if count:
        factors += (1 - ttr) / (1 - threshold)
    if factors == 0:  # never fell to the threshold and no remainder: every token distinct
        factors = 1.0
    return len(words) / factors
