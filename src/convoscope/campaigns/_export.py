"""Export a campaign's human Verdicts as JSONL or CSV, the format `metaeval --human` reads."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convoscope.errors import ConfigError
from convoscope.items import write_jsonl

if TYPE_CHECKING:
    from convoscope.campaigns._campaign import Campaign

# A spreadsheet reads a cell starting with one of these as a formula (CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(cell: Any) -> Any:
    """Text that a spreadsheet would run as a formula, prefixed with ``'`` so it shows as text."""
    if isinstance(cell, str) and cell.startswith(FORMULA_STARTS):
        return "'" + cell
    return cell


def export_verdicts(campaign: Campaign, out: str | Path, *, qualification: bool = False,
                    everything: bool = False) -> int:
    """Write the campaign's verdicts to ``out`` (``.csv``, else JSONL); returns the count written.

    Only answers that count are written (see ``campaigns._access``) unless ``everything``; changed
    answers are written as they stand now. Raters are the campaign's own ids (``human:a001``).
    Qualification answers are left out unless ``qualification`` is true; gold checks always.
    """
    path = Path(out)
    if path.suffix.lower() not in {".csv", ".jsonl", ".json"}:
        raise ConfigError(f"{path}: write verdicts to a .jsonl or a .csv file")
    if not path.parent.is_dir():
        raise ConfigError(f"{path}: the folder {path.parent} does not exist; create it first")
    verdicts = []
    for verdict in campaign.verdicts(everything=everything):
        batch = campaign.owner.get(verdict.item_id)
        if batch is None or verdict.item_id in batch.gold:
            continue
        if batch.kind == "qualification" and not qualification:
            continue
        verdicts.append(verdict)
    if path.suffix.lower() != ".csv":
        return write_jsonl(verdicts, path)
    rows = [verdict.model_dump(mode="json") for verdict in verdicts]
    header = list(rows[0]) if rows else ["item_id", "criterion", "rater", "value"]
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=header)
        writer.writeheader()
        for row in rows:
            writer.writerow({key: spreadsheet_safe(json.dumps(value, ensure_ascii=False)
                                                   if isinstance(value, list | dict) else value)
                             for key, value in row.items()})
    return len(rows)
