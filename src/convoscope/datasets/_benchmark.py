"""The Benchmark record: items, the human verdicts on them, and what each criterion means."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from convoscope.datasets._source import At
from convoscope.items import Item, Turn, write_jsonl
from convoscope.judges import Verdict

Granularity = Literal["turn", "dialogue"]


@dataclass(frozen=True)
class Benchmark:
    """A public evaluation set as convoscope reads it.

    ``human`` holds one Verdict per person, item and criterion where the data keeps each
    annotator's rating (rater ``human:<id>``, or ``human:<n>`` for the n-th rating of an item
    when the data gives no annotator ids); a label the data only gives aggregated is one
    verdict with rater ``human:majority``. ``published`` holds automatic labels shipped with
    the benchmark (e.g. ABC-Eval's GPT-3.5 labels), so a new judge can be compared with them.
    ``notes`` records what the loader met and how it handled it (duplicates, off-scale values).
    ``derived`` keeps scores computed by the authors that are not ratings (they may be floats).
    """

    name: str
    granularity: Granularity
    items: tuple[Item, ...]
    human: tuple[Verdict, ...]
    criteria: dict[str, str]
    published: tuple[Verdict, ...] = ()
    source: str = ""
    notes: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)
    # Named sets of derived scores the data ships beside the raw ratings, as
    # convoscope.analysis.Rating rows (float values), e.g. Ji et al.'s per-worker z-scores ("z").
    derived: dict[str, tuple[Any, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # A loader bug must not reach metaeval as a silently misaligned table.
        if self.granularity not in ("turn", "dialogue"):
            raise ValueError(f"granularity must be 'turn' or 'dialogue', not {self.granularity!r}")
        ids = Counter(item.id for item in self.items)
        repeated = [item_id for item_id, count in ids.items() if count > 1]
        if repeated:
            raise ValueError(f"{self.name}: item ids must be unique; repeated: {repeated[:3]}")
        for verdict in (*self.human, *self.published):
            if verdict.item_id not in ids:
                raise ValueError(f"{self.name}: verdict for unknown item {verdict.item_id!r}")
            if verdict.criterion not in self.criteria:
                raise ValueError(f"{self.name}: verdict on undescribed criterion {verdict.criterion!r}")

    def without_references(self) -> Benchmark:
        """The same benchmark with every item's ``reference`` removed, so a judge sees only what
        a reference-free metric may use (USR ships the ground-truth turn as each item's
        reference, and a judge shown it is no longer judging reference-free)."""
        items = tuple(item.model_copy(update={"reference": None}) if item.reference is not None else item
                      for item in self.items)
        return replace(self, items=items)

    @property
    def raters(self) -> tuple[str, ...]:
        """Every human rater id, sorted."""
        return tuple(sorted({verdict.rater for verdict in self.human}))

    def summary(self) -> dict[str, Any]:
        """Counts for an inventory: items, raters, criteria, verdicts (scored and unscored)."""
        scored = sum(1 for verdict in self.human if verdict.value is not None)
        return {
            "name": self.name,
            "granularity": self.granularity,
            "items": len(self.items),
            "raters": len(self.raters),
            "criteria": len(self.criteria),
            "human_verdicts": len(self.human),
            "unscored": len(self.human) - scored,
            "published_verdicts": len(self.published),
            "languages": sorted({item.language or "?" for item in self.items}),
            "systems": len({item.system for item in self.items if item.system}),
        }


@dataclass(frozen=True)
class Dimension:
    """One quality dimension of a benchmark: its key in the source file and its scale."""

    key: str
    description: str
    low: int | None = None
    high: int | None = None
    name: str = ""

    @property
    def criterion(self) -> str:
        return self.name or kebab(self.key)

    def accepts(self, value: int) -> bool:
        return (self.low is None or value >= self.low) and (self.high is None or value <= self.high)


def kebab(text: str) -> str:
    """'Semantically appropriate' -> 'semantically-appropriate'; 'human (overall)' -> 'human-overall'."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def alternate_speakers(utterances: list[str]) -> tuple[Turn, ...]:
    """Turns for unnamed alternating speakers: A and B, with B the one who speaks next (the
    rated response's speaker), whatever the number of utterances."""
    count = len(utterances)
    return tuple(Turn(speaker="A" if (count - index) % 2 else "B", text=text)
                 for index, text in enumerate(utterances))


def describe(dimensions: tuple[Dimension, ...]) -> dict[str, str]:
    return {dimension.criterion: dimension.description for dimension in dimensions}


def verdict(item: Item, criterion: str, rater: str, value: int | str | None, **extra: Any) -> Verdict:
    """A human verdict that carries the item's language and system, as every rater's row does."""
    return Verdict(item_id=item.id, criterion=criterion, rater=rater, value=value,
                   language=item.language, system=item.system, **extra)


def rate(item: Item, dimension: Dimension, rater: str, at: At, notes: Notes) -> Verdict:
    """A rating as given. An annotator's 'N/A (...)' note and a value outside the documented
    scale (e.g. a -1 placeholder) become unscored verdicts that keep what the file says, so
    no statistic mistakes them for ratings."""
    if isinstance(at.value, str) and at.value.strip().upper().startswith("N/A"):
        return verdict(item, dimension.criterion, rater, None,
                       unscored_reason="not_applicable", reason=at.value.strip())
    if isinstance(at.value, bool) or not isinstance(at.value, int | float):
        at.fail(f"expected an integer score or an 'N/A (...)' note, got {at.value!r}"[:120])
    value = at.integer()
    if dimension.accepts(value):
        return verdict(item, dimension.criterion, rater, value)
    scale = f"{dimension.low}-{dimension.high}"
    notes.add(f"'{dimension.criterion}' value outside {scale} made unscored (kept in raw)",
              f"{value} at {item.id}")
    return verdict(item, dimension.criterion, rater, None, unscored_reason="not_applicable",
                   reason=f"value {value} is outside the documented scale", raw=str(value))


class Notes:
    """Collects what a loader met, so a benchmark's caveats travel with it instead of a log."""

    def __init__(self) -> None:
        self._counts: Counter[str] = Counter()
        self._examples: dict[str, str] = {}

    def add(self, message: str, example: str = "") -> None:
        self._counts[message] += 1
        self._examples.setdefault(message, example)

    def as_tuple(self) -> tuple[str, ...]:
        lines = []
        for message, count in self._counts.items():
            example = self._examples[message]
            lines.append(f"{message}: {count}" + (f" (e.g. {example})" if example else ""))
        return tuple(lines)


def write_benchmark(
    benchmark: Benchmark,
    items_path: str | Path,
    human_path: str | Path,
    *,
    published_path: str | Path | None = None,
) -> dict[str, int]:
    """Write items JSONL (for ``convoscope judge``) and human verdicts JSONL (for
    ``convoscope metaeval --human``); optionally the published automatic labels too."""
    counts = {
        "items": write_jsonl(benchmark.items, items_path),
        "human": _write_verdicts(benchmark.human, Path(human_path)),
    }
    if published_path is not None:
        counts["published"] = _write_verdicts(benchmark.published, Path(published_path))
    return counts


def _write_verdicts(verdicts: tuple[Verdict, ...], path: Path) -> int:
    with path.open("w", encoding="utf-8") as handle:
        for row in verdicts:
            handle.write(row.model_dump_json() + "\n")
    return len(verdicts)
