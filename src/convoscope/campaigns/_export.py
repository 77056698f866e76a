"""Export a campaign's human Verdicts as JSONL or CSV, the format `metaeval --human` reads."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convoscope.campaigns._secure import private_file
from convoscope.errors import ConfigError
from convoscope.judges import RaterKind

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
                    everything: bool = False, exclude_side_biased: bool | None = None) -> int:
    """Write the campaign's verdicts to ``out`` (``.csv``, else JSONL); returns the count written.

    Only answers that count are written (see ``campaigns._access``) unless ``everything``; changed
    answers are written as they stand now. Raters are the campaign's own ids (``human:a001``).
    Qualification answers are left out unless ``qualification`` is true; gold checks always; in a
    pairwise campaign, side-biased people's answers when ``exclude_side_biased`` (default: the
    spec's). The file is readable by its owner only, like the store.
    """
    path = Path(out)
    if path.suffix.lower() not in {".csv", ".jsonl", ".json"}:
        raise ConfigError(f"{path}: write verdicts to a .jsonl or a .csv file")
    exclude = campaign.spec.exclude_side_biased if exclude_side_biased is None else exclude_side_biased
    biased = campaign.side_biased(everything=everything) if exclude else {}
    verdicts = []
    for verdict in campaign.verdicts(everything=everything):
        batch = campaign.owner.get(verdict.item_id)
        if batch is None or verdict.item_id in batch.gold or RaterKind.HUMAN.name_of(verdict.rater) in biased:
            continue
        if batch.kind == "qualification" and not qualification:
            continue
        verdicts.append(verdict)
    rows = [verdict.model_dump(mode="json") for verdict in verdicts]
    with private_file(path) as handle:
        if path.suffix.lower() != ".csv":
            handle.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
            return len(rows)
        header = list(rows[0]) if rows else ["item_id", "criterion", "rater", "value"]
        writer = csv.DictWriter(handle, fieldnames=header)
        writer.writeheader()
        for row in rows:
            writer.writerow({key: spreadsheet_safe(json.dumps(value, ensure_ascii=False)
                                                   if isinstance(value, list | dict) else value)
                             for key, value in row.items()})
    return len(rows)


def export_questionnaires(campaign: Campaign, out: str | Path) -> int:
    """Write every questionnaire answer (one row per person, part and question) to ``out``
    (``.csv``, else JSONL), readable by its owner only; people are named by the campaign's ids."""
    from convoscope.campaigns._questionnaire import write_answers

    path = Path(out)
    if path.suffix.lower() not in {".csv", ".jsonl", ".json"}:
        raise ConfigError(f"{path}: write questionnaire answers to a .jsonl or a .csv file")
    return write_answers(campaign.questionnaire_rows(), path)
