"""Pairwise judging with a judge written in Python: each response is scored on its own by the
judge, and the better score wins (by the criterion's direction); equal scores are a tie.

A Python judge sees one response at a time, so there is no order to be biased by: such pairs
never carry ``position_flip``."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from convoscope.criteria import Criterion
from convoscope.errors import ConfigError
from convoscope.items import Item
from convoscope.judges import Verdict
from convoscope.pairwise._judge import TIE, pairwise_criterion_name
from convoscope.pairwise._pairs import PAIR_KEY, pair_sides


@dataclass(frozen=True)
class ScoredPairJudge:
    """Compares the two sides of a pair item by an absolute judge's scores (see the module)."""

    judge: Any

    @property
    def rater(self) -> str:
        return str(self.judge.rater)

    def identity(self) -> dict[str, Any]:
        return {"kind": "pairwise-by-score", "judge": self.judge.identity()}

    async def __call__(self, item: Item, criterion: Criterion) -> Verdict:
        started = time.perf_counter()
        sides = pair_sides(item)
        meta = {key: value for key, value in item.meta.items() if key != PAIR_KEY}
        alone = [item.model_copy(update={"id": side["item_id"], "response": side["response"],
                                         "system": side["system"], "meta": meta}) for side in sides]
        a, b = await asyncio.gather(*(self.judge(side, criterion) for side in alone))
        said = (f"{side['system']}: {_said(verdict)}" for side, verdict in zip(sides, (a, b), strict=True))
        fields: dict[str, Any] = {"reason": " | ".join(said), "latency_s": time.perf_counter() - started}
        failed = next((verdict for verdict in (a, b) if verdict.value is None), None)
        if failed is not None:
            fields.update(value=None, unscored_reason=failed.unscored_reason, raw=failed.raw)
        else:
            fields["value"] = _winner(_score(a), _score(b), sides[0]["system"], sides[1]["system"],
                                      higher_is_better=criterion.higher_is_better)
        return Verdict(item_id=item.id, criterion=pairwise_criterion_name(criterion), rater=self.rater,
                       language=item.language, system=item.system, **fields)


def scored_pair_judge(judge: Any, criterion: Criterion) -> ScoredPairJudge:
    """A pairwise judge from a Python judge (or a ``python:`` spec), for a numeric criterion."""
    from convoscope.judges._python import python_judge_for

    if not criterion.scale.is_numeric():
        raise ConfigError(f"a Python judge compares pairs by their scores: {criterion.name} has labels, "
                          "not numbers")
    return ScoredPairJudge(python_judge_for(judge))


def _score(verdict: Verdict) -> float:
    return float(verdict.expected_value if verdict.expected_value is not None else verdict.value)  # type: ignore[arg-type]


def _winner(a: float, b: float, system_a: str, system_b: str, *, higher_is_better: bool) -> str:
    if a == b:
        return TIE
    return system_a if (a > b) == higher_is_better else system_b


def _said(verdict: Verdict) -> str:
    shown = verdict.value if verdict.value is not None else verdict.unscored_reason
    return f"{shown} ({verdict.reason})" if verdict.reason else str(shown)
