"""Bootstrap intervals for Krippendorff's alpha and the kappas, resampling items.

Resampling n items with replacement is the same as drawing, for every distinct *pattern* of
ratings an item can have (who gave which value), how many times it appears: a multinomial over
the patterns with their observed shares. Agreement coefficients are sums over items, so each
resample is one weighted sum over the few distinct patterns — every resample of a million-item
table costs as much as one of a hundred items. The point estimate is the statistic itself
(:func:`krippendorff_alpha`, :func:`fleiss_kappa`, :func:`cohen_kappa`,
:func:`pairwise_cohen_kappa`); tests check that the weighted formulas give it exactly at the
observed weights, and that the intervals agree with the plain item bootstrap.

Only pairable items are resampled (two or more ratings; for a pair of raters, items both rated).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

import numpy as np

from convoscope.analysis._agreement import (
    Weights,
    _weight_matrix,
    cohen_kappa,
    fleiss_kappa,
    pairwise_cohen_kappa,
)
from convoscope.analysis._bootstrap import BootstrapResult, _check_options, _interval
from convoscope.analysis._krippendorff import (
    LEVELS,
    Level,
    krippendorff_alpha,
    nominal_alpha_rows,
    numeric_alpha_rows,
    ordinal_alpha_rows,
)
from convoscope.analysis._validate import as_array, category_codes, check_same_length, missing_mask


def _patterns(codes: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct columns of a raters x items code matrix among ``keep``, and how often each occurs.
    Each column is read as one integer (its codes as digits), so finding them is one 1-D sort."""
    kept = codes[:, keep]
    base = int(kept.max(initial=-1)) + 2  # digit 0 is "missing" (code -1)
    if base ** len(kept) >= 2**62:  # too many raters for one integer: compare columns
        return np.unique(kept.T, axis=0, return_counts=True)
    powers = base ** np.arange(len(kept), dtype=np.int64)
    keys = ((kept + 1).astype(np.int64) * powers[:, None]).sum(axis=0)
    _, first, counts = np.unique(keys, return_index=True, return_counts=True)
    return kept[:, first].T, counts


def _draws(counts: np.ndarray, n_resamples: int, seed: int | None) -> np.ndarray:
    """(n_resamples + 1) x patterns weights: the observed counts first, then the resamples.

    ``agree`` asks for alpha's, Fleiss' and the pairwise kappa's intervals on the same items with
    the same seed, so the same draws three times (a tenth of its time at 1M ratings): the last
    seeded draw is kept and handed out again, read-only."""
    key = (n_resamples, seed, counts.tobytes()) if seed is not None else None
    last = _LAST_DRAW.get("draw")  # one read: another thread may replace it meanwhile
    if key is not None and last is not None and last[0] == key:
        return last[1]
    rng = np.random.default_rng(seed)
    total = int(counts.sum())
    weights = np.empty((n_resamples + 1, len(counts)))
    weights[0] = counts
    weights[1:] = rng.multinomial(total, counts / total, size=n_resamples)
    weights.flags.writeable = False
    if key is not None:
        _LAST_DRAW["draw"] = (key, weights)
    return weights


# The last seeded draw, (key, weights): one table's worth (80 MB at 10,000 items), replaced by the next.
_LAST_DRAW: dict[str, tuple[Any, np.ndarray]] = {}


def _one_hot_counts(patterns: np.ndarray, size: int) -> np.ndarray:
    """patterns x categories: how many raters of each pattern chose each category."""
    counts = np.zeros((len(patterns), size))
    for rater in range(patterns.shape[1]):
        code = patterns[:, rater]
        rows = np.flatnonzero(code >= 0)
        np.add.at(counts, (rows, code[rows]), 1.0)
    return counts


def _alpha_rows(weights: np.ndarray, patterns: np.ndarray, categories: list[Any], level: str) -> np.ndarray:
    from convoscope.analysis._krippendorff import _distances

    size = len(categories)
    counts = _one_hot_counts(patterns, size)
    per_item = counts.sum(axis=1)
    scaled = counts / (per_item - 1)[:, None]
    single = np.einsum("pi,pj->pij", scaled, counts) - np.einsum("pi,ij->pij", scaled, np.eye(size))
    coincidence = (weights @ single.reshape(len(patterns), -1)).reshape(len(weights), size, size)
    per_value = coincidence.sum(axis=2)
    total = per_value.sum(axis=1)
    out = np.empty(len(weights))
    for row in range(len(weights)):
        expected = (np.outer(per_value[row], per_value[row]) - np.diag(per_value[row])) / (total[row] - 1)
        distance = _distances(level, categories, per_value[row])
        chance = float(np.sum(expected * distance))
        out[row] = np.nan if chance <= 0 else 1.0 - float(np.sum(coincidence[row] * distance)) / chance
    return out


# The per-pattern coincidence matrices of one nominal/ordinal interval, at most; past this they are
# replaced by each resample's count of every value (nominal_alpha_rows, ordinal_alpha_rows).
_COINCIDENCE_BYTES = 1 << 30


def _fleiss_rows(weights: np.ndarray, patterns: np.ndarray, size: int) -> np.ndarray:
    counts = _one_hot_counts(patterns, size)
    raters = counts.sum(axis=1)
    agreement = ((counts * counts).sum(axis=1) - raters) / (raters * (raters - 1))
    observed = weights @ agreement / weights.sum(axis=1)
    shares = (weights @ counts) / (weights @ raters)[:, None]
    chance = (shares * shares).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(chance < 1.0, (observed - chance) / (1.0 - chance), np.nan)


def _kappa_rows(weights: np.ndarray, first: np.ndarray, second: np.ndarray, size: int,
                kind: Weights) -> np.ndarray:
    """Cohen's kappa per row of ``weights`` over patterns whose two codes are ``first``/``second``."""
    cells = np.zeros((len(first), size * size))
    cells[np.arange(len(first)), first * size + second] = 1.0
    observed = (weights @ cells).reshape(len(weights), size, size)
    observed /= observed.sum(axis=(1, 2), keepdims=True)
    expected = np.einsum("bi,bj->bij", observed.sum(axis=2), observed.sum(axis=1))
    distance = _weight_matrix(size, kind)
    chance = (expected * distance).sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(chance > 0, 1.0 - (observed * distance).sum(axis=(1, 2)) / chance, np.nan)


def krippendorff_alpha_ci(matrix: Any, *, level: Level = "nominal", labels: Sequence[Any] | None = None,
                          n_resamples: int = 1000, confidence: float = 0.95,
                          seed: int | None = 0) -> BootstrapResult:
    """Krippendorff's alpha with a percentile interval from resampling items (pairable items).

    >>> result = krippendorff_alpha_ci([[1, 2, 3, 3, 2], [1, 2, 3, 2, 2], [2, 2, 3, 3, 1]],
    ...                                level="ordinal", n_resamples=200)
    >>> round(result.estimate, 4), result.n_items
    (0.6656, 5)
    """
    if level not in LEVELS:
        raise ValueError(f"krippendorff_alpha_ci: level must be one of {LEVELS}, got {level!r}")
    _check_options(n_resamples, confidence)
    estimate = krippendorff_alpha(matrix, level=level, labels=labels)
    codes, categories = category_codes(matrix, name="krippendorff_alpha_ci", ndim=2, labels=labels)
    keep = (codes >= 0).sum(axis=0) >= 2
    patterns, counts = _patterns(codes, keep)
    draws = _draws(counts, n_resamples, seed)
    if level in ("interval", "ratio"):  # per-item sums: no values x values matrix per resample
        values = np.asarray(categories, dtype=np.float64)[patterns.clip(0)]
        rows = numeric_alpha_rows(draws, np.where(patterns >= 0, values, np.nan), level)
    elif 8 * len(patterns) * len(categories) ** 2 > _COINCIDENCE_BYTES:  # e.g. continuous ratings
        rows = (ordinal_alpha_rows if level == "ordinal" else nominal_alpha_rows)(draws, patterns,
                                                                                   len(categories))
    else:
        rows = _alpha_rows(draws, patterns, categories, level)
    return _interval(estimate, rows[1:], confidence, n_items=int(keep.sum()), name="krippendorff_alpha_ci")


def fleiss_kappa_ci(matrix: Any, *, n_resamples: int = 1000, confidence: float = 0.95,
                    seed: int | None = 0) -> BootstrapResult:
    """Fleiss' kappa with a percentile interval from resampling items with two or more ratings."""
    _check_options(n_resamples, confidence)
    estimate = fleiss_kappa(matrix)
    codes, categories = category_codes(matrix, name="fleiss_kappa_ci", ndim=2)
    keep = (codes >= 0).sum(axis=0) >= 2
    patterns, counts = _patterns(codes, keep)
    rows = _fleiss_rows(_draws(counts, n_resamples, seed), patterns, len(categories))
    return _interval(estimate, rows[1:], confidence, n_items=int(keep.sum()), name="fleiss_kappa_ci")


def cohen_kappa_ci(a: Any, b: Any, *, weights: Weights = None, labels: Sequence[Any] | None = None,
                   n_resamples: int = 1000, confidence: float = 0.95,
                   seed: int | None = 0) -> BootstrapResult:
    """Cohen's kappa of two raters with a percentile interval from resampling the items both rated.

    >>> result = cohen_kappa_ci([1, 2, 3, 4, 5, 3], [1, 2, 4, 4, 5, 3], weights="quadratic",
    ...                         labels=range(1, 6), n_resamples=200)
    >>> round(result.estimate, 4)
    0.9524
    """
    _check_options(n_resamples, confidence)
    estimate = cohen_kappa(a, b, weights=weights, labels=labels)
    first = as_array(a, name="cohen_kappa_ci: a", ndim=1)
    second = as_array(b, name="cohen_kappa_ci: b", ndim=1)
    check_same_length(first, second, name="cohen_kappa_ci")
    both = ~(missing_mask(first) | missing_mask(second))
    codes, categories = category_codes(np.stack([first[both], second[both]]), name="cohen_kappa_ci",
                                       ndim=2, labels=labels)
    patterns, counts = _patterns(codes, np.ones(codes.shape[1], dtype=bool))
    rows = _kappa_rows(_draws(counts, n_resamples, seed), patterns[:, 0], patterns[:, 1], len(categories),
                       weights)
    return _interval(estimate, rows[1:], confidence, n_items=int(both.sum()), name="cohen_kappa_ci")


def pairwise_cohen_kappa_ci(matrix: Any, *, weights: Weights = None, labels: Sequence[Any] | None = None,
                            n_resamples: int = 1000, confidence: float = 0.95,
                            seed: int | None = 0) -> BootstrapResult:
    """The mean pairwise Cohen's kappa with a percentile interval from resampling items (pairable
    items, the same draw for every pair of raters)."""
    _check_options(n_resamples, confidence)
    ratings = as_array(matrix, name="pairwise_cohen_kappa_ci", ndim=2)
    estimate = pairwise_cohen_kappa(ratings, weights=weights, labels=labels)
    codes, categories = category_codes(ratings, name="pairwise_cohen_kappa_ci", ndim=2, labels=labels)
    keep = (codes >= 0).sum(axis=0) >= 2
    patterns, counts = _patterns(codes, keep)
    draws = _draws(counts, n_resamples, seed)
    defined = {(pair.first, pair.second) for pair in estimate.pairs}
    used = [pair for pair in combinations(range(len(ratings)), 2) if pair in defined]
    rows = _pairwise_kappa_rows(draws, patterns, used, len(categories), weights)
    return _interval(estimate.mean, rows[1:], confidence, n_items=int(keep.sum()),
                     name="pairwise_cohen_kappa_ci")


_PAIR_BLOCK_BYTES = 64 << 20  # the per-pattern features of one block of pairs, at most
_EXACT_SINGLE = 1 << 24  # integers below this add up exactly in single precision


def _pairwise_kappa_rows(weights: np.ndarray, patterns: np.ndarray, pairs: Sequence[tuple[int, int]],
                         size: int, kind: Weights) -> np.ndarray:
    """The mean over ``pairs`` of Cohen's kappa per row of ``weights`` (patterns x raters codes).

    Each pair's kappa needs, over the patterns both raters rated, the weighted sums of: the
    disagreement d(a, b), the number of items, and each rater's count of every category but the
    last (their marginals; the last is the rest). Those are per-pattern features, so all rows and
    a block of pairs are one matrix product — weights (rows x patterns) times features
    (patterns x pairs x 2 categories) — instead of one product per pair over a copy of the weights.

    Weights are resample counts and the features small integers (the distances of all three
    weightings are whole numbers), so when no sum can reach 2**24 the product runs in single
    precision and is still exact: every partial sum is a whole number a float32 holds. That halves
    the time of the product, which is nearly all of an interval at 100 raters."""
    if not pairs:
        return np.full(len(weights), np.nan)
    distance = _weight_matrix(size, kind)
    largest = float(weights.sum(axis=1).max(initial=0.0)) * max(1.0, float(distance.max()))
    dtype = np.float32 if largest < _EXACT_SINGLE else np.float64
    weights = weights.astype(dtype, copy=False)
    per_pair = 2 * size
    block = max(1, _PAIR_BLOCK_BYTES // (np.dtype(dtype).itemsize * per_pair * max(1, len(patterns))))
    total = np.zeros(len(weights))
    defined = np.zeros(len(weights))
    for start in range(0, len(pairs), block):
        first = np.array([i for i, _ in pairs[start:start + block]])
        second = np.array([j for _, j in pairs[start:start + block]])
        features = _pair_features(patterns[:, first], patterns[:, second], distance, size, dtype)
        sums = (weights @ features).astype(np.float64).reshape(len(weights), len(first), per_pair)
        kappa = _kappa_from_sums(sums, distance, size)
        found = ~np.isnan(kappa)
        total += np.where(found, kappa, 0.0).sum(axis=1)
        defined += found.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(defined > 0, total / np.maximum(defined, 1), np.nan)


def _pair_features(first: np.ndarray, second: np.ndarray, distance: np.ndarray, size: int,
                   dtype: Any = np.float64) -> np.ndarray:
    """patterns x (pairs * 2 size): per pair, the disagreement, 1 (the item counts), then the
    first rater's one-hot category and the second's, each without the last category; all zero
    where either rating is missing. Written in place: no boolean copies of the block."""
    shared = (first >= 0) & (second >= 0)
    a, b = np.where(shared, first, 0), np.where(shared, second, 0)
    features = np.empty(first.shape + (2 * size,), dtype=dtype)
    features[:, :, 0] = distance[a, b]
    features[:, :, 1] = 1.0
    for category in range(size - 1):
        np.equal(a, category, out=features[:, :, 2 + category], casting="unsafe")
        np.equal(b, category, out=features[:, :, 1 + size + category], casting="unsafe")
    features *= shared[:, :, None]
    return features.reshape(len(first), -1)


def _kappa_from_sums(sums: np.ndarray, distance: np.ndarray, size: int) -> np.ndarray:
    """rows x pairs kappas from the weighted sums (disagreement, items, categories of each rater
    but the last)."""
    disagreement, count = sums[:, :, 0], sums[:, :, 1]
    first = np.concatenate([sums[:, :, 2:size + 1], (count - sums[:, :, 2:size + 1].sum(axis=2))[:, :, None]],
                           axis=2)
    second = np.concatenate([sums[:, :, size + 1:], (count - sums[:, :, size + 1:].sum(axis=2))[:, :, None]],
                            axis=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        chance = np.einsum("rpa,ab,rpb->rp", first, distance, second) / count**2
        observed = disagreement / count
        return np.where((chance > 0) & (count > 0), 1.0 - observed / chance, np.nan)
