"""Correlation-style agreement among raters of numeric scores: how well one person predicts the
others. Agreement coefficients (kappa, alpha) correct for chance; these are the correlations
that dialogue-evaluation papers report beside them, and the ceiling for a judge's correlation."""

from __future__ import annotations

from collections.abc import Callable
from itertools import combinations
from typing import Any

import numpy as np

from convoscope.analysis._correlation import average_ranks, pearson, spearman
from convoscope.analysis._validate import as_numbers

Correlation = Callable[[Any, Any], float]


def leave_one_out(matrix: Any, *, statistic: Correlation = spearman) -> float:
    """Mean over raters of ``statistic(rater, mean of the other raters)``: how well one person
    predicts the rest, the human ceiling for a judge correlated with the human mean. Needs at
    least three raters; raters whose correlation is undefined are left out of the mean.

    >>> round(leave_one_out([[1, 2, 3, 3, 2], [1, 2, 3, 2, 2], [2, 2, 3, 3, 1]]), 4)
    0.7764
    """
    ratings = as_numbers(matrix, name="leave_one_out", ndim=2)
    if len(ratings) < 3:
        raise ValueError("leave_one_out: needs at least three raters (rows)")
    present = ~np.isnan(ratings)
    filled = np.where(present, ratings, 0.0)
    totals, counts = filled.sum(axis=0), present.sum(axis=0)
    values = []
    for rater in range(len(ratings)):
        rated = np.flatnonzero(present[rater])  # only these items can pair with the rater
        others = counts[rated] - 1
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(others > 0, (totals[rated] - filled[rater, rated]) / others, np.nan)
        try:
            values.append(statistic(ratings[rater, rated], mean))
        except ValueError:
            continue
    if not values:
        raise ValueError("leave_one_out: the correlation is undefined for every rater")
    return float(np.mean(values))


def pairwise_correlation(matrix: Any, *, statistic: Correlation = spearman) -> float:
    """Mean over pairs of raters of ``statistic`` on the items both rated: the inter-annotator
    agreement USR (Mehri and Eskenazi, 2020) reports. Pairs whose correlation is undefined are
    left out of the mean.

    >>> round(pairwise_correlation([[1, 2, 3, 3, 2], [1, 2, 3, 2, 2], [2, 2, 3, 3, 1]]), 4)
    0.6821
    """
    ratings = as_numbers(matrix, name="pairwise_correlation", ndim=2)
    if len(ratings) < 2:
        raise ValueError("pairwise_correlation: needs at least two raters (rows)")
    if statistic is spearman and not np.isnan(ratings).any():
        # Complete table: every pair uses all items, so each rater is ranked once, not per pair.
        ratings, statistic = np.array([average_ranks(row) for row in ratings]), pearson
    elif statistic is spearman:
        from_tables = _spearman_from_tables(ratings)
        if from_tables is not None:
            return from_tables
    values = []
    for first, second in combinations(range(len(ratings)), 2):
        try:
            values.append(statistic(ratings[first], ratings[second]))
        except ValueError:
            continue
    if not values:
        raise ValueError("pairwise_correlation: the correlation is undefined for every pair of raters")
    return float(np.mean(values))


def _spearman_from_tables(ratings: np.ndarray) -> float | None:
    """The mean pairwise Spearman rho of whole-number ratings from every pair's contingency table
    (one matrix product, no ranking per pair), or None when the ratings are not a small scale."""
    from convoscope.analysis._pair_tables import pair_tables, spearman_from_table
    from convoscope.analysis._validate import category_codes

    present = ratings[~np.isnan(ratings)]
    if present.size == 0 or not np.array_equal(present, np.round(present)):
        return None
    codes, categories = category_codes(ratings, name="pairwise_correlation", ndim=2)
    tables = pair_tables(codes, len(categories))
    if tables is None:
        return None
    values = [rho for first, second in combinations(range(len(ratings)), 2)
              if (rho := spearman_from_table(tables[first, second])) is not None]
    if not values:
        raise ValueError("pairwise_correlation: the correlation is undefined for every pair of raters")
    return float(np.mean(values))
