"""Text patterns a simulated user turn is checked against: speaker labels, role breaks, markup and
symbol soup. Pure functions over strings, loaded once from ``synth/data/role_rules.yaml``.

Every language's patterns apply to every dialogue: a small model asked for Korean often falls
back to English, and an "As an AI" is a role break whichever language it is written in.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache
from importlib import resources
from typing import Any

import yaml

from convoscope.text import fold, graphemes, words

_QUOTES = "\"'“”‘’«»「」『』"
# What may come right before a speaker label: the start, a space, a sentence end or an opening quote.
_BEFORE_LABEL = r"(?:^|(?<=[\s.!?。！？,，;；\"“「(]))"
_MARKUP = re.compile(r"\*\*|__|```|\[/?INST\]|<<SYS>>|</?[A-Za-z][A-Za-z0-9]*(?:\s[^<>]*)?>|<<?[A-Z]{3,}"
                     r"|^#{1,6}\s|\[[^\]]+\]\([^)]+\)")


@cache
def _rules() -> dict[str, dict[str, Any]]:
    text = resources.files("convoscope.synth").joinpath("data/role_rules.yaml").read_text("utf-8")
    loaded: dict[str, dict[str, Any]] = yaml.safe_load(text)
    return loaded


def _alternatives(words: list[str]) -> str:
    return "|".join(re.escape(word).replace(r"\ ", r"\s") for word in sorted(words, key=len, reverse=True))


@cache
def _own_label_at_start() -> re.Pattern[str]:
    words = [word for entry in _rules().values() for word in entry["own_labels"]]
    return re.compile(rf"^\s*(?:\*\*)?(?:{_alternatives(words)})(?:\*\*)?\s*[:：]\s*", re.IGNORECASE)


@cache
def _any_label() -> re.Pattern[str]:
    words = [word for entry in _rules().values() for key in ("own_labels", "other_labels")
             for word in entry[key]]
    return re.compile(rf"{_BEFORE_LABEL}(?:\*\*)?(?:{_alternatives(words)})(?:\*\*)?\s*[:：]",
                      re.IGNORECASE | re.MULTILINE)


@cache
def _role_break() -> re.Pattern[str]:
    patterns = [pattern for entry in _rules().values() for pattern in entry["role_breaks"]]
    return re.compile("|".join(f"(?:{pattern})" for pattern in patterns), re.IGNORECASE)


def clean_user_text(text: str) -> str:
    """Strip the wrappers small models add around a message: quotes and the user's own label at
    the start (``User:``, ``사용자:``, ``Usuário:`` …, in any seed language)."""
    cleaned = text.strip()
    for _ in range(2):
        cleaned = _own_label_at_start().sub("", cleaned).strip().strip(_QUOTES).strip()
    return cleaned


def speaker_label(text: str) -> str | None:
    """The first speaker label in the text (``chatbot:``, ``User:`` mid-text, ``챗봇:`` …)."""
    match = _any_label().search(text)
    return match.group(0).strip() if match else None


def role_break(text: str) -> str | None:
    """The words with which the user speaks as an assistant or as an AI, if any."""
    match = _role_break().search(text)
    return match.group(0) if match else None


def markup(text: str) -> str | None:
    """Formatting nobody types in a chat box: ``**bold**``, HTML tags, chat-template tokens."""
    match = _MARKUP.search(text)
    return match.group(0) if match else None


# Punctuation people type in a sentence; every other non-letter, non-digit character (emoji,
# stars, hashes, brackets, pictographs) counts as a symbol.
_SENTENCE_PUNCTUATION = frozenset(".,!?;:'\"()…-–—~%/&@¿¡。、，！？；：（）「」『』・〜")


def symbol_share(text: str) -> tuple[int, int]:
    """(symbols, letters) among the visible characters."""
    symbols = letters = 0
    for char in text:
        if char.isspace() or char.isdigit() or char in _SENTENCE_PUNCTUATION:
            continue
        if char.isalpha() or unicodedata.category(char).startswith("M"):
            letters += 1
        else:
            symbols += 1
    return symbols, letters


def mostly_symbols(text: str) -> bool:
    """More symbols than letters and letters under a third of the visible characters, or symbol
    soup in any script: three or more "words" of one grapheme each, with as many symbols and
    brackets as letters around them ("(소) (가) (가)", "[a] [b] [c]"). Read on the text layer's
    folded text, so marks stay inside their letters."""
    folded = fold(text, casefold=False)
    symbols, letters = symbol_share(folded)
    visible = sum(not char.isspace() for char in folded)
    if symbols > letters and letters * 3 < visible:
        return True
    found = words(folded)
    marks = sum(not char.isspace() and not char.isalnum() for char in folded)
    return len(found) >= 3 and all(len(graphemes(word)) == 1 for word in found) and marks >= letters


def normalised(text: str) -> str:
    """The words of a message, folded (case, width, confusables, format characters), for
    comparing messages: a repeat or an echo is the same words, whatever the punctuation."""
    return " ".join(words(fold(text)))
