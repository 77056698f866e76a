"""Two runs of the same items side by side: what moved, per criterion, and whether it is noise."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from convoscope.comparison._prompts import with_prompts
from convoscope.comparison._stats import Level, level_of_scale
from convoscope.comparison._stream import Source, last_of_each, merge, open_source
from convoscope.comparison._tally import Tally
from convoscope.errors import ConfigError
from convoscope.judges import Verdict


@dataclass(frozen=True)
class Flip:
    """An item whose verdict differs between the runs; ``size`` is |B − A| for numbers, 1 for labels."""

    item_id: str
    criterion: str
    value_a: int | str
    value_b: int | str
    size: float
    reason_a: str | None
    reason_b: str | None
    system: str | None
    language: str | None
    # Added for the prompts' difference (kept last, so positional construction still works):
    # each run's task key (the hash of what it asked), the unified diff of the rendered prompts
    # (A → B) when they could be rendered, and a note saying what is known otherwise.
    task_key_a: str | None = None
    task_key_b: str | None = None
    prompt_diff: tuple[str, ...] = ()
    prompt_note: str = ""


@dataclass(frozen=True)
class GroupChange:
    """The change within one system or one language."""

    group: str
    n_items: int
    mean_a: float | None
    mean_b: float | None
    changed_share: float


@dataclass(frozen=True)
class HumanCheck:
    """Which run agrees with people better (Williams' t for two correlations sharing the people)."""

    method: str
    n_items: int
    r_a: float
    r_b: float
    r_ab: float
    statistic: float
    pvalue: float
    note: str = ""  # why the correlations are undefined (then every figure is NaN)


@dataclass(frozen=True)
class CriterionChange:
    """One criterion judged in both runs on the items both scored."""

    criterion: str
    level: Level
    n_items: int
    only_a: int
    only_b: int
    unscored_a: int
    unscored_b: int
    mean_a: float | None
    mean_b: float | None
    change: float | None
    change_low: float | None
    change_high: float | None
    test: str
    statistic: float
    pvalue: float
    pvalue_adjusted: float
    test_note: str
    agreement_name: str
    agreement: float | None
    changed: int
    flips: tuple[Flip, ...] = ()
    by_system: tuple[GroupChange, ...] = ()
    by_language: tuple[GroupChange, ...] = ()
    human: HumanCheck | None = None

    @property
    def changed_share(self) -> float:
        return self.changed / self.n_items if self.n_items else 0.0


@dataclass(frozen=True)
class Comparison:
    """The result of :func:`compare`: one :class:`CriterionChange` per criterion both runs judged."""

    label_a: str
    label_b: str
    criteria: tuple[CriterionChange, ...]
    correction: str
    confidence: float
    spec_a: Mapping[str, Any] = field(default_factory=dict)
    spec_b: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def criterion(self, name: str) -> CriterionChange:
        for row in self.criteria:
            if row.criterion == name:
                return row
        raise KeyError(f"no criterion {name!r} in this comparison ({', '.join(self.names)})")

    @property
    def names(self) -> list[str]:
        return [row.criterion for row in self.criteria]

    def to_pandas(self) -> Any:
        """One row per criterion (flips and groups left out: see :meth:`flips_frame`)."""
        import pandas as pd

        rows = []
        for row in self.criteria:
            record = {
                key: value
                for key, value in asdict(row).items()
                if key not in ("flips", "by_system", "by_language", "human")
            }
            record.update(
                {
                    "changed_share": row.changed_share,
                    "human_r_a": row.human.r_a if row.human else None,
                    "human_r_b": row.human.r_b if row.human else None,
                    "human_pvalue": row.human.pvalue if row.human else None,
                }
            )
            rows.append(record)
        return pd.DataFrame(rows)

    def flips_frame(self) -> Any:
        import pandas as pd

        return pd.DataFrame([asdict(flip) for row in self.criteria for flip in row.flips])

    def as_dict(self) -> dict[str, Any]:
        return {
            "format": "convoscope-comparison",
            "version": 1,
            "run_a": self.label_a,
            "run_b": self.label_b,
            "correction": self.correction,
            "confidence": self.confidence,
            "notes": list(self.notes),
            "spec_a": dict(self.spec_a),
            "spec_b": dict(self.spec_b),
            "criteria": [asdict(row) | {"changed_share": row.changed_share} for row in self.criteria],
        }

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), ensure_ascii=False, indent=2, default=_plain)


def compare(
    a: Any,
    b: Any,
    *,
    store: str | Path | None = None,
    store_b: str | Path | None = None,
    human: Any = None,
    levels: Mapping[str, Level] | None = None,
    criteria: Sequence[Any] = (),
    criteria_b: Sequence[Any] | None = None,
    correction: str = "holm",
    confidence: float = 0.95,
    max_flips: int = 50,
    rater_a: str | None = None,
    rater_b: str | None = None,
    method: str = "spearman",
    items: Any = None,
    prompts: bool = True,
) -> Comparison:
    """Compare run ``a`` with run ``b`` (verdict files, run archives, run ids in ``store`` — B's in
    ``store_b`` when given —, RunResults or lists of verdicts): items are matched by ``item_id``
    and criterion; the change is B − A.

    Per criterion: the mean change with its paired t interval, the paired test that fits the scale
    (Wilcoxon signed-rank for scores, McNemar for 0/1, Stuart–Maxwell for labels; p-values adjusted
    across criteria by ``correction``, Holm by default), item-level agreement between the runs, the
    items that changed (largest first), the change per system and per language, and with ``human``
    ratings (a verdict list or file of ``human:`` raters) which run agrees with people better.

    The level of each criterion (binary, ordinal, nominal) picks its test. It comes from ``levels``
    by name, else from the scale of a matching criterion in ``criteria``, else from the values seen
    (0/1 only: binary; other integers: ordinal; text: nominal) — give the criteria when a run may
    not have used every value of its scale.

    Runs in a store are streamed from it in (criterion, item) order and reduced to counts as they
    go, so memory does not grow with the number of verdicts (see docs/compare.md). For each kept
    flip, with ``prompts``, the rendered prompts of the two runs are compared: from an archive
    exported with ``--prompts``, or rendered again from ``items`` (a file or list; an archive's own
    items otherwise) and ``criteria`` (B's from ``criteria_b`` when the runs worded them
    differently) when the run's judge can be rebuilt from its spec and the prompt hashes to the
    verdict's task key."""
    from convoscope.analysis import CORRECTIONS, adjust_pvalues

    if correction not in CORRECTIONS:
        raise ValueError(f"correction must be one of {', '.join(CORRECTIONS)}, not {correction!r}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie between 0 and 1, not {confidence}")
    criteria = list(criteria)
    criteria_b = criteria if criteria_b is None else list(criteria_b)
    levels = {**{c.name: level_of_scale(c.scale) for c in [*criteria_b, *criteria]}, **(levels or {})}
    people = _human_means(human) if human is not None else {}
    with ExitStack() as stack:
        first = open_source(a, store=store, rater=rater_a)
        stack.callback(first.close)
        second = open_source(b, store=store_b if store_b is not None else store, rater=rater_b)
        stack.callback(second.close)
        tallies = _tally(first, second, people, max_flips)
        rows, notes = _rows(first, second, tallies, levels, confidence, method)
        if prompts:
            rows = with_prompts(rows, first, second, items=items, criteria_a=criteria, criteria_b=criteria_b)
    adjusted = adjust_pvalues([row.pvalue for row in rows], method=correction)  # type: ignore[arg-type]
    rows = [_with_adjusted(row, float(p)) for row, p in zip(rows, adjusted, strict=True)]
    return Comparison(
        first.label, second.label, tuple(rows), correction, confidence, first.spec, second.spec, tuple(notes)
    )


def _tally(
    first: Source, second: Source, people: dict[str, dict[str, float]], max_flips: int
) -> dict[str, tuple[Tally, bool, bool]]:
    """One pass over both runs in (criterion, item) order; per criterion its tally and whether
    each run judged it."""
    found: dict[str, tuple[Tally, bool, bool]] = {}
    stream_a = last_of_each(first.open_rows(), first.label, first.repeated)
    stream_b = last_of_each(second.open_rows(), second.label, second.repeated)
    for row_a, row_b in merge(stream_a, stream_b):
        name = (row_a or row_b).criterion  # type: ignore[union-attr]
        if name not in found:
            found[name] = (Tally(name, max_flips, people.get(name)), False, False)
        tally, in_a, in_b = found[name]
        if (row_a is not None and not in_a) or (row_b is not None and not in_b):
            found[name] = (tally, in_a or row_a is not None, in_b or row_b is not None)
        tally.add(row_a, row_b)
    return found


def _rows(
    first: Source,
    second: Source,
    tallies: dict[str, tuple[Tally, bool, bool]],
    levels: Mapping[str, Level],
    confidence: float,
    method: str,
) -> tuple[list[CriterionChange], list[str]]:
    notes = [
        f"{side.label}: {side.repeated[0]} repeated verdicts for one item and criterion; the last kept"
        for side in (first, second)
        if side.repeated[0]
    ]
    shared = sorted(name for name, (_, in_a, in_b) in tallies.items() if in_a and in_b)
    if not shared:
        raise ConfigError(f"{first.label} and {second.label} judged no criterion in common")
    rows = [_criterion(tallies[name][0], levels.get(name), confidence, method) for name in shared]
    for name in sorted(name for name, (_, in_a, in_b) in tallies.items() if not (in_a and in_b)):
        notes.append(f"criterion {name} was judged in {'A' if tallies[name][1] else 'B'} only")
    return rows, notes


def _criterion(tally: Tally, level: Level | None, confidence: float, method: str) -> CriterionChange:
    level = tally.level(level)
    numeric = level != "nominal"
    flips = tuple(
        Flip(a.item_id, tally.name, a.value, b.value, size, a.reason, b.reason,  # type: ignore[arg-type]
             a.system or b.system, a.language or b.language, task_key_a=a.task_key, task_key_b=b.task_key)
        for size, a, b in tally.flip_pairs(level)
    )
    groups = {
        attribute: tuple(GroupChange(*line) for line in tally.group_lines(attribute, numeric))
        for attribute in ("system", "language")
    }
    return CriterionChange(
        criterion=tally.name,
        level=level,
        only_a=tally.only_a,
        only_b=tally.only_b,
        unscored_a=tally.unscored_a,
        unscored_b=tally.unscored_b,
        changed=tally.changed,
        flips=flips,
        by_system=groups["system"],
        by_language=groups["language"],
        human=_human(tally, method) if tally.people else None,
        **tally.figures(level, confidence),
    )


def _human_means(human: Any) -> dict[str, dict[str, float]]:
    """People's mean rating per criterion and item, from verdicts (a list or a file)."""
    if isinstance(human, str | Path):
        from convoscope.judges import read_verdicts

        human = read_verdicts(human)
    sums: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for verdict in human:
        if verdict.scored and not isinstance(verdict.value, str):
            sums[verdict.criterion][verdict.item_id].append(_score(verdict))
    return {
        name: {item: float(np.mean(values)) for item, values in by_item.items()}
        for name, by_item in sums.items()
    }


def _human(tally: Tally, method: str) -> HumanCheck:
    from convoscope.analysis import williams_test

    people, first, second = tally.human_values()
    nan = float("nan")
    if len(people) < 4:
        return HumanCheck(method, len(people), nan, nan, nan, nan, nan, "fewer than 4 items rated by people")
    try:
        result = williams_test(people, first, second, method="pearson" if method == "pearson" else "spearman")
    except ValueError as error:  # a run (or the people) gave one value only: no correlation
        return HumanCheck(method, len(people), nan, nan, nan, nan, nan, str(error))
    return HumanCheck(method, result.n, result.r_a, result.r_b, result.r_ab, result.statistic, result.pvalue)


def _given(verdict: Verdict) -> int | str:
    """The value of a scored verdict (only scored verdicts are paired)."""
    if verdict.value is None:
        raise ValueError(f"item {verdict.item_id}: an unscored verdict has no value to compare")
    return verdict.value


def _score(verdict: Verdict) -> float:
    value = _given(verdict)
    if isinstance(value, str):
        raise ValueError(f"item {verdict.item_id}: label {value!r} is not a number")
    return float(value)


def _with_adjusted(row: CriterionChange, adjusted: float) -> CriterionChange:
    from dataclasses import replace

    return replace(row, pvalue_adjusted=adjusted)


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    return str(value)
