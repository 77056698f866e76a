"""Whose answers count: invitation, leaving, qualification decisions, blocks, reference annotators,
gold checks.

Pure functions over Verdicts and the campaign's stored events. Answers that do not count stay in
the store (and in the ledger: work done is paid); they leave agreement, votes, results and exports
(unless a caller asks for everything).

A person has *left* when the platform reports their submission returned, timed out or rejected
(``campaign prolific --sync``), when the researcher records the same by hand (``campaign
withdraw``: a return seen on the platform's page, a time-out, a withdrawal of consent), or when
they declined the consent text. Their place goes to someone else, so their answers must not count
beside the answers of the person who takes it: a half-done batch would outvote a whole one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from convoscope.campaigns._answers import IDK
from convoscope.campaigns._events import Event
from convoscope.campaigns._monitor import QualificationResult
from convoscope.campaigns._plan import Batch
from convoscope.campaigns._spec import PAIRWISE_PREFIX, CampaignSpec
from convoscope.criteria import Criterion
from convoscope.judges import RaterKind, Verdict


class Standing(BaseModel):
    """Who is invited, blocked, decided and a reference, at one moment."""

    model_config = ConfigDict(frozen=True)

    invited: frozenset[str]
    blocked: dict[str, str]  # annotator -> reason
    left: dict[str, str] = {}  # annotator -> why they left (returned, timed out, ...)
    decisions: dict[str, QualificationResult]
    references: frozenset[str]


def blocked_from(events: Iterable[Event]) -> dict[str, str]:
    """The annotators whose latest block / unblock event is a block, with its reason."""
    state: dict[str, str | None] = {}
    for event in events:
        if event.kind == "block":
            state[event.annotator] = str(event.data.get("reason") or "blocked")
        elif event.kind == "unblock":
            state[event.annotator] = None
    return {person: reason for person, reason in state.items() if reason is not None}


# Why a person left, in words, by the status the platform (or the researcher) gave.
LEFT_BECAUSE = {"RETURNED": "returned the submission", "TIMED-OUT": "timed out",
                "REJECTED": "submission rejected", "WITHDRAWN": "withdrew consent"}


def left_from(events: Iterable[Event]) -> dict[str, str]:
    """The annotators who left (see the module text), with why: the latest ``returned`` /
    ``rejoined`` event decides; a consent declined and never given afterwards counts too."""
    state: dict[str, str | None] = {}
    declined: set[str] = set()
    consented: set[str] = set()
    for event in events:
        if event.kind == "returned":
            status = str(event.data.get("status") or "RETURNED")
            state[event.annotator] = LEFT_BECAUSE.get(status, status.lower())
        elif event.kind == "rejoined":
            state[event.annotator] = None
        elif event.kind == "declined":
            declined.add(event.annotator)
        elif event.kind == "consent":
            consented.add(event.annotator)
    gone = {person: why for person, why in state.items() if why is not None}
    return {**{person: "declined consent" for person in declined - consented}, **gone}


def excluded_reason(annotator: str, batch: Batch | None, spec: CampaignSpec,
                    standing: Standing) -> str | None:
    """Why this annotator's answer in ``batch`` does not count, or None when it counts."""
    if annotator not in standing.invited:
        return "not invited"
    if annotator in standing.blocked:
        return f"blocked: {standing.blocked[annotator]}"
    if annotator in standing.left:
        return f"left: {standing.left[annotator]}"
    if batch is None or batch.kind != "main" or not spec.qualification.enabled:
        return None
    if annotator in standing.references:
        return None if spec.qualification.references_in_main else "reference annotator"
    decision = standing.decisions.get(annotator)
    if decision is None:
        return "no qualification decision"
    return None if decision.qualified else "did not qualify"


def counted(verdicts: Iterable[Verdict], owner: dict[str, Batch], spec: CampaignSpec,
            standing: Standing, *, checks: bool = False) -> list[Verdict]:
    """The answers that count: by people who may answer there, on samples only; with ``checks``,
    those people's answers on the attention checks instead (time on task, progress)."""
    kept = []
    for verdict in verdicts:
        batch = owner.get(verdict.item_id)
        if (batch is not None and verdict.item_id in batch.gold) != checks:
            continue
        if excluded_reason(RaterKind.HUMAN.name_of(verdict.rater), batch, spec, standing) is None:
            kept.append(verdict)
    return kept


def gold_failures(annotator: str, verdicts: Sequence[Verdict], owner: dict[str, Batch],
                  criteria: dict[str, Criterion]) -> list[tuple[str, str]]:
    """(item, criterion) of the annotator's answers on gold items that differ from the expected one."""
    failed = []
    for verdict in verdicts:
        batch = owner.get(verdict.item_id)
        if verdict.rater != f"human:{annotator}" or batch is None:
            continue
        expected = batch.gold.get(verdict.item_id, {}).get(verdict.criterion)
        if expected is None or verdict.criterion not in criteria:
            continue
        answer = IDK if verdict.unscored_reason == IDK else verdict.value
        if expected == IDK or verdict.criterion.startswith(PAIRWISE_PREFIX):  # a pair: a system or "tie"
            wanted: object = expected
        else:
            wanted = criteria[verdict.criterion].scale.coerce(expected)
        if answer != wanted:
            failed.append((verdict.item_id, verdict.criterion))
    return failed
