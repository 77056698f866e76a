"""Export a campaign's human Verdicts as JSONL or CSV, the format `metaeval --human` reads."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from convoscope.items import write_csv, write_jsonl

if TYPE_CHECKING:
    from convoscope.campaigns._campaign import Campaign


def export_verdicts(campaign: Campaign, out: str | Path, *, qualification: bool = False) -> int:
    """Write the campaign's verdicts to ``out`` (``.csv``, else JSONL); returns the count written.

    Raters are the campaign's own ids (``human:a001``): platform ids never leave annotators.json.
    Qualification answers are left out unless ``qualification`` is true.
    """
    path = Path(out)
    if path.suffix.lower() not in {".csv", ".jsonl", ".json"}:
        raise ValueError(f"{path}: write verdicts to a .jsonl or a .csv file")
    trial = {candidate.item_id for batch in campaign.batches if batch.kind == "qualification"
             for context in batch.contexts for candidate in context.candidates}
    verdicts = [v for v in campaign.verdicts() if qualification or v.item_id not in trial]
    writer = write_csv if path.suffix.lower() == ".csv" else write_jsonl
    return writer(verdicts, path)
