"""Where a campaign stands: progress, agreement, time and flags per batch and per annotator.

Seed 003 (step 3) watches agreement batch by batch during execution: a sudden drop points at an
unbalanced batch or at one annotator. This module computes that view from the stored Verdicts; the
CLI's ``status``, the researcher dashboard and the report all read it.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from convoscope.campaigns._monitor import (
    BatchAgreement,
    QualificationResult,
    batch_agreement,
    flag_annotators,
    qualify,
)
from convoscope.campaigns._plan import Batch
from convoscope.campaigns._spec import CampaignSpec
from convoscope.judges import Verdict


class BatchStatus(BaseModel):
    """One batch: who worked on it, how far they got, how much they agree and how long they took."""

    model_config = ConfigDict(frozen=True)

    batch: str
    kind: str
    contexts: int
    tasks: int  # answers asked of each annotator
    wanted: int  # annotators the batch should get
    started: int
    finished: int
    answers: int
    agreement: BatchAgreement | None
    median_minutes: float | None  # per finished annotator
    max_minutes: float | None
    over_time: tuple[str, ...]  # annotators above the spec's maximum minutes per batch
    flagged: tuple[str, ...]  # annotators whose agreement is far below their peers' here


class AnnotatorStatus(BaseModel):
    """One annotator's workload and standing; ids are the campaign's own, never a platform's."""

    model_config = ConfigDict(frozen=True)

    annotator: str
    answers: int
    idk: int
    batches_finished: int
    minutes: float
    qualification: QualificationResult | None
    flagged_in: tuple[str, ...]
    reference: bool = False  # one of the internal reference annotators of the qualification


class CampaignStatus(BaseModel):
    """The whole campaign at one moment."""

    model_config = ConfigDict(frozen=True)

    name: str
    invited: int
    batches: tuple[BatchStatus, ...]
    annotators: tuple[AnnotatorStatus, ...]

    @property
    def qualified(self) -> int:
        """Annotators who passed the qualification batch (reference annotators not counted)."""
        return sum(1 for a in self.annotators
                   if not a.reference and a.qualification is not None and a.qualification.qualified)

    @property
    def answers(self) -> int:
        return sum(batch.answers for batch in self.batches)


def campaign_status(spec: CampaignSpec, batches: Sequence[Batch], criteria: Sequence[str],
                    verdicts: Sequence[Verdict], invited: Sequence[str]) -> CampaignStatus:
    """Summarise ``verdicts`` (one campaign's) over its batches; ``invited`` are all annotator ids."""
    by_batch = _split_by_batch(batches, verdicts)
    rows = [_batch_status(spec, batch, len(criteria), by_batch.get(batch.id, [])) for batch in batches]
    people = _annotator_statuses(spec, batches, rows, by_batch, verdicts, invited)
    return CampaignStatus(name=spec.name, invited=len(invited), batches=tuple(rows), annotators=people)


def _split_by_batch(batches: Sequence[Batch], verdicts: Sequence[Verdict]) -> dict[str, list[Verdict]]:
    owner = {candidate.item_id: batch.id for batch in batches
             for context in batch.contexts for candidate in context.candidates}
    split: dict[str, list[Verdict]] = defaultdict(list)
    for verdict in verdicts:
        if verdict.item_id in owner:
            split[owner[verdict.item_id]].append(verdict)
    return split


def _batch_status(spec: CampaignSpec, batch: Batch, criteria: int, verdicts: list[Verdict]) -> BatchStatus:
    tasks = criteria * sum(len(context.candidates) for context in batch.contexts)
    answers: dict[str, int] = defaultdict(int)
    seconds: dict[str, float] = defaultdict(float)
    for verdict in verdicts:
        person = verdict.rater.removeprefix("human:")
        answers[person] += 1
        seconds[person] += verdict.latency_s or 0.0
    finished = sorted(person for person, count in answers.items() if count >= tasks)
    minutes = [seconds[person] / 60 for person in finished]
    limit = spec.max_minutes_per_batch
    over = tuple(sorted(p for p in answers if limit is not None and seconds[p] / 60 > limit))
    is_main = batch.kind == "main"
    return BatchStatus(
        batch=batch.id, kind=batch.kind, contexts=len(batch.contexts), tasks=tasks,
        wanted=spec.annotators_per_batch if is_main else 0, started=len(answers), finished=len(finished),
        answers=len(verdicts), agreement=batch_agreement(batch.id, verdicts) if verdicts else None,
        median_minutes=statistics.median(minutes) if minutes else None,
        max_minutes=max(minutes) if minutes else None, over_time=over,
        flagged=tuple(flag_annotators(verdicts)) if is_main else ())


def _annotator_statuses(spec: CampaignSpec, batches: Sequence[Batch], rows: Sequence[BatchStatus],
                        by_batch: dict[str, list[Verdict]], verdicts: Sequence[Verdict],
                        invited: Sequence[str]) -> tuple[AnnotatorStatus, ...]:
    qualification_ids = {b.id for b in batches if b.kind == "qualification"}
    # Qualification compares answers on the qualification batch only, never on main batches.
    trial = [v for batch in qualification_ids for v in by_batch.get(batch, [])]
    people = []
    for person in invited:
        rater = f"human:{person}"
        mine = [v for v in verdicts if v.rater == rater]
        finished = [row for row in rows if _did_finish(person, row, by_batch.get(row.batch, []))]
        result = None
        if any(row.batch in qualification_ids for row in finished):
            settings = spec.qualification
            result = qualify(person, trial, settings.reference_annotators, threshold=settings.kappa_threshold)
        people.append(AnnotatorStatus(
            annotator=person, answers=len(mine), idk=sum(1 for v in mine if v.unscored_reason == "idk"),
            batches_finished=sum(1 for row in finished if row.kind == "main"),
            minutes=sum(v.latency_s or 0.0 for v in mine) / 60, qualification=result,
            flagged_in=tuple(row.batch for row in rows if person in row.flagged),
            reference=person in spec.qualification.reference_annotators))
    return tuple(people)


def _did_finish(person: str, row: BatchStatus, verdicts: list[Verdict]) -> bool:
    return sum(1 for v in verdicts if v.rater == f"human:{person}") >= row.tasks > 0
