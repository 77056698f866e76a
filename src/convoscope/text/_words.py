"""Words, grapheme clusters and scripts, the same way for every rule.

A word is a run of letters *with their marks* (the ``regex`` module's Unicode classes): the
Devanagari ``डिलीवरी`` and the Thai ``ส่ง`` are one word each, where the standard library's
``[^\\W\\d_]+`` cut them at every vowel sign. An apostrophe between letters stays inside
(``don't``, ``aujourd'hui``).

Scripts written without spaces between words are cut into words by a segmenter when one is
installed: Thai by PyThaiNLP's dictionary segmenter (``newmm``, offline, its own word list).
Han and kana runs are left whole here; the rules that read them look at characters.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from functools import lru_cache

import regex

from convoscope.text._fold import script_of

WORD = regex.compile(r"[\p{L}\p{M}]+(?:'[\p{L}\p{M}]+)*")
# A run of letters with their marks and nothing else (no apostrophe, no segmentation): what a
# keyboard mash looks like in any script.
LETTERS = regex.compile(r"[\p{L}\p{M}]+")
GRAPHEME = regex.compile(r"\X")
_THAI = regex.compile(r"\p{Script=Thai}")


def graphemes(text: str) -> list[str]:
    """User-perceived characters: a letter with its combining marks counts once."""
    return GRAPHEME.findall(text)


def thai_segmenter_available() -> bool:
    return importlib.util.find_spec("pythainlp") is not None


@lru_cache(maxsize=4096)
def _segment_thai(run: str) -> tuple[str, ...]:
    from pythainlp.tokenize import word_tokenize

    return tuple(piece for piece in word_tokenize(run, engine="newmm", keep_whitespace=False)
                 if piece.strip())


@lru_cache(maxsize=1)
def thai_words() -> frozenset[str]:
    """PyThaiNLP's Thai dictionary (empty when PyThaiNLP is not installed)."""
    if not thai_segmenter_available():
        return frozenset()
    from pythainlp.corpus import thai_words as words

    return frozenset(words())


def words(text: str) -> list[str]:
    """The words of ``text`` (run on folded text): letters with their marks; Thai runs cut by the
    segmenter when it is installed."""
    out: list[str] = []
    for word in WORD.findall(text):
        if _THAI.search(word) and thai_segmenter_available():
            out.extend(_segment_thai(word))
        else:
            out.append(word)
    return out


@dataclass(frozen=True)
class ScriptSpan:
    start: int
    end: int
    script: str


def script_spans(text: str) -> list[ScriptSpan]:
    """Maximal runs of one script. Digits, spaces and punctuation (``COMMON``) and combining marks
    (``INHERITED``) join the run they sit in, so ``हुई और`` is one Devanagari span."""
    spans: list[ScriptSpan] = []
    for index, char in enumerate(text):
        script = script_of(char)
        if script in ("COMMON", "INHERITED", "UNKNOWN"):
            if spans:
                spans[-1] = ScriptSpan(spans[-1].start, index + 1, spans[-1].script)
            continue
        if spans and spans[-1].script == script:
            spans[-1] = ScriptSpan(spans[-1].start, index + 1, script)
        else:
            spans.append(ScriptSpan(index, index + 1, script))
    return spans


def dominant_script(text: str) -> str:
    """The script most letters of ``text`` are written in (``COMMON`` when it has none)."""
    counts: dict[str, int] = {}
    for char in text:
        if char.isalpha():
            script = "LATIN" if char.isascii() else script_of(char)
            counts[script] = counts.get(script, 0) + 1
    return max(counts, key=counts.__getitem__) if counts else "COMMON"
