"""The one text layer under every rule that reads people's text: normalisation (NFKC), format
characters removed, confusables folded to their Latin skeleton, words on grapheme clusters, the
script of every span. Rules match on ``fold_text(text).text`` and report spans of the original
through ``Folded.original_span``."""

from convoscope.text._fold import Folded, fold, fold_text, script_of
from convoscope.text._words import (
    GRAPHEME,
    LETTERS,
    WORD,
    ScriptSpan,
    dominant_script,
    graphemes,
    script_spans,
    thai_segmenter_available,
    thai_words,
    words,
)

__all__ = ["GRAPHEME", "LETTERS", "WORD", "Folded", "ScriptSpan", "dominant_script", "fold", "fold_text",
           "graphemes", "script_of", "script_spans", "thai_segmenter_available", "thai_words", "words"]
