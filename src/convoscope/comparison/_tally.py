"""One criterion's comparison, accumulated pair by pair in bounded memory.

What is kept grows with the scale, not with the run: the joint table of values, one line of sums
per system and per language, the ``max_flips`` largest changes (a heap), and, with people's
ratings, the values of the items people rated (as many as the ratings file already holds).
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from convoscope.comparison._stats import Level, infer_level
from convoscope.comparison._stream import Row
from convoscope.comparison._tables import (
    agreement_table,
    change_interval,
    differences,
    means,
    paired_test_table,
)
from convoscope.errors import ConfigError


@dataclass
class Tally:
    """Counts of one criterion over the merged stream of two runs."""

    name: str
    max_flips: int
    people: Mapping[str, float] | None = None
    only_a: int = 0
    only_b: int = 0
    unscored_a: int = 0
    unscored_b: int = 0
    changed: int = 0
    has_text: bool = False
    joint: Counter[tuple[Any, Any]] = field(default_factory=Counter)
    groups: dict[str, dict[str, list[float]]] = field(default_factory=lambda: {"system": {}, "language": {}})
    largest: list[tuple[float, int, int, Row, Row]] = field(default_factory=list)  # a min-heap
    earliest: list[tuple[Row, Row]] = field(default_factory=list)  # for labels: every change is size 1
    rated: list[tuple[float, float, float]] = field(default_factory=list)
    seen: int = 0

    def add(self, a: Row | None, b: Row | None) -> None:
        if b is None and a is not None:
            self.only_a += 1
            self.unscored_a += a.value is None
        elif a is None and b is not None:
            self.only_b += 1
            self.unscored_b += b.value is None
        elif a is not None and b is not None:
            self.unscored_a += a.value is None
            self.unscored_b += b.value is None
            if a.value is not None and b.value is not None:
                self._pair(a, b)

    def _pair(self, a: Row, b: Row) -> None:
        first, second = a.value, b.value
        self.joint[(first, second)] += 1
        numbers = not isinstance(first, str) and not isinstance(second, str)
        self.has_text = self.has_text or not numbers
        differ = first != second
        for attribute in ("system", "language"):
            key = getattr(a, attribute) or getattr(b, attribute)
            if key:
                line = self.groups[attribute].setdefault(key, [0, 0.0, 0.0, 0])
                line[0] += 1
                line[1] += float(first) if numbers else 0.0  # type: ignore[arg-type]
                line[2] += float(second) if numbers else 0.0  # type: ignore[arg-type]
                line[3] += differ
        if self.people is not None and numbers and a.item_id in self.people:
            self.rated.append((self.people[a.item_id], float(first), float(second)))  # type: ignore[arg-type]
        if differ:
            self._flip(a, b, numbers)

    def _flip(self, a: Row, b: Row, numbers: bool) -> None:
        self.changed += 1
        self.seen += 1
        if len(self.earliest) < self.max_flips:
            self.earliest.append((a, b))
        if not numbers or not self.max_flips:
            return
        # Largest first, then the earlier item (rows come in item order): keep the top by
        # (size, -seen); the heap's root is the one to drop.
        entry = (abs(float(b.value) - float(a.value)), -self.seen, self.seen, a, b)  # type: ignore[arg-type]
        if len(self.largest) < self.max_flips:
            heapq.heappush(self.largest, entry)
        elif entry[:2] > self.largest[0][:2]:
            heapq.heapreplace(self.largest, entry)

    def level(self, given: Level | None) -> Level:
        if not self.joint:
            raise ConfigError(f"criterion {self.name}: no item was scored in both runs")
        if given is not None and given != "nominal" and self.has_text:
            raise ConfigError(
                f"criterion {self.name}: level {given} needs numbers, but the runs gave labels"
            )
        return given or infer_level(sorted({v for pair in self.joint for v in pair}, key=str))

    def figures(self, level: Level, confidence: float) -> dict[str, Any]:
        """The paired figures of the criterion, from the joint table."""
        test = paired_test_table(level, self.joint)
        agreement_name, agreeing = agreement_table(level, self.joint)
        found: dict[str, Any] = {
            "n_items": sum(self.joint.values()),
            "mean_a": None, "mean_b": None, "change": None, "change_low": None, "change_high": None,
            "test": test.name, "statistic": test.statistic, "pvalue": test.pvalue,
            "pvalue_adjusted": test.pvalue, "test_note": test.note,
            "agreement_name": agreement_name, "agreement": agreeing,
        }
        if level != "nominal":
            mean_a, mean_b = means(self.joint)
            low, high = change_interval(differences(self.joint), confidence=confidence)
            found.update(mean_a=mean_a, mean_b=mean_b, change=mean_b - mean_a, change_low=low,
                         change_high=high)
        return found

    def flip_pairs(self, level: Level) -> list[tuple[float, Row, Row]]:
        """The kept changes, largest first (for labels: in item order, each of size 1)."""
        if level == "nominal":
            return [(1.0, a, b) for a, b in self.earliest]
        return [(size, a, b) for size, _, _, a, b in sorted(self.largest, key=lambda e: (-e[0], e[2]))]

    def group_lines(
        self, attribute: str, numeric: bool
    ) -> list[tuple[str, int, float | None, float | None, float]]:
        lines = self.groups[attribute]
        if len(lines) < 2:
            return []
        return [
            (key, int(n), total_a / n if numeric else None, total_b / n if numeric else None, changed / n)
            for key, (n, total_a, total_b, changed) in sorted(lines.items())
        ]

    def human_values(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        table = np.asarray(self.rated, dtype=float).reshape(-1, 3)
        return table[:, 0], table[:, 1], table[:, 2]
