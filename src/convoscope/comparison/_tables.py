"""Paired statistics from counts, so a comparison of any size holds a table, not its verdicts.

Judges give values on a small scale, so every paired figure follows from the joint table of
(value in A, value in B) counts: the means and the paired t interval from the counts of each
difference, Wilcoxon's signed ranks from the counts of each |difference| (a tie group per value),
McNemar from the two discordant cells, Stuart–Maxwell and Cohen's κ from the square table, and
Krippendorff's interval α from sums. Each is pinned in tests to scipy, statsmodels, scikit-learn
or the in-memory formula (tests/compare/test_compare_streaming.py).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping

import numpy as np
from scipy import special, stats

from convoscope.comparison._stats import Level, PairedTest

Joint = Mapping[tuple[int | str, int | str], int]  # (value in A, value in B) -> items
SCIPY_BELOW = 5000  # under this many pairs the differences are rebuilt and scipy's wilcoxon runs
EXACT_MCNEMAR_BELOW = 25  # statsmodels' and convoscope.analysis.mcnemar's switch to chi-square


def differences(joint: Joint) -> Counter[float]:
    """How many items changed by each amount (B − A)."""
    found: Counter[float] = Counter()
    for (first, second), count in joint.items():
        found[float(second) - float(first)] += count
    return found


def means(joint: Joint) -> tuple[float, float]:
    n = sum(joint.values())
    total_a = sum(float(a) * count for (a, _), count in joint.items())
    total_b = sum(float(b) * count for (_, b), count in joint.items())
    return total_a / n, total_b / n


def change_interval(counts: Counter[float], *, confidence: float) -> tuple[float, float]:
    """The paired t interval of the mean difference, as ``ttest_rel(b, a).confidence_interval``."""
    n = sum(counts.values())
    if n < 2:
        return (float("nan"), float("nan"))
    mean = sum(d * c for d, c in counts.items()) / n
    squares = sum(c * (d - mean) ** 2 for d, c in counts.items())
    if squares == 0.0:
        return (mean, mean)
    half = float(stats.t.ppf(0.5 + confidence / 2, n - 1)) * math.sqrt(squares / (n - 1)) / math.sqrt(n)
    return (mean - half, mean + half)


def wilcoxon_counts(counts: Counter[float], *, rebuild_below: int = SCIPY_BELOW) -> PairedTest:
    """Wilcoxon signed-rank on the differences (zeros dropped, scipy's default ``method='auto'``).

    Small samples are rebuilt and given to scipy (its exact or permutation p-value). Larger
    ones always hold ties on a judge's scale, where scipy uses the normal approximation with the
    tie correction and no continuity correction: computed here from one tie group per |d|."""
    name = "Wilcoxon signed-rank"
    if not any(d != 0 and c for d, c in counts.items()):
        return PairedTest(name, 0.0, 1.0, "no item changed")
    pairs = sum(counts.values())
    absolute: Counter[float] = Counter()
    for d, c in counts.items():
        if d != 0:
            absolute[abs(d)] += c
    n = sum(absolute.values())
    if pairs < rebuild_below or all(c == 1 for c in absolute.values()) and not counts.get(0.0):
        rebuilt = np.repeat(np.fromiter(counts, float), np.fromiter(counts.values(), np.int64))
        result = stats.wilcoxon(rebuilt, zero_method="wilcox")
        return PairedTest(name, float(result.statistic), float(result.pvalue))
    r_plus = r_minus = ties = 0.0
    below = 0  # ranks taken by smaller |d|
    for size in sorted(absolute):
        group = absolute[size]
        rank = below + (group + 1) / 2  # the average rank of the tie group
        r_plus += rank * counts.get(size, 0)
        r_minus += rank * counts.get(-size, 0)
        ties += group**3 - group
        below += group
    mean = n * (n + 1) * 0.25
    spread = math.sqrt((n * (n + 1) * (2 * n + 1) - ties / 2) / 24)
    z = (r_plus - mean) / spread
    pvalue = float(2 * special.ndtr(-abs(z)))
    return PairedTest(name, min(r_plus, r_minus), min(1.0, pvalue))


def mcnemar_table(joint: Joint) -> PairedTest:
    """McNemar from the discordant cells (1 in A only, 1 in B only), as
    :func:`convoscope.analysis.mcnemar` and statsmodels: exact under 25 discordant items."""
    only_a = sum(c for (a, b), c in joint.items() if a == 1 and b != 1)
    only_b = sum(c for (a, b), c in joint.items() if a != 1 and b == 1)
    discordant = only_a + only_b
    note = f"{only_a} items 1 in A only, {only_b} in B only"
    exact = discordant < EXACT_MCNEMAR_BELOW
    if discordant == 0:
        return PairedTest(f"McNemar ({'exact' if exact else 'chi-square, corrected'})", 0.0, 1.0, note)
    if exact:
        smaller = min(only_a, only_b)
        pvalue = min(1.0, 2.0 * float(special.bdtr(smaller, discordant, 0.5)))
        return PairedTest("McNemar (exact)", float(smaller), pvalue, note)
    gap = abs(only_a - only_b) - 1
    statistic = gap * gap / discordant
    return PairedTest("McNemar (chi-square, corrected)", statistic, float(special.chdtrc(1, statistic)), note)


def square(joint: Joint, labels: list) -> np.ndarray:
    """The joint table as a square array over ``labels`` (rows: A, columns: B)."""
    index = {label: position for position, label in enumerate(labels)}
    table = np.zeros((len(labels), len(labels)))
    for (first, second), count in joint.items():
        table[index[first], index[second]] += count
    return table


def stuart_maxwell_table(table: np.ndarray) -> PairedTest:
    """Stuart–Maxwell test of marginal homogeneity (statsmodels' ``SquareTable.homogeneity()``)."""
    k = table.shape[0]
    if k < 2 or not np.any(table - np.diag(np.diag(table))):
        return PairedTest("Stuart–Maxwell", 0.0, 1.0, "no item changed label")
    difference = (table.sum(axis=1) - table.sum(axis=0))[: k - 1]
    covariance = -(table + table.T)[: k - 1, : k - 1]
    diagonal = table.sum(axis=1) + table.sum(axis=0) - 2 * np.diag(table)
    np.fill_diagonal(covariance, diagonal[: k - 1])
    statistic = float(difference @ np.linalg.pinv(covariance) @ difference)
    freedom = int(np.linalg.matrix_rank(covariance))
    pvalue = float(stats.chi2.sf(statistic, freedom)) if freedom else 1.0
    return PairedTest("Stuart–Maxwell", statistic, pvalue, f"{freedom} degrees of freedom")


def kappa_table(table: np.ndarray, *, quadratic: bool = False) -> float | None:
    """Cohen's κ from the confusion table (scikit-learn's ``cohen_kappa_score``); quadratic
    weights by position in the table's labels, as scikit-learn. None when chance agreement is 1."""
    observed = table / table.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    positions = np.arange(table.shape[0])
    distance = np.abs(positions[:, None] - positions[None, :]).astype(float)
    weight = distance**2 if quadratic else (distance > 0).astype(float)
    chance = float(np.sum(weight * expected))
    if chance == 0.0:
        return None
    value = 1.0 - float(np.sum(weight * observed)) / chance
    return None if math.isnan(value) else value


def interval_alpha(joint: Joint) -> float | None:
    """Krippendorff's interval α of two raters who both rated every item: one minus the observed
    squared difference over the expected one among all 2n values."""
    n = sum(joint.values())
    total = sum((float(a) + float(b)) * c for (a, b), c in joint.items())
    mean = total / (2 * n)
    spread = sum(((float(a) - mean) ** 2 + (float(b) - mean) ** 2) * c
                 for (a, b), c in joint.items())
    if n < 1 or spread == 0.0:
        return None
    observed = sum((float(a) - float(b)) ** 2 * c for (a, b), c in joint.items()) / n
    expected = 2 * spread / (2 * n - 1)
    return 1.0 - observed / expected


def paired_test_table(level: Level, joint: Joint) -> PairedTest:
    if level == "nominal":
        labels = sorted({str(v) for pair in joint for v in pair})
        as_text: Counter[tuple[int | str, int | str]] = Counter()
        for (a, b), count in joint.items():
            as_text[(str(a), str(b))] += count
        return stuart_maxwell_table(square(as_text, labels))
    return mcnemar_table(joint) if level == "binary" else wilcoxon_counts(differences(joint))


AGREEMENT_NAMES = {
    "binary": "Cohen's κ",
    "nominal": "Cohen's κ",
    "ordinal": "weighted κ (quadratic)",
    "interval": "Krippendorff's α (interval)",
}


def agreement_table(level: Level, joint: Joint) -> tuple[str, float | None]:
    """Item-level agreement between the runs: κ for binary and nominal, quadratic-weighted κ
    over the values seen for ordinal, interval α otherwise; None when undefined."""
    name = AGREEMENT_NAMES[level]
    if level == "interval":
        return name, interval_alpha(joint)
    if level == "ordinal":
        labels = sorted({v for pair in joint for v in pair})
        return name, kappa_table(square(joint, labels), quadratic=True)
    as_text: Counter[tuple[int | str, int | str]] = Counter()
    for (a, b), count in joint.items():
        as_text[(str(a), str(b))] += count
    labels = sorted({v for pair in as_text for v in pair})
    return name, kappa_table(square(as_text, labels))
