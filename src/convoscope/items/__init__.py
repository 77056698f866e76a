"""Items to judge, and reading / writing them."""

from convoscope.items._io import ColumnMap, ItemError, read_items, write_csv, write_jsonl
from convoscope.items._model import Item, Turn

__all__ = ["ColumnMap", "Item", "ItemError", "Turn", "read_items", "write_csv", "write_jsonl"]
