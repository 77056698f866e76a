"""Two runs side by side: the comparison's summary per criterion and the per-item diff.

The summary is the public value of :func:`convoscope.compare` (mean change with its interval,
the paired test, p after the correction, agreement between the runs). The per-item diff pairs
the two runs' final verdicts by item and criterion, as ``compare`` does, but keeps every pair
(not only the flips ``compare`` keeps), so the page can filter and sort all of them.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from typing import Any

from convoscope.errors import ConfigError
from convoscope.judges import Verdict
from convoscope.viewer._runs import RunInfo

SIDE_FILTERS = ("criterion", "system", "language", "flipped")
SORTS = {"size": "largest change first", "item": "item", "criterion": "criterion",
         "a": "value A", "b": "value B"}


@dataclass(frozen=True)
class Pair:
    """One item and criterion: the verdict of each run on it (``None`` when a run has none)."""

    item_id: str
    criterion: str
    a: Verdict | None
    b: Verdict | None

    @property
    def system(self) -> str | None:
        return (self.a and self.a.system) or (self.b and self.b.system) or None

    @property
    def language(self) -> str | None:
        return (self.a and self.a.language) or (self.b and self.b.language) or None

    @property
    def flipped(self) -> bool:
        """Both runs scored it and gave different values (what ``compare`` counts as changed)."""
        return bool(self.a and self.b and self.a.scored and self.b.scored and self.a.value != self.b.value)

    @property
    def change(self) -> float | None:
        """B − A for numbers; None for labels, or when a run did not score the item."""
        if not (self.a and self.b and self.a.scored and self.b.scored):
            return None
        if isinstance(self.a.value, str) or isinstance(self.b.value, str):
            return None
        return float(self.b.value) - float(self.a.value)  # type: ignore[arg-type]

    @property
    def size(self) -> float:
        change = self.change
        return abs(change) if change is not None else (1.0 if self.flipped else 0.0)


@dataclass
class SideBySide:
    """Run A and run B of the viewer, compared (``comparison`` is None when they cannot be, and
    ``error`` says why: e.g. no criterion in common)."""

    a: RunInfo
    b: RunInfo
    comparison: Any
    error: str | None
    pairs: list[Pair]

    def choices(self) -> dict[str, list[str]]:
        found: dict[str, set[str]] = {"criterion": set(), "system": set(), "language": set()}
        for pair in self.pairs:
            for name in found:
                value = getattr(pair, name)
                if value:
                    found[name].add(value)
        return {name: sorted(values) for name, values in found.items()}

    def matching(self, filters: dict[str, str], sort: str, order: dict[str, int]) -> list[Pair]:
        """The pairs that pass every filter, sorted (``order``: the items' place in the files)."""
        kept = [pair for pair in self.pairs
                if all(not filters.get(name) or getattr(pair, name) == filters[name]
                       for name in ("criterion", "system", "language"))
                and (not filters.get("flipped") or pair.flipped)]
        late = len(order)
        place = {pair.item_id: order.get(pair.item_id, late) for pair in kept}
        keys: dict[str, Any] = {
            "size": lambda pair: (-pair.size, place[pair.item_id], pair.item_id, pair.criterion),
            "item": lambda pair: (place[pair.item_id], pair.item_id, pair.criterion),
            "criterion": lambda pair: (pair.criterion, place[pair.item_id], pair.item_id),
            "a": lambda pair: (_sortable(pair.a), place[pair.item_id], pair.item_id),
            "b": lambda pair: (_sortable(pair.b), place[pair.item_id], pair.item_id),
        }
        return sorted(kept, key=keys.get(sort, keys["size"]))


def _sortable(verdict: Verdict | None) -> tuple[int, float, str]:
    """Highest value first; labels after numbers; unscored and missing last."""
    if verdict is None or not verdict.scored:
        return (2, 0.0, "")
    if isinstance(verdict.value, str):
        return (1, 0.0, verdict.value)
    return (0, -float(verdict.value or 0), "")


def side_by_side(a: RunInfo, b: RunInfo, criteria: dict[str, Any]) -> SideBySide:
    """Compare run ``a`` with run ``b`` (``criteria``: by name, to know each criterion's level)."""
    from convoscope.comparison import RunSide, compare

    known = {**criteria, **b.criteria, **a.criteria}
    comparison, error = None, None
    try:
        comparison = compare(RunSide(a.run_id, a.finals, a.spec), RunSide(b.run_id, b.finals, b.spec),
                             criteria=list(known.values()))
    except (ConfigError, ValueError) as problem:
        error = str(problem)
    return SideBySide(a, b, comparison, error, _pairs(a.finals, b.finals))


def _pairs(first: tuple[Verdict, ...], second: tuple[Verdict, ...]) -> list[Pair]:
    """Every (item, criterion) either run judged; the last verdict kept when one repeats (as compare)."""
    left = {(verdict.item_id, verdict.criterion): verdict for verdict in first}
    right = {(verdict.item_id, verdict.criterion): verdict for verdict in second}
    keys = list(dict.fromkeys([*left, *right]))
    return [Pair(item_id, criterion, left.get((item_id, criterion)), right.get((item_id, criterion)))
            for item_id, criterion in keys]


def spec_difference(a: RunInfo, b: RunInfo) -> list[str]:
    """What the two runs recorded asking differently (judge, criteria, options), as a diff."""
    if not a.spec or not b.spec:
        return []
    first = json.dumps(a.spec, indent=1, sort_keys=True, default=str).splitlines()
    second = json.dumps(b.spec, indent=1, sort_keys=True, default=str).splitlines()
    return list(difflib.unified_diff(first, second, "A", "B", lineterm="", n=0))


def criteria_difference(a: RunInfo, b: RunInfo) -> list[str]:
    """The criteria files the two runs read (when both archives carry one), as a diff."""
    if a.criteria_text is None or b.criteria_text is None:
        return []
    return list(difflib.unified_diff(a.criteria_text.splitlines(), b.criteria_text.splitlines(),
                                     "A criteria.yaml", "B criteria.yaml", lineterm="", n=1))
