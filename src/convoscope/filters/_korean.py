"""Korean signals: jamo decomposition, chat-marker whitelist, syllable completeness, jamo diversity
and the morpheme check (seed 000, appendix A.2).

Jamo come from Unicode arithmetic: a precomposed syllable is 0xAC00 + (initial * 21 + vowel) * 28
+ final. The Markov model sees *positional* jamo (an initial ㄱ differs from a final ㄱ), so a run
of bare consonants typed on the 2-set keyboard (ㅁㄴㅇㄹ) becomes initial-after-initial, a
transition real text almost never makes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from convoscope.filters._langid import SYLLABLE_FIRST, is_hangul_jamo, is_hangul_syllable

INITIALS = "".join(chr(0x1100 + i) for i in range(19))
VOWELS = "".join(chr(0x1161 + i) for i in range(21))
FINALS = "".join(chr(0x11A8 + i) for i in range(27))
KOREAN_ALPHABET = " " + INITIALS + VOWELS + FINALS

# Compatibility jamo (U+3131..) in the orders the conjoining blocks use.
_COMPAT_INITIALS = "ㄱㄲㄴㄷㄸㄹㅁㅂㅃㅅㅆㅇㅈㅉㅊㅋㅌㅍㅎ"
_COMPAT_FINALS = "ㄱㄲㄳㄴㄵㄶㄷㄹㄺㄻㄼㄽㄾㄿㅀㅁㅂㅄㅅㅆㅇㅈㅊㅋㅌㅍㅎ"
_COMPAT_VOWELS = "".join(chr(0x314F + i) for i in range(21))
_TO_POSITIONAL = {
    **{c: f for c, f in zip(_COMPAT_FINALS, FINALS, strict=True)},  # clusters like ㄳ exist only as finals
    **{c: i for c, i in zip(_COMPAT_INITIALS, INITIALS, strict=True)},
    **{c: v for c, v in zip(_COMPAT_VOWELS, VOWELS, strict=True)},
}
_TO_COMPAT = {
    **{i: c for c, i in zip(_COMPAT_INITIALS, INITIALS, strict=True)},
    **{v: c for c, v in zip(_COMPAT_VOWELS, VOWELS, strict=True)},
    **{f: c for c, f in zip(_COMPAT_FINALS, FINALS, strict=True)},
}

# Laughter (ㅋ ㅎ), crying (ㅠ ㅜ) and the annoyed ㅡㅡ are attached to real words all the time
# ("맛있어요ㅋㅋ"); they carry tone, not content, so they are set aside before the rules run.
CHAT_MARKERS = re.compile(r"[ㅋㅎㅠㅜ]+|ㅡ{2,}")
_LAUGHTER_SYLLABLES = re.compile(r"[하허호히헤흐크키킥큭푸후]{2,}")

DEFAULT_KO_WHITELIST = frozenset(
    # Short answers whose 1-2 syllables cannot reach 4 distinct jamo: yes / no / hmm / wow.
    "네 넵 넹 넴 넷 예 옙 응 웅 엉 어 음 흠 흐음 아 오 와 우와 헐 굿 노 놉 뭐 왜 쏘쏘 그닥 글쎄 "
    "네네 넵넵 응응 예예 오오 와와 헐헐 노노 짱 짱짱 굿굿 굳 굳굳 노잼 꿀잼 "
    # Consonant-only chat abbreviations: ok, no-no, go, thanks, sorry, agreed, bye, hi, ...
    "ㅇㅇ ㅇㅇㅇ ㅇㅋ ㅇㅋㅇㅋ ㄴㄴ ㄴㄴㄴ ㄱㄱ ㄷㄷ ㄷㄷㄷ ㅎㄷㄷ ㅊㅋ ㄳ ㄱㅅ ㄱㅊ ㅈㅅ ㅇㅈ ㅂㅂ ㅃㅃ "
    "ㅎㅇ ㅅㄱ ㄹㅇ ㅁㄹ ㅂㄷㅂㄷ ㄴㅇㅅ ㄱㄷ ㅇㄱㄹㅇ ㄱㅇㄷ "
    # Clipped chat spellings the analyser does not know: fine (괜찮아), delicious, so much, great.
    "갠춘 괜춘 존맛 존맛탱 꿀맛 노맛 별루 넘나 핵노잼 핵꿀잼 개꿀 쩔어 쩐다 오진다 굿굿굿".split()
)


def _listed(token: str, whitelist: frozenset[str]) -> bool:
    """A whitelisted form, or a form of two different letters said two or three times
    (ㅊㅋㅊㅋ, ㅇㅋㅇㅋㅇㅋ); one letter held down (아아아아아, ㄱㄱㄱㄱㄱㄱ) stays noise."""
    if token in whitelist:
        return True
    unit = token[:2]
    return (len(set(unit)) == 2 and len(token) in (4, 6) and unit * (len(token) // 2) == token
            and unit in whitelist)


def to_jamo(text: str) -> str:
    """Positional jamo for every Hangul letter; any other character becomes a space."""
    out: list[str] = []
    for char in text:
        if is_hangul_syllable(char):
            index = ord(char) - SYLLABLE_FIRST
            out.append(INITIALS[index // 588] + VOWELS[index % 588 // 28])
            if index % 28:
                out.append(FINALS[index % 28 - 1])
        elif char in _TO_POSITIONAL:
            out.append(_TO_POSITIONAL[char])
        elif is_hangul_jamo(char) and char in _TO_COMPAT:
            out.append(char)
        else:
            out.append(" ")
    return " " + " ".join("".join(out).split()) + " "


def korean_symbols(text: str) -> str:
    """What the Korean Markov model scores: positional jamo, single spaces, padded at both ends."""
    return to_jamo(text)


@dataclass(frozen=True)
class KoreanSignals:
    """Measurements on the Hangul left after chat markers and whitelisted tokens are set aside."""

    remaining: str
    whitelisted: bool
    complete_syllable_ratio: float | None
    distinct_jamo: int | None


def set_aside_chat_forms(text: str, whitelist: frozenset[str]) -> tuple[str, bool]:
    """Drop laughter/crying markers and whitelisted tokens; say whether anything was dropped."""
    hangul_only = "".join(c if is_hangul_syllable(c) or is_hangul_jamo(c) else " " for c in text)
    # Whitelist first, so that ㅇㅋ is kept whole before its ㅋ is read as laughter.
    unlisted = " ".join(token for token in hangul_only.split() if not _listed(token, whitelist))
    kept = [token for token in CHAT_MARKERS.sub(" ", unlisted).split()
            if not _listed(token, whitelist) and not _LAUGHTER_SYLLABLES.fullmatch(token)]
    remaining = " ".join(kept)
    return remaining, remaining != " ".join(hangul_only.split())


def korean_signals(text: str, whitelist: frozenset[str]) -> KoreanSignals:
    remaining, dropped = set_aside_chat_forms(text, whitelist)
    if not remaining:
        return KoreanSignals("", dropped, None, None)
    syllables = sum(1 for c in remaining if is_hangul_syllable(c))
    bare_jamo = sum(1 for c in remaining if is_hangul_jamo(c))
    distinct = {_TO_COMPAT.get(j, j) for j in to_jamo(remaining) if j != " "}
    return KoreanSignals(remaining, False, syllables / (syllables + bare_jamo), len(distinct))


# Content morphemes: nouns, pronouns, numerals (N*), verbs and adjectives (V*), determiners and
# adverbs (M*), interjections (IC) and roots (XR). Particles and endings alone do not count: the
# analyser will read a stray syllable as an ending, which says nothing about meaning.
_CONTENT_TAG_PREFIXES = ("N", "V", "M", "IC", "XR")


def has_content_morpheme(analyser: object, text: str) -> bool:
    """True when the analyser finds a known (not out-of-vocabulary) content morpheme in ``text``."""
    tokens = analyser.tokenize(text)  # type: ignore[attr-defined]
    return any(not token.oov and token.tag.startswith(_CONTENT_TAG_PREFIXES) for token in tokens)


def has_content_morphemes(analyser: object, texts: list[str]) -> list[bool]:
    """``has_content_morpheme`` for many texts in one call (Kiwi batches them internally)."""
    results = analyser.tokenize(texts)  # type: ignore[attr-defined]
    return [any(not token.oov and token.tag.startswith(_CONTENT_TAG_PREFIXES) for token in tokens)
            for tokens in results]
