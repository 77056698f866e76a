"""Who said what: verdicts grouped into sources (the judges, the people, the metrics), with each
item's individual votes and one pooled vote per item.

Pooling, stated once for every section: a source with a panel verdict (``panel:…``) uses the
panel's value (pooled by the rule the run was given); otherwise several raters are pooled by the
most frequent value (ties go to the lowest value, as ``--ties low``), or by the mean on a range
scale. A pooled relevance flag is the majority of the raters' flags, a tie counting as relevant
so that the turn stays in the denominator of the fulfilment rate.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from convoscope.judges import RaterKind, Verdict

SOURCE_ORDER = ("judges", "people", "metrics")
SOURCE_TITLES = {"judges": "Judges (models)", "people": "People", "metrics": "Computed metrics"}


def source_of(rater: str) -> str:
    """'people' for human:…, 'metrics' for metric:…, 'judges' for models, panels and the rest."""
    kind = RaterKind.of(rater)
    return {RaterKind.HUMAN: "people", RaterKind.METRIC: "metrics"}.get(kind, "judges") if kind else "judges"


def is_pool(rater: str) -> bool:
    return RaterKind.of(rater) is RaterKind.PANEL


@dataclass
class ItemVotes:
    """One item's votes from one source on one criterion, and their pooled value."""

    item_id: str
    system: str
    language: str
    votes: list[Verdict] = field(default_factory=list)
    panel: Verdict | None = None

    def pooled_value(self, *, numeric_range: bool = False) -> int | float | str | None:
        if self.panel is not None:
            return self.panel.value
        values = [vote.value for vote in self.votes if vote.value is not None]
        if not values:
            return None
        numbers = [value for value in values if isinstance(value, int)]
        if numeric_range and len(numbers) == len(values):
            return statistics.fmean(numbers)
        return majority(values)

    def pooled_relevant(self) -> bool | None:
        flags = [vote.relevant for vote in self.votes if vote.relevant is not None]
        if not flags:
            return None
        return sum(flags) * 2 >= len(flags)


def majority(values: Sequence[int | float | str]) -> int | float | str:
    """The most frequent value; a tie goes to the lowest (numbers) or first in sort order (text)."""
    counts = Counter(values)
    top = max(counts.values())
    tied = [value for value, count in counts.items() if count == top]
    return min(tied, key=lambda value: (isinstance(value, str), value))


@dataclass
class CriterionVotes:
    """Every source's votes on one criterion, item by item."""

    criterion: str
    by_source: dict[str, dict[str, ItemVotes]]

    def sources(self) -> list[str]:
        return [name for name in SOURCE_ORDER if self.by_source.get(name)]

    def raters(self, source: str) -> list[str]:
        """The individual raters of a source (panel verdicts excluded), in first-seen order."""
        seen: dict[str, None] = {}
        for item in self.by_source.get(source, {}).values():
            for vote in item.votes:
                seen.setdefault(vote.rater, None)
        return list(seen)

    def panel_rater(self, source: str) -> str | None:
        for item in self.by_source.get(source, {}).values():
            if item.panel is not None:
                return item.panel.rater
        return None


def group_votes(verdicts: Iterable[Verdict]) -> dict[str, CriterionVotes]:
    """Criterion name -> its votes by source and item (dict order follows the file)."""
    table: dict[str, dict[str, dict[str, ItemVotes]]] = defaultdict(lambda: defaultdict(dict))
    for verdict in verdicts:
        source = source_of(verdict.rater)
        items = table[verdict.criterion][source]
        entry = items.get(verdict.item_id)
        if entry is None:
            entry = items[verdict.item_id] = ItemVotes(
                verdict.item_id, verdict.system or "(no system)", verdict.language or "(no language)")
        if is_pool(verdict.rater):
            entry.panel = verdict if entry.panel is None else entry.panel
        else:
            entry.votes.append(verdict)
    return {name: CriterionVotes(name, {source: dict(items) for source, items in sources.items()})
            for name, sources in table.items()}


def rate(part: int, whole: int) -> float | None:
    """part / whole, or None when nothing was counted."""
    return part / whole if whole else None
