"""Pool several raters' values on each item into one: majority (max-vote), mean, median.

Input is raters x items; missing ratings are ignored. An item nobody rated pools to missing
(NaN for numbers, None for labels), which downstream statistics drop.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from convoscope.analysis._validate import as_numbers, category_codes, unit_counts

Ties = Literal["low", "high", "missing", "median"]
TIES = ("low", "high", "missing", "median")
def majority_vote(matrix: Any, *, ties: Ties = "low", labels: Sequence[Any] | None = None) -> np.ndarray:
    """The most frequent value per item: the Max-Vote pooling of seed 004 (the mode of the votes).

    Tie rule, stated because two-rater panels tie often: ``low`` takes the tied value that comes
    first in scale order (smallest number; for labels the order of ``labels``, else alphabetical),
    ``high`` the last, ``missing`` gives no value, ``median`` the median of the tied values
    (numbers: rounded half to even when it falls between two whole numbers, e.g. 2 and 4 tie
    -> 3, 2 and 3 -> 2; labels: the lower of the two middle ones). ``low``, ``high`` and
    ``missing`` match the ``ties`` option of :func:`convoscope.judges.pool_values`.

    Returns floats with NaN for numeric ratings, an object array with None for labels.

    >>> majority_vote([[1, 2, 3], [1, 3, 3], [2, 2, 1]], ties="low").tolist()
    [1.0, 2.0, 3.0]
    """
    if ties not in TIES:
        raise ValueError(f"majority_vote: ties must be one of {TIES}, got {ties!r}")
    codes, categories = category_codes(matrix, name="majority_vote", ndim=2, labels=labels)
    counts = unit_counts(codes, len(categories))
    if not categories:
        counts = np.zeros((codes.shape[1], 1), dtype=np.int64)
    top = counts.max(axis=1)
    # argmax returns the first maximum, i.e. the lowest tied category; reversed, the highest.
    if ties == "high":
        chosen = counts.shape[1] - 1 - np.argmax(counts[:, ::-1], axis=1)
    else:
        chosen = np.argmax(counts, axis=1)
    undecided = top == 0
    tied = (counts == top[:, None]).sum(axis=1) > 1
    if ties == "missing":
        undecided |= tied
    numeric = all(isinstance(value, int | float) for value in categories)
    if ties == "median" and tied.any():
        return _median_of_ties(counts, top, categories, chosen, undecided, tied, numeric)
    if numeric:
        values = np.asarray(categories or [np.nan], dtype=np.float64)
        return np.where(undecided, np.nan, values[chosen])
    out = np.array([categories[code] for code in chosen], dtype=object)
    out[undecided] = None
    return out


def _median_of_ties(counts: np.ndarray, top: np.ndarray, categories: list[Any], chosen: np.ndarray,
                    undecided: np.ndarray, tied: np.ndarray, numeric: bool) -> np.ndarray:
    if numeric:
        values = np.asarray(categories, dtype=np.float64)
        out = np.where(undecided, np.nan, values[chosen])
        for item in np.flatnonzero(tied & ~undecided):
            middle = float(np.median(values[counts[item] == top[item]]))
            out[item] = float(np.round(middle)) if np.all(values == np.round(values)) else middle
        return out
    picks = chosen.copy()
    for item in np.flatnonzero(tied & ~undecided):
        positions = np.flatnonzero(counts[item] == top[item])
        picks[item] = positions[(len(positions) - 1) // 2]
    result = np.array([categories[code] for code in picks], dtype=object)
    result[undecided] = None
    return result


def _pool(matrix: Any, name: str, min_ratings: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    ratings = as_numbers(matrix, name=name, ndim=2)
    if min_ratings < 1:
        raise ValueError(f"{name}: min_ratings must be at least 1, got {min_ratings}")
    present = ~np.isnan(ratings)
    return ratings, present, present.sum(axis=0)


def mean_pool(matrix: Any, *, min_ratings: int = 1) -> np.ndarray:
    """Mean rating per item; NaN where fewer than ``min_ratings`` raters rated it.

    >>> mean_pool([[1, 2, float("nan")], [3, 2, 4]]).tolist()
    [2.0, 2.0, 4.0]
    """
    ratings, present, rated_by = _pool(matrix, "mean_pool", min_ratings)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(present, ratings, 0.0).sum(axis=0) / rated_by
    return np.where(rated_by >= min_ratings, means, np.nan)


def median_pool(matrix: Any, *, min_ratings: int = 1) -> np.ndarray:
    """Median rating per item (midpoint of the two middle values for an even count); NaN where
    fewer than ``min_ratings`` raters rated it.

    >>> median_pool([[1, 2, float("nan")], [3, 2, 4]], min_ratings=2).tolist()
    [2.0, 2.0, nan]
    """
    ratings, _, rated_by = _pool(matrix, "median_pool", min_ratings)
    # Sorting puts NaN last, so the k ratings of an item are its first k sorted values.
    ordered = np.sort(ratings, axis=0)
    last = np.maximum(rated_by - 1, 0)
    lower = np.take_along_axis(ordered, (last // 2)[None, :], axis=0)[0]
    upper = np.take_along_axis(ordered, ((last + 1) // 2)[None, :], axis=0)[0]
    return np.where(rated_by >= min_ratings, (lower + upper) / 2, np.nan)
