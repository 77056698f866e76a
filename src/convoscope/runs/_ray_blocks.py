"""Blocks of about a chunk's rows, cut while a file is read for a run on Ray.

Ray's readers cut what they read into blocks no larger than the block size of the Dataset's
``DataContext`` (128 MB by default), so an items file came as one block, and a repartition step
cut it into blocks of ``--chunk-size`` rows before the workers could share them. That step is an
operator of its own, with tasks of its own, ahead of the workers: on a 2,000-item run here, Ray
Data's time from its start to the first block was 2.7 s with it and 1.5 s without (issue 39,
observation 5). Read with the block size set to about a chunk's bytes, a file comes in blocks of
about a chunk's rows as it is read. A row's bytes are estimated from the file's first rows (JSON
lines, CSV) or from its metadata (Parquet); a block of twice or half a chunk is harmless (a lost
worker's blocks are judged again elsewhere, so they are kept small).

A Dataset captures a copy of the current ``DataContext`` when it is made, so the size is set
only while the reader is called and put back after it: the caller's own Datasets keep theirs.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

Kind = Literal["lines", "csv", "parquet"]

# What is read of a text file to estimate its rows' bytes.
SAMPLE_BYTES = 1 << 20
# An Arrow string value also takes its offset (4 bytes) in the block.
_OFFSET_BYTES = 4

_setting = threading.Lock()  # the DataContext is the process's: one reader sets it at a time
_cut: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()


def row_bytes(path: Path, kind: Kind, *, delimiter: str = ",") -> float | None:
    """The bytes a row of ``path`` takes in a block, estimated; None when it cannot be told
    (an empty or unreadable file)."""
    if kind == "parquet":
        return _parquet_row_bytes(path)
    try:
        with open(path, "rb") as handle:
            sample = handle.read(SAMPLE_BYTES)
    except OSError:
        return None
    lines = sample.split(b"\n")
    if len(sample) == SAMPLE_BYTES and len(lines) > 1:
        lines.pop()  # the last line of the sample may be cut short
    columns = 1
    if kind == "csv":
        columns = max(1, lines[0].count(delimiter.encode()) + 1)
        lines = lines[1:]  # the header is not a row
    lines = [line for line in lines if line.strip()]
    if not lines:
        return None
    return sum(map(len, lines)) / len(lines) + _OFFSET_BYTES * columns


def _parquet_row_bytes(path: Path) -> float | None:
    try:
        import pyarrow.parquet as pq

        metadata = pq.read_metadata(path)
    except (OSError, ValueError, ImportError):
        return None
    if metadata.num_rows <= 0:
        return None
    size = sum(metadata.row_group(group).total_byte_size for group in range(metadata.num_row_groups))
    return size / metadata.num_rows


@contextlib.contextmanager
def block_size(ray: Any, size: int | None) -> Iterator[None]:
    """Datasets made in this block cut their blocks at ``size`` bytes (None: Ray's own size)."""
    if size is None:
        yield
        return
    with _setting:
        context = ray.data.DataContext.get_current()
        before = context.target_max_block_size
        context.target_max_block_size = size
        try:
            yield
        finally:
            context.target_max_block_size = before


def bytes_for(rows: int, each: float | None) -> int | None:
    """The block size for ``rows`` rows of ``each`` bytes (None: unknown)."""
    return None if each is None else max(1, round(rows * each))


def mark_cut(dataset: Any, rows: int) -> Any:
    """Note that ``dataset``'s blocks are about ``rows`` rows already."""
    _cut[dataset] = rows
    return dataset


def cut_at(dataset: Any) -> int | None:
    """The rows per block ``dataset`` was read in (``mark_cut``), or None."""
    try:
        return _cut.get(dataset)
    except TypeError:  # a Dataset that cannot be weakly referenced or hashed
        return None
