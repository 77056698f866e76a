"""Export a campaign's human Verdicts as JSONL or CSV, the format `metaeval --human` reads."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convoscope.campaigns._qualify import QualificationResult
from convoscope.campaigns._secure import private_file, spreadsheet_safe
from convoscope.errors import ConfigError
from convoscope.judges import RaterKind

if TYPE_CHECKING:
    from convoscope.campaigns._campaign import Campaign

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


# The decision's figures, in the order a reader compares them; one ``kappa_with_<reference>``
# column per reference annotator follows (CSV) or a ``kappas`` object (JSONL).
DECISION_COLUMNS = ("annotator", "outcome", "qualified", "kappa", "threshold", "accuracy", "min_accuracy",
                    "cells", "majority_cells", "chance_pass", "max_chance_pass", "references_kappa",
                    "references_note", "weights", "note", "rule", "decided_at")


def decision_rows(campaign: Campaign) -> list[dict[str, Any]]:
    """Every stored qualification decision, in the order made: the lowest kappa, Cohen's kappa with
    each reference, accuracy against the references' majority and the references' own agreement.
    People who left or were blocked later keep their row (a decision is never taken back)."""
    campaign.decide_pending()  # a decision due but not yet asked for is made now, as the status does
    references = list(campaign.spec.qualification.reference_annotators)
    rows = []
    for event in campaign.events.all("decision"):  # one per person: the store refuses a second
        decision = QualificationResult.model_validate(event.data)
        row: dict[str, Any] = {**decision.model_dump(mode="json", include=set(DECISION_COLUMNS)),
                               "decided_at": round(event.created_at, 3)}
        row["outcome"] = decision.outcome or ("qualified" if decision.qualified else "not_qualified")
        row["kappas"] = {name: decision.kappas.get(name) for name in references if name != decision.annotator}
        rows.append(row)
    return rows


def export_decisions(campaign: Campaign, out: str | Path) -> int:
    """Write every qualification decision (:func:`decision_rows`) to ``out``: ``.csv`` with one
    ``kappa_with_<reference>`` column per reference (empty: undefined), else JSONL; readable by its
    owner only. Returns the number of decisions written."""
    path = Path(out)
    if path.suffix.lower() not in {".csv", ".jsonl", ".json"}:
        raise ConfigError(f"{path}: write qualification decisions to a .jsonl or a .csv file")
    rows = decision_rows(campaign)
    with private_file(path) as handle:
        if path.suffix.lower() != ".csv":
            handle.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
            return len(rows)
        references = list(campaign.spec.qualification.reference_annotators)
        columns = [*DECISION_COLUMNS, *(f"kappa_with_{name}" for name in references)]
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        for row in rows:
            flat = {**{k: v for k, v in row.items() if k != "kappas"},
                    **{f"kappa_with_{name}": value for name, value in row["kappas"].items()}}
            writer.writerow({k: spreadsheet_safe("" if v is None else v) for k, v in flat.items()})
    return len(rows)
