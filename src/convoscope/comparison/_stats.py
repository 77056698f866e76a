"""Paired statistics of one criterion judged in two runs on the same items.

Hand-written where scipy has no vectorised form; every figure is pinned in tests to scipy or
statsmodels (Wilcoxon, the paired t interval, McNemar, Stuart–Maxwell, Cohen's kappa, Holm).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

Level = Literal["binary", "ordinal", "interval", "nominal"]


@dataclass(frozen=True)
class PairedTest:
    """The paired test that fits the scale: its name, statistic and two-sided p-value."""

    name: str
    statistic: float
    pvalue: float
    note: str = ""


def infer_level(values: Sequence[int | str | float]) -> Level:
    """Text labels are nominal; 0/1 only is binary; other whole numbers ordinal; else interval."""
    if any(isinstance(value, str) for value in values):
        return "nominal"
    if all(float(value).is_integer() for value in values):
        return "binary" if set(values) <= {0, 1} else "ordinal"
    return "interval"


def level_of_scale(scale: object) -> Level:
    """The level a criterion's scale fixes: binary, ordinal for an integer range, nominal for labels."""
    kind = getattr(scale, "kind", None)
    return "binary" if kind == "binary" else "ordinal" if kind == "range" else "nominal"


def mean_change_interval(a: np.ndarray, b: np.ndarray, *, confidence: float = 0.95) -> tuple[float, float]:
    """The paired t interval of mean(b - a), as scipy's ``ttest_rel(b, a).confidence_interval``.
    With every difference equal the interval is that difference (no spread to widen it)."""
    difference = b - a
    n = difference.size
    mean = float(difference.mean())
    if n < 2:
        return (float("nan"), float("nan"))
    spread = float(difference.std(ddof=1))
    if spread == 0.0:
        return (mean, mean)
    half = float(stats.t.ppf(0.5 + confidence / 2, n - 1)) * spread / np.sqrt(n)
    return (mean - half, mean + half)


def wilcoxon(a: np.ndarray, b: np.ndarray) -> PairedTest:
    """Wilcoxon signed-rank on b - a (zero differences dropped, as scipy's default 'wilcox')."""
    difference = b - a
    if not np.any(difference != 0):
        return PairedTest("Wilcoxon signed-rank", 0.0, 1.0, "no item changed")
    result = stats.wilcoxon(b, a, zero_method="wilcox")
    return PairedTest("Wilcoxon signed-rank", float(result.statistic), float(result.pvalue))


def mcnemar_test(a: np.ndarray, b: np.ndarray) -> PairedTest:
    """McNemar on paired 0/1 values: exact binomial under 25 discordant pairs, else chi-square with
    continuity correction (statsmodels' ``mcnemar`` conventions, through the analysis package)."""
    from convoscope.analysis import mcnemar

    result = mcnemar(a, b)
    kind = "exact" if result.exact else "chi-square, corrected"
    return PairedTest(
        f"McNemar ({kind})",
        float(result.statistic),
        float(result.pvalue),
        f"{result.only_a} items 1 in A only, {result.only_b} in B only",
    )


def stuart_maxwell(a: list[str], b: list[str]) -> PairedTest:
    """Stuart–Maxwell test of marginal homogeneity for paired labels (statsmodels'
    ``SquareTable.homogeneity()``): do the two runs hand out the labels in the same shares?"""
    labels = sorted(set(a) | set(b))
    if len(labels) < 2 or all(x == y for x, y in zip(a, b, strict=True)):
        return PairedTest("Stuart–Maxwell", 0.0, 1.0, "no item changed label")
    index = {label: position for position, label in enumerate(labels)}
    table = np.zeros((len(labels), len(labels)))
    for x, y in zip(a, b, strict=True):
        table[index[x], index[y]] += 1
    from convoscope.comparison._tables import stuart_maxwell_table  # the same test on counts

    return stuart_maxwell_table(table)


def paired_test(level: Level, a: list, b: list) -> PairedTest:
    if level == "nominal":
        return stuart_maxwell([str(x) for x in a], [str(y) for y in b])
    first, second = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return mcnemar_test(first, second) if level == "binary" else wilcoxon(first, second)


def agreement(level: Level, a: list, b: list) -> tuple[str, float | None]:
    """How far the two runs agree item by item: Cohen's kappa for binary and nominal labels,
    quadratic-weighted kappa for ordinal scores, Krippendorff's interval alpha otherwise. None when
    undefined (one value only in both runs)."""
    from convoscope.analysis import cohen_kappa, krippendorff_alpha

    names = {
        "binary": "Cohen's κ",
        "nominal": "Cohen's κ",
        "ordinal": "weighted κ (quadratic)",
        "interval": "Krippendorff's α (interval)",
    }
    try:
        if level in ("binary", "nominal"):
            value = cohen_kappa([str(x) for x in a], [str(y) for y in b])
        elif level == "ordinal":
            value = cohen_kappa(a, b, weights="quadratic", labels=sorted(set(a) | set(b)))
        else:
            value = krippendorff_alpha(np.asarray([a, b], dtype=float), level="interval")
    except (ValueError, ZeroDivisionError):
        return names[level], None
    return names[level], None if np.isnan(value) else float(value)
