"""Line numbers of the items in an input file, so that a problem found after reading (a bad
timestamp in ``meta``) can be reported at its line like a parse error."""

from __future__ import annotations

from pathlib import Path

from convoscope.items import records


def item_lines(path: str | Path) -> list[int]:
    """The line (JSONL, CSV, TSV) or entry number (JSON, Parquet) of each item, in file order,
    numbered as :func:`convoscope.items.read_items` numbers them in its errors."""
    return [line for line, _ in records(path)]
