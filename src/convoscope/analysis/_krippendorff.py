"""Krippendorff's alpha for any number of raters, missing ratings and four levels of measurement.

alpha = 1 - observed disagreement / disagreement expected by chance, both defined by the
coincidence matrix of values paired within items (Krippendorff, "Computing Krippendorff's
Alpha-Reliability", 2011). Items rated by fewer than two raters contribute no pairs and drop out.

At the interval level no coincidence matrix is needed: both disagreements are sums of squared
differences, so alpha = 1 - (n - 1) * sum over items of m_u/(m_u - 1) * (spread of its m_u values)
/ (n * spread of all n pairable values), read from each item's count, sum and sum of squares.
Continuous ratings (every value distinct) would otherwise make a values x values matrix: 4,000
values on 1,000 items is 128 MB per matrix, and one per bootstrap resample is out of reach. At the
ratio level the within-item part is per item too, and the chance part is a quadratic form over the
distinct values taken in blocks, so its memory stays bounded (its time grows with values squared).
Ordinal alpha is interval alpha on each value's mid-position among the pairable ratings
(:func:`_ordinal_alpha`), and nominal alpha needs only each item's and the table's counts of every
value, so no level builds a values x values matrix here (the interval's tables: ``_agreement_ci``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from convoscope.analysis._validate import as_array, category_codes, item_counts, missing_mask

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS = ("nominal", "ordinal", "interval", "ratio")


def krippendorff_alpha(
    matrix: Any, *, level: Level = "nominal", labels: Sequence[Any] | None = None
) -> float:
    """Krippendorff's alpha of a raters x items matrix (NaN or None = not rated).

    ``level`` picks the distance between two values: ``nominal`` (equal or not), ``ordinal``
    (how many ratings lie between them), ``interval`` (squared difference) or ``ratio``
    (squared difference relative to the sum). Text labels work at the nominal level, and at the
    ordinal level when ``labels`` gives their order; interval and ratio need numbers.

    Undefined, and a ValueError, when no item has two ratings or when every rating is the same
    value (no disagreement is expected by chance, so alpha is 0/0).

    >>> round(krippendorff_alpha([[1, 2, 3, 3, 2], [1, 2, 3, 2, 2], [2, 2, 3, 3, 1]], level="ordinal"), 4)
    0.6656
    """
    if level not in LEVELS:
        raise ValueError(f"krippendorff_alpha: level must be one of {LEVELS}, got {level!r}")
    if level in ("interval", "ratio"):
        return _numeric_alpha(matrix, level=level, labels=labels)
    counts, categories = item_counts(matrix, name="krippendorff_alpha", labels=labels)
    numeric = all(isinstance(value, int | float) for value in categories)
    if level == "ordinal" and not numeric and labels is None:
        raise ValueError("krippendorff_alpha: ordinal text labels need labels=[...] in scale order")
    paired, per_item = _paired(counts)
    if level == "ordinal":
        return _ordinal_alpha(paired, per_item)
    # Nominal: an item's differing pairs are m_u**2 - sum_c n_uc**2; by chance n**2 - sum_c n_c**2.
    per_value = paired.sum(axis=0)
    within = float(np.sum((per_item**2 - (paired**2).sum(axis=1)) / (per_item - 1)))
    return _alpha(within, float(per_value.sum() ** 2 - per_value @ per_value), float(per_value.sum()))


def _paired(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The items x values counts of the items with two or more ratings, and their rating counts."""
    per_item = counts.sum(axis=1)
    keep = per_item >= 2
    if not keep.any():
        raise ValueError("krippendorff_alpha: no item has ratings from two or more raters")
    return counts[keep].astype(np.float64), per_item[keep].astype(np.float64)


def _alpha(within: float, chance: float, total: float) -> float:
    """1 - observed / expected disagreement, from the summed within-item disagreement (each item's
    weighted by 1 / (m_u - 1)) and n - 1 times the chance one; undefined without the latter."""
    if chance <= 0.0:
        raise ValueError("krippendorff_alpha: every paired rating has the same value, so no "
                         "disagreement is expected by chance and alpha is undefined")
    return 1.0 - (total - 1) * within / chance


def _ordinal_alpha(counts: np.ndarray, per_item: np.ndarray) -> float:
    """Ordinal alpha from the paired items' x values counts, without a values x values matrix: the
    ordinal distance of c and k is (P_k - P_c)**2, with P_c = (ratings up to and including c) -
    n_c / 2 the value's mid-position among all pairable ratings, so it is interval alpha on P."""
    per_value = counts.sum(axis=0)
    total = per_value.sum()
    position = np.cumsum(per_value) - per_value / 2 - total / 2  # centred: their mean is 0
    item_mean = counts @ position / per_item
    spread = (counts * (position[None, :] - item_mean[:, None]) ** 2).sum(axis=1)
    within = float(np.sum(spread * per_item / (per_item - 1)))
    chance = float(total * (per_value @ position**2) - (per_value @ position) ** 2)
    return _alpha(within, chance, float(total))


_ROW_BLOCK_BYTES = 16 << 20  # one block of resamples' positions per rating, at most


def ordinal_alpha_rows(weights: np.ndarray, patterns: np.ndarray, size: int) -> np.ndarray:
    """Ordinal alpha for every row of ``weights`` (rows x patterns) from ``patterns`` (patterns x
    raters value codes, -1 = not rated, every pattern pairable) and ``size`` values: interval alpha
    on each row's mid-positions (see :func:`_ordinal_alpha`), in blocks of rows, so memory grows
    with patterns x raters, not with values squared."""
    present = patterns >= 0
    codes = patterns.clip(0)
    per_item = present.sum(axis=1).astype(np.float64)
    flat_codes, flat_items = codes[present], np.nonzero(present)[0]
    block = max(1, _ROW_BLOCK_BYTES // (8 * max(patterns.size, size)))
    out = np.empty(len(weights))
    for start in range(0, len(weights), block):
        rows = weights[start:start + block]
        per_value = np.stack([np.bincount(flat_codes, weights=row[flat_items], minlength=size)
                              for row in rows])
        total = per_value.sum(axis=1)
        position = np.cumsum(per_value, axis=1) - per_value / 2 - total[:, None] / 2
        values = np.where(present[None], np.take(position, codes, axis=1), 0.0)
        item_mean = values.sum(axis=2) / per_item
        spread = np.where(present[None], values - item_mean[:, :, None], 0.0)
        within = ((spread**2).sum(axis=2) * per_item / (per_item - 1) * rows).sum(axis=1)
        chance = total * (per_value * position**2).sum(axis=1) - (per_value * position).sum(axis=1) ** 2
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start:start + block] = np.where(chance > 0, 1.0 - (total - 1) * within / chance, np.nan)
    return out


def nominal_alpha_rows(weights: np.ndarray, patterns: np.ndarray, size: int) -> np.ndarray:
    """Nominal alpha for every row of ``weights`` (rows x patterns) from ``patterns`` (patterns x
    raters value codes, -1 = not rated, every pattern pairable): the pairs of an item that differ
    are m_u**2 - sum_c n_uc**2, and by chance n**2 - sum_c n_c**2, so only each row's count of every
    value is needed, never a values x values matrix."""
    present = patterns >= 0
    per_item = present.sum(axis=1).astype(np.float64)
    equal = ((patterns[:, :, None] == patterns[:, None, :]) & present[:, :, None]).sum(axis=(1, 2))
    within = weights @ ((per_item**2 - equal) / (per_item - 1))
    flat_codes, flat_items = patterns[present], np.nonzero(present)[0]
    total = weights @ per_item
    block = max(1, _ROW_BLOCK_BYTES // (8 * size))
    chance = np.empty(len(weights))
    for start in range(0, len(weights), block):
        per_value = np.stack([np.bincount(flat_codes, weights=row[flat_items], minlength=size)
                              for row in weights[start:start + block]])
        chance[start:start + block] = total[start:start + block] ** 2 - (per_value**2).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(chance > 0, 1.0 - (total - 1) * within / chance, np.nan)


def _distances(level: str, categories: list[Any], per_value: np.ndarray) -> np.ndarray:
    if level == "nominal":
        return 1.0 - np.eye(len(categories))
    if level == "ordinal":
        # Distance between values c and k: the ratings from c through k, minus half of each end.
        cumulative = np.cumsum(per_value)
        between = cumulative[None, :] - cumulative[:, None] + (per_value[:, None] - per_value[None, :]) / 2
        return between**2
    values = np.asarray(categories, dtype=np.float64)
    difference = values[:, None] - values[None, :]
    if level == "interval":
        return difference**2
    total = values[:, None] + values[None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(total != 0, difference / total, 0.0)
    return ratio**2


def _numeric_alpha(matrix: Any, *, level: str, labels: Sequence[Any] | None) -> float:
    """Alpha at the interval or ratio level from per-item sums (no values x values matrix)."""
    array = as_array(matrix, name="krippendorff_alpha", ndim=2)
    if array.dtype == object or (labels is not None and not all(
            isinstance(value, int | float) for value in labels)):
        raise ValueError(f"krippendorff_alpha: the {level} level needs numeric ratings")
    if labels is not None:  # only to refuse values outside the labels, as the other levels do
        category_codes(array, name="krippendorff_alpha", ndim=2, labels=labels)
    values = array.T[(~missing_mask(array)).sum(axis=0) >= 2]
    if not len(values):
        raise ValueError("krippendorff_alpha: no item has ratings from two or more raters")
    alpha = numeric_alpha_rows(np.ones((1, len(values))), values, level)[0]
    if np.isnan(alpha):
        raise ValueError("krippendorff_alpha: every paired rating has the same value, so no "
                         "disagreement is expected by chance and alpha is undefined")
    return float(alpha)


def numeric_alpha_rows(weights: np.ndarray, values: np.ndarray, level: str) -> np.ndarray:
    """Alpha (interval or ratio) for every row of ``weights`` (rows x items: how many times each
    item counts), from ``values`` (items x raters, NaN = not rated, every item pairable).
    NaN where no disagreement is expected by chance."""
    present = ~np.isnan(values)
    per_item = present.sum(axis=1).astype(np.float64)
    pairable = weights @ per_item
    if level == "interval":
        # Centring changes nothing (alpha is shift invariant) and keeps n*T2 - T1**2 from cancelling.
        centred = np.where(present, values - values[present].mean(), 0.0)
        item_mean = centred.sum(axis=1) / per_item
        spread = np.where(present, centred - item_mean[:, None], 0.0)
        within = per_item * (spread**2).sum(axis=1) / (per_item - 1)
        chance = pairable * (weights @ (centred**2).sum(axis=1)) - (weights @ centred.sum(axis=1)) ** 2
    else:
        within, chance = _ratio_within(values, present), _ratio_chance(weights, values, present)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(chance > 0, 1.0 - (pairable - 1) * (weights @ within) / chance, np.nan)


def _ratio_distance(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    total = first + second
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total != 0, (first - second) / total, 0.0) ** 2


def _ratio_within(values: np.ndarray, present: np.ndarray) -> np.ndarray:
    """Per item: the ratio distance summed over ordered pairs of its ratings, over (m_u - 1)."""
    filled = np.where(present, values, 0.0)
    both = present[:, :, None] & present[:, None, :]
    pairs = np.where(both, _ratio_distance(filled[:, :, None], filled[:, None, :]), 0.0)
    return pairs.sum(axis=(1, 2)) / (present.sum(axis=1) - 1)


_BLOCK_BYTES = 32 << 20  # one block of the values x values ratio distances, at most


def _ratio_chance(weights: np.ndarray, values: np.ndarray, present: np.ndarray) -> np.ndarray:
    """Per row: n_c n_k d(c, k) summed over ordered pairs of distinct values (so n - 1 times the
    expected disagreement), with n_c the row's weighted count of value c; in column blocks."""
    distinct, codes = np.unique(values[present], return_inverse=True)
    items = np.nonzero(present)[0]
    counts = np.zeros((len(weights), len(distinct)))
    for row in range(len(weights)):
        counts[row] = np.bincount(codes, weights=weights[row, items], minlength=len(distinct))
    block = max(1, _BLOCK_BYTES // (8 * len(distinct)))
    chance = np.zeros(len(weights))
    for start in range(0, len(distinct), block):
        distance = _ratio_distance(distinct[:, None], distinct[None, start:start + block])
        chance += ((counts @ distance) * counts[:, start:start + block]).sum(axis=1)
    return chance
