"""What the verdict viewer shows: every verdict of a store (and of extra files), with the items.

Loaded once at start-up into memory; filters run over plain lists. Verdicts of people and of
judges sit side by side because they share one table. Items are listed in the order of the items
files (then any others in the order their first verdict came), and each value is shown with the
name its criterion gives it (``1 · thanks`` on a binary scale, ``4 · Good`` for a named level),
the criteria coming from the built-in and installed suites and the files given.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from convoscope.viewer._runs import RunInfo, archive_runs, file_run, store_runs, unique

FILTERS = ("run", "criterion", "rater", "value", "system", "language", "reason")


@dataclass(frozen=True)
class Row:
    """One verdict and the run it came from (``None`` for verdicts read from files)."""

    run_id: str | None
    verdict: Any


@dataclass
class ViewerData:
    rows: list[Row]
    items: dict[str, Any] = field(default_factory=dict)  # by id, in the items files' order
    runs: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    criteria: dict[str, Any] = field(default_factory=dict)  # by name: what their values are called
    run_info: dict[str, RunInfo] = field(default_factory=dict)  # by run id, in the runs' order
    cards: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (file, judge card JSON)
    # Every criterion the criteria files given hold, each wording of a name (run A's and run B's
    # files may word one criterion differently): the candidates a prompt is rendered again from.
    wordings: list[Any] = field(default_factory=list)

    def label(self, criterion: str, value: Any) -> str | None:
        """What the criterion calls ``value`` (a binary scale's label, a level's name), or None."""
        found = self.criteria.get(criterion)
        if found is None or value is None:
            return None
        if found.scale.kind == "binary" and value in (0, 1):
            return str(found.scale.binary_labels[0 if value == 1 else 1])
        named = next((level.name for level in found.levels if level.value == value and level.name), None)
        return str(named) if named else None

    def choices(self) -> dict[str, list[str]]:
        """The values each filter can take, for the filter form."""
        seen: dict[str, Counter[str]] = defaultdict(Counter)
        for row in self.rows:
            for name, value in _fields(row).items():
                if value is not None:
                    seen[name][value] += 1
        return {name: sorted(seen[name]) for name in FILTERS}

    def value_labels(self) -> dict[str, str]:
        """For the value filter: each value's names over the criteria, e.g. ``{"1": "thanks"}``."""
        names: dict[str, dict[str, None]] = defaultdict(dict)
        for row in self.rows:
            label = self.label(row.verdict.criterion, row.verdict.value)
            if label:
                names[str(row.verdict.value)][label] = None
        return {value: " / ".join(labels) for value, labels in names.items()}

    def matching(self, filters: dict[str, str]) -> list[str]:
        """Item ids with at least one verdict that passes every filter: in the items files' order,
        then those no file holds in the order their first verdict came."""
        wanted = {name: value for name, value in filters.items() if name in FILTERS and value}
        found: dict[str, None] = {}
        for row in self.rows:
            fields = _fields(row)
            if all(fields[name] == value for name, value in wanted.items()):
                found.setdefault(row.verdict.item_id)
        position = {item_id: index for index, item_id in enumerate(self.items)}
        late = len(position)
        return sorted(found, key=lambda item_id: position.get(item_id, late))

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
         verdict_files: Iterable[str | Path] = (), criteria_files: Sequence[str | Path] = (),
         archives: Sequence[str | Path] = (), cards: Sequence[str | Path] = ()) -> ViewerData:
    """Read a store (every run), run archives (``export-run``), extra verdict files, item files
    and criteria files (the built-in and installed suites are read for criteria no file names).
    An archive's items and criteria are used for what the files given do not hold; ``cards``
    are judge cards' JSON (``convoscope card --out card.json``)."""
    from convoscope.criteria import load_criteria
    from convoscope.items import read_items
    from convoscope.viewer._cards import read_card

    files = [(str(path), file_run(path)) for path in verdict_files]
    found = [*(store_runs(store) if store is not None else []), *archive_runs(archives)]
    runs = unique([*found, *(run for _, run in files if isinstance(run, RunInfo))])
    rows = [Row(run.run_id, verdict) for run in runs for verdict in run.verdicts]
    sources = [str(source) for source in ([store] if store is not None else [])] + [str(a) for a in archives]
    for path, read in files:  # files that are not one judge's run: verdicts without a run
        if not isinstance(read, RunInfo):
            rows.extend(Row(None, verdict) for verdict in read)
        sources.append(path)
    by_id = {item.id: item for path in items for item in read_items(path)}
    for run in runs:  # the files given first, in their order; then what each archive carries
        by_id.update({item_id: item for item_id, item in run.items.items() if item_id not in by_id})
    archived = [criterion for run in runs for criterion in run.criteria.values()]
    given = [criterion for path in criteria_files for criterion in load_criteria(path)]
    return ViewerData(rows=rows, items={**by_id, **_pairs_of(by_id, rows)}, runs=[run.run_id for run in runs],
                      sources=sources, criteria=_criteria_of(rows, given, archived),
                      run_info={run.run_id: run for run in runs},
                      cards=[(str(path), read_card(path)) for path in cards], wordings=given)


def _criteria_of(rows: Sequence[Row], given: Sequence[Any], archived: Sequence[Any] = ()) -> dict[str, Any]:
    """The criteria the verdicts name: from the files given first (the last file's wording of a
    name), then the archives', then by a name no two suites share."""
    from convoscope.criteria import get_criterion
    from convoscope.errors import ConvoscopeError

    known = {criterion.name: criterion for criterion in given}
    for criterion in archived:
        known.setdefault(criterion.name, criterion)
    for name in dict.fromkeys(row.verdict.criterion for row in rows):
        if name in known or ":" in name:
            continue  # pairwise verdicts name the winner, not a scale value
        try:
            known[name] = get_criterion(name)
        except (ConvoscopeError, KeyError):
            pass  # unknown or ambiguous: values are shown as they are
    return known


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
