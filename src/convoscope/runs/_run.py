"""Judging runs: every (item, criterion) pair judged once, persisted as it goes, resumable."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from convoscope.criteria import Criterion
from convoscope.items import Item
from convoscope.judges import Judge, Panel, RaterKind, Verdict, judge_key
from convoscope.metrics import MetricJudge, check_metric_inputs
from convoscope.store import Store

Progress = Callable[[int], None]


@dataclass
class RunSummary:
    """What a run did. ``verdicts`` counts the final verdicts (one per item and criterion)."""

    run_id: str
    store: str
    total_tasks: int = 0
    resumed: int = 0
    not_applicable: int = 0
    verdicts: int = 0
    scored: int = 0
    unscored: Counter[str] = field(default_factory=Counter)
    model_calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    wall_time_s: float = 0.0

    def count(self, final: Verdict, members: Sequence[Verdict]) -> None:
        self.verdicts += 1
        if final.value is None:
            self.unscored[final.unscored_reason or "unknown"] += 1
        else:
            self.scored += 1
        for verdict in members or [final]:
            if verdict.rater_kind is RaterKind.METRIC or verdict.shared_call:
                continue  # computed from the log, or answered by another verdict's call
            self.cache_hits += verdict.cached
            self.model_calls += not verdict.cached and verdict.unscored_reason != "model_error"
            self.prompt_tokens += 0 if verdict.cached else verdict.prompt_tokens
            self.completion_tokens += 0 if verdict.cached else verdict.completion_tokens
            self.cost += 0.0 if verdict.cached else verdict.cost or 0.0

    def as_dict(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        data["unscored"] = dict(self.unscored)
        return data


def run_id_for(items: Sequence[Item], criteria: Sequence[Criterion], judge: Judge) -> str:
    """The same items, criteria and judge give the same run id, so re-running resumes."""
    digest = hashlib.sha256()
    for item in items:
        digest.update(json.dumps([item.id, item.content_key()], sort_keys=True).encode())
    for criterion in criteria:
        digest.update(criterion.model_dump_json().encode())
    digest.update(json.dumps(judge.identity(), sort_keys=True).encode())
    return digest.hexdigest()[:16]


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


async def judge_items(
    items: Sequence[Item],
    criteria: Sequence[Criterion],
    judge: Judge,
    *,
    store: Store,
    concurrency: int = 16,
    on_progress: Progress | None = None,
    spec: dict[str, Any] | None = None,
) -> RunSummary:
    """Judge every item on every applicable criterion; write each verdict to ``store`` at once.

    Re-running with the same items, criteria and judge resumes the same run: finished work is
    skipped (and cached prompts cost no model call for work that was in flight).
    """
    check_metric_inputs(list(items), list(criteria))  # bad timestamps fail before any model call
    metric_judge = MetricJudge()
    started = time.perf_counter()
    run_id = run_id_for(items, criteria, judge)
    store.start_run(run_id, {"judge": judge.identity(), "criteria": [c.name for c in criteria],
                             "items": len(items), **(spec or {})})
    summary = RunSummary(run_id=run_id, store=store.location)
    done = store.done_keys(run_id)
    queue: asyncio.Queue[tuple[Item, Criterion, str, Judge]] = asyncio.Queue()
    # Criterion-major order: consecutive prompts share the rubric prefix, which llama.cpp and
    # serving engines with prefix caching evaluate once.
    for criterion in criteria:
        chosen = judge if criterion.judged_by_model else metric_judge
        for item in items:
            if not applies(criterion, item):
                summary.not_applicable += 1
                continue
            summary.total_tasks += 1
            key = judge_key(chosen, item, criterion)
            if key in done:
                summary.resumed += 1
            else:
                queue.put_nowait((item, criterion, key, chosen))
    if on_progress and summary.resumed:
        on_progress(summary.resumed)

    async def worker() -> None:
        while not queue.empty():
            item, criterion, key, chosen = queue.get_nowait()
            final, members = await _judge_one(chosen, item, criterion)
            pairs = zip(_members(chosen), members, strict=True)
            rows = [(judge_key(member, item, criterion), verdict) for member, verdict in pairs]
            store.add_many(run_id, [*rows, (key, final)])
            summary.count(final, members)
            if on_progress:
                on_progress(1)

    await asyncio.gather(*(worker() for _ in range(max(1, concurrency))))
    summary.wall_time_s = time.perf_counter() - started
    store.finish_run(run_id, summary.as_dict())
    return summary


def _members(judge: Judge) -> Sequence[Judge]:
    return judge.members if isinstance(judge, Panel) else ()


async def _judge_one(judge: Judge, item: Item, criterion: Criterion) -> tuple[Verdict, list[Verdict]]:
    if isinstance(judge, Panel):
        return await judge.judge_all(item, criterion)
    return await judge(item, criterion), []
