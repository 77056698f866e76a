"""Where a campaign stands: progress, agreement, time and flags per batch and per annotator.

Seed 003 (step 3) watches agreement batch by batch during execution: a sudden drop points at an
unbalanced batch or at one annotator. This module computes that view from the stored Verdicts; the
CLI's ``status``, the researcher dashboard and the report all read it.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from convoscope.campaigns._access import Standing
from convoscope.campaigns._monitor import (
    BatchAgreement,
    QualificationResult,
    batch_agreement,
    flag_annotators,
)
from convoscope.campaigns._plan import Batch
from convoscope.campaigns._spec import CampaignSpec
from convoscope.judges import RaterKind, Verdict


class BatchStatus(BaseModel):
    """One batch: who worked on it, how far they got, how much they agree and how long they took."""

    model_config = ConfigDict(frozen=True)

    batch: str
    kind: str
    contexts: int  # sample contexts (gold contexts are counted in gold_tasks)
    tasks: int  # sample answers asked of each annotator
    wanted: int  # annotators the batch should get
    started: int
    finished: int
    answers: int
    agreement: BatchAgreement | None
    median_minutes: float | None  # per finished annotator
    max_minutes: float | None
    over_time: tuple[str, ...]  # annotators above the spec's maximum minutes per batch
    flagged: tuple[str, ...]  # annotators whose agreement is far below their peers' here
    gold_tasks: int = 0  # attention checks asked of each annotator (per gold candidate and checked criterion)


class AnnotatorStatus(BaseModel):
    """One annotator's workload and standing; ids are the campaign's own, never a platform's."""

    model_config = ConfigDict(frozen=True)

    annotator: str
    answers: int  # every stored answer (changed answers counted once), attention checks included
    counted: int  # the sample answers that enter agreement, votes and exports
    idk: int
    batches_finished: int
    minutes: float
    qualification: QualificationResult | None
    flagged_in: tuple[str, ...]
    reference: bool = False  # one of the internal reference annotators of the qualification
    invited: bool = True
    blocked: str | None = None  # the reason, when blocked
    gold_failed: int = 0
    gold_answers: int = 0  # answers given on attention checks
    left: str | None = None  # why the person left early when no block says it (an eligibility question)

    @property
    def standing(self) -> str:
        """Where the person stands, in words: active, or left with why (the dashboard, the report
        and the terminal say the same)."""
        if self.blocked:
            return f"left: blocked ({self.blocked})"
        if self.left:
            return f"left: {self.left}"
        if not self.invited:
            return "not invited: answers not counted"
        if not self.reference and self.qualification is not None and not self.qualification.qualified:
            return "left: did not qualify"
        return "active"

    def qualified_text(self, enabled: bool = True) -> str:
        """The qualification decision in words ("yes (κ 0.812)", "not reached", ...)."""
        q = self.qualification
        if self.reference:
            return "reference annotator"
        if not enabled:
            return "qualification off"
        if q is None:
            return "not reached" if self.left or self.blocked else "not decided"
        word = "yes" if q.qualified else "no"
        if q.outcome == "cannot_tell" and q.chance_pass is not None:
            word += ", cannot tell from chance"  # too few answers (see ``_qualify``)
        return f"{word} (κ {q.kappa:.3f})" if q.kappa is not None else f"{word} ({q.note or 'no kappa'})"

    @property
    def not_counted(self) -> int:
        """Sample answers left out (attention checks are never samples, so never "not counted")."""
        return self.answers - self.gold_answers - self.counted


class Note(BaseModel):
    """A free-text note an annotator wrote with an answer."""

    model_config = ConfigDict(frozen=True)

    annotator: str
    batch: str
    item_id: str
    criterion: str
    answer: str
    text: str
    counted: bool


class SelectionRow(BaseModel):
    """Items chosen from a judged run for one reason (``meta.selected_because``), and how many of
    them have an answer that counts. An item chosen for several reasons is in several rows."""

    model_config = ConfigDict(frozen=True)

    reason: str
    items: int
    answered: int


class CampaignStatus(BaseModel):
    """The whole campaign at one moment."""

    model_config = ConfigDict(frozen=True)

    name: str
    invited: int
    batches: tuple[BatchStatus, ...]
    annotators: tuple[AnnotatorStatus, ...]
    qualification_enabled: bool = True
    notes: tuple[Note, ...] = ()
    selection: tuple[SelectionRow, ...] = ()
    chosen_items: int = 0  # items carrying meta.selected_because

    @property
    def passed(self) -> int:
        """Annotators who passed the qualification batch, blocked since or not (references not counted)."""
        return sum(1 for a in self.annotators
                   if not a.reference and a.qualification is not None and a.qualification.qualified)

    @property
    def qualified(self) -> int:
        """Annotators who passed the qualification batch and are not blocked (references not counted)."""
        return self.passed - self.qualified_then_blocked

    @property
    def qualified_then_blocked(self) -> int:
        """Annotators who passed the qualification batch and were blocked afterwards (gold checks,
        by hand)."""
        return sum(1 for a in self.annotators if not a.reference and a.blocked
                   and a.qualification is not None and a.qualification.qualified)

    @property
    def qualified_text(self) -> str:
        """"N qualified" (blocked people apart), or that there is no qualification step."""
        if not self.qualification_enabled:
            return "qualification off"
        blocked = self.qualified_then_blocked
        then = f" ({blocked} more qualified, then were blocked)" if blocked else ""
        return f"{self.qualified} qualified{then}"

    @property
    def left(self) -> int:
        """People who left before the end: blocked, screened out, or not qualified."""
        return sum(1 for a in self.annotators if a.standing.startswith("left"))

    @property
    def answers(self) -> int:
        return sum(batch.answers for batch in self.batches)


def campaign_status(spec: CampaignSpec, batches: Sequence[Batch], criteria: Sequence[str],
                    verdicts: Sequence[Verdict], everything: Sequence[Verdict], standing: Standing,
                    gold_failed: dict[str, int],
                    chosen: Mapping[str, Sequence[str]] | None = None,
                    checks: Sequence[Verdict] = (), left: Mapping[str, str] | None = None) -> CampaignStatus:
    """Summarise one campaign: ``verdicts`` are the sample answers that count, ``everything`` all
    stored, ``checks`` the attention-check answers of people whose answers count (they finish a
    batch and take time, but are no samples).

    ``chosen`` maps the ids of items routed from a judged run to why each was chosen; ``left``
    maps people who left without a block or a decision (an eligibility question) to why."""
    by_batch = _split_by_batch(batches, verdicts)
    checks_by_batch = _split_by_batch(batches, checks)
    rows = [_batch_status(spec, batch, criteria, by_batch.get(batch.id, []),
                          checks_by_batch.get(batch.id, [])) for batch in batches]
    kept = {id(v) for v in verdicts}
    owner = {c.item_id: b for b in batches for x in b.contexts for c in x.candidates}
    people = tuple(person.model_copy(update={"left": (left or {}).get(person.annotator)})
                   for person in _annotator_statuses(owner, rows, everything, kept, standing, gold_failed))
    return CampaignStatus(name=spec.name, invited=len(standing.invited), batches=tuple(rows),
                          annotators=people, qualification_enabled=spec.qualification.enabled,
                          notes=_notes(batches, everything, kept),
                          selection=_selection(batches, verdicts, chosen or {}),
                          chosen_items=len(chosen or {}))


def _selection(batches: Sequence[Batch], verdicts: Sequence[Verdict],
               chosen: Mapping[str, Sequence[str]]) -> tuple[SelectionRow, ...]:
    """Per reason: the chosen items, and those with an answer that counts (a pair's answer
    counts for both of its items)."""
    if not chosen:
        return ()
    sides = {c.item_id: [s.item_id for s in c.pair] if c.pair else [c.item_id]
             for b in batches for x in b.contexts for c in x.candidates}
    answered = {item for v in verdicts for item in sides.get(v.item_id, [v.item_id])}
    items: dict[str, set[str]] = defaultdict(set)
    for item, reasons in chosen.items():
        for reason in reasons:
            items[reason].add(item)
    return tuple(SelectionRow(reason=reason, items=len(found), answered=len(found & answered))
                 for reason, found in sorted(items.items(), key=lambda kv: (-len(kv[1]), kv[0])))


def _notes(batches: Sequence[Batch], everything: Sequence[Verdict], kept: set[int]) -> tuple[Note, ...]:
    owner = {c.item_id: b.id for b in batches for x in b.contexts for c in x.candidates}
    return tuple(Note(annotator=RaterKind.HUMAN.name_of(v.rater), batch=owner.get(v.item_id, "?"),
                      item_id=v.item_id, criterion=v.criterion,
                      answer="I don't know" if v.unscored_reason == "idk" else str(v.value),
                      text=v.reason, counted=id(v) in kept)
                 for v in everything if v.reason)


def _split_by_batch(batches: Sequence[Batch], verdicts: Sequence[Verdict]) -> dict[str, list[Verdict]]:
    owner = {candidate.item_id: batch.id for batch in batches
             for context in batch.contexts for candidate in context.candidates}
    split: dict[str, list[Verdict]] = defaultdict(list)
    for verdict in verdicts:
        if verdict.item_id in owner:
            split[owner[verdict.item_id]].append(verdict)
    return split


def _batch_status(spec: CampaignSpec, batch: Batch, criteria: Sequence[str], verdicts: list[Verdict],
                  checks: list[Verdict]) -> BatchStatus:
    """One batch; a person has finished it when every sample task is answered (their checks count
    toward their time, never toward the samples)."""
    samples = batch.samples()
    tasks = len(criteria) * sum(len(context.candidates) for context in samples)
    gold_tasks = len(batch.tasks(criteria)) - tasks
    answers: dict[str, int] = defaultdict(int)
    seconds: dict[str, float] = defaultdict(float)
    for verdict in [*verdicts, *checks]:
        person = RaterKind.HUMAN.name_of(verdict.rater)
        answers[person] += verdict.item_id not in batch.gold
        seconds[person] += verdict.latency_s or 0.0
    finished = sorted(person for person, count in answers.items() if count >= tasks > 0)
    minutes = [seconds[person] / 60 for person in finished]
    limit = spec.max_minutes_per_batch
    over = tuple(sorted(p for p in answers if limit is not None and seconds[p] / 60 > limit))
    is_main = batch.kind == "main"
    return BatchStatus(
        batch=batch.id, kind=batch.kind, contexts=len(samples), tasks=tasks, gold_tasks=gold_tasks,
        wanted=spec.annotators_per_batch if is_main else 0, started=len(answers), finished=len(finished),
        answers=len(verdicts), agreement=batch_agreement(batch.id, verdicts) if verdicts else None,
        median_minutes=statistics.median(minutes) if minutes else None,
        max_minutes=max(minutes) if minutes else None, over_time=over,
        flagged=tuple(flag_annotators(verdicts)) if is_main else ())


def _annotator_statuses(owner: dict[str, Batch], rows: Sequence[BatchStatus], everything: Sequence[Verdict],
                        kept: set[int], standing: Standing,
                        gold_failed: dict[str, int]) -> tuple[AnnotatorStatus, ...]:
    answered = {RaterKind.HUMAN.name_of(v.rater) for v in everything}
    people = sorted(standing.invited | answered, key=lambda p: (p not in standing.invited, p))
    statuses = []
    for person in people:
        mine = [v for v in everything if v.rater == f"human:{person}"]
        per_batch = Counter(owner[v.item_id].id for v in mine if id(v) in kept and v.item_id in owner)
        statuses.append(AnnotatorStatus(
            annotator=person, answers=len(mine), counted=sum(1 for v in mine if id(v) in kept),
            idk=sum(1 for v in mine if v.unscored_reason == "idk"),
            batches_finished=sum(1 for row in rows
                                 if row.kind == "main" and per_batch[row.batch] >= row.tasks > 0),
            minutes=sum(v.latency_s or 0.0 for v in mine) / 60,
            qualification=standing.decisions.get(person),
            flagged_in=tuple(row.batch for row in rows if person in row.flagged),
            reference=person in standing.references, invited=person in standing.invited,
            blocked=standing.blocked.get(person), gold_failed=gold_failed.get(person, 0),
            gold_answers=sum(1 for v in mine if v.item_id in owner and v.item_id in owner[v.item_id].gold)))
    return tuple(statuses)
