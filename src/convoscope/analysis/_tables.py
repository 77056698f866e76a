"""From a table of judgements to rater x item matrices, one per criterion (and group).

Anything with the Verdict fields ``item_id``, ``criterion``, ``rater``, ``value`` (and optionally
``unscored_reason``, ``language``, ``system``, ``expected_value``) can be tabulated: Verdicts from
judges and people alike, and :class:`Rating` rows read from annotation files. Unscored judgements
are missing; with ``keep_idk=True`` an "I don't know" becomes the label ``IDK`` so that
:func:`strong_agreement` can see it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from convoscope.analysis._validate import as_array, is_missing
from convoscope.criteria import IDK

GroupBy = Literal["language", "system"] | None
Score = Literal["value", "expected_value"]


@dataclass(frozen=True)
class Rating:
    """One judgement read from an annotation file, with the Verdict fields analysis needs.

    Unlike a Verdict, ``value`` may be a float (an averaged or slider rating). ``source`` says
    where it came from (``file:line``) for error messages.
    """

    item_id: str
    criterion: str
    rater: str
    value: int | float | str | None
    unscored_reason: str | None = None
    language: str | None = None
    system: str | None = None
    expected_value: float | None = None
    source: str | None = field(default=None, compare=False)


@dataclass(frozen=True, eq=False)
class RaterMatrix:
    """Ratings of one criterion: ``values[r, i]`` is rater ``raters[r]`` on item ``items[i]``.

    Numbers come as float64 with NaN for missing, labels as an object array with None.
    ``group`` is the language or system the items share, when built with ``by``.
    """

    criterion: str
    raters: tuple[str, ...]
    items: tuple[str, ...]
    values: np.ndarray
    group: str | None = None

    @property
    def numeric(self) -> bool:
        return self.values.dtype != object

    def row(self, rater: str) -> np.ndarray:
        return self.values[self.raters.index(rater)]

    def select(
        self, *, raters: Sequence[str] | None = None, items: Sequence[str] | None = None
    ) -> RaterMatrix:
        """The same ratings restricted to (and ordered as) ``raters`` and ``items``; a rater or item
        not in the matrix gets an all-missing row or column."""
        raters = tuple(raters) if raters is not None else self.raters
        items = tuple(items) if items is not None else self.items
        fill: Any = np.nan if self.numeric else None
        values = np.full((len(raters), len(items)), fill, dtype=self.values.dtype)
        rater_at = {name: i for i, name in enumerate(self.raters)}
        item_at = {name: i for i, name in enumerate(self.items)}
        source_rows = [rater_at.get(name, -1) for name in raters]
        source_cols = np.array([item_at.get(name, -1) for name in items], dtype=np.int64)
        found_cols = source_cols >= 0
        for target, source in enumerate(source_rows):
            if source >= 0:
                values[target, found_cols] = self.values[source, source_cols[found_cols]]
        return RaterMatrix(self.criterion, raters, items, values, self.group)

    def without_idk(self) -> RaterMatrix:
        """The matrix with "I don't know" answers as missing, so numeric statistics can run."""
        if self.numeric:
            return self
        values = self.values.copy()
        values[values == IDK] = None
        return RaterMatrix(self.criterion, self.raters, self.items, _settle(values, self.criterion),
                           self.group)


def _value_of(judgement: Any, *, keep_idk: bool, score: Score) -> Any:
    if score == "expected_value":
        value = getattr(judgement, "expected_value", None)
        if value is None:
            value = judgement.value
    else:
        value = judgement.value
    if is_missing(value):
        reason = getattr(judgement, "unscored_reason", None)
        return IDK if keep_idk and reason == "idk" else None
    return value


def rater_matrices(
    judgements: Iterable[Any],
    *,
    by: GroupBy = None,
    keep_idk: bool = False,
    score: Score = "value",
) -> dict[tuple[str, str | None], RaterMatrix]:
    """One rater x item matrix per criterion, or per (criterion, language / system) with ``by``.

    Keys are ``(criterion, group)``; ``group`` is None without ``by`` and for items whose
    language (or system) is unknown. Raters are sorted; items keep the order they first appear in.
    ``score="expected_value"`` uses a judge's probability-weighted score where it has one.
    A rater judging the same item twice on one criterion is an error.

    Example: ``rater_matrices(verdicts, by="language")[("overall", "en")].values``.
    """
    if by not in (None, "language", "system"):
        raise ValueError(f"rater_matrices: by must be None, 'language' or 'system', got {by!r}")
    judgements = list(judgements)
    cells: dict[tuple[str, str | None], dict[tuple[str, str], Any]] = {}
    group_of: dict[str, str | None] = {}
    for judgement in judgements:
        item = str(judgement.item_id)
        if by is not None and group_of.get(item) is None:
            group_of[item] = getattr(judgement, by, None)
    for judgement in judgements:
        item, rater = str(judgement.item_id), str(judgement.rater)
        key = (str(judgement.criterion), group_of.get(item) if by else None)
        table = cells.setdefault(key, {})
        if (rater, item) in table:
            where = f" ({judgement.source})" if getattr(judgement, "source", None) else ""
            raise ValueError(f"rater {rater!r} judged item {item!r} on {key[0]!r} more than once{where}")
        table[(rater, item)] = _value_of(judgement, keep_idk=keep_idk, score=score)
    return {key: _matrix(key, table) for key, table in cells.items()}


def _matrix(key: tuple[str, str | None], table: dict[tuple[str, str], Any]) -> RaterMatrix:
    raters = tuple(sorted({rater for rater, _ in table}))
    items = tuple(dict.fromkeys(item for _, item in table))
    rater_at = {name: i for i, name in enumerate(raters)}
    item_at = {name: i for i, name in enumerate(items)}
    values = np.full((len(raters), len(items)), None, dtype=object)
    for (rater, item), value in table.items():
        values[rater_at[rater], item_at[item]] = value
    return RaterMatrix(key[0], raters, items, _settle(values, key[0]), key[1])


def _settle(values: np.ndarray, criterion: str) -> np.ndarray:
    """Numbers become float with NaN; labels (possibly with the IDK marker among numbers) stay
    objects with None."""
    present = [value for value in values.ravel().tolist() if value is not None]
    if all(isinstance(value, int | float) for value in present):
        return as_array(values, name=f"criterion {criterion!r}", ndim=2)
    if all(isinstance(value, int | float) or value == IDK for value in present):
        return values
    return as_array(values, name=f"criterion {criterion!r}", ndim=2)
