"""Annotators' answers: server-side validation and conversion to human Verdicts."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from convoscope.campaigns._plan import Task
from convoscope.criteria import IDK, Criterion, ExplanationOption
from convoscope.errors import ConvoscopeError
from convoscope.judges import Verdict


def N_(message: str) -> str:  # noqa: N802  (the gettext convention for "mark, translate later")
    """Mark a message for the catalogue; it is translated where it is shown (the web app)."""
    return message


IDK_LABEL = N_("I don't know")
IDK_DEFINITION = N_("Parts of it meet the criterion and parts do not; say why in the note.")


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


def options_for(criterion: Criterion, answer: str) -> list[ExplanationOption]:
    """Explanation options offered after an answer. "I don't know" offers the negative ones."""
    negative = [str(v) for v in criterion.scale.values() if str(v) in {"0", "False"}] or ["0"]
    wanted = {answer} | ({IDK, *negative} if answer == IDK else set())
    return [option for option in criterion.options
            if wanted & {str(value) for value in option.when}]


def to_verdict(task: Task, criterion: Criterion, annotator: str, submission: Submission, *,
               max_note_chars: int | None = None) -> Verdict:
    """Validate one submission against its criterion and return the human Verdict."""
    choices = {value for value, _, _ in answer_choices(criterion)}
    if submission.answer not in choices:
        raise AnswerError(N_("Choose one of the answers for {criterion}."), criterion=criterion.name)
    reason = submission.reason.strip()
    if submission.answer == IDK and not reason:
        raise AnswerError(N_("\"I don't know\" needs a short note saying why."))
    if max_note_chars is not None and len(reason) > max_note_chars:
        raise AnswerError(N_("The note is too long: at most {limit} characters, this one has {length}."),
                          limit=max_note_chars, length=len(reason))
    allowed = {option.name for option in options_for(criterion, submission.answer)}
    unknown = sorted(set(submission.options) - allowed)
    if unknown:
        raise AnswerError(N_("These explanation options do not apply to this answer: {options}."),
                          options=", ".join(unknown))
    value = None if submission.answer == IDK else criterion.scale.coerce(submission.answer)
    return Verdict(item_id=task.candidate.item_id, criterion=criterion.name, rater=f"human:{annotator}",
                   value=value, unscored_reason=IDK if value is None else None, reason=reason or None,
                   options=tuple(submission.options), language=task.candidate.language,
                   system=task.candidate.system, latency_s=submission.seconds)


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
