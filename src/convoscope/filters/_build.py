"""Training the filter's tables from raw conversational text (used by
``scripts/build_gibberish_tables.py``; kept in the package so tests can train on a tiny corpus)."""

from __future__ import annotations

import gzip
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from convoscope.filters._english import ENGLISH_ALPHABET, english_symbols, tokenize
from convoscope.filters._korean import KOREAN_ALPHABET, korean_symbols
from convoscope.filters._markov import BigramModel
from convoscope.filters._resources import ENGLISH_TABLE, ENGLISH_WORDS, KOREAN_TABLE


def train_english(texts: Iterable[str], *, smoothing: float = 1.0, source: str = "") -> BigramModel:
    return BigramModel.train((english_symbols(text) for text in texts), alphabet=ENGLISH_ALPHABET,
                             smoothing=smoothing, source=source)


def train_korean(texts: Iterable[str], *, smoothing: float = 1.0, source: str = "") -> BigramModel:
    return BigramModel.train((korean_symbols(text) for text in texts), alphabet=KOREAN_ALPHABET,
                             smoothing=smoothing, source=source)


def word_list(texts: Iterable[str], *, min_count: int = 2) -> list[str]:
    """Tokens seen at least ``min_count`` times; a single sighting is as likely a typo as a word."""
    counts = Counter(token for text in texts for token in tokenize(text))
    return sorted(word for word, count in counts.items() if count >= min_count)


def write_word_list(words: Iterable[str], path: Path) -> None:
    payload = "".join(f"{word}\n" for word in words).encode("utf-8")
    # No file name and a zero timestamp in the gzip header: rebuilds are byte-identical.
    with open(path, "wb") as raw, gzip.GzipFile("", "wb", fileobj=raw, mtime=0) as packed:
        packed.write(payload)


def build_tables(english_texts: list[str], korean_texts: list[str], out_dir: Path, *,
                 english_source: str = "", korean_source: str = "", smoothing: float = 1.0,
                 min_word_count: int = 2) -> dict[str, Path]:
    """Write the English bigram table, the English word list and the Korean jamo table into
    ``out_dir`` under the names the filter loads; return the paths written."""
    if not english_texts or not korean_texts:
        raise ValueError("build_tables: both the English and the Korean corpus need at least one text")
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {name: out_dir / name for name in (ENGLISH_TABLE, ENGLISH_WORDS, KOREAN_TABLE)}
    train_english(english_texts, smoothing=smoothing, source=english_source).save(paths[ENGLISH_TABLE])
    write_word_list(word_list(english_texts, min_count=min_word_count), paths[ENGLISH_WORDS])
    train_korean(korean_texts, smoothing=smoothing, source=korean_source).save(paths[KOREAN_TABLE])
    return paths
