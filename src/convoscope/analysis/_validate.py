"""Input checks shared by every statistic.

Ratings arrive as lists, numpy arrays or pandas columns; numbers or text labels; with NaN or None
for "missing". Each statistic turns them into one of two shapes first: a float array with NaN
(for numbers) or a category code array with -1 for missing (for agreement on any labels). Every
check fails with a ValueError that names the statistic and the rule broken.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from numbers import Number
from typing import Any

import numpy as np

MISSING_CODE = -1


def is_missing(value: Any) -> bool:
    """None and NaN (float or numpy) mean "no rating"."""
    if value is None:
        return True
    try:
        return bool(value != value)  # NaN is the only value unequal to itself
    except (TypeError, ValueError):
        return False


def as_array(data: Any, *, name: str, ndim: int) -> np.ndarray:
    """A numpy view of ``data`` with the expected number of dimensions.

    Numbers come back as float64 with NaN for missing; anything holding text comes back as an
    object array with None for missing. Mixing numbers and text is refused: a scale is one or
    the other, and a stray "idk" among scores is a data problem the caller should see.
    """
    try:
        array = np.asarray(data)
    except ValueError:
        raise ValueError(f"{name}: rows have different lengths (pad missing ratings with NaN)") from None
    if array.ndim != ndim:
        shape = "a 1-D array (one value per item)" if ndim == 1 else "a 2-D array (raters x items)"
        raise ValueError(f"{name}: expected {shape}, got {array.ndim} dimension(s)")
    if array.dtype.kind in "biuf":
        return array.astype(np.float64, copy=False)
    if array.dtype.kind in "US":
        # numpy turns [1, "idk"] into the strings ["1", "idk"]; look at the original objects.
        array = np.asarray(data, dtype=object)
    if array.dtype.kind != "O":
        raise ValueError(f"{name}: cannot read values of type {array.dtype}")
    return _clean_objects(array, name=name)


def _clean_objects(array: np.ndarray, *, name: str) -> np.ndarray:
    flat = array.ravel()
    missing = np.fromiter((is_missing(value) for value in flat), dtype=bool, count=flat.size)
    present = flat[~missing]
    numeric = np.fromiter((isinstance(v, Number) for v in present), dtype=bool, count=present.size)
    if numeric.all():
        out = np.full(flat.size, np.nan)
        out[~missing] = present.astype(np.float64)
        return out.reshape(array.shape)
    if numeric.any():
        number, text = present[numeric][0], present[~numeric][0]
        raise ValueError(f"{name}: mixes numbers and labels (e.g. {number!r} and {text!r}); "
                         "map the labels to numbers or mark them missing")
    kinds = {type(value).__name__ for value in present if not isinstance(value, str)}
    if kinds:
        raise ValueError(f"{name}: values must be numbers or strings, found {sorted(kinds)}")
    out = flat.copy()
    out[missing] = None
    return out.reshape(array.shape)


def missing_mask(array: np.ndarray) -> np.ndarray:
    """True where ``array`` (from :func:`as_array`) holds no rating."""
    if array.dtype == object:
        return np.asarray(array == None)  # noqa: E711 (elementwise: None marks a missing label)
    return np.isnan(array)


def as_numbers(data: Any, *, name: str, ndim: int = 1) -> np.ndarray:
    """Float array with NaN for missing; text labels are an error."""
    array = as_array(data, name=name, ndim=ndim)
    if array.dtype == object:
        label = next(v for v in array.ravel() if v is not None)
        raise ValueError(f"{name}: needs numbers, found the label {label!r}")
    return array


def complete_pairs(x: Any, y: Any, *, name: str, minimum: int) -> tuple[np.ndarray, np.ndarray]:
    """Two numeric vectors of equal length with every pair holding a missing value dropped."""
    xs = as_numbers(x, name=f"{name}: x")
    ys = as_numbers(y, name=f"{name}: y")
    check_same_length(xs, ys, name=name)
    keep = ~(np.isnan(xs) | np.isnan(ys))
    complete = int(np.count_nonzero(keep))
    if complete < minimum:
        raise ValueError(f"{name}: needs at least {minimum} items rated in both x and y, got {complete}")
    if complete == len(keep):  # nothing missing: skip the copies
        return xs, ys
    return xs[keep], ys[keep]


def check_same_length(*arrays: np.ndarray, name: str) -> None:
    lengths = {array.shape[-1] for array in arrays}
    if len(lengths) > 1:
        raise ValueError(f"{name}: inputs cover different numbers of items {sorted(lengths)}")


def category_codes(
    data: Any, *, name: str, ndim: int, labels: Sequence[Any] | None = None
) -> tuple[np.ndarray, list[Any]]:
    """Integer codes (``MISSING_CODE`` for missing) and the ordered list of categories.

    Without ``labels`` the categories are the observed values, sorted (numbers ascending, text
    alphabetically). With ``labels`` they are exactly those, in that order; a value outside them
    is an error rather than silently ignored.
    """
    array = as_array(data, name=name, ndim=ndim)
    missing = missing_mask(array)
    codes = np.full(array.shape, MISSING_CODE, dtype=np.int64)
    if array.dtype != object:
        if labels is None:
            small = _small_integer_codes(array, missing)
            if small is not None:
                return small
        present = array[~missing]
        categories = np.unique(present) if labels is None else _numeric_labels(labels, name=name)
        if labels is None:
            codes[~missing] = _positions(present, categories)
            return codes, categories.tolist()
        order = np.argsort(categories, kind="stable")
        position = _positions(present, categories[order]).clip(0, len(categories) - 1)
        if present.size and not np.array_equal(categories[order][position], present):
            bad = present[categories[order][position] != present][0]
            raise ValueError(f"{name}: value {bad:g} is not in labels {list(labels)}")
        codes[~missing] = order[position]
        return codes, list(labels)
    present_values = array[~missing].tolist()
    if labels is None:
        category_list = sorted(set(present_values))
    else:
        category_list = list(labels)
        if len(set(category_list)) != len(category_list):
            raise ValueError(f"{name}: labels contain duplicates")
    lookup = {value: code for code, value in enumerate(category_list)}
    unknown = [value for value in present_values if value not in lookup]
    if unknown:
        raise ValueError(f"{name}: value {unknown[0]!r} is not in labels {category_list}")
    codes[~missing] = [lookup[value] for value in present_values]
    return codes, category_list


def _small_integer_codes(array: np.ndarray, missing: np.ndarray) -> tuple[np.ndarray, list[Any]] | None:
    """Codes of whole-number ratings on a short scale by counting instead of sorting (rating
    scales are whole numbers: 1-5, 0-100), on the whole array without compacting it; None when
    the values are not such a scale."""
    if missing.all():
        return None
    low, high = np.nanmin(array), np.nanmax(array)
    if high - low > 10_000:
        return None
    shifted = np.where(missing, 0.0, array - low)
    whole = shifted.astype(np.int64)
    if not np.array_equal(whole, shifted):
        return None
    counts = np.bincount(whole.ravel(), weights=(~missing).ravel().astype(np.float64))
    used = np.flatnonzero(counts)
    lookup = np.full(len(counts), MISSING_CODE, dtype=np.int64)
    lookup[used] = np.arange(len(used))
    codes = np.where(missing, MISSING_CODE, lookup[whole])
    return codes, (used + low).astype(np.float64).tolist()


def _positions(values: np.ndarray, ordered: np.ndarray) -> np.ndarray:
    """Index of each value in the sorted ``ordered`` (for values it contains)."""
    if len(ordered) > 32:
        return np.searchsorted(ordered, values)
    # Rating scales are short; one comparison pass per level beats a binary search per value.
    position = np.zeros(values.shape, dtype=np.int64)
    for level in ordered[:-1]:
        position += values > level
    return position


def _numeric_labels(labels: Sequence[Any], *, name: str) -> np.ndarray:
    try:
        values = np.asarray(list(labels), dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: the ratings are numbers but labels {list(labels)} are not") from None
    if values.size == 0:
        raise ValueError(f"{name}: labels is empty")
    if len(np.unique(values)) != len(values):
        raise ValueError(f"{name}: labels contain duplicates")
    return values


def item_counts(data: Any, *, name: str, labels: Sequence[Any] | None = None) -> tuple[np.ndarray, list[Any]]:
    """For a raters x items matrix: the items x categories table of how many raters chose each
    category, and the categories. Whole-number scales are counted in one pass over the matrix
    without coding it first (the common case, and the cost of alpha on large tables)."""
    array = as_array(data, name=name, ndim=2)
    if labels is None and array.dtype != object and array.size:
        counted = _count_small_integers(array)
        if counted is not None:
            return counted
    codes, categories = category_codes(array, name=name, ndim=2, labels=labels)
    return unit_counts(codes, len(categories)), categories


def _count_small_integers(array: np.ndarray) -> tuple[np.ndarray, list[Any]] | None:
    missing = np.isnan(array)
    if missing.all():
        return None
    low, high = np.nanmin(array), np.nanmax(array)
    if high - low > 1000:
        return None
    shifted = np.where(missing, -1.0, array - low)
    whole = shifted.astype(np.int64)
    if not np.array_equal(whole, shifted):
        return None
    width = int(high - low) + 2  # column 0 counts the missing ratings
    flat = (whole + 1) + (np.arange(array.shape[1]) * width)[None, :]
    counts = np.bincount(flat.ravel(), minlength=array.shape[1] * width).reshape(array.shape[1], width)[:, 1:]
    used = np.flatnonzero(counts.sum(axis=0))
    return counts[:, used], (used + low).astype(np.float64).tolist()


def unit_counts(codes: np.ndarray, n_categories: int) -> np.ndarray:
    """For a raters x items code matrix: an items x categories table of how many raters chose
    each category."""
    n_items = codes.shape[1]
    # Column 0 of each item counts the missing ratings (code -1 + 1) and is dropped: no masking.
    width = n_categories + 1
    flat = (codes + 1) + (np.arange(n_items) * width)[None, :]
    counts = np.bincount(flat.ravel(), minlength=n_items * width).reshape(n_items, width)
    return counts[:, 1:]


def as_value_set(values: Any | Iterable[Any]) -> set[Any]:
    """One value or a collection of values (a string counts as one value)."""
    if isinstance(values, str) or not isinstance(values, Iterable):
        return {values}
    return set(values)


SIGNIFICANT_DIGITS = 12


def snap(values: np.ndarray, *, digits: int = SIGNIFICANT_DIGITS) -> np.ndarray:
    """Floats rounded to ``digits`` significant digits before they are ranked or compared, so
    averages equal in exact arithmetic tie: (1/3 + 2/3) / 2 and 1/2 must share a rank, or
    Spearman moves in the fourth decimal (ABC-Eval dialogue level, "irrelevant": .42625 with
    1-ulp differences ranked apart, .42540 exact). Applied once, where values are ranked.

    >>> bool(snap(np.array([(0.1 + 0.2) / 2]))[0] == 0.15)
    True
    """
    values = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(values) & (values != 0)
    out = values.copy()
    magnitude = np.floor(np.log10(np.abs(values[finite])))
    scale = 10.0 ** (digits - 1 - magnitude)
    out[finite] = np.round(values[finite] * scale) / scale
    return out
