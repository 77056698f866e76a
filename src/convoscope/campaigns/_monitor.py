"""Monitoring and qualification from the stored human Verdicts (pure functions over Verdicts)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from convoscope.analysis import fleiss_kappa, pairwise_cohen_kappa, strong_agreement
from convoscope.campaigns._qualify import QualificationResult, qualify
from convoscope.judges import RaterKind, Verdict

_IDK = "idk"
__all__ = ["BatchAgreement", "QualificationResult", "answer_matrix", "batch_agreement", "flag_annotators",
           "qualify"]


class BatchAgreement(BaseModel):
    """Agreement among the annotators of one batch; a None statistic comes with a note."""

    model_config = ConfigDict(frozen=True)

    batch: str
    annotators: tuple[str, ...]
    answers: int
    fleiss_kappa: float | None = None
    mean_cohen_kappa: float | None = None
    strong_kappa: float | None = None
    strong_percent: float | None = None
    note: str | None = None


def answer_matrix(verdicts: Iterable[Verdict], raters: Sequence[str]) -> list[list[object]]:
    """Raters x (item, criterion) answers; "I don't know" is its own category, NaN is missing."""
    cells: dict[tuple[str, str], dict[str, object]] = {}
    for verdict in verdicts:
        # Text categories throughout: "I don't know" sits beside the scale values as a label.
        answer = _IDK if verdict.unscored_reason == _IDK else verdict.value
        if answer is not None:
            answer = str(answer)
            cells.setdefault((verdict.item_id, verdict.criterion), {})[verdict.rater] = answer
    keys = sorted(cells)
    return [[cells[key].get(rater, math.nan) for key in keys] for rater in raters]


def batch_agreement(batch: str, verdicts: Sequence[Verdict]) -> BatchAgreement:
    """Fleiss' kappa, mean pairwise Cohen's kappa and strong-judgement agreement for one batch."""
    raters = tuple(sorted({verdict.rater for verdict in verdicts}))
    if len(raters) < 2:
        return BatchAgreement(batch=batch, annotators=raters, answers=len(verdicts),
                              note="fewer than two annotators so far")
    matrix = answer_matrix(verdicts, raters)
    stats: dict[str, float | None] = {}
    notes = []
    for name, compute in (("fleiss_kappa", lambda: fleiss_kappa(matrix)),
                          ("mean_cohen_kappa", lambda: pairwise_cohen_kappa(matrix).mean)):
        try:
            stats[name] = compute()
        except ValueError as error:
            notes.append(str(error))
    try:
        strong = strong_agreement(matrix)
        stats["strong_kappa"], stats["strong_percent"] = strong.kappa, strong.percent_agreement
    except ValueError as error:
        notes.append(str(error))
    return BatchAgreement.model_validate({"batch": batch, "annotators": raters, "answers": len(verdicts),
                                          **stats, "note": "; ".join(notes) or None})


def flag_annotators(verdicts: Sequence[Verdict], *, margin: float = 0.3) -> list[str]:
    """Annotators whose mean Cohen's kappa with their peers is ``margin`` below the batch mean."""
    raters = sorted({verdict.rater for verdict in verdicts})
    if len(raters) < 3:
        return []
    try:
        pairs = pairwise_cohen_kappa(answer_matrix(verdicts, raters)).pairs
    except ValueError:
        return []
    per_rater: dict[int, list[float]] = {}
    for pair in pairs:
        per_rater.setdefault(pair.first, []).append(pair.kappa)
        per_rater.setdefault(pair.second, []).append(pair.kappa)
    means = {index: sum(values) / len(values) for index, values in per_rater.items()}
    overall = sum(means.values()) / len(means)
    return [RaterKind.HUMAN.name_of(raters[index]) for index, mean in means.items()
            if mean < overall - margin]
