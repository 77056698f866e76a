"""Import human verdicts collected elsewhere (a paper form, another tool) into a campaign's store.

Each row goes through the same server-side check as an answer given in the web app, so imported
answers are indistinguishable from the app's: the candidate and criterion must belong to the
campaign, the answer must be on the criterion's scale, options must apply to it and "I don't
know" needs a note. The whole file is checked before anything is written; rows already in the
store (same annotator, candidate and criterion) are skipped, so importing twice adds nothing.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from convoscope.campaigns._access import excluded_reason
from convoscope.campaigns._answers import (
    IDK,
    TIE,
    AnswerError,
    Submission,
    order_in,
    pair_order,
    task_key,
    to_verdict,
)
from convoscope.campaigns._people import read_annotators
from convoscope.campaigns._plan import Task
from convoscope.campaigns._secure import FORMULA_STARTS
from convoscope.errors import ConvoscopeError
from convoscope.judges import RaterKind, Verdict

if TYPE_CHECKING:
    from convoscope.campaigns._campaign import Campaign


class VerdictImportError(ConvoscopeError, ValueError):
    """A file or row that cannot be imported; the message names file, line and field."""


class _RowError(ValueError):
    def __init__(self, problem: str, field: str):
        super().__init__(problem)
        self.field = field


class ImportSummary(BaseModel):
    model_config = ConfigDict(frozen=True)

    rows: int
    added: int
    already_stored: int


def import_verdicts(campaign: Campaign, path: str | Path) -> ImportSummary:
    """Check every row of a verdict JSONL or CSV file, then store the new ones."""
    source = Path(path)
    tasks = {(task.candidate.item_id, task.criterion): task
             for batch in campaign.batches for task in campaign.tasks(batch)}
    checked: list[tuple[str, Verdict]] = []
    lines: list[int] = []
    invited = {person.id for person in read_annotators(campaign.directory)}
    for line, row in _rows(source):
        try:
            checked.append(_check(row, tasks, campaign, invited))
            lines.append(line)
        except (AnswerError, _RowError) as error:
            field = error.field if isinstance(error, _RowError) else "value"
            raise VerdictImportError(f"{source}, line {line}, field {field!r}: {error}") from None
    _check_places(campaign, source, lines, [verdict for _, verdict in checked])
    known = campaign.store.done_keys(campaign.run_id)
    new = [(key, verdict) for key, verdict in dict(checked).items() if key not in known]
    campaign.add_answers(new)
    return ImportSummary(rows=len(checked), added=len(new), already_stored=len(checked) - len(new))


def _check_places(campaign: Campaign, source: Path, lines: list[int], verdicts: list[Verdict]) -> None:
    """Refuse answers that would put more people on a main batch than ``annotators_per_batch``
    (counting only people whose answers count there)."""
    standing = campaign.standing()
    workers: dict[str, set[str]] = {}
    for verdict in campaign.verdicts():
        workers.setdefault(campaign.owner[verdict.item_id].id, set()).add(verdict.rater)
    cap = campaign.spec.annotators_per_batch
    for line, verdict in zip(lines, verdicts, strict=True):
        batch = campaign.owner[verdict.item_id]
        person = RaterKind.HUMAN.name_of(verdict.rater)
        if batch.kind != "main" or excluded_reason(person, batch, campaign.spec, standing) is not None:
            continue
        people = workers.setdefault(batch.id, set())
        if verdict.rater not in people and len(people) >= cap:
            raise VerdictImportError(f"{source}, line {line}, field 'rater': {verdict.rater} would be one "
                                     f"person too many on {batch.id} (annotators_per_batch: {cap})")
        people.add(verdict.rater)


def _rows(source: Path) -> list[tuple[int, dict[str, Any]]]:
    if not source.is_file():
        raise VerdictImportError(f"{source}: file not found")
    from convoscope.items import read_text  # the one text reader: BOM, line ends, NUL bytes
    text = read_text(source)
    if source.suffix.lower() == ".csv":
        reader = csv.DictReader(text.splitlines())
        return [(number, _from_csv(row)) for number, row in enumerate(reader, start=2)]
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                data = json.loads(line)
            except json.JSONDecodeError as error:
                raise VerdictImportError(f"{source}, line {number}: not valid JSON ({error.msg})") from None
            if not isinstance(data, dict):
                raise VerdictImportError(f"{source}, line {number}: expected a JSON object")
            rows.append((number, data))
    return rows


def _from_csv(row: dict[str, str]) -> dict[str, Any]:
    data: dict[str, Any] = {key: (_unescaped(value) if value != "" else None) for key, value in row.items()}
    if data.get("options"):
        text = data["options"]
        data["options"] = json.loads(text) if text.startswith("[") else [text]
    return data


def _unescaped(value: str) -> str:
    """Undo the export's guard against spreadsheet formulas (``'=…`` back to ``=…``)."""
    return value[1:] if value[:1] == "'" and value[1:2] in FORMULA_STARTS and value[1:2] else value


def _check(row: dict[str, Any], tasks: dict[tuple[str, str], Task],
           campaign: Campaign, invited: set[str]) -> tuple[str, Verdict]:
    rater = str(row.get("rater") or "")
    if RaterKind.of(rater) is not RaterKind.HUMAN or rater == RaterKind.HUMAN.prefix:
        raise _RowError("a campaign imports people's answers: rater must be 'human:<id>'", "rater")
    if RaterKind.HUMAN.name_of(rater) not in invited:
        raise _RowError(f"{rater!r} was never invited to this campaign (not in annotators.json); "
                        "`campaign invite` them first", "rater")
    task = tasks.get((str(row.get("item_id")), str(row.get("criterion"))))
    if task is None:
        field = "item_id" if not any(key[0] == str(row.get("item_id")) for key in tasks) else "criterion"
        raise _RowError(f"{row.get(field)!r} is not a {field.replace('_id', '')} of this campaign", field)
    criterion = campaign.criteria[task.criterion]
    annotator = RaterKind.HUMAN.name_of(rater)
    answer: str = IDK
    if row.get("unscored_reason") != IDK:
        if task.candidate.pair is not None:
            answer = _pair_answer(row.get("value"), task, annotator, criterion.name)
        else:
            value = criterion.scale.coerce(row.get("value"))
            if value is None:
                raise _RowError(f"{row.get('value')!r} is not an answer to {criterion.name}", "value")
            answer = str(value)
    seconds = row.get("latency_s")
    submission = Submission(answer=answer, options=tuple(row.get("options") or ()),
                            reason=row.get("reason") or "", seconds=float(seconds) if seconds else None)
    verdict = to_verdict(task, criterion, annotator, submission, max_note_chars=campaign.spec.max_note_chars)
    if task.candidate.pair is not None:  # the order this person saw, as recorded, never a guess
        verdict = verdict.model_copy(update={"raw": _recorded_order(row, task, verdict)})
    return task_key(annotator, task), verdict


def _pair_answer(value: Any, task: Task, annotator: str, name: str) -> str:
    """A pair's answer (the winning system or ``tie``) as the form value for this person."""
    first, second = pair_order(annotator, task.candidate)
    answers = {first.system: "1", second.system: "2", TIE: TIE}
    if str(value) not in answers:
        a, b = task.candidate.pair or (first, second)
        raise _RowError(f"{value!r} is not an answer to {name} on pair {task.candidate.item_id} "
                        f"({a.system}, {b.system} or {TIE})", "value")
    return answers[str(value)]


def _recorded_order(row: dict[str, Any], task: Task, verdict: Verdict) -> str | None:
    """The import row's record of which response was shown first (an export has it; a paper form
    does not: then none is kept, and the side-preference figures leave the answer out)."""
    recorded = order_in(row.get("raw"))
    sides = {side.system for side in task.candidate.pair or ()}
    if recorded is None or recorded[0] not in sides:
        return None
    shown_first = recorded[0]
    slot: str
    if verdict.value is None:
        slot = IDK
    elif verdict.value == TIE:
        slot = TIE
    else:
        slot = "first" if verdict.value == shown_first else "second"
    return json.dumps({"shown_first": shown_first, "answer": slot})
