"""Planning: which (item, criterion) tasks a chunk of items asks for, their keys, and a run's id.

A task's key is a hash of the request its judge renders (see :func:`convoscope.judges.judge_key`),
so a change to anything the judge would see is new work, and the same request asked by any run
is the same task: its verdict is stored once and found by every run that asks for it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from convoscope.criteria import Criterion
from convoscope.items import Item
from convoscope.judges import Judge, Panel, judge_key
from convoscope.metrics import MetricJudge


@dataclass(frozen=True)
class Task:
    """One (item, criterion) to judge, with its key and the requests rendered for it.

    ``chunk``: the chunk of the run's input it belongs to; ``position``: its place in the run
    (input order, criterion-major within a chunk)."""

    item: Item
    criterion: Criterion
    judge: Judge
    key: str
    requests: tuple[Any, ...] = ()  # per panel member (or the one judge); None: not rendered
    member_keys: tuple[str, ...] = ()
    chunk: int = 0
    position: int = 0


Rendered = Callable[[Item, Criterion], "Task | None"]


@dataclass(frozen=True)
class Plan:
    """The tasks of some items in judging order (criterion-major), and what did not apply."""

    tasks: tuple[Task, ...]
    not_applicable: int

    @property
    def keys(self) -> list[str]:
        return [task.key for task in self.tasks]


def applies(criterion: Criterion, item: Item) -> bool:
    """A response-level criterion needs a response; a dialogue-level one needs some turns.
    An item whose ``meta.kpis`` lists KPI names gets only those of the criteria that ask for
    relevance (the model-judged KPIs). Metric criteria (latency, answer length) apply to every
    response; they are computed from the log, never sent to a model."""
    if criterion.ask_relevance and not _marked_for(criterion, item):
        return False
    if criterion.granularity == "response" or not criterion.judged_by_model:
        return item.response is not None
    return bool(item.context) or item.response is not None


def _marked_for(criterion: Criterion, item: Item) -> bool:
    marked = item.meta.get("kpis")
    if marked is None:
        return True
    names = [part.strip() for part in marked.split(",")] if isinstance(marked, str) else marked
    return criterion.name in names or f"{criterion.suite}:{criterion.name}" in names


def plan_tasks(items: Sequence[Item], criteria: Sequence[Criterion], judge: Judge, *,
               chunk: int = 0, start: int = 0, rendered: Rendered | None = None) -> Plan:
    """Render every task's request once and key it. Criterion-major order: consecutive prompts
    share the rubric prefix, which serving engines with prefix caching evaluate once.
    ``rendered(item, criterion)``: a task already rendered for them (runs._head), or None."""
    metric_judge = MetricJudge()
    tasks: list[Task] = []
    skipped = 0
    for criterion in criteria:
        chosen: Judge = judge if criterion.judged_by_model else metric_judge
        for item in items:
            if applies(criterion, item):
                done = rendered(item, criterion) if rendered is not None else None
                tasks.append(_task(chosen, item, criterion, chunk, start + len(tasks)) if done is None
                             else replace(done, chunk=chunk, position=start + len(tasks)))
            else:
                skipped += 1
    return Plan(tuple(tasks), skipped)


def _task(judge: Judge, item: Item, criterion: Criterion, chunk: int, position: int) -> Task:
    if isinstance(judge, Panel):
        requests = tuple(_render(member, item, criterion) for member in judge.members)
        member_keys = tuple(_key(member, item, criterion, request)
                            for member, request in zip(judge.members, requests, strict=True))
        return Task(item, criterion, judge, judge.task_key(item, criterion, member_keys),
                    requests, member_keys, chunk, position)
    request = _render(judge, item, criterion)
    return Task(item, criterion, judge, _key(judge, item, criterion, request), (request,), (),
                chunk, position)


def _render(judge: Judge, item: Item, criterion: Criterion) -> Any:
    render = getattr(judge, "request", None)
    return render(item, criterion) if callable(render) else None


def _key(judge: Judge, item: Item, criterion: Criterion, request: Any) -> str:
    if request is not None:
        return str(judge.task_key(item, criterion, request))  # type: ignore[attr-defined]
    return judge_key(judge, item, criterion)


def run_id_for(judge: Judge, criteria: Sequence[Criterion], source: str) -> str:
    """The same judge, criteria and input source give the same run id, so running the same
    command again — on the same file, grown or not — continues the same run."""
    payload = {"judge": judge.identity(), "source": source,
               "criteria": [criterion.model_dump(mode="json") for criterion in criteria]}
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str).encode())
    return digest.hexdigest()[:16]


