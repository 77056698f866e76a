"""Is a judge above the people's own agreement? A like-for-like comparison with the ceiling.

The human ceiling is leave-one-out: each person against the mean of the *other* people, averaged
over people. A judge's usual ρ is against the mean of *all* people, which averages one more
rating and so is less noisy: a judge that is just one more person scores above the ceiling on
that target (on 300 items with three people it was "above the ceiling" in a quarter of studies).
Here the judge meets the same targets: for each person i, ρ(judge, mean of the people other than
i) beside ρ(person i, mean of the people other than i). If the judge is one more person, the two
are exchangeable and their difference has mean zero; the difference's percentile interval
(items resampled, the same draw for every term) tells whether the judge is above.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from convoscope.analysis._bootstrap import BootstrapResult, _interval, _replicates
from convoscope.analysis._correlation import spearman
from convoscope.analysis._validate import as_numbers, snap


@dataclass(frozen=True)
class CeilingComparison:
    """The judge and the people, each against the mean of the people other than one, averaged
    over those people, on the items the judge rated.

    ``difference`` is ``judge_loo - people_loo`` with its percentile interval, resampled only
    when the judge is above on the point estimate (None otherwise: it cannot be above). ``above``
    when the interval lies above ``margin`` (a one-sided test at (1 - confidence) / 2)."""

    judge_loo: float
    people_loo: float
    difference: BootstrapResult | None
    n_people: int
    n_items: int

    def above(self, margin: float = 0.0) -> bool:
        return self.difference is not None and self.difference.low > margin


def compare_with_ceiling(scores: Any, people: Any, *, n_resamples: int = 2000, confidence: float = 0.95,
                         seed: int | None = 0) -> CeilingComparison:
    """Spearman ρ of the judge ``scores`` (one per item) and of each of ``people`` (raters x
    items, missing as NaN) with the mean of the other people, compared as the module says. Each
    person's terms use the items that person rated with at least one other, as the ceiling does.
    Needs three or more people.

    >>> people = [[1, 2, 3, 4, 5, 6], [2, 1, 3, 5, 4, 6], [1, 3, 2, 4, 6, 5]]
    >>> found = compare_with_ceiling([1, 2, 3, 4, 5, 6], people, n_resamples=200)
    >>> round(found.judge_loo, 3), round(found.people_loo, 3), found.above()
    (0.981, 0.863, False)
    """
    judge = as_numbers(scores, name="compare_with_ceiling: scores", ndim=1)
    matrix = as_numbers(people, name="compare_with_ceiling: people", ndim=2)
    if len(matrix) < 3:
        raise ValueError("compare_with_ceiling: needs three or more people (one against the others' mean)")
    rated = ~np.isnan(judge)
    if rated.sum() < 3:
        raise ValueError("compare_with_ceiling: fewer than three items rated by the judge")
    judge, matrix = snap(judge[rated]), snap(matrix[:, rated])
    judge_loo, people_loo, valid = _both(judge, matrix)
    n_items = len(judge)
    if judge_loo <= people_loo:
        return CeilingComparison(judge_loo, people_loo, None, len(matrix), n_items)
    if np.isnan(matrix).any():  # each person's items differ: one statistic per resample
        replicates = _replicates(_lead, (judge, matrix), n_resamples, seed)
    else:  # every term on every item: the vectorised correlations, one draw for all
        others = (matrix.sum(axis=0) - matrix) / (len(matrix) - 1)  # row i: mean of the people but i
        replicates = np.mean([_replicates(spearman, (judge, others[i]), n_resamples, seed)
                              - _replicates(spearman, (matrix[i], others[i]), n_resamples, seed)
                              for i in valid], axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        difference = _interval(judge_loo - people_loo, replicates, confidence, n_items=n_items,
                               name="compare_with_ceiling")
    return CeilingComparison(judge_loo, people_loo, difference, len(matrix), n_items)


def _both(judge: np.ndarray, matrix: np.ndarray) -> tuple[float, float, list[int]]:
    """(mean ρ of the judge, mean ρ of each person, the people both were defined for), each
    against the mean of the other people on the items the person rated with another."""
    present = ~np.isnan(matrix)
    filled = np.where(present, matrix, 0.0)
    totals, counts = filled.sum(axis=0), present.sum(axis=0)
    found = []
    for person in range(len(matrix)):
        items = np.flatnonzero(present[person] & (counts > 1))
        others = (totals[items] - filled[person, items]) / (counts[items] - 1)
        judge_rho, person_rho = _rho(judge[items], others), _rho(matrix[person, items], others)
        if judge_rho is not None and person_rho is not None:
            found.append((person, judge_rho, person_rho))
    if not found:
        raise ValueError("compare_with_ceiling: the correlation is undefined for every person")
    return (float(np.mean([f[1] for f in found])), float(np.mean([f[2] for f in found])),
            [f[0] for f in found])


def _lead(judge: np.ndarray, matrix: np.ndarray) -> float:
    judge_loo, people_loo, _ = _both(judge, matrix)
    return judge_loo - people_loo


def _rho(x: np.ndarray, y: np.ndarray) -> float | None:
    if len(x) < 3:
        return None
    try:
        return float(spearman(x, y))
    except ValueError:
        return None
