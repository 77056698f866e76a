"""Assemble judges from command-line style specs, and run a whole judging job."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from convoscope.criteria import Criterion
from convoscope.errors import ConfigError
from convoscope.items import Item
from convoscope.judges import Judge, JudgeMode, Panel, PoolRule, RubricJudge, TieRule
from convoscope.models import Model
from convoscope.runs._run import Progress, RunSummary, judge_items
from convoscope.store import Store

EMBEDDED_DEFAULT = "embedded"

OFFLINE_WARNING = (
    "The embedded model is tiny. It lets you try convoscope offline; its scores carry no "
    "measured signal about quality. Point --judge at a capable model before you publish."
)


@dataclass(frozen=True)
class JudgeSpec:
    """One judge as the CLI names it: a model spec, a mode, an optional persona."""

    model: str
    mode: JudgeMode | None = None
    persona: str | None = None
    persona_name: str | None = None

    def resolved_mode(self) -> JudgeMode:
        if self.mode is not None:
            return self.mode
        # Tiny embedded models cannot follow a JSON instruction (MEASURED.md): read their
        # next-token distribution instead.
        return "completion" if is_embedded(self.model) else "chat"


def is_embedded(model_spec: str) -> bool:
    return model_spec == "embedded" or model_spec.startswith("embedded:")


def build_judge(
    specs: Sequence[JudgeSpec],
    *,
    pool: PoolRule = "majority",
    ties: TieRule = "low",
    quorum: int = 1,
    cache_path: str | Path | None = None,
    model_options: dict[str, Any] | None = None,
    max_tokens: int = 400,
    one_call: Sequence[Criterion] = (),
) -> tuple[Judge, list[Model]]:
    """One judge, or a panel when several specs are given. Also returns the models to close.

    ``one_call``: criteria each judge answers together in a single chat call per item
    (:class:`~convoscope.judges.JointJudge`) instead of one call per criterion."""
    from convoscope.judges import JointJudge
    from convoscope.models import CachedModel, ResponseCache, model_from_spec

    if not specs:
        raise ConfigError("at least one judge is needed")
    cache = ResponseCache(cache_path) if cache_path is not None else None
    models: dict[str, Model] = {}
    judges: list[Judge] = []
    for spec in specs:
        if spec.model not in models:
            model = model_from_spec(spec.model, **(model_options or {}))
            models[spec.model] = CachedModel(model, cache) if cache is not None else model
        if one_call:
            if spec.mode == "completion":
                raise ConfigError("one call for several criteria needs chat mode, not completion mode")
            judges.append(JointJudge(models[spec.model], tuple(one_call), persona=spec.persona,
                                     persona_name=spec.persona_name, max_tokens=max_tokens * len(one_call)))
            continue
        judges.append(RubricJudge(models[spec.model], mode=spec.resolved_mode(),
                                  persona=spec.persona, persona_name=spec.persona_name,
                                  max_tokens=max_tokens))
    if len(judges) == 1:
        return judges[0], list(models.values())
    return Panel(tuple(judges), rule=pool, ties=ties, quorum=quorum), list(models.values())


async def judge_async(
    items: Sequence[Item],
    criteria: Sequence[Criterion],
    specs: Sequence[JudgeSpec],
    *,
    store: Store,
    cache_path: str | Path | None,
    pool: PoolRule = "majority",
    ties: TieRule = "low",
    quorum: int = 1,
    concurrency: int = 16,
    on_progress: Progress | None = None,
    max_tokens: int = 400,
    model_options: dict[str, Any] | None = None,
    one_call: bool = False,
) -> RunSummary:
    """Build the judge, run it over items x criteria into ``store``, and close the models.

    ``max_tokens`` caps a chat judge's answer; ``model_options`` go to every backend (e.g.
    ``max_concurrency`` or ``price_per_million`` for HTTP endpoints). ``one_call`` asks all
    model-judged criteria in a single call per item (chat mode)."""
    joint = [criterion for criterion in criteria if criterion.judged_by_model] if one_call else []
    judge, models = build_judge(specs, pool=pool, ties=ties, quorum=quorum, cache_path=cache_path,
                                model_options=model_options, max_tokens=max_tokens, one_call=joint)
    try:
        return await judge_items(items, criteria, judge, store=store, concurrency=concurrency,
                                 on_progress=on_progress)
    finally:
        for model in models:
            await model.aclose()


def judge(items: Sequence[Item], criteria: Sequence[Criterion], specs: Sequence[JudgeSpec],
          **options: Any) -> RunSummary:
    """Synchronous edge of :func:`judge_async` for scripts and notebooks."""
    return asyncio.run(judge_async(items, criteria, specs, **options))
