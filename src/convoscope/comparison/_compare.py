"""Two runs of the same items side by side: what moved, per criterion, and whether it is noise."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from convoscope.comparison._load import RunSide, load_side
from convoscope.comparison._stats import (
    Level,
    agreement,
    infer_level,
    level_of_scale,
    mean_change_interval,
    paired_test,
)
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
    human: Any = None,
    levels: Mapping[str, Level] | None = None,
    criteria: Sequence[Any] = (),
    correction: str = "holm",
    confidence: float = 0.95,
    max_flips: int = 50,
    rater_a: str | None = None,
    rater_b: str | None = None,
    method: str = "spearman",
) -> Comparison:
    """Compare run ``a`` with run ``b`` (verdict files, run ids in ``store``, RunResults or lists
    of verdicts): items are matched by ``item_id`` and criterion; the change is B − A.

    Per criterion: the mean change with its paired t interval, the paired test that fits the scale
    (Wilcoxon signed-rank for scores, McNemar for 0/1, Stuart–Maxwell for labels; p-values adjusted
    across criteria by ``correction``, Holm by default), item-level agreement between the runs, the
    items that changed (largest first), the change per system and per language, and with ``human``
    ratings (a verdict list or file of ``human:`` raters) which run agrees with people better.

    The level of each criterion (binary, ordinal, nominal) picks its test. It comes from ``levels``
    by name, else from the scale of a matching criterion in ``criteria``, else from the values seen
    (0/1 only: binary; other integers: ordinal; text: nominal) — give the criteria when a run may
    not have used every value of its scale."""
    from convoscope.analysis import CORRECTIONS, adjust_pvalues

    if correction not in CORRECTIONS:
        raise ValueError(f"correction must be one of {', '.join(CORRECTIONS)}, not {correction!r}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie between 0 and 1, not {confidence}")
    side_a, side_b = load_side(a, store=store, rater=rater_a), load_side(b, store=store, rater=rater_b)
    keyed_a, notes = _keyed(side_a, [])
    keyed_b, notes = _keyed(side_b, notes)
    people = _human_means(human) if human is not None else {}
    levels = {**{c.name: level_of_scale(c.scale) for c in criteria}, **(levels or {})}
    shared = sorted(set(keyed_a) & set(keyed_b))
    if not shared:
        raise ConfigError(f"{side_a.label} and {side_b.label} judged no criterion in common")
    rows = [
        _criterion(
            name,
            keyed_a[name],
            keyed_b[name],
            (levels or {}).get(name),
            confidence,
            max_flips,
            people.get(name),
            method,
        )
        for name in shared
    ]
    for name in sorted(set(keyed_a) ^ set(keyed_b)):
        notes.append(f"criterion {name} was judged in {'A' if name in keyed_a else 'B'} only")
    adjusted = adjust_pvalues([row.pvalue for row in rows], method=correction)  # type: ignore[arg-type]
    rows = [_with_adjusted(row, float(p)) for row, p in zip(rows, adjusted, strict=True)]
    return Comparison(
        side_a.label,
        side_b.label,
        tuple(rows),
        correction,
        confidence,
        side_a.spec,
        side_b.spec,
        tuple(notes),
    )


def _keyed(side: RunSide, notes: list[str]) -> tuple[dict[str, dict[str, Verdict]], list[str]]:
    keyed: dict[str, dict[str, Verdict]] = defaultdict(dict)
    repeated = 0
    for verdict in side.verdicts:
        if verdict.item_id in keyed[verdict.criterion]:
            repeated += 1
        keyed[verdict.criterion][verdict.item_id] = verdict
    if repeated:
        notes.append(f"{side.label}: {repeated} repeated verdicts for one item and criterion; the last kept")
    return dict(keyed), notes


def _criterion(
    name: str,
    a: dict[str, Verdict],
    b: dict[str, Verdict],
    level: Level | None,
    confidence: float,
    max_flips: int,
    people: dict[str, float] | None,
    method: str,
) -> CriterionChange:
    both = [item for item in a if item in b and a[item].scored and b[item].scored]
    values_a = [_given(a[item]) for item in both]
    values_b = [_given(b[item]) for item in both]
    if not both:
        raise ConfigError(f"criterion {name}: no item was scored in both runs")
    level = level or infer_level(values_a + values_b)
    test = paired_test(level, values_a, values_b)
    agreement_name, agreeing = agreement(level, values_a, values_b)
    numeric = level != "nominal"
    mean_a = mean_b = change = low = high = None
    if numeric:
        first, second = np.asarray(values_a, dtype=float), np.asarray(values_b, dtype=float)
        mean_a, mean_b = float(first.mean()), float(second.mean())
        change = mean_b - mean_a
        low, high = mean_change_interval(first, second, confidence=confidence)
    flips = _flips(name, both, a, b, numeric)
    return CriterionChange(
        criterion=name,
        level=level,
        n_items=len(both),
        only_a=sum(1 for item in a if item not in b),
        only_b=sum(1 for item in b if item not in a),
        unscored_a=sum(1 for item in a if not a[item].scored),
        unscored_b=sum(1 for item in b if not b[item].scored),
        mean_a=mean_a,
        mean_b=mean_b,
        change=change,
        change_low=low,
        change_high=high,
        test=test.name,
        statistic=test.statistic,
        pvalue=test.pvalue,
        pvalue_adjusted=test.pvalue,
        test_note=test.note,
        agreement_name=agreement_name,
        agreement=agreeing,
        changed=len(flips),
        flips=tuple(flips[:max_flips]),
        by_system=_groups(both, a, b, numeric, "system"),
        by_language=_groups(both, a, b, numeric, "language"),
        human=_human(both, a, b, people, method) if people else None,
    )


def _flips(
    name: str, both: Sequence[str], a: dict[str, Verdict], b: dict[str, Verdict], numeric: bool
) -> list[Flip]:
    flips = []
    for item in both:
        first, second = a[item], b[item]
        if first.value == second.value:
            continue
        size = abs(_score(second) - _score(first)) if numeric else 1.0
        flips.append(
            Flip(
                item,
                name,
                _given(first),
                _given(second),
                size,
                first.reason,
                second.reason,
                first.system or second.system,
                first.language or second.language,
            )
        )
    flips.sort(key=lambda flip: (-flip.size, flip.item_id))
    return flips


def _groups(
    both: Sequence[str], a: dict[str, Verdict], b: dict[str, Verdict], numeric: bool, attribute: str
) -> tuple[GroupChange, ...]:
    grouped: dict[str, list[str]] = defaultdict(list)
    for item in both:
        key = getattr(a[item], attribute) or getattr(b[item], attribute)
        if key:
            grouped[key].append(item)
    if len(grouped) < 2:
        return ()
    rows = []
    for key in sorted(grouped):
        items = grouped[key]
        changed = sum(1 for item in items if a[item].value != b[item].value) / len(items)
        if numeric:
            rows.append(
                GroupChange(
                    key,
                    len(items),
                    float(np.mean([_score(a[i]) for i in items])),
                    float(np.mean([_score(b[i]) for i in items])),
                    changed,
                )
            )
        else:
            rows.append(GroupChange(key, len(items), None, None, changed))
    return tuple(rows)


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


def _human(
    both: Sequence[str], a: dict[str, Verdict], b: dict[str, Verdict], people: dict[str, float], method: str
) -> HumanCheck | None:
    from convoscope.analysis import williams_test

    rated = [item for item in both if item in people and not isinstance(a[item].value, str)]
    nan = float("nan")
    if len(rated) < 4:
        return HumanCheck(method, len(rated), nan, nan, nan, nan, nan, "fewer than 4 items rated by people")
    try:
        result = williams_test(
            [people[i] for i in rated],
            [_score(a[i]) for i in rated],
            [_score(b[i]) for i in rated],
            method="pearson" if method == "pearson" else "spearman",
        )
    except ValueError as error:  # a run (or the people) gave one value only: no correlation
        return HumanCheck(method, len(rated), nan, nan, nan, nan, nan, str(error))
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
