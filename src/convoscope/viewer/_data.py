"""What the verdict viewer shows: every verdict of a store (and of extra files), with the items.

Loaded once at start-up into memory; filters run over plain lists. Verdicts of people and of
judges sit side by side because they share one table.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FILTERS = ("run", "criterion", "rater", "value", "system", "language", "reason")


@dataclass(frozen=True)
class Row:
    """One verdict and the run it came from (``None`` for verdicts read from files)."""

    run_id: str | None
    verdict: Any


@dataclass
class ViewerData:
    rows: list[Row]
    items: dict[str, Any] = field(default_factory=dict)
    runs: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)

    def choices(self) -> dict[str, list[str]]:
        """The values each filter can take, for the filter form."""
        seen: dict[str, Counter[str]] = defaultdict(Counter)
        for row in self.rows:
            for name, value in _fields(row).items():
                if value is not None:
                    seen[name][value] += 1
        return {name: sorted(seen[name]) for name in FILTERS}

    def matching(self, filters: dict[str, str]) -> list[str]:
        """Item ids with at least one verdict that passes every filter, in first-seen order."""
        wanted = {name: value for name, value in filters.items() if name in FILTERS and value}
        order: dict[str, None] = {}
        for row in self.rows:
            fields = _fields(row)
            if all(fields[name] == value for name, value in wanted.items()):
                order.setdefault(row.verdict.item_id)
        return list(order)

    def verdicts_of(self, item_id: str) -> dict[str, list[Row]]:
        """Every verdict on one item, by criterion (judges and people together)."""
        from convoscope.judges import RaterKind

        grouped: dict[str, list[Row]] = defaultdict(list)
        for row in self.rows:
            if row.verdict.item_id == item_id:
                grouped[row.verdict.criterion].append(row)
        for rows in grouped.values():
            rows.sort(key=lambda row: (row.verdict.rater_kind is RaterKind.HUMAN, row.verdict.rater))
        return dict(sorted(grouped.items()))


def _fields(row: Row) -> dict[str, str | None]:
    verdict = row.verdict
    return {"run": row.run_id, "criterion": verdict.criterion, "rater": verdict.rater,
            "value": None if verdict.value is None else str(verdict.value), "system": verdict.system,
            "language": verdict.language, "reason": verdict.unscored_reason}


def load(store: str | Path | None, *, items: Sequence[str | Path] = (),
         verdict_files: Iterable[str | Path] = ()) -> ViewerData:
    """Read a store (every run), extra verdict files and item files."""
    from convoscope.items import read_items
    from convoscope.judges import read_verdicts

    rows: list[Row] = []
    runs: list[str] = []
    sources: list[str] = []
    if store is not None:
        from convoscope.store import Store

        opened = Store(store)
        try:
            runs = opened.run_ids()
            for run_id in runs:
                rows.extend(Row(run_id, verdict) for verdict in opened.verdicts(run_id))
        finally:
            opened.close()
        sources.append(str(store))
    for path in verdict_files:
        rows.extend(Row(None, verdict) for verdict in read_verdicts(path))
        sources.append(str(path))
    by_id = {item.id: item for path in items for item in read_items(path)}
    return ViewerData(rows=rows, items={**_pairs_of(by_id, rows), **by_id}, runs=runs, sources=sources)


def _pairs_of(items: dict[str, Any], rows: Sequence[Row]) -> dict[str, Any]:
    """Pairwise verdicts (judges' or people's) name pair items (``<context>:A~B``) that no items
    file holds: build them from the items, as ``convoscope pairwise`` and campaigns do."""
    if not items or not any(row.verdict.criterion.startswith("pairwise:") for row in rows):
        return {}
    from convoscope.errors import ConfigError
    from convoscope.pairwise import make_pairs

    try:
        return {pair.id: pair for pair in make_pairs(list(items.values()))}
    except ConfigError:  # items without a system, or no context with two systems: nothing to pair
        return {}
