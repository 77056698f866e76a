"""Vectorised bootstrap replicates of the three correlations.

A bootstrap resample of n items is fully described by how many times each item was drawn, so a
batch of resamples is a (resamples x items) count matrix W. Every correlation of a resample is
then a weighted statistic of the original data, computed for the whole batch with a few array
passes and no per-resample sort:

- Pearson: weighted sums via one matrix product.
- Spearman: the average rank of an item inside a resample only needs the counts of the items
  below it in the original order, so ranks come from a cumulative sum over a fixed sort order.
- Kendall tau-b: concordance minus discordance is the quadratic form w' (Sx * Sy) w of the pair
  sign matrices; the tie terms are w' |Sx| w and w' |Sy| w. This needs n x n memory, so it is
  used up to ``KENDALL_FAST_MAX_ITEMS`` items. Above that, Knight's O(n log n) algorithm runs on
  the whole batch at once: items are visited in x order, one tie group at a time, and a Fenwick
  tree over the y ranks (one row per resample) counts the weighted discordant pairs; the tie
  terms come from the per-group weight sums.

Every function returns NaN for a resample whose statistic is undefined (a constant input); the
caller counts those. The results equal the statistic applied to the resampled arrays, which the
tests check against the loop.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

KENDALL_FAST_MAX_ITEMS = 1000  # 3 n x n float matrices: 24 MB at this size
_CHUNK_ELEMENTS = 1_000_000

Batch = Callable[[np.ndarray], np.ndarray]


def index_chunks(n_items: int, n_resamples: int, seed: int | None) -> Iterator[np.ndarray]:
    """Resample indices in chunks of rows. The chunking depends only on the sizes, so the
    vectorised and the looping paths see exactly the same resamples for a seed."""
    rng = np.random.default_rng(seed)
    rows = max(1, min(n_resamples, _CHUNK_ELEMENTS // max(n_items, 1)))
    done = 0
    while done < n_resamples:
        size = min(rows, n_resamples - done)
        yield rng.integers(0, n_items, size=(size, n_items))
        done += size


def counts_of(indices: np.ndarray) -> np.ndarray:
    """How many times each item appears in each resample row (float, for the matrix products)."""
    rows, n_items = indices.shape
    flat = (indices + (np.arange(rows) * n_items)[:, None]).ravel()
    return np.bincount(flat, minlength=rows * n_items).reshape(rows, n_items).astype(np.float64)


class _Groups:
    """Items grouped by equal value, in ascending value order."""

    def __init__(self, values: np.ndarray):
        self.order = np.argsort(values, kind="stable")
        ordered = values[self.order]
        is_start = np.r_[True, ordered[1:] != ordered[:-1]]
        self.starts = np.flatnonzero(is_start)
        self.group_of_item = np.empty(len(values), dtype=np.int64)
        self.group_of_item[self.order] = np.cumsum(is_start) - 1
        shares = np.diff(np.append(self.starts, len(values))) / len(values)
        # Chance that one resample draws a single value only: sum over values of share^n.
        self.chance_constant = float(np.sum(shares ** len(values)))

    def per_group(self, counts: np.ndarray) -> np.ndarray:
        ordered = counts[:, self.order]
        if len(self.starts) == counts.shape[1]:  # no ties: every item is its own group
            return ordered
        return np.add.reduceat(ordered, self.starts, axis=1)

    def centred_ranks(self, counts: np.ndarray) -> np.ndarray:
        """Average ranks within each resample, minus the mean rank (n + 1) / 2."""
        per_group = self.per_group(counts)
        below = np.cumsum(per_group, axis=1) - per_group
        mean_rank = (counts.shape[1] + 1) / 2
        return (below + (per_group + 1) / 2 - mean_rank)[:, self.group_of_item]

    def constant(self, counts: np.ndarray) -> np.ndarray:
        if self.chance_constant < 1e-15:  # e.g. many distinct values: no resample will be constant
            return np.zeros(len(counts), dtype=bool)
        return self.per_group(counts).max(axis=1) == counts.shape[1]


def pearson_batch(x: np.ndarray, y: np.ndarray) -> Batch:
    xc, yc = x - x.mean(), y - y.mean()  # centring keeps the sums of squares well conditioned
    columns = np.stack([xc, yc, xc * xc, yc * yc, xc * yc], axis=1)
    groups_x, groups_y = _Groups(x), _Groups(y)

    def batch(indices: np.ndarray) -> np.ndarray:
        counts = counts_of(indices)
        n = counts.shape[1]
        sx, sy, sxx, syy, sxy = (counts @ columns).T
        with np.errstate(invalid="ignore", divide="ignore"):
            r = (n * sxy - sx * sy) / np.sqrt((n * sxx - sx * sx) * (n * syy - sy * sy))
        r[groups_x.constant(counts) | groups_y.constant(counts)] = np.nan
        return np.clip(r, -1.0, 1.0)

    return batch


def spearman_batch(x: np.ndarray, y: np.ndarray) -> Batch:
    groups_x, groups_y = _Groups(x), _Groups(y)

    def batch(indices: np.ndarray) -> np.ndarray:
        counts = counts_of(indices)
        rx, ry = groups_x.centred_ranks(counts), groups_y.centred_ranks(counts)
        weighted_x = counts * rx
        sxy = np.einsum("ij,ij->i", weighted_x, ry)
        sxx = np.einsum("ij,ij->i", weighted_x, rx)
        syy = np.einsum("ij,ij->i", counts * ry, ry)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.clip(sxy / np.sqrt(sxx * syy), -1.0, 1.0)

    return batch


def kendall_batch(x: np.ndarray, y: np.ndarray) -> Batch:
    n = len(x)
    if n > KENDALL_FAST_MAX_ITEMS:
        return _kendall_tree_batch(x, y)
    sign_x = np.sign(x[:, None] - x[None, :])
    sign_y = np.sign(y[:, None] - y[None, :])
    forms = np.concatenate([sign_x * sign_y, np.abs(sign_x), np.abs(sign_y)], axis=1)

    def batch(indices: np.ndarray) -> np.ndarray:
        counts = counts_of(indices)
        quadratic = ((counts @ forms).reshape(len(counts), 3, n) * counts[:, None, :]).sum(axis=2)
        with np.errstate(invalid="ignore", divide="ignore"):
            tau = quadratic[:, 0] / np.sqrt(quadratic[:, 1] * quadratic[:, 2])
        return np.clip(tau, -1.0, 1.0)

    return batch


def _pairs_within(weights: np.ndarray) -> np.ndarray:
    """Pairs of drawn items inside each group: sum over groups of W (W - 1) / 2."""
    return (weights * (weights - 1)).sum(axis=1) / 2


def _kendall_tree_batch(x: np.ndarray, y: np.ndarray) -> Batch:
    """Tau-b of every resample in O(n log n) each (Knight, 1966), vectorised over resamples."""
    if len(np.unique(x)) > len(np.unique(y)):
        x, y = y, x  # tau is symmetric; fewer x groups means fewer steps
    groups_x, groups_y = _Groups(x), _Groups(y)
    rank_y = groups_y.group_of_item
    levels = len(groups_y.starts)
    _, joint_index = np.unique(groups_x.group_of_item * levels + rank_y, return_inverse=True)
    joint = _Groups(joint_index.astype(np.float64))
    members = np.split(groups_x.order, groups_x.starts[1:])
    positions = [rank_y[group] + 1 for group in members]  # Fenwick trees count from 1

    def batch(indices: np.ndarray) -> np.ndarray:
        counts = counts_of(indices)
        rows, n = counts.shape
        tree = np.zeros((rows, levels + 1))
        inserted = np.zeros(rows)
        discordant = np.zeros(rows)
        for group, position in zip(members, positions, strict=True):
            drawn = counts[:, group]
            below = _prefix(tree, position)  # drawn earlier with y at or below this item's y
            discordant += (drawn * (inserted[:, None] - below)).sum(axis=1)
            _add(tree, position, drawn)
            inserted += drawn.sum(axis=1)
        all_pairs = n * (n - 1) / 2
        tied_x = _pairs_within(groups_x.per_group(counts))
        tied_y = _pairs_within(groups_y.per_group(counts))
        tied_both = _pairs_within(joint.per_group(counts))
        score = all_pairs - tied_x - tied_y + tied_both - 2 * discordant
        with np.errstate(invalid="ignore", divide="ignore"):
            tau = score / np.sqrt((all_pairs - tied_x) * (all_pairs - tied_y))
        return np.clip(tau, -1.0, 1.0)

    return batch


def _prefix(tree: np.ndarray, position: np.ndarray) -> np.ndarray:
    total = np.zeros((len(tree), len(position)))
    index = position.copy()
    while True:
        live = index > 0
        if not live.any():
            return total
        total[:, live] += tree[:, index[live]]
        index = np.where(live, index - (index & -index), 0)


def _add(tree: np.ndarray, position: np.ndarray, values: np.ndarray) -> None:
    size = tree.shape[1] - 1
    index = position.copy()
    while True:
        live = index <= size
        if not live.any():
            return
        np.add.at(tree, (slice(None), index[live]), values[:, live])  # type: ignore[arg-type]
        index = np.where(live, index + (index & -index), size + 1)
