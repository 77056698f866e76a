"""Annotators' answers: server-side validation and conversion to human Verdicts."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from convoscope.campaigns._plan import Candidate, Task
from convoscope.criteria import IDK, Criterion, ExplanationOption, missing_free_text
from convoscope.errors import ConvoscopeError
from convoscope.judges import Verdict


def N_(message: str) -> str:  # noqa: N802  (the gettext convention for "mark, translate later")
    """Mark a message for the catalogue; it is translated where it is shown (the web app)."""
    return message


IDK_LABEL = N_("I don't know")
IDK_DEFINITION = N_("Parts of it meet the criterion and parts do not; say why in the note.")
TIE = "tie"  # as convoscope.pairwise writes a tie
PAIR_CHOICES = (
    ("1", N_("Response 1 is better"), N_("The response on the left (or on top) meets the criterion better.")),
    ("2", N_("Response 2 is better"), N_("The response on the right (or below) meets the criterion better.")),
    (TIE, N_("Neither is better (tie)"), N_("Both meet the criterion equally well, or equally badly.")),
)
PAIR_IDK_DEFINITION = N_("You cannot tell which is better; say why in the note.")


class AnswerError(ConvoscopeError, ValueError):
    """An answer the server refuses. ``msgid`` is looked up in the message catalogue and filled
    with ``params``; ``str(error)`` is the English text."""

    def __init__(self, msgid: str, **params: object):
        self.msgid, self.params = msgid, params
        super().__init__(msgid.format(**params))


class Submission(BaseModel):
    """What the annotator's form sends for one task."""

    model_config = ConfigDict(frozen=True)

    answer: str  # a scale value as text ("1", "0") or "idk"
    options: tuple[str, ...] = ()
    reason: str = ""
    seconds: float | None = None


def answer_choices(criterion: Criterion) -> list[tuple[str, str, str]]:
    """(form value, label, definition) for each answer, positive first, "I don't know" last."""
    choices = []
    for value in sorted(criterion.scale.values(), key=lambda v: str(v), reverse=True):
        level = criterion.level(value)
        choices.append((str(value), criterion.answer_word(value), level.definition if level else ""))
    if criterion.scale.allow_idk:
        choices.append((IDK, IDK_LABEL, IDK_DEFINITION))
    return choices


def pair_choices(criterion: Criterion) -> list[tuple[str, str, str]]:
    """(form value, label, definition) for a pair: first, second, tie, then "I don't know"."""
    idk = [(IDK, IDK_LABEL, PAIR_IDK_DEFINITION)] if criterion.scale.allow_idk else []
    return [*PAIR_CHOICES, *idk]


def choices(task: Task, criterion: Criterion) -> list[tuple[str, str, str]]:
    """The answers offered for a task: a pair's, or the criterion's own."""
    return pair_choices(criterion) if task.candidate.pair is not None else answer_choices(criterion)


def pair_order(annotator: str, candidate: Candidate) -> tuple[Candidate, Candidate]:
    """The pair's two responses in the order this annotator sees them.

    The order is drawn once per annotator and pair (from a hash of both, so it is the same on
    every page load, after a restart and on every server) and recorded with the answer."""
    assert candidate.pair is not None
    digest = hashlib.sha256(f"order\x1f{annotator}\x1f{candidate.item_id}".encode()).digest()
    first, second = candidate.pair
    return (second, first) if digest[0] & 1 else (first, second)


def options_for(criterion: Criterion, answer: str) -> list[ExplanationOption]:
    """Explanation options offered after an answer. "I don't know" offers the negative ones."""
    negative = [str(v) for v in criterion.scale.values() if str(v) in {"0", "False"}] or ["0"]
    wanted = {answer} | ({IDK, *negative} if answer == IDK else set())
    return [option for option in criterion.options
            if wanted & {str(value) for value in option.when}]


def to_verdict(task: Task, criterion: Criterion, annotator: str, submission: Submission, *,
               max_note_chars: int | None = None) -> Verdict:
    """Validate one submission against its criterion and return the human Verdict."""
    offered = {value for value, _, _ in choices(task, criterion)}
    if submission.answer not in offered:
        raise AnswerError(N_("Choose one of the answers for {criterion}."), criterion=criterion.name)
    reason = submission.reason.strip()
    if submission.answer == IDK and not reason:
        raise AnswerError(N_("\"I don't know\" needs a short note saying why."))
    if max_note_chars is not None and len(reason) > max_note_chars:
        raise AnswerError(N_("The note is too long: at most {limit} characters, this one has {length}."),
                          limit=max_note_chars, length=len(reason))
    if task.candidate.pair is not None:
        return _pair_verdict(task, annotator, submission, reason)
    allowed = {option.name for option in options_for(criterion, submission.answer)}
    unknown = sorted(set(submission.options) - allowed)
    if unknown:
        raise AnswerError(N_("These explanation options do not apply to this answer: {options}."),
                          options=", ".join(unknown))
    if missing_free_text(criterion, submission.options, reason) is not None:  # "other" says what, in words
        option = next(o.name for o in criterion.options if o.free_text and o.name in submission.options)
        raise AnswerError(N_("\"{option}\" needs a note saying what applies."), option=option)
    value = None if submission.answer == IDK else criterion.scale.coerce(submission.answer)
    return Verdict(item_id=task.candidate.item_id, criterion=task.criterion, rater=f"human:{annotator}",
                   value=value, unscored_reason=IDK if value is None else None, reason=reason or None,
                   options=tuple(submission.options), language=task.candidate.language,
                   system=task.candidate.system, latency_s=submission.seconds)


def _pair_verdict(task: Task, annotator: str, submission: Submission, reason: str) -> Verdict:
    """A pairwise verdict: the winning system or ``tie``; ``raw`` records the order shown."""
    if submission.options:
        raise AnswerError(N_("These explanation options do not apply to this answer: {options}."),
                          options=", ".join(submission.options))
    first, second = pair_order(annotator, task.candidate)
    value = {"1": first.system, "2": second.system, TIE: TIE}.get(submission.answer)
    slot = {"1": "first", "2": "second"}.get(submission.answer, submission.answer)
    raw = json.dumps({"shown_first": first.system, "answer": slot})
    return Verdict(item_id=task.candidate.item_id, criterion=task.criterion, rater=f"human:{annotator}",
                   value=value, unscored_reason=IDK if value is None else None, reason=reason or None,
                   raw=raw, language=task.candidate.language, system=task.candidate.system,
                   latency_s=submission.seconds)


def shown_slot(verdict: Verdict) -> tuple[str, str] | None:
    """(system shown first, slot chosen: first / second / tie / idk) of a person's pairwise answer;
    None when no order was recorded (e.g. answers imported from paper forms)."""
    return order_in(verdict.raw)


def order_in(raw: object) -> tuple[str, str] | None:
    """The (shown first, slot) record a pairwise answer keeps in ``raw``, or None."""
    try:
        recorded = json.loads(raw) if isinstance(raw, str) else None
        return str(recorded["shown_first"]), str(recorded["answer"])  # type: ignore[index]
    except (ValueError, TypeError, KeyError):
        return None


def task_key(annotator: str, task: Task) -> str:
    """One key per annotator, candidate and criterion: the store keeps the first answer only."""
    return answer_key(annotator, task.batch, task.candidate.item_id, task.criterion)


def answer_key(annotator: str, batch: str, item_id: str, criterion: str) -> str:
    """The task key from its parts, so a stored Verdict gives back the key it was stored under."""
    text = "\x1f".join((annotator, batch, item_id, criterion))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:40]


def next_task(tasks: Sequence[Task], annotator: str, done: set[str]) -> tuple[int, Task | None]:
    """How many tasks are done, and the first task not yet answered (None when all are)."""
    remaining = [task for task in tasks if task_key(annotator, task) not in done]
    return len(tasks) - len(remaining), (remaining[0] if remaining else None)
