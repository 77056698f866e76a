"""The ledger: one row per person, with what they were shown and what to do on the platform.

It joins what annotators.json knows (the platform id) with what the store knows (answers, gold
checks, the qualification decision, the way out each person was shown), so that approving,
reviewing and paying bonuses needs no hand-made join. Prolific's bulk tools take a list of
participant ids (bulk approve) and ``participant_id,amount`` lines (bulk bonus):
:func:`prolific_approve_ids` and :func:`prolific_bonus_lines` write exactly those.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

from convoscope.campaigns._lifecycle import Exit, State, exit_for
from convoscope.campaigns._secure import private_file, spreadsheet_safe
from convoscope.errors import ConfigError

if TYPE_CHECKING:
    from convoscope.campaigns._campaign import Campaign
    from convoscope.campaigns._status import AnnotatorStatus

Action = Literal["approve", "approve + bonus", "review", "none", "wait"]


class LedgerRow(BaseModel):
    """One person: who on the platform, how they left, what they did, what to do now."""

    model_config = ConfigDict(frozen=True)

    participant_id: str  # the platform's id (Prolific's PROLIFIC_PID); "" for staff and references
    platform: str
    annotator: str  # the campaign's own id
    outcome: str  # complete, partial, screen_out, return, thanks, or working (has not left)
    state: str
    code_shown: str  # the code on the page the person saw ("" when none was shown)
    tasks: int
    gold_passed: int
    gold_failed: int
    minutes: float
    kappa: float | None  # the lowest Cohen's kappa with a reference at qualification
    kappas: str  # Cohen's kappa with each reference, "a001 0.412; a002 0.377"
    references_kappa: float | None  # the references' own agreement (mean pairwise Cohen's kappa)
    accuracy: float | None  # against the references' majority, at qualification
    qualification: str  # qualified, not_qualified, cannot_tell, or "" (no decision)
    action: Action
    bonus: float | None  # the recommended bonus, in ``currency``
    currency: str


def _action(leave: Exit | None, paid: bool) -> Action:
    """What the researcher does on the platform for this way out."""
    if not paid or leave is None:
        return "none" if not paid else "wait"
    if leave.outcome == "complete":
        return "approve"
    if leave.outcome == "partial":  # work done before leaving early: paid, after review when blocked
        return "review" if leave.state == "blocked" else "approve + bonus"
    if leave.state == "returned" and leave.tasks:  # left part-way after working: the researcher decides
        return "review"
    return "none"  # a screen-out is paid by the platform's own rule; a return is not a submission


def ledger_rows(campaign: Campaign) -> list[LedgerRow]:
    """Everyone in the campaign, in the order they arrived."""
    status = {row.annotator: row for row in campaign.status(everything=True).annotators}
    shown = campaign.exits()
    standing = campaign.standing()
    platform = campaign.spec.platform
    rows = []
    for person in campaign.people():
        paid = campaign.paid(person.id)
        leave = shown.get(person.id)
        if paid and person.id in standing.left:  # left on the platform: the page may never be seen again
            leave = _left(campaign.tasks_done(person.id), platform.pay_per_task)
        elif leave is None and paid:  # screened out without loading the page since: what it would show
            decision = standing.decisions.get(person.id)
            state: State | None = (
                "blocked" if person.id in standing.blocked
                else "not_qualified" if decision is not None and not decision.qualified else None)
            if state is not None:
                leave = exit_for(state, paid=True, tasks=campaign.tasks_done(person.id), platform=platform)
        rows.append(_row(person.id, person.external_id, person.platform or platform.kind, leave,
                         status.get(person.id), paid, shown=person.id in shown, currency=platform.currency))
    return rows


def _left(tasks: int, pay_per_task: float | None) -> Exit:
    """A person who left part-way (returned, timed out, ...): no code, their answers kept out of the
    results but not unpaid; what they would earn as a bonus, for the researcher to decide."""
    bonus = round(tasks * pay_per_task, 2) if tasks and pay_per_task is not None else None
    return Exit(outcome="return", state="returned", tasks=tasks, bonus=bonus)


def _row(annotator: str, external: str | None, platform: str, leave: Exit | None,
         status: AnnotatorStatus | None, paid: bool, *, shown: bool, currency: str) -> LedgerRow:
    decision = status.qualification if status is not None else None
    gold = status.gold_answers if status is not None else 0
    failed = status.gold_failed if status is not None else 0
    action = _action(leave, paid)
    return LedgerRow(
        participant_id=external or "", platform=platform if external else "", annotator=annotator,
        outcome=leave.outcome if leave is not None else "working",
        state=leave.state if leave is not None else "task",
        code_shown=(leave.code or "") if leave is not None and shown else "",
        tasks=status.answers if status is not None else 0,
        gold_passed=max(0, gold - failed), gold_failed=failed,
        minutes=round(status.minutes, 2) if status is not None else 0.0,
        kappa=decision.kappa if decision is not None else None,
        kappas="; ".join(f"{name} {'—' if value is None else f'{value:.3f}'}"
                         for name, value in (decision.kappas if decision is not None else {}).items()),
        references_kappa=decision.references_kappa if decision is not None else None,
        accuracy=decision.accuracy if decision is not None else None,
        qualification=(decision.outcome or ("qualified" if decision.qualified else "not_qualified"))
        if decision is not None else "",
        action=action, currency=currency,
        bonus=leave.bonus if leave is not None and action in ("approve + bonus", "review") else None)


def write_ledger(rows: list[LedgerRow], out: str | Path) -> Path:
    """Write the ledger as ``.csv`` or ``.json``, readable by its owner only (it holds platform ids)."""
    path = Path(out)
    if path.suffix.lower() not in {".csv", ".json"}:
        raise ConfigError(f"{path}: write the ledger to a .csv or a .json file")
    data = [row.model_dump(mode="json") for row in rows]
    with private_file(path) as handle:
        if path.suffix.lower() == ".json":
            json.dump(data, handle, ensure_ascii=False, indent=2)
            return path
        writer = csv.DictWriter(handle, fieldnames=list(LedgerRow.model_fields))
        writer.writeheader()
        writer.writerows({k: spreadsheet_safe("" if v is None else v) for k, v in row.items()}
                         for row in data)
    return path


def prolific_approve_ids(rows: list[LedgerRow]) -> str:
    """The participant ids to approve, one per line (Prolific's bulk approve takes this list)."""
    return "".join(f"{row.participant_id}\n" for row in rows
                   if row.platform == "prolific" and row.action in ("approve", "approve + bonus"))


def prolific_bonus_lines(rows: list[LedgerRow]) -> str:
    """``participant_id,amount`` lines for Prolific's bulk bonus (amounts in the study's currency);
    only recommended bonuses, not those waiting for a review."""
    return "".join(f"{row.participant_id},{row.bonus:.2f}\n" for row in rows
                   if row.platform == "prolific" and row.action == "approve + bonus" and row.bonus)
