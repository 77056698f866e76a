"""A pairwise run: pairs made, judged in both orders by each judge through the resumable run
engine (store, cache, leases), then win rates, Bradley–Terry and position bias per judge."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from convoscope.criteria import Criterion
from convoscope.items import Item
from convoscope.pairwise._judge import PairwiseJudge, pairwise_criterion_name
from convoscope.pairwise._pairs import make_pairs
from convoscope.pairwise._stats import (
    JudgePositionBias,
    Strength,
    WinRate,
    bradley_terry,
    majority,
    outcomes,
    position_bias_rates,
    win_rates,
)


@dataclass(frozen=True)
class JudgeSection:
    win_rates: list[WinRate]
    strengths: list[Strength]
    bias: JudgePositionBias


@dataclass(frozen=True)
class PeopleSection:
    """People's pairwise verdicts on the same pairs (a campaign's export): every answer counts."""

    answers: int
    pairs: int
    win_rates: list[WinRate]
    strengths: list[Strength]


@dataclass(frozen=True)
class JudgeAgreement:
    """A judge against the people's majority answer, on the pairs both scored."""

    rater: str
    pairs: int
    agreement: float  # share of pairs where the judge names the people's majority answer
    kappa: float | None  # Cohen's kappa (nominal: system A, system B, tie); None when undefined


@dataclass(frozen=True)
class PairwiseReport:
    verdicts: list[Any]
    by_judge: dict[str, JudgeSection] = field(default_factory=dict)
    unscored: int = 0
    exit_code: int = 0
    people: PeopleSection | None = None
    agreement: dict[str, JudgeAgreement] = field(default_factory=dict)


def compare_with_people(verdicts: Sequence[Any], people: Sequence[Any], criterion: str, *,
                        n_resamples: int = 1000, seed: int = 0
                        ) -> tuple[PeopleSection | None, dict[str, JudgeAgreement]]:
    """People's win rates on ``criterion`` (a ``pairwise:`` name) and each judge's agreement
    with their majority answer per pair."""
    from convoscope.analysis import cohen_kappa

    mine = [v for v in people if v.criterion == criterion and v.value is not None]
    if not mine:
        return None, {}
    results = outcomes(mine)
    section = PeopleSection(len(mine), len({v.item_id for v in mine}),
                            win_rates(results, n_resamples=n_resamples, seed=seed),
                            bradley_terry(results, n_resamples=min(n_resamples, 200), seed=seed))
    said = {item: winner for item, (_, winner) in majority(mine).items()}
    agreement = {}
    for rater in dict.fromkeys(v.rater for v in verdicts):
        judged = {v.item_id: str(v.value) for v in verdicts if v.rater == rater
                  and v.criterion == criterion and v.value is not None and v.item_id in said}
        if not judged:
            continue
        items = sorted(judged)
        try:
            kappa: float | None = float(cohen_kappa([judged[i] for i in items], [said[i] for i in items]))
        except ValueError:
            kappa = None
        if kappa is not None and kappa != kappa:  # NaN: one answer everywhere on both sides
            kappa = None
        same = sum(judged[i] == said[i] for i in items)
        agreement[rater] = JudgeAgreement(rater, len(items), same / len(items), kappa)
    return section, agreement


async def _judge_all_pairs(spec: Any, pairs: list[Item], criterion: Criterion, store: Any, *, mode: str,
                           concurrency: int) -> Any:
    """One judge's run over every pair: a model spec asks the model in both orders; a judge
    written in Python (or a ``python:`` spec) scores each side (see :mod:`._python`)."""
    from convoscope.judges._python import is_python_spec
    from convoscope.models import open_model
    from convoscope.pairwise._python import scored_pair_judge
    from convoscope.runs import default_cache_path, is_embedded, run_judge

    if not isinstance(spec, str) or is_python_spec(spec):
        return await run_judge(pairs, [criterion], scored_pair_judge(spec, criterion), store=store,
                               concurrency=concurrency)
    chosen = mode if mode != "auto" else ("completion" if is_embedded(spec) else "chat")
    model = open_model(spec, cache=default_cache_path(store))
    try:
        judge = PairwiseJudge(model, mode=chosen)  # type: ignore[arg-type]
        return await run_judge(pairs, [criterion], judge, store=store, concurrency=concurrency)
    finally:
        await model.aclose()


def judge_pairs(items: Sequence[Item], criterion: Criterion, judges: Sequence[Any], **options: Any
                ) -> PairwiseReport:
    """:func:`judge_pairs_async` for scripts, notebooks and the CLI."""
    from convoscope.runs import run_sync

    return run_sync(judge_pairs_async(items, criterion, judges, **options))


async def judge_pairs_async(items: Sequence[Item], criterion: Criterion, judges: Sequence[Any], *,
                            mode: str = "auto", systems: Sequence[str] = (),
                            store: str | Path = "convoscope.db", concurrency: int = 8,
                            n_resamples: int = 1000, seed: int = 0,
                            people: Sequence[Any] = (), per_context: int | None = None) -> PairwiseReport:
    """Judge every pair of systems on ``criterion`` with each judge spec; one report per judge.

    ``judges``: model specs, ``python:MODULE:NAME`` specs or judges written in Python (these
    score each response on its own, and the better score wins: see :mod:`._python`).
    ``people``: pairwise verdicts of people on the same pairs (``campaign export`` of a pairwise
    campaign); the report then adds their win rates and each judge's agreement with them.
    ``per_context``: that many pairs per context (see :func:`make_pairs`)."""
    from convoscope.store import Store

    pairs = make_pairs(items, systems=systems or None, per_context=per_context)
    opened = Store(store)
    verdicts: list[Any] = []
    code = 0
    try:
        for spec in judges:
            result = await _judge_all_pairs(spec, pairs, criterion, opened, mode=mode,
                                            concurrency=concurrency)
            verdicts.extend(result.verdicts)
            code = max(code, result.exit_code())
    finally:
        opened.close()
    sections = {}
    for rater in dict.fromkeys(v.rater for v in verdicts):
        mine = [v for v in verdicts if v.rater == rater]
        if not any(v.value is not None for v in mine):
            continue
        results = outcomes(mine)
        sections[rater] = JudgeSection(win_rates(results, n_resamples=n_resamples, seed=seed),
                                       bradley_terry(results, n_resamples=min(n_resamples, 200), seed=seed),
                                       position_bias_rates(mine)[0])
    crowd, agreement = compare_with_people(verdicts, people, pairwise_criterion_name(criterion),
                                           n_resamples=n_resamples, seed=seed)
    return PairwiseReport(verdicts, sections, sum(v.value is None for v in verdicts), code, crowd, agreement)
