"""A judge that answers several criteria in one model call (e.g. the eight dialogue-issue labels
and the overall score of MEDAL), instead of one call per criterion.

The run loop still asks for one (item, criterion) at a time; the first request for an item sends
one chat prompt holding every criterion's rubric and a JSON schema with one answer object per
criterion, and later requests for the same item read their part of that answer. The rater id
says which way a verdict was made (``model:<name>[one-call]``), so one-call and per-criterion
verdicts are never pooled or compared as if they were the same judge. Usage is booked on the
first criterion's verdict; the others are marked ``shared_call``: they cost no call of their own.
Chat mode only: a next-token score cannot answer several criteria at once.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from convoscope.criteria import Criterion
from convoscope.items import Item
from convoscope.judges._judge import _short_hash
from convoscope.judges._parse import json_objects, parse_answer
from convoscope.judges._prompt import DATA_NOTE, IDK_NOTE, JUDGE_INSTRUCTIONS, REMINDER, render_item
from convoscope.judges._quote import quote
from convoscope.judges._verdict import Verdict
from convoscope.models import EndpointUnreachable, GenerateRequest, Generation, Message, Model, ModelError

JOINT_INSTRUCTIONS = ("Several criteria follow. Judge the item on each of them separately and answer "
                      "with one JSON object holding one answer per criterion, keyed by its name.")


def joint_prefix(criteria: tuple[Criterion, ...], persona: str | None = None) -> tuple[str, dict[str, Any]]:
    """The shared part of a one-call prompt: (system message, answer schema). Built once per
    judge and reused for every item."""
    from convoscope.criteria import answer_schema, render_rubric

    system = [JUDGE_INSTRUCTIONS, JOINT_INSTRUCTIONS, DATA_NOTE]
    if persona:
        system.append(f"Judge from this point of view: {persona}")
    system.extend(render_rubric(criterion) for criterion in criteria)
    if any(criterion.scale.allow_idk for criterion in criteria):
        system.append(IDK_NOTE)
    schema = {"type": "object", "properties": {c.name: answer_schema(c) for c in criteria},
              "required": [c.name for c in criteria], "additionalProperties": False}
    system.append("Answer schema:\n" + quote(schema))
    return "\n\n".join(system), schema


def joint_request(criteria: tuple[Criterion, ...], item: Item, *, persona: str | None = None,
                  max_tokens: int = 1200,
                  prefix: tuple[str, dict[str, Any]] | None = None) -> GenerateRequest:
    """One chat request asking every criterion; rubrics first, the item last (prefix caching).
    The item is quoted data between markers it cannot forge (see ``render_item``)."""
    system, schema = prefix or joint_prefix(criteria, persona)
    user = render_item(item, criteria[0]) + "\n\n" + REMINDER.format(name="every criterion")
    return GenerateRequest(messages=(Message(role="system", content=system),
                                     Message(role="user", content=user)),
                           json_schema=schema, max_tokens=max_tokens)


@dataclass(frozen=True)
class JointJudge:
    """Answers every criterion in ``criteria`` about an item with a single model call."""

    model: Model
    criteria: tuple[Criterion, ...]
    persona: str | None = None
    persona_name: str | None = None
    max_tokens: int = 1200
    _shared: _SharedCalls = field(default_factory=lambda: _SharedCalls(), compare=False, repr=False)

    def __post_init__(self) -> None:
        if len({criterion.granularity for criterion in self.criteria}) > 1:
            raise ValueError("one call can only cover criteria of one granularity "
                             "(all whole-dialogue or all single-response)")

    @property
    def rater(self) -> str:
        suffix = f"#{self.persona_name or _short_hash(self.persona)}" if self.persona else ""
        return f"model:{self.model.name}[one-call]{suffix}"

    def identity(self) -> dict[str, Any]:
        return {"kind": "one-call", "model": self.model.name, "persona": self.persona,
                "max_tokens": self.max_tokens, "criteria": [c.name for c in self.criteria]}

    async def __call__(self, item: Item, criterion: Criterion) -> Verdict:
        if criterion.name not in {c.name for c in self.criteria}:
            raise ValueError(f"criterion {criterion.name!r} is not among this one-call judge's criteria")
        started = time.perf_counter()
        outcome, first = await self._shared.read(item.id, criterion.name, self.criteria,
                                                 lambda: self._ask(item))
        if isinstance(outcome, EndpointUnreachable):
            raise outcome  # not this item's failure: the run stops
        if isinstance(outcome, ModelError):
            return self._verdict(item, criterion, value=None, unscored_reason="model_error",
                                 raw=str(outcome), latency_s=time.perf_counter() - started)
        answer = parse_answer(_part(outcome.text, criterion.name), criterion)
        usage: dict[str, Any] = {"shared_call": True}
        if first:
            usage = {"prompt_tokens": outcome.prompt_tokens, "completion_tokens": outcome.completion_tokens,
                     "cost": outcome.cost, "latency_s": outcome.latency_s, "cached": outcome.cached}
        return self._verdict(item, criterion, value=answer.value, unscored_reason=answer.unscored_reason,
                             reason=answer.reason, options=answer.options, relevant=answer.relevant,
                             raw=outcome.text, **usage)

    async def _ask(self, item: Item) -> Generation | ModelError:
        request = joint_request(self.criteria, item, persona=self.persona, max_tokens=self.max_tokens,
                                prefix=self._prefix)
        try:
            return await self.model.generate(request)
        except ModelError as error:
            return error

    @cached_property
    def _prefix(self) -> tuple[str, dict[str, Any]]:
        """System message and schema, rendered once per judge (derived from its configuration)."""
        return joint_prefix(self.criteria, self.persona)

    def _verdict(self, item: Item, criterion: Criterion, **fields: Any) -> Verdict:
        return Verdict(item_id=item.id, criterion=criterion.name, rater=self.rater,
                       language=item.language, system=item.system, **fields)


Outcome = Generation | ModelError


class _SharedCalls:
    """The one call per item that every criterion of a one-call judge reads its part from.

    The run loop asks for one (item, criterion) at a time, so the answer waits here until each
    criterion has read it; the entry is dropped after the last read, so memory holds only items
    still being judged (plus items a resumed run asks only some criteria of, until the judge
    goes). The judge's configuration stays frozen: this is its only state."""

    def __init__(self) -> None:
        self._pending: dict[str, tuple[asyncio.Future[Outcome], set[str]]] = {}

    async def read(self, item_id: str, criterion: str, criteria: tuple[Criterion, ...],
                   ask: Callable[[], Awaitable[Outcome]]) -> tuple[Outcome, bool]:
        """The item's answer, and whether this read started the call (it books the usage)."""
        first = item_id not in self._pending
        if first:
            self._pending[item_id] = (asyncio.ensure_future(ask()), {c.name for c in criteria})
        future, unread = self._pending[item_id]
        unread.discard(criterion)
        if not unread:
            del self._pending[item_id]
        return await future, first

    def __len__(self) -> int:
        return len(self._pending)


def _part(text: str, name: str) -> str:
    """The answer object for one criterion, as JSON text; '' when the answer has none for it.
    Read from the last complete JSON object that holds an answer for ``name`` (an earlier one
    may be quoted from the judged text)."""
    for data in reversed(json_objects(text)):
        part = data.get(name)
        if isinstance(part, dict):
            return json.dumps(part)
    return ""
