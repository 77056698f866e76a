"""Adding items to a campaign that may already be running: appended, never reordered.

Items chosen from a judged run (:func:`convoscope.estimate.select_items`) carry why they were
chosen in ``meta.selected_because`` and whether they belong to the uniform random sample in
``meta.random_sample``; the campaign's items file keeps both, so the study records why people saw
each item and ``convoscope estimate --random-sample <items file>`` finds the random sample.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from convoscope.campaigns._spec import load_campaign
from convoscope.errors import ConfigError
from convoscope.items import Item, read_items, write_jsonl


@dataclass(frozen=True)
class AddedItems:
    path: Path
    added: int
    already_there: int
    random_sample: int


def add_items(directory: str | Path, items: Sequence[Item]) -> AddedItems:
    """Append ``items`` the campaign does not have yet to its items file (JSONL).

    Items already in the file (by id) are left as they are; the existing items keep their order,
    so batches already planned and answered do not move."""
    folder = Path(directory)
    spec = load_campaign(folder)
    if not spec.items:
        raise ConfigError(f"{folder / 'campaign.yaml'}: set 'items:' to the campaign's items file first")
    path = folder / spec.items
    if path.suffix.lower() != ".jsonl":
        raise ConfigError(f"{path}: items can be added to a .jsonl items file only")
    existing = read_items(path) if path.exists() else []
    known = {item.id for item in existing}
    new = [item for item in items if item.id not in known]
    if new:
        write_jsonl([*existing, *new], path)  # atomic; the old items first, in their order
    return AddedItems(path, len(new), len(items) - len(new),
                      sum(bool(item.meta.get("random_sample")) for item in new))
