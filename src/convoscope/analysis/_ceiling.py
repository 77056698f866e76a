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
    over those people, on the items that the judge and every person rated.

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
    items) with the mean of the other people, compared as the module says. Needs three or more
    people and items that all of them and the judge rated.

    >>> people = [[1, 2, 3, 4, 5, 6], [2, 1, 3, 5, 4, 6], [1, 3, 2, 4, 6, 5]]
    >>> found = compare_with_ceiling([1, 2, 3, 4, 5, 6], people, n_resamples=200)
    >>> round(found.judge_loo, 3), round(found.people_loo, 3), found.above()
    (0.981, 0.863, False)
    """
    judge = as_numbers(scores, name="compare_with_ceiling: scores", ndim=1)
    matrix = as_numbers(people, name="compare_with_ceiling: people", ndim=2)
    if len(matrix) < 3:
        raise ValueError("compare_with_ceiling: needs three or more people (one against the others' mean)")
    complete = ~np.isnan(judge) & ~np.isnan(matrix).any(axis=0)
    if complete.sum() < 3:
        raise ValueError("compare_with_ceiling: fewer than three items rated by the judge and every person")
    judge, matrix = snap(judge[complete]), snap(matrix[:, complete])
    others = (matrix.sum(axis=0) - matrix) / (len(matrix) - 1)  # row i: mean of the people but i
    pairs = [(i, judge_rho, person_rho) for i in range(len(matrix))
             if (judge_rho := _rho(judge, others[i])) is not None
             and (person_rho := _rho(matrix[i], others[i])) is not None]
    if not pairs:
        raise ValueError("compare_with_ceiling: the correlation is undefined for every person")
    judge_loo = float(np.mean([p[1] for p in pairs]))
    people_loo = float(np.mean([p[2] for p in pairs]))
    if judge_loo <= people_loo:
        return CeilingComparison(judge_loo, people_loo, None, len(matrix), int(complete.sum()))
    terms = [_replicates(spearman, (judge, others[i]), n_resamples, seed)
             - _replicates(spearman, (matrix[i], others[i]), n_resamples, seed) for i, _, _ in pairs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        difference = _interval(judge_loo - people_loo, np.mean(terms, axis=0), confidence,
                               n_items=int(complete.sum()), name="compare_with_ceiling")
    return CeilingComparison(judge_loo, people_loo, difference, len(matrix), int(complete.sum()))


def _rho(x: np.ndarray, y: np.ndarray) -> float | None:
    try:
        return float(spearman(x, y))
    except ValueError:
        return None
