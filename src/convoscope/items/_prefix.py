"""A done prefix: the first chunks of a JSON-lines file, finished by a run, skipped unread.

When a run has finished chunks ``0..k-1`` (each a full chunk), it records where chunk ``k``
starts in the file (a byte offset, after a line number), a hash of the file's bytes up to there
and 64-bit markers of the prefix's ids. The next run over the same file hashes those bytes
(SHA-256 in C, about 1.7 GB/s on the benchmark machine; no line is decoded, parsed or
fingerprinted), and if they match seeks past them: the prefix is
the one that was read, its chunks done, its ids free of duplicates (checked when it was first
read). A new item whose id repeats one of the prefix is found by its marker; the file is then
read again to name the first line (a marker collision is told from a duplicate there).
"""

from __future__ import annotations

import hashlib
import itertools
import sys
from array import array
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from convoscope.items._text import ItemError, effective_encoding

_BLOCK = 1 << 20


@dataclass(frozen=True)
class Prefix:
    """Chunks ``0..chunks-1`` of the file: lines ``1..line``, bytes ``0..offset``."""

    chunks: int
    chunk_size: int
    line: int
    offset: int
    digest: str
    markers: bytes  # sorted little-endian uint64 markers of the prefix's ids (:func:`stable_markers`)

    def sorted_markers(self) -> Any:
        import numpy as np

        return np.frombuffer(self.markers, dtype="<u8")

    def lookup(self) -> array[int]:
        """The markers as a sorted array searched with :mod:`bisect` (numpy is not imported on a
        resume that finds no new duplicate: a tenth of a second of the first request's time)."""
        found = array("Q")
        found.frombytes(self.markers)
        if sys.byteorder != "little":
            found.byteswap()
        return found


def in_sorted(run: array[int], markers: list[int]) -> list[int]:
    """The positions of ``markers`` found in the sorted array ``run``."""
    found = []
    for position, marker in enumerate(markers):
        where = bisect_left(run, marker)
        if where < len(run) and run[where] == marker:
            found.append(position)
    return found


def stable_markers(ids: list[str]) -> list[int]:
    """64-bit markers that mean the same in every process (unlike Python's salted ``hash``)."""
    blake = hashlib.blake2b
    return [int.from_bytes(blake(item_id.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")
            for item_id in ids]


def prefix_end(path: Path, lines: int) -> tuple[int, str] | None:
    """The byte offset just after line ``lines`` and the hash of the bytes before it; None when
    the file has fewer lines or a lone ``\\r`` line end there (lines are then not ``\\n``-counted)."""
    digest = hashlib.sha256()
    offset, counted, lone, previous = 0, 0, 0, b""
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(_BLOCK), b""):
            breaks = block.count(b"\n")
            part = block
            if counted + breaks >= lines:
                cut = -1
                for _ in range(lines - counted):
                    cut = block.index(b"\n", cut + 1)
                part = block[:cut + 1]
            lone += part.count(b"\r") - part.count(b"\r\n") - (previous == b"\r" and part[:1] == b"\n")
            digest.update(part)
            offset += len(part)
            counted += part.count(b"\n")
            previous = part[-1:]
            if counted == lines:
                break
    if counted < lines or lone or previous == b"\r":
        return None
    return offset, digest.hexdigest()


def digest_upto(path: Path, offset: int) -> str | None:
    """The hash of the file's first ``offset`` bytes (None: the file is shorter)."""
    digest = hashlib.sha256()
    left = offset
    with path.open("rb") as handle:
        while left > 0:
            block = handle.read(min(_BLOCK, left))
            if not block:
                return None
            digest.update(block)
            left -= len(block)
    return digest.hexdigest()


def jsonl_path(source: Any, encoding: str, limit: int | None) -> Path | None:
    """The path of a JSON-lines file read as UTF-8 without a limit: one a prefix can be skipped of."""
    if not isinstance(source, str | Path) or limit is not None:
        return None
    path = Path(source)
    if path.suffix.lower() not in (".jsonl", ".ndjson"):
        return None
    try:
        return path if effective_encoding(path, encoding) == "utf-8-sig" else None
    except (ItemError, OSError):  # reported when the file is read
        return None


def next_prefix(path: Path, old: Prefix | None, chunk_size: int, layout: dict[int, tuple[int, int, str]],
                markers: dict[int, array[int]], finished: Callable[[int, str], bool]) -> Prefix | None:
    """The longest run of full chunks from the first (beyond ``old``, which is kept) read this
    run (``layout``: chunk -> last line, size, fingerprint; ``markers``: chunk -> its ids' stable
    markers) that ``finished`` says are done; None when it adds nothing to ``old``."""
    start = index = old.chunks if old else 0
    while index in layout and index in markers:
        _line, size, fingerprint = layout[index]
        if size != chunk_size or not finished(index, fingerprint):
            break
        index += 1
    if index == start:
        return None
    line = layout[index - 1][0]
    end = prefix_end(path, line)
    if end is None:
        return None
    parts = [markers[chunk] for chunk in range(start, index)]
    return Prefix(index, chunk_size, line, end[0], end[1], _merged(old, parts))


_NUMPY_FROM = 200_000  # markers: below, a sort in Python costs less than importing numpy (~0.1 s)


def _merged(old: Prefix | None, parts: list[array[int]]) -> bytes:
    """The sorted little-endian uint64 markers of ``old`` and ``parts`` together."""
    count = sum(len(part) for part in parts) + (len(old.markers) // 8 if old is not None else 0)
    if count >= _NUMPY_FROM:
        import numpy as np

        arrays = [np.frombuffer(part, dtype=np.uint64) for part in parts]
        if old is not None:
            arrays.insert(0, old.sorted_markers())
        return bytes(np.sort(np.concatenate(arrays)).astype("<u8").tobytes())
    merged = array("Q", sorted(itertools.chain(old.lookup() if old is not None else (), *parts)))
    if sys.byteorder != "little":
        merged.byteswap()
    return merged.tobytes()
