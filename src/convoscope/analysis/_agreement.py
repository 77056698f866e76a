"""Agreement between raters on the same items: percent agreement, Cohen's and Fleiss' kappa,
and agreement on "strong" judgements.

A ratings matrix has one row per rater and one column per item; NaN or None marks an item the
rater did not rate. Values may be numbers or text labels. An item needs at least two ratings to
say anything about agreement; items with fewer are skipped, as the reference implementations do.
When every rating falls in one category, chance agreement is 1 and a kappa is 0/0: that raises
a ValueError (report percent agreement instead) rather than returning NaN.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Literal

import numpy as np

from convoscope.analysis._validate import (
    as_array,
    as_value_set,
    category_codes,
    check_same_length,
    is_missing,
    item_counts,
    missing_mask,
)

Weights = Literal["linear", "quadratic"] | None


def _rated_counts(matrix: Any, *, name: str, labels: Sequence[Any] | None = None) -> np.ndarray:
    """Items x categories counts for the items with at least two ratings."""
    counts, _ = item_counts(matrix, name=name, labels=labels)
    counts = counts[counts.sum(axis=1) >= 2]
    if len(counts) == 0:
        raise ValueError(f"{name}: no item has ratings from two or more raters")
    return counts


def percent_agreement(matrix: Any, *, unanimous: bool = False) -> float:
    """Share of agreeing rater pairs per item, averaged over items (a proportion, 0 to 1).

    For two raters this is the share of items they rated the same. With ``unanimous=True`` it
    is instead the share of items on which every rater who rated it gave the same value.

    >>> percent_agreement([[1, 2, 3, 3], [1, 2, 2, 3]])
    0.75
    """
    counts = _rated_counts(matrix, name="percent_agreement")
    raters = counts.sum(axis=1)
    if unanimous:
        return float(np.mean(counts.max(axis=1) == raters))
    agreeing_pairs = (counts * (counts - 1)).sum(axis=1)
    return float(np.mean(agreeing_pairs / (raters * (raters - 1))))


def fleiss_kappa(matrix: Any) -> float:
    """Fleiss' kappa for any number of raters on nominal categories.

    With the same number of ratings per item this is Fleiss (1971). With unequal numbers, each
    item's agreement uses its own rater count and chance agreement uses the pooled category
    shares; items with fewer than two ratings are skipped.

    >>> round(fleiss_kappa([[1, 2, 3, 3, 2], [1, 2, 3, 2, 2], [2, 2, 3, 3, 1]]), 4)
    0.3662
    """
    counts = _rated_counts(matrix, name="fleiss_kappa").astype(np.float64)
    raters = counts.sum(axis=1)
    observed = np.mean(((counts * counts).sum(axis=1) - raters) / (raters * (raters - 1)))
    shares = counts.sum(axis=0) / counts.sum()
    chance = float(np.sum(shares * shares))
    if chance >= 1.0:
        raise ValueError("fleiss_kappa: every rating is in one category, so chance agreement is 1 "
                         "and kappa is undefined; report percent_agreement instead")
    return float((observed - chance) / (1.0 - chance))


def _weight_matrix(n_categories: int, weights: Weights) -> np.ndarray:
    positions = np.arange(n_categories)
    distance = np.abs(positions[:, None] - positions[None, :]).astype(np.float64)
    if weights is None:
        return (distance > 0).astype(np.float64)
    if weights == "linear":
        return distance
    if weights == "quadratic":
        return distance**2
    raise ValueError(f"cohen_kappa: weights must be None, 'linear' or 'quadratic', got {weights!r}")


def cohen_kappa(a: Any, b: Any, *, weights: Weights = None, labels: Sequence[Any] | None = None) -> float:
    """Cohen's kappa between two raters, optionally weighted for ordered scales.

    Weighted disagreement uses the distance between category positions in ``labels`` (by
    default the sorted observed values), as scikit-learn does: pass the full scale, e.g.
    ``labels=range(1, 6)``, so unused levels still count in the distance. Items either rater
    left unrated are dropped.

    >>> round(cohen_kappa([1, 2, 3, 4, 5], [1, 2, 4, 4, 5], weights="quadratic", labels=range(1, 6)), 4)
    0.9524
    """
    weight = _weight_matrix(1, weights)  # validate the option before reading data
    first = as_array(a, name="cohen_kappa: a", ndim=1)
    second = as_array(b, name="cohen_kappa: b", ndim=1)
    check_same_length(first, second, name="cohen_kappa")
    both = ~(missing_mask(first) | missing_mask(second))
    if both.sum() == 0:
        raise ValueError("cohen_kappa: no item is rated by both raters")
    pair = np.stack([first[both], second[both]]) if first.dtype == second.dtype else None
    if pair is None:
        raise ValueError("cohen_kappa: one rater gave numbers and the other labels")
    codes, categories = category_codes(pair, name="cohen_kappa", ndim=2, labels=labels)
    size = len(categories)
    observed = np.bincount(codes[0] * size + codes[1], minlength=size * size).reshape(size, size)
    observed = observed / observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    weight = _weight_matrix(size, weights)
    chance_disagreement = float(np.sum(weight * expected))
    if chance_disagreement == 0.0:
        raise ValueError(_UNDEFINED_KAPPA)
    return float(1.0 - np.sum(weight * observed) / chance_disagreement)


@dataclass(frozen=True)
class PairKappa:
    first: int
    second: int
    kappa: float
    n_items: int


@dataclass(frozen=True)
class PairwiseKappa:
    """Cohen's kappa of every pair of raters (row indices), and their mean.

    ``skipped`` lists pairs with fewer than two shared items or an undefined kappa, with why.
    """

    mean: float
    pairs: tuple[PairKappa, ...]
    skipped: tuple[tuple[int, int, str], ...] = ()


def pairwise_cohen_kappa(
    matrix: Any, *, weights: Weights = None, labels: Sequence[Any] | None = None
) -> PairwiseKappa:
    """Cohen's kappa for each pair of raters on the items both rated, and the mean over pairs.

    >>> round(pairwise_cohen_kappa([[1, 2, 3, 3, 2], [1, 2, 3, 2, 2], [2, 2, 3, 3, 1]]).mean, 4)
    0.375
    """
    ratings = as_array(matrix, name="pairwise_cohen_kappa", ndim=2)
    if labels is None:  # one shared category list, so weighted distances agree across pairs
        labels = category_codes(ratings, name="pairwise_cohen_kappa", ndim=2)[1]
    pairs, skipped = _pairs_from_tables(ratings, weights, labels)
    if pairs is None:
        pairs, skipped = _pairs_one_by_one(ratings, weights, labels)
    if not pairs:
        raise ValueError("pairwise_cohen_kappa: no pair of raters has a defined kappa "
                         f"({len(skipped)} pair(s) skipped)")
    return PairwiseKappa(float(np.mean([p.kappa for p in pairs])), tuple(pairs), tuple(skipped))


_UNDEFINED_KAPPA = ("cohen_kappa: both raters used a single, identical category, so chance "
                    "agreement is 1 and kappa is undefined; report percent_agreement instead")


def _pairs_from_tables(ratings: np.ndarray, weights: Weights, labels: Sequence[Any]) -> tuple[Any, Any]:
    """Every pair's kappa from its contingency table (one matrix product for all pairs); (None,
    None) when a value is outside ``labels`` or there are too many raters, for the pair-by-pair
    path to report as before."""
    from convoscope.analysis._pair_tables import pair_tables

    try:
        codes, categories = category_codes(ratings, name="pairwise_cohen_kappa", ndim=2, labels=labels)
    except ValueError:
        return None, None
    size = len(categories)
    tables = pair_tables(codes, size)
    if tables is None:
        return None, None
    weight = _weight_matrix(size, weights)
    pairs, skipped = [], []
    for i, j in combinations(range(len(ratings)), 2):
        table = tables[i, j]
        shared = int(table.sum())
        if shared < 2:
            skipped.append((i, j, f"{shared} shared item(s)"))
            continue
        observed = table / shared
        chance = float(np.sum(weight * np.outer(observed.sum(axis=1), observed.sum(axis=0))))
        if chance == 0.0:
            skipped.append((i, j, _UNDEFINED_KAPPA))
            continue
        pairs.append(PairKappa(i, j, float(1.0 - np.sum(weight * observed) / chance), shared))
    return pairs, skipped


def _pairs_one_by_one(ratings: np.ndarray, weights: Weights, labels: Sequence[Any]) -> tuple[Any, Any]:
    present = ~missing_mask(ratings)
    pairs, skipped = [], []
    for i, j in combinations(range(len(ratings)), 2):
        shared = present[i] & present[j]
        if shared.sum() < 2:
            skipped.append((i, j, f"{int(shared.sum())} shared item(s)"))
            continue
        try:
            kappa = cohen_kappa(ratings[i, shared], ratings[j, shared], weights=weights, labels=labels)
        except ValueError as error:
            skipped.append((i, j, str(error)))
            continue
        pairs.append(PairKappa(i, j, kappa, int(shared.sum())))
    return pairs, skipped


@dataclass(frozen=True)
class StrongAgreement:
    """Agreement on the items where no rater said "I don't know".

    ``kappa`` is Fleiss' kappa on those items, or None with ``note`` saying why it is undefined.
    """

    n_items: int
    n_removed: int
    percent_agreement: float
    kappa: float | None
    note: str | None = None


def strong_agreement(matrix: Any, *, idk: Any | Iterable[Any] = "idk") -> StrongAgreement:
    """Agreement on "strong" judgements: items where any rater answered "I don't know" (any value
    in ``idk``) are removed, then percent agreement and Fleiss' kappa are computed on the rest
    (the protocol of seed 003).

    >>> strong_agreement([["a", "b", "idk"], ["a", "b", "a"]]).n_removed
    1
    """
    raw = np.asarray(matrix, dtype=object)  # "idk" may sit among numeric scores
    if raw.ndim != 2:
        raise ValueError("strong_agreement: expected a 2-D array (raters x items)")
    idk_values = as_value_set(idk)
    flat = raw.ravel()
    said_idk = np.fromiter((_is_idk(v, idk_values) for v in flat), bool, flat.size).reshape(raw.shape)
    answered = ~np.fromiter((is_missing(v) for v in flat), bool, flat.size).reshape(raw.shape)
    rated = answered.sum(axis=0) >= 2
    removed = said_idk.any(axis=0) & rated
    kept = raw[:, rated & ~removed]
    if kept.shape[1] == 0:
        raise ValueError("strong_agreement: no item with two or more ratings is free of 'I don't know'")
    agreement = percent_agreement(kept)
    try:
        kappa, note = fleiss_kappa(kept), None
    except ValueError as error:
        kappa, note = None, str(error)
    return StrongAgreement(int(kept.shape[1]), int(removed.sum()), agreement, kappa, note)



def _is_idk(value: Any, idk_values: set[Any]) -> bool:
    try:
        return value in idk_values
    except TypeError:  # an unhashable value cannot be an "I don't know" marker
        return False
