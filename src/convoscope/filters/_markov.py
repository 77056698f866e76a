"""A character-bigram Markov model: counts of adjacent symbols, smoothed into log-probabilities.

The same model serves English (letters and space) and Korean (positional jamo and space); the
language modules decide what the symbols are. Tables are stored as raw counts so that a rebuild is
reproducible and the smoothing stays a visible, documented choice.
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib.resources.abc import Traversable
from pathlib import Path

TABLE_FORMAT = "convoscope-bigram/1"


@dataclass(frozen=True)
class BigramModel:
    """Bigram counts over ``alphabet`` and the add-``smoothing`` log-probabilities they give.

    ``mean_log_likelihood`` is the average natural-log probability of each transition in a
    symbol string, the quantity the seed paper thresholds (−4.0 English, −3.5 Korean).
    """

    alphabet: str
    counts: tuple[tuple[int, ...], ...]
    smoothing: float = 1.0
    source: str = ""
    _log_probs: dict[str, dict[str, float]] = field(init=False, repr=False, compare=False)
    _word_cache: dict[str, float] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        size = len(self.alphabet)
        if len(set(self.alphabet)) != size:
            raise ValueError("alphabet: every symbol must appear once")
        if len(self.counts) != size or any(len(row) != size for row in self.counts):
            raise ValueError(f"counts: expected a {size} x {size} table for the alphabet")
        if self.smoothing <= 0:
            raise ValueError("smoothing: must be > 0 so unseen transitions keep a finite cost")
        log_probs: dict[str, dict[str, float]] = {}
        for symbol, row in zip(self.alphabet, self.counts, strict=True):
            denominator = math.log(sum(row) + self.smoothing * size)
            log_probs[symbol] = {
                nxt: math.log(count + self.smoothing) - denominator
                for nxt, count in zip(self.alphabet, row, strict=True)
            }
        object.__setattr__(self, "_log_probs", log_probs)
        object.__setattr__(self, "_word_cache", {})

    @classmethod
    def train(cls, sequences: Iterable[str], *, alphabet: str, smoothing: float = 1.0,
              source: str = "") -> BigramModel:
        """Count transitions in already-preprocessed symbol strings; unknown symbols are skipped."""
        index = {symbol: position for position, symbol in enumerate(alphabet)}
        table = [[0] * len(alphabet) for _ in alphabet]
        for sequence in sequences:
            known = [index[symbol] for symbol in sequence if symbol in index]
            for left, right in zip(known, known[1:], strict=False):
                table[left][right] += 1
        return cls(alphabet, tuple(tuple(row) for row in table), smoothing, source)

    def mean_log_likelihood(self, sequence: str) -> float | None:
        """Average log P(next | previous) over the string; None when it has no transition."""
        log_probs = self._log_probs
        symbols = [symbol for symbol in sequence if symbol in log_probs]
        if len(symbols) < 2:
            return None
        total = sum(log_probs[left][right] for left, right in zip(symbols, symbols[1:], strict=False))
        return total / (len(symbols) - 1)

    def word_log_likelihood(self, word: str) -> float:
        """Sum of log P over the transitions of `` word `` (space, letters, space); cached, so a
        line of common words costs a few dictionary hits."""
        cache = self._word_cache
        found = cache.get(word)
        if found is None:
            found = self.word_log_likelihood_uncached(word)
            if len(cache) < 200_000:
                cache[word] = found
        return found

    def word_log_likelihood_uncached(self, word: str) -> float:
        """``word_log_likelihood`` without the cache, for callers that keep their own."""
        padded = f" {word} "
        log_probs = self._log_probs
        if padded.strip(self.alphabet):  # a symbol outside the alphabet: skip its transitions
            return sum(log_probs[a][b] for a, b in zip(padded, padded[1:], strict=False)
                       if a in log_probs and b in log_probs)
        # Every symbol known: the same sum, in the same order, looked up in C.
        return sum(map(dict.__getitem__, map(log_probs.__getitem__, padded), padded[1:]))

    def mean_log_likelihood_of_words(self, words: Sequence[str]) -> float | None:
        """``mean_log_likelihood(" " + " ".join(words) + " ")`` computed word by word (every word
        brings its own space-to-word and word-to-space transitions)."""
        if not words:
            return None
        return sum(map(self.word_log_likelihood, words)) / (sum(map(len, words)) + len(words))

    def to_dict(self) -> dict[str, object]:
        return {"format": TABLE_FORMAT, "alphabet": self.alphabet, "smoothing": self.smoothing,
                "source": self.source, "counts": [list(row) for row in self.counts]}

    def save(self, path: Path) -> None:
        """Write the table as gzipped JSON; no file name and a zero timestamp go in the gzip header,
        so rebuilds are byte-identical."""
        payload = json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":")).encode()
        with open(path, "wb") as raw, gzip.GzipFile("", "wb", fileobj=raw, mtime=0) as packed:
            packed.write(payload)

    @classmethod
    def from_dict(cls, data: dict[str, object], *, origin: str = "table") -> BigramModel:
        if data.get("format") != TABLE_FORMAT:
            raise ValueError(f"{origin}: not a {TABLE_FORMAT} table (format={data.get('format')!r})")
        counts = data["counts"]
        if not isinstance(counts, list):
            raise ValueError(f"{origin}: 'counts' must be a list of rows")
        return cls(str(data["alphabet"]), tuple(tuple(int(c) for c in row) for row in counts),
                   float(data.get("smoothing", 1.0)), str(data.get("source", "")))  # type: ignore[arg-type]

    @classmethod
    def load(cls, path: Path | Traversable) -> BigramModel:
        """Read a table written by ``save`` (a file path or a package resource)."""
        try:
            data = json.loads(gzip.decompress(path.read_bytes()).decode("utf-8"))
        except (OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ValueError(f"{path}: unreadable bigram table ({error})") from None
        return cls.from_dict(data, origin=str(path))
