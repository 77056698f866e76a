"""Traditional KPIs computed from the log, never by a model: response latency and answer length.

A metric criterion (``evaluation: metric`` with ``parameters.metric``) is computed by
:class:`MetricJudge`, which behaves like any judge: it returns a Verdict, here with
``rater='metric:<metric>'``, so computed KPIs land in the same store and verdict file as model
verdicts and every report and statistic reads them alike. The measurement itself is kept in
``raw`` as JSON (e.g. ``{"seconds": 1.4, "max_seconds": 2.0}``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from convoscope.criteria import Criterion
from convoscope.errors import ConfigError
from convoscope.items import Item
from convoscope.judges import Verdict
from convoscope.metrics._time import TimestampError, response_latency

MetricResult = tuple[int | None, str, dict[str, Any]]
"""(value 1/0 or None when not measurable, a reason in words, the measurement)."""

Metric = Callable[[Item, Criterion], MetricResult]


def latency(item: Item, criterion: Criterion) -> MetricResult:
    """Fulfilled (1) when the response came at most ``max_seconds`` after the turn before it."""
    limit = _number(criterion, "max_seconds")
    seconds = response_latency(item)
    if seconds is None:
        return None, "no timestamps for the response and the turn before it", {}
    met = seconds <= limit
    return int(met), f"answered in {seconds:.2f} s ({'within' if met else 'over'} {limit:g} s)", {
        "seconds": round(seconds, 6), "max_seconds": limit}


_WORD = re.compile(r"\S+")


def answer_length(item: Item, criterion: Criterion) -> MetricResult:
    """Fulfilled (1) when the response has between ``min_words`` (default 0) and ``max_words``
    words; words are runs of non-space characters."""
    if item.response is None:
        return None, "no response to measure", {}
    limit = _number(criterion, "max_words")
    floor = _number(criterion, "min_words", default=0.0)
    words = len(_WORD.findall(item.response))
    met = floor <= words <= limit
    target = f"{floor:g}-{limit:g}" if floor else f"at most {limit:g}"
    return int(met), f"{words} words (target {target})", {
        "words": words, "max_words": limit, **({"min_words": floor} if floor else {})}


METRICS: dict[str, Metric] = {"latency": latency, "answer_length": answer_length}


def _number(criterion: Criterion, name: str, *, default: float | None = None) -> float:
    raw = criterion.parameters.get(name, default)
    if raw is None:
        raise ConfigError(f"criterion {criterion.name!r}: parameters.{name} is required by metric "
                         f"{criterion.parameters.get('metric')!r}")
    try:
        return float(raw)
    except (TypeError, ValueError):
        raise ConfigError(f"criterion {criterion.name!r}: parameters.{name} must be a number, "
                         f"got {raw!r}") from None


def metric_of(criterion: Criterion) -> Metric:
    """The function computing a metric criterion; ValueError listing the known metrics."""
    name = str(criterion.parameters.get("metric", ""))
    if name not in METRICS:
        known = ", ".join(sorted(METRICS))
        raise ConfigError(f"criterion {criterion.name!r}: unknown metric {name!r} (known: {known})")
    return METRICS[name]


@dataclass(frozen=True)
class MetricJudge:
    """Computes metric criteria; satisfies the Judge protocol so runs treat it like a model judge.

    Unreadable timestamps raise :class:`TimestampError` (a ValueError naming the field); an item
    without the inputs a metric needs gets an unscored ``not_applicable`` verdict saying why.
    """

    @property
    def rater(self) -> str:
        return "metric"

    def identity(self) -> dict[str, Any]:
        return {"kind": "metric", "version": 1}

    async def __call__(self, item: Item, criterion: Criterion) -> Verdict:
        return compute_metric(item, criterion)


def compute_metric(item: Item, criterion: Criterion) -> Verdict:
    """The verdict of a metric criterion on one item (synchronous: no model is involved)."""
    metric = metric_of(criterion)
    value, reason, measured = metric(item, criterion)
    return Verdict(
        item_id=item.id, criterion=criterion.name, rater=f"metric:{criterion.parameters['metric']}",
        value=value, unscored_reason=None if value is not None else "not_applicable",
        reason=reason, raw=json.dumps(measured) if measured else None,
        language=item.language, system=item.system,
    )


def check_metric_inputs(items: list[Item], criteria: list[Criterion], *,
                        source: str | Path | None = None, start: int = 0) -> None:
    """Compute every metric criterion once so bad inputs fail before any model call.

    ``items`` are the file's items in order from item number ``start`` (0: the first). Raises
    :class:`convoscope.items.ItemError` naming ``source`` (the items file), the item's line (its
    entry number for JSON and Parquet files) and the field; without a source, the item id.
    """
    from convoscope.items import ItemError
    from convoscope.metrics._lines import item_lines

    metric_criteria = [criterion for criterion in criteria if not criterion.judged_by_model]
    for criterion in metric_criteria:
        metric_of(criterion)
    for index, item in enumerate(items):
        for criterion in metric_criteria:
            try:
                metric_of(criterion)(item, criterion)
            except TimestampError as error:
                if source is None:
                    raise ItemError(f"item {item.id!r}", None, error.field, error.problem) from None
                lines = item_lines(source)  # read again only now, to name the line
                at = start + index
                line = lines[at] if at < len(lines) else at + 1
                raise ItemError(source, line, error.field, error.problem) from None
