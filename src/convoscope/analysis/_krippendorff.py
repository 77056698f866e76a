"""Krippendorff's alpha for any number of raters, missing ratings and four levels of measurement.

alpha = 1 - observed disagreement / disagreement expected by chance, both read from the
coincidence matrix of values paired within items (Krippendorff, "Computing Krippendorff's
Alpha-Reliability", 2011). Items rated by fewer than two raters contribute no pairs and drop out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from convoscope.analysis._validate import item_counts

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
    counts, categories = item_counts(matrix, name="krippendorff_alpha", labels=labels)
    numeric = all(isinstance(value, int | float) for value in categories)
    if level in ("interval", "ratio") and not numeric:
        raise ValueError(f"krippendorff_alpha: the {level} level needs numeric ratings")
    if level == "ordinal" and not numeric and labels is None:
        raise ValueError("krippendorff_alpha: ordinal text labels need labels=[...] in scale order")
    coincidences = _coincidences(counts)
    per_value = coincidences.sum(axis=0)
    total = per_value.sum()
    expected = (np.outer(per_value, per_value) - np.diag(per_value)) / (total - 1)
    distance = _distances(level, categories, per_value)
    expected_disagreement = float(np.sum(expected * distance))
    if expected_disagreement <= 0.0:
        raise ValueError("krippendorff_alpha: every paired rating has the same value, so no "
                         "disagreement is expected by chance and alpha is undefined")
    return float(1.0 - np.sum(coincidences * distance) / expected_disagreement)


def _coincidences(counts: np.ndarray) -> np.ndarray:
    """Values x values matrix: for each item, every ordered pair of ratings from different raters,
    weighted 1 / (ratings in the item - 1)."""
    per_item = counts.sum(axis=1)
    paired = per_item >= 2
    if not paired.any():
        raise ValueError("krippendorff_alpha: no item has ratings from two or more raters")
    counts = counts[paired].astype(np.float64)
    scaled = counts / (per_item[paired] - 1)[:, None]
    return scaled.T @ counts - np.diag(scaled.sum(axis=0))


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
