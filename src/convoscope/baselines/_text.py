"""Lexical baselines that need no model: response length and TF-IDF cosine similarity.

Both read text through one tokenizer, :func:`tfidf_tokens`: a run of letters or digits (with inner
apostrophes) is one word, and every Han, kana or Hangul character is a token of its own, so a
length counts words in space-separated scripts and characters in Chinese, Japanese and Korean.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np
import regex

from convoscope.text import fold

_CJK = "\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
# The regex module's \w holds combining marks, so "डिलीवरी" is one word (the re module cut it at
# every vowel sign); the text is read through the text layer's fold (NFKC, format characters).
_TOKEN = regex.compile(rf"[{_CJK}]|[^\W_{_CJK}]+(?:['’][^\W_{_CJK}]+)*")


def tfidf_tokens(text: str) -> list[str]:
    """Lower-cased words, with each CJK character a token of its own (digits count as words).

    Not :func:`convoscope.synth.tokens`, which reads words for lexical diversity (letters only).

    Example: ``tfidf_tokens("I don't know 한국어")`` is ``['i', "don't", 'know', '한', '국', '어']``.
    """
    return _TOKEN.findall(fold(text))


# For length, only Chinese and Japanese count character by character: they are written without
# spaces. Korean separates words with spaces, so a run of Hangul is one word.
_HAN_KANA = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_LENGTH_TOKEN = regex.compile(rf"[{_HAN_KANA}]|[^\W_{_HAN_KANA}]+(?:['’][^\W_{_HAN_KANA}]+)*")


def length(text: str) -> int:
    """Length of a text in words; Chinese and Japanese in characters (they have no spaces).

    Example: ``length("I don't know 한국어 좋아요 今日")`` is 7.
    """
    return len(_LENGTH_TOKEN.findall(fold(text, casefold=False)))


class TfidfSpace:
    """TF-IDF vectors over a fixed collection of texts, for cosine similarity between any two.

    Weights follow scikit-learn's ``TfidfVectorizer`` defaults (raw counts times the smoothed
    idf ``ln((1 + n) / (1 + df)) + 1``, each vector scaled to unit length), with :func:`tokens`
    as the tokenizer. The collection is the documents of one run, e.g. every context and
    response of an items file, so rare shared words weigh more than common ones.
    """

    def __init__(self, documents: Sequence[str]) -> None:
        if not documents:
            raise ValueError("TfidfSpace: needs at least one document")
        counted = [Counter(tfidf_tokens(text)) for text in documents]
        frequency: Counter[str] = Counter()
        for counts in counted:
            frequency.update(counts.keys())
        total = len(documents)
        self._idf = {word: math.log((1 + total) / (1 + df)) + 1.0 for word, df in frequency.items()}

    def vector(self, text: str) -> dict[str, float]:
        """The unit-length TF-IDF vector of ``text`` (words unseen in the collection are dropped,
        as a fitted vectorizer drops them)."""
        weights = {word: count * self._idf[word] for word, count in Counter(tfidf_tokens(text)).items()
                   if word in self._idf}
        norm = math.sqrt(sum(weight * weight for weight in weights.values()))
        return {word: weight / norm for word, weight in weights.items()} if norm else {}

    def cosine(self, first: str, second: str) -> float:
        """Cosine similarity of two texts, 0 when either has no known word."""
        left, right = self.vector(first), self.vector(second)
        if len(right) < len(left):
            left, right = right, left
        return float(sum(weight * right.get(word, 0.0) for word, weight in left.items()))


def cosine(first: np.ndarray, second: np.ndarray) -> float:
    """Cosine similarity of two vectors; a zero vector raises, since it has no direction."""
    norms = float(np.linalg.norm(first)) * float(np.linalg.norm(second))
    if norms == 0.0:
        raise ValueError("cosine: a zero vector has no direction")
    return float(np.dot(first, second) / norms)
