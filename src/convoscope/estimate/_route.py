"""Choose what people should judge: the items judges cannot settle, plus a random sample.

Items where panel members disagree, where a judge's score distribution is flat, or where a
verdict has a given value (a survey "hold" is exactly "a person should look") are worth a
person's time. They are not a random sample, so every selection also carries a uniform random
sample of a stated size: that sample is what lets :func:`convoscope.estimate.estimate` correct
the judges without bias. Every selected item records why it was chosen.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from convoscope.errors import ConfigError
from convoscope.judges import RaterKind

RANDOM = "random"


@dataclass(frozen=True)
class Selected:
    """An item chosen for people, with every reason it was chosen (``random`` among them when
    it belongs to the uniform random sample)."""

    item_id: str
    reasons: tuple[str, ...]

    @property
    def in_random_sample(self) -> bool:
        return RANDOM in self.reasons


def _entropy(distribution: dict[str, float]) -> float:
    """Shannon entropy divided by its maximum, so 1 is a flat distribution and 0 a sure one."""
    probabilities = [p for p in distribution.values() if p > 0]
    if len(distribution) < 2:
        return 0.0
    return -sum(p * math.log(p) for p in probabilities) / math.log(len(distribution))


def select_items(verdicts: Iterable[object], *, criterion: str | None = None, random: int,
                 disagreement: bool = True, flat_above: float | None = 0.8,
                 values: Iterable[str] = (), seed: int = 0, budget: int | None = None) -> list[Selected]:
    """Items for people from a judged run.

    ``random`` is the size of the uniform random sample drawn from every item in the run
    (required: without it no unbiased estimate is possible; 0 is allowed but says so by
    choice). ``disagreement`` picks items whose model raters gave different values;
    ``flat_above`` items where a judge's normalised entropy exceeds it; ``values`` items where
    some verdict has one of these values (e.g. ``hold``). ``budget`` caps the number of items
    chosen: the whole random sample, then the items with the most reasons (ties: the flattest
    distribution first, then a seeded random order)."""
    if random < 0:
        raise ConfigError("the random sample size cannot be negative")
    if budget is not None and budget < random:
        raise ConfigError(f"a budget of {budget} is smaller than the random sample of {random}")
    rows = [v for v in verdicts if criterion is None or getattr(v, "criterion", None) == criterion]
    if not rows:
        raise ConfigError(f"no verdicts{f' on {criterion!r}' if criterion else ''} to select from")
    wanted = set(values)
    reasons: dict[str, set[str]] = defaultdict(set)
    flatness: dict[str, float] = defaultdict(float)
    by_item: dict[tuple[str, str], set[str]] = defaultdict(set)
    order: dict[str, None] = {}  # every item of the run, in first-seen order
    for verdict in rows:
        item, rater = verdict.item_id, verdict.rater  # type: ignore[attr-defined]
        order.setdefault(item)
        kind = RaterKind.of(rater)
        if kind is RaterKind.HUMAN:
            continue
        if verdict.value is not None and kind is not RaterKind.PANEL:  # type: ignore[attr-defined]
            by_item[(item, verdict.criterion)].add(str(verdict.value))  # type: ignore[attr-defined]
        distribution = getattr(verdict, "distribution", None)
        if distribution:
            flatness[item] = max(flatness[item], _entropy(distribution))
        if flat_above is not None and distribution and flatness[item] > flat_above:
            reasons[item].add(f"flat:{verdict.criterion}")  # type: ignore[attr-defined]
        if verdict.value is not None and str(verdict.value) in wanted:  # type: ignore[attr-defined]
            reasons[item].add(f"value:{verdict.value}")  # type: ignore[attr-defined]
    if disagreement:
        for (item, name), seen in by_item.items():
            if len(seen) > 1:
                reasons[item].add(f"disagreement:{name}")
    items = list(order)
    if random > len(items):
        raise ConfigError(f"a random sample of {random} was asked for, but the run has only "
                          f"{len(items)} items")
    rng = np.random.default_rng(seed)
    for index in rng.choice(len(items), size=random, replace=False):
        reasons[items[int(index)]].add(RANDOM)
    chosen = [item for item in items if reasons.get(item)]
    if budget is not None and len(chosen) > budget:
        chosen = _within_budget(chosen, reasons, flatness, budget, rng)
    return [Selected(item, tuple(sorted(reasons[item]))) for item in chosen]


def _within_budget(chosen: list[str], reasons: dict[str, set[str]], flatness: dict[str, float],
                   budget: int, rng: np.random.Generator) -> list[str]:
    """The random sample, then the reasoned items by priority; the run's order is kept."""
    tie_break = dict(zip(chosen, rng.permutation(len(chosen)).tolist(), strict=True))
    others = sorted((item for item in chosen if RANDOM not in reasons[item]),
                    key=lambda item: (-len(reasons[item]), -flatness[item], tie_break[item]))
    kept = {item for item in chosen if RANDOM in reasons[item]}
    kept.update(others[:budget - len(kept)])
    return [item for item in chosen if item in kept]


def selected_items(items: Iterable[Any], chosen: Iterable[Selected]) -> list[Any]:
    """The chosen items themselves, each with ``meta.selected_because`` (its reasons) and
    ``meta.random_sample`` — what a campaign needs to record why people saw it, and what
    :func:`convoscope.estimate.estimate` needs to know the random sample."""
    by_id = {item.id: item for item in items}
    out = []
    for selected in chosen:
        item = by_id.get(selected.item_id)
        if item is None:
            raise ConfigError(f"item {selected.item_id!r} was chosen from the verdicts but is not among "
                              "the items given")
        out.append(item.model_copy(update={"meta": {**item.meta, "selected_because": list(selected.reasons),
                                                    "random_sample": selected.in_random_sample}}))
    return out
