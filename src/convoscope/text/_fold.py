"""Text as the rules read it, with a way back to the text as it arrived.

Every rule that reads people's text (gibberish, imitation, grader requests, synth checks, survey
features) reads :func:`fold_text`'s output, never its own normalisation:

* NFKC per grapheme cluster: full-width ``ｓｃｏｒｅ`` is ``score``, ``①`` is ``1``, ``ﬁ`` is ``fi``;
* format characters (Unicode category Cf: zero-width space and joiners, soft hyphen, bidi
  controls, tag characters) and variation selectors dropped, so ``</an\u200bswer>`` is
  ``</answer>``; a keycap (``7\ufe0f\u20e3``) is its digit;
* case folded, curly quotes straightened, the fraction slash read as ``/``;
* confusable letters folded to their Latin skeleton (Unicode TR39 ``confusables.txt``, through
  the ``confusable-homoglyphs`` package) where a word mixes Latin with another script (``еffort``
  with a Cyrillic ``е``), or where a word of another script stands wholly made of Latin look-alikes
  inside Latin text (``ѕсоrе``). A Russian word in Russian text is left alone.

``Folded.origin`` maps every character of the folded text to the index of the character of the
original it came from, so a rule that matches on the folded text reports the original's span.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import regex

from convoscope._folders import keep_file, kept_name

_GRAPHEME = regex.compile(r"\X")
# Letters and the marks that belong to them: Devanagari matras and Thai vowel and tone marks stay
# inside the word (the standard library's ``\w`` leaves combining marks out).
_LETTERS = regex.compile(r"[\p{L}\p{M}]+")
_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u201e": '"',
                         "\u2044": "/", "\u2215": "/"})
_KEYCAP = "\u20e3"
_COMPATIBILITY_JAMO = regex.compile(r"[\u3130-\u318f]")
_LATIN = regex.compile(r"\p{Latin}")
_QUOTE_CHARS = regex.compile("[\u2018\u2019\u201c\u201d\u201e\u2044\u2215]")
_DROPPED = regex.compile(r"[\p{Cf}\ufe00-\ufe0f\u20e3\U000e0100-\U000e01ef]")


def _dropped(char: str) -> bool:
    """Characters that change nothing a reader sees: format characters, variation selectors and
    the enclosing keycap (its digit stays)."""
    return (unicodedata.category(char) == "Cf" or "\ufe00" <= char <= "\ufe0f" or char == _KEYCAP
            or "\U000e0100" <= char <= "\U000e01ef")


@dataclass(frozen=True)
class Folded:
    """The folded text and, per folded character, the index of the original character it came from."""

    source: str
    text: str
    origin: Sequence[int]
    ends: Sequence[int]  # per folded character, where its original cluster ends

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """The span of the original text that the folded span ``[start, end)`` came from (whole
        grapheme clusters: a letter with its marks)."""
        if start >= len(self.origin):
            return len(self.source), len(self.source)
        first = self.origin[start]
        if end <= start:
            return first, first
        return first, self.ends[end - 1]

    def original(self, start: int, end: int) -> str:
        first, stop = self.original_span(start, end)
        return self.source[first:stop]


def fold_text(text: str, *, casefold: bool = True) -> Folded:
    """The text every rule reads (see the module docstring), with its map back to ``text``.
    ``casefold=False`` keeps letter case (the gibberish rules read capitals: "BMW", "VW Golf")."""
    if text.isascii():  # nothing to normalise, drop or fold but case: the common case, kept fast
        return Folded(text, text.lower() if casefold else text, range(len(text)), range(1, len(text) + 1))
    if unicodedata.is_normalized("NFKC", text) and not _DROPPED.search(text):
        # Already normal and nothing to drop (most answers in any script): fold character for
        # character, so every character maps to itself.
        folded = text.casefold() if casefold else text
        if _QUOTE_CHARS.search(folded):
            folded = folded.translate(_QUOTES)
        if len(folded) == len(text):
            return Folded(text, _fold_confusables(folded), range(len(text)), range(1, len(text) + 1))
    chars: list[str] = []
    origin: list[int] = []
    ends: list[int] = []
    for match in _GRAPHEME.finditer(text):
        cluster = match.group(0)
        if not _COMPATIBILITY_JAMO.match(cluster):  # NFKC would turn ㅋ into a conjoining jamo
            cluster = unicodedata.normalize("NFKC", cluster)
        kept = "".join(char for char in cluster if not _dropped(char))
        folded = (kept.casefold() if casefold else kept).translate(_QUOTES)
        chars.extend(folded)
        origin.extend([match.start()] * len(folded))
        ends.extend([match.end()] * len(folded))
    skeleton = _fold_confusables("".join(chars))
    return Folded(text, skeleton, tuple(origin), tuple(ends))


def fold(text: str, *, casefold: bool = True) -> str:
    """The folded text alone."""
    return fold_text(text, casefold=casefold).text


@lru_cache(maxsize=1)
def _latin_skeleton() -> dict[str, str]:
    """Letter of another script -> the Latin letter TR39 says it is confusable with. Built once
    per machine and kept (as the filter's other tables are, ``convoscope._folders``): building it
    loads the package's whole confusables data, about 0.1 s, for a table of a few hundred letters."""
    kept = _kept_skeleton_path()
    if kept is not None:
        table = _read_kept_skeleton(kept)
        if table is not None:
            return table
    table = _build_latin_skeleton()
    if kept is not None:
        keep_file(kept, json.dumps(table, ensure_ascii=False).encode("utf-8"))
    return table


# Raise when _build_latin_skeleton's rule changes: a table kept by an older rule is then not read.
_SKELETON_RULE = 1


def _kept_skeleton_path() -> Path | None:
    """Named by the package's release and its data file's size and time; None when the package
    is not where its files can be seen."""
    spec = importlib.util.find_spec("confusable_homoglyphs")
    if spec is None or not spec.submodule_search_locations:
        return None
    source = Path(next(iter(spec.submodule_search_locations))) / "confusables.json"
    try:
        return kept_name("confusable-homoglyphs", source, f"latin-skeleton{_SKELETON_RULE}", suffix=".json")
    except OSError:
        return None


def _read_kept_skeleton(path: Path) -> dict[str, str] | None:
    """The kept table, or None (and a damaged file removed) when it is missing or not a table of
    single letters."""
    try:
        table = json.loads(path.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        with contextlib.suppress(OSError):
            path.unlink()
        return None
    if not (isinstance(table, dict) and all(
            isinstance(key, str) and isinstance(value, str) and len(key) == len(value) == 1
            for key, value in table.items())):
        with contextlib.suppress(OSError):
            path.unlink()
        return None
    return table


def _build_latin_skeleton() -> dict[str, str]:
    from confusable_homoglyphs import categories, confusables

    table: dict[str, str] = {}
    for char, homoglyphs in confusables.confusables_data.items():
        if len(char) != 1 or not char.isalpha() or categories.alias(char) in ("LATIN", "COMMON"):
            continue
        latin = [glyph["c"] for glyph in homoglyphs
                 if len(glyph["c"]) == 1 and glyph["c"].isascii() and glyph["c"].isalpha()]
        if latin:
            # The Latin letter of the same case: "Е" is "E", "е" is "e".
            table[char] = min(latin, key=lambda letter: (letter.islower() != char.islower(), letter))
    return table


@lru_cache(maxsize=1)
def _lookalike_pattern() -> regex.Pattern[str]:
    return regex.compile("[" + "".join(regex.escape(char) for char in sorted(_latin_skeleton())) + "]")


@lru_cache(maxsize=8192)  # the package looks scripts up by a scan of ranges: slow per character
def script_of(char: str) -> str:
    """The Unicode script of a character (``LATIN``, ``CYRILLIC``, ``DEVANAGARI``, ``HAN``...;
    ``COMMON`` for digits and punctuation, ``INHERITED`` for most combining marks)."""
    from confusable_homoglyphs import categories

    try:
        return str(categories.alias(char))
    except (KeyError, IndexError, TypeError):
        return "UNKNOWN"


def _fold_confusables(text: str) -> str:
    # A fold needs a Latin letter in the text: a word mixing scripts, or Latin text around a word.
    if _LATIN.search(text) is None:
        return text
    table = _latin_skeleton()
    if _lookalike_pattern().search(text) is None:
        return text
    from convoscope.text._words import dominant_script

    latin_text = dominant_script(text) == "LATIN"
    pieces: list[str] = []
    last = 0
    for match in _LETTERS.finditer(text):
        word = match.group(0)
        if not any(char in table for char in word):
            continue
        scripts = {script_of(char) for char in word if char.isalpha()}
        mixed = "LATIN" in scripts and len(scripts) > 1
        lookalike = latin_text and all(char in table for char in word if char.isalpha())
        if mixed or lookalike:
            pieces.append(text[last:match.start()])
            pieces.append("".join(table.get(char, char) for char in word))
            last = match.end()
    pieces.append(text[last:])
    return "".join(pieces)
