"""Which systems do people rate differently? Tests between systems on people's ratings, and the
clusters of systems that no test separates.

Following Ji et al. (ACL 2022), each item (a conversation) has one score — the mean over
criteria of the raters' per-worker z-scores — and system A is compared with system B by a
one-sided Mann–Whitney U test (Wilcoxon rank-sum) of A's items against B's, as in the authors'
``mturk_statistics.py`` (``scipy.stats.mannwhitneyu(a, b, alternative="greater")``). When the
two systems answered the same inputs (``inputs``: e.g. the same context), the items pair up and
the Wilcoxon signed-rank test of the paired differences is used instead.

Systems are ordered by mean score; a cluster boundary falls between two neighbours when every
system above it beats every system below it (adjusted p < ``alpha``), as the WMT evaluation
campaigns draw their clusters. The family of tests — one per pair of systems, in the direction
of their means — is corrected as stated (``correction``; Ji et al. report raw p-values, which
``correction="none"`` reproduces).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from convoscope.analysis._multitest import CORRECTION_NAMES, Correction, adjust_pvalues
from convoscope.analysis._validate import as_array, as_numbers, check_same_length, missing_mask

MIN_PAIRED = 5  # shared inputs needed before two systems are compared pair by pair


@dataclass(frozen=True)
class SystemSignificance:
    """``pvalues[i][j]``: one-sided p-value that system i is rated higher than system j (NaN on
    the diagonal); ``adjusted`` after the correction, over the pairs tested in the direction of
    their means (the other direction stays NaN). Systems are ordered best first."""

    systems: tuple[str, ...]
    means: tuple[float, ...]
    n_items: tuple[int, ...]
    pvalues: tuple[tuple[float, ...], ...]
    adjusted: tuple[tuple[float, ...], ...]
    tests: tuple[tuple[str, ...], ...]
    clusters: tuple[tuple[str, ...], ...]
    correction: str
    alpha: float

    def beats(self, first: str, second: str) -> bool:
        i, j = self.systems.index(first), self.systems.index(second)
        value = self.adjusted[i][j]
        return bool(np.isfinite(value) and value < self.alpha)


def system_significance(scores: Any, systems: Any, *, inputs: Any = None, alpha: float = 0.05,
                        correction: Correction = "holm") -> SystemSignificance:
    """Pairwise one-sided tests between systems on per-item ``scores`` (see the module).

    >>> result = system_significance([5, 6, 7, 8, 9, 1, 2, 3, 4, 2], list("aaaaabbbbb"), correction="none")
    >>> result.systems, round(result.pvalues[0][1], 4), result.clusters
    (('a', 'b'), 0.006, (('a',), ('b',)))
    """
    from scipy import stats

    values = as_numbers(scores, name="system_significance: scores")
    labels = as_array(systems, name="system_significance: systems", ndim=1)
    check_same_length(values, labels, name="system_significance")
    keep = ~(np.isnan(values) | missing_mask(labels))
    pairing = None if inputs is None else as_array(inputs, name="system_significance: inputs", ndim=1)
    groups: dict[str, dict[str, float]] = {}
    for index in np.flatnonzero(keep):
        key = str(pairing[index]) if pairing is not None else str(index)
        groups.setdefault(str(labels[index]), {})[key] = float(values[index])
    names = sorted(groups, key=lambda name: (-np.mean(list(groups[name].values())), name))
    if len(names) < 2:
        raise ValueError("system_significance: needs at least two systems with scores")
    size = len(names)
    pvalues, tests = np.full((size, size), np.nan), [[""] * size for _ in range(size)]
    for i, j in combinations(range(size), 2):
        for first, second in ((i, j), (j, i)):
            pvalues[first, second], tests[first][second] = _test(groups[names[first]], groups[names[second]],
                                                                 paired=pairing is not None, stats=stats)
    upper = [(i, j) for i, j in combinations(range(size), 2)]  # i is the better system by mean
    adjusted = np.full((size, size), np.nan)
    family = adjust_pvalues([pvalues[i, j] for i, j in upper], method=correction)
    for (i, j), value in zip(upper, family, strict=True):
        adjusted[i, j] = value
    return SystemSignificance(
        systems=tuple(names), means=tuple(float(np.mean(list(groups[n].values()))) for n in names),
        n_items=tuple(len(groups[n]) for n in names), pvalues=_rows(pvalues), adjusted=_rows(adjusted),
        tests=tuple(tuple(row) for row in tests), clusters=_clusters(names, adjusted, alpha),
        correction=CORRECTION_NAMES[correction], alpha=alpha)


def _test(first: dict[str, float], second: dict[str, float], *, paired: bool,
          stats: Any) -> tuple[float, str]:
    shared = sorted(set(first) & set(second)) if paired else []
    if len(shared) >= MIN_PAIRED:
        differences = np.array([first[k] - second[k] for k in shared])
        if np.all(differences == 0):
            return 1.0, "Wilcoxon signed-rank"
        result = stats.wilcoxon(differences, alternative="greater")
        return float(result.pvalue), "Wilcoxon signed-rank"
    result = stats.mannwhitneyu(list(first.values()), list(second.values()), alternative="greater",
                                method="auto")
    return float(result.pvalue), "Mann–Whitney U"


def _rows(matrix: np.ndarray) -> tuple[tuple[float, ...], ...]:
    return tuple(tuple(float(v) for v in row) for row in matrix)


def _clusters(names: list[str], adjusted: np.ndarray, alpha: float) -> tuple[tuple[str, ...], ...]:
    significant = np.where(np.isfinite(adjusted), adjusted < alpha, False)
    clusters, start = [], 0
    for boundary in range(1, len(names)):
        if significant[:boundary, boundary:].all():
            clusters.append(tuple(names[start:boundary]))
            start = boundary
    clusters.append(tuple(names[start:]))
    return tuple(clusters)
