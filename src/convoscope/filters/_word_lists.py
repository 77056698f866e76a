"""Other languages' word lists, packed once per machine.

Short answers the English rules flag are tried against the word lists of up to fourteen
languages (``_routing.short_foreign``), and answers in another language are judged with its
list. Reading a list from wordfreq's gzipped msgpack file and building a set of its words costs
about 35 ms and 10-20 MB a language: the largest part of ``convoscope gibberish --lang auto``
after the English rules. The words at or above a frequency are kept, sorted and UTF-8 encoded,
under ``$XDG_CACHE_HOME/convoscope`` (as py3langid's unpacked model is, see ``_langid_model``),
named by wordfreq's version, the list file's size and time, the language and the frequency; a
later process reads one file and looks words up by bisection, in C, without building a set.
When the folder cannot be written, or a kept file is damaged, the set itself is used.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Container
from pathlib import Path

from convoscope._folders import keep_file, kept_name

# The header line: this, the number of words and the length in bytes of the words that follow.
_LAYOUT = 2
_MAGIC = b"convoscope-words %d" % _LAYOUT


class SortedWords:
    """``word in words`` for a sorted list of UTF-8 encoded words, one a line: the same answers as
    the set of those words, for any ``str``. A list is first looked up by bisection over its text
    as read (a short answer asks a few words of each of up to fourteen languages: splitting a
    list into its 30,000-100,000 words costs about 3 ms, a lookup in its text about 10 us), each
    word once (the answers are kept: on the benchmark's 50,000 lines, lists asked 96-291 times
    were asked 24-60 distinct words); after ``_TEXT_LOOKUPS`` distinct words it is split once and
    looked up by bisection over the words. ``start``: where the words begin in ``text`` (after
    the file's header line, so the file's bytes are kept as read, not copied)."""

    __slots__ = ("_count", "_seen", "_start", "_text", "_words")

    def __init__(self, text: bytes, count: int, start: int = 0) -> None:
        self._text, self._start = text, start  # the words, one a line (a list is about 1 MB)
        self._count = count
        self._seen: dict[str, bool] = {}  # the answers found in the text, until it is split
        self._words: list[bytes] | None = None

    def __contains__(self, word: object) -> bool:
        if not isinstance(word, str):
            return False
        words = self._words
        if words is None:
            found = self._seen.get(word)
            if found is not None:
                return found
            if len(self._seen) < _TEXT_LOOKUPS:
                found = self._seen[word] = _in_sorted_lines(
                    self._text, word.encode("utf-8", "surrogatepass"), self._start)
                return found
            words = self._words = self._split()
            self._seen = {}
        key = word.encode("utf-8", "surrogatepass")
        index = bisect_left(words, key)
        return index < len(words) and words[index] == key

    def __len__(self) -> int:
        return self._count

    def _split(self) -> list[bytes]:
        if not self._count:
            return []
        words = self._text.split(b"\n")
        if self._start:
            del words[0]  # the header line
        return words

    def words(self) -> list[str]:
        """Every word, in order (decoded as written: UTF-8, surrogates passed)."""
        if not self._count:
            return []
        return self._text[self._start:].decode("utf-8", "surrogatepass").split("\n")


# Distinct words looked up in a list's text before it is split into its words.
_TEXT_LOOKUPS = 64


def _in_sorted_lines(text: bytes, key: bytes, start: int = 0) -> bool:
    """Whether ``key`` is a line of ``text[start:]`` (sorted lines joined by line breaks, and
    ``start`` 0 or just after a line break): bisection over the text, the line around each
    midpoint found by the breaks either side of it."""
    if not key or b"\n" in key:  # no kept word is empty, nor holds a line break ("a\nb")
        return False
    low, high = start - 1, len(text)  # breaks before the first line and after the last
    while low < high:
        start = text.rfind(b"\n", low + 1, (low + high) // 2 + 1)
        if start == -1:
            start = low
        end = text.find(b"\n", start + 1, high)
        if end == -1:
            end = high
        line = text[start + 1:end]
        if line == key:
            return True
        if line < key:
            low = end
        else:
            high = start
    return False


def packed_path(source: Path, lang: str, last_bucket: int) -> Path:
    """Where the words of ``lang`` down to ``last_bucket`` of this wordfreq file are kept."""
    # The layout's version is in the name: a convoscope of another layout sharing the folder
    # keeps its own files instead of dropping and rebuilding these at every start.
    return kept_name("wordfreq", source, lang, last_bucket, suffix=f".{_LAYOUT}.txt")


def packed_words(path: Path, build: Callable[[], frozenset[str]]) -> Container[str]:
    """The kept words at ``path``, or ``build()``'s words, kept there for the next process."""
    kept = _read(path)
    if kept is not None:
        return kept
    words = build()
    _write(path, words)
    return words


def _read(path: Path) -> SortedWords | None:
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    start = raw.find(b"\n") + 1  # where the words begin (0: no header line)
    # The header's length, not a count of the lines, tells a whole file from one cut short: a
    # count scanned every list the rules asked (10 MB on 50,000 chat lines).
    fields = raw[:start - 1].rsplit(b" ", 2) if start else []
    try:
        count, length = int(fields[1]), int(fields[2])
    except (IndexError, ValueError):
        count = length = -1
    if fields[:1] != [_MAGIC] or length != len(raw) - start:  # not ours, another layout, cut short
        path.unlink(missing_ok=True)
        return None
    return SortedWords(raw, count, start)  # the bytes as read: no copy of a list's megabyte


def _write(path: Path, words: frozenset[str]) -> None:
    """Best effort, whole or absent (keep_file): a reader never sees half a file."""
    if "" in words or any("\n" in word for word in words):
        return  # a word the line format cannot hold: this list stays a set
    encoded = sorted(word.encode("utf-8", "surrogatepass") for word in words)
    body = b"\n".join(encoded)
    keep_file(path, _MAGIC + b" %d %d\n" % (len(encoded), len(body)) + body)
