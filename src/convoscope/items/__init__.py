"""Items to judge, and reading / writing them."""

from convoscope.items._candidates import (
    REFERENCE_SYSTEM,
    context_key,
    reference_candidate,
    with_reference_candidates,
)
from convoscope.items._frames import items_from_table, items_to_table, verdicts_to_table
from convoscope.items._io import (
    ColumnMap,
    jsonl_records,
    read_items,
    records,
    validate_record,
)
from convoscope.items._model import Item, Turn
from convoscope.items._sample import sample_items, stratum_of
from convoscope.items._stream import ItemStream, RawChunk
from convoscope.items._text import ItemError, TextEncodingError, open_text, read_text
from convoscope.items._write import (
    OUTPUT_SUFFIXES,
    RecordStream,
    check_output,
    write_csv,
    write_jsonl,
    write_parquet,
    write_records,
)

__all__ = [
    "OUTPUT_SUFFIXES",
    "REFERENCE_SYSTEM",
    "RecordStream",
    "ColumnMap",
    "Item",
    "ItemError",
    "ItemStream",
    "RawChunk",
    "TextEncodingError",
    "Turn",
    "check_output",
    "context_key",
    "items_from_table",
    "items_to_table",
    "jsonl_records",
    "open_text",
    "read_items",
    "read_text",
    "records",
    "sample_items",
    "stratum_of",
    "verdicts_to_table",
    "reference_candidate",
    "validate_record",
    "with_reference_candidates",
    "write_csv",
    "write_jsonl",
    "write_parquet",
    "write_records",
]
