"""The system level of ``convoscope metaeval --system-level``: per judge, the system-level
correlation with people (systems and items resampled), the pairwise ranking accuracy, outlier
systems; per pair of judges, Williams' test on system means, a paired bootstrap and a
permutation test; and from people's ratings alone, each system's rank with an interval and the
tests between systems with their significance clusters.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from itertools import combinations
from typing import Any

import numpy as np

from convoscope.analysis._bootstrap import BootstrapResult
from convoscope.analysis._compare import _matrices
from convoscope.analysis._influence import Influence
from convoscope.analysis._multitest import Correction
from convoscope.analysis._pooling import mean_pool
from convoscope.analysis._significance import DependentCorrelationTest, PermutationResult
from convoscope.analysis._summary import attempt
from convoscope.analysis._system_level import (
    MIN_SYSTEMS,
    RESAMPLE_NAMES,
    PairwiseAccuracy,
    RankInterval,
    Resample,
    pairwise_accuracy,
    rank_intervals,
    system_level_ci,
    system_paired_bootstrap,
    system_permutation_test,
    system_williams_test,
)
from convoscope.analysis._system_significance import SystemSignificance, system_significance
from convoscope.analysis._validate import missing_mask


@dataclass(frozen=True)
class SystemRow:
    """A judge's system-level correlation with the human mean, per criterion. ``resample`` names
    how the intervals were made; ``outliers`` are systems off the judge–people trend (Bonferroni
    outlier test, :mod:`convoscope.analysis._influence`), with the Pearson r computed without
    them; ``weakest`` the leave-one-system-out influence."""

    criterion: str
    judge: str
    n_systems: int
    pearson: BootstrapResult | None
    spearman: BootstrapResult | None
    notes: tuple[str, ...] = ()
    resample: str = RESAMPLE_NAMES["both"]
    pairwise_accuracy: PairwiseAccuracy | None = None
    outliers: tuple[str, ...] = ()
    pearson_without_outliers: float | None = None
    weakest: tuple[str, float] | None = None  # the system whose removal lowers r most, and r without it

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SystemComparison:
    """Judge A against judge B at system level (Pearson r of system means with people's)."""

    criterion: str
    judge_a: str
    judge_b: str
    n_systems: int
    williams: DependentCorrelationTest | None
    bootstrap: BootstrapResult | None  # r(A) - r(B), systems and items resampled
    permutation: PermutationResult | None
    notes: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SystemRanking:
    """People's ranking of the systems on one criterion: ranks with intervals, and the tests
    between systems with their clusters."""

    criterion: str
    ranks: tuple[RankInterval, ...]
    significance: SystemSignificance | None
    notes: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class _Prepared:
    criterion: str
    judges: Any
    human_mean: np.ndarray | None
    systems: np.ndarray
    inputs: np.ndarray | None


def _prepared(judge_ratings: Iterable[Any], human_ratings: Iterable[Any] | None,
              criteria: Iterable[str] | None, inputs: Mapping[str, str] | None) -> list[_Prepared]:
    judge_ratings, human_ratings = list(judge_ratings), None if human_ratings is None else list(human_ratings)
    system_of: dict[str, str] = {}
    for rating in [*judge_ratings, *(human_ratings or [])]:
        if getattr(rating, "system", None) and str(rating.item_id) not in system_of:
            system_of[str(rating.item_id)] = str(rating.system)
    found = []
    for criterion, judges, humans in _matrices(judge_ratings, human_ratings, criteria):
        systems = np.array([system_of.get(item) for item in humans.items], dtype=object)
        columns = None if inputs is None else np.array([inputs.get(i) for i in humans.items], dtype=object)
        found.append(_Prepared(criterion, judges, mean_pool(humans.values) if humans.numeric else None,
                               systems, columns))
    return found


def _noted(notes: list[str], label: str, compute: Any) -> Any:
    """:func:`attempt`, with resamples on which the statistic was undefined noted, not warned."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuntimeWarning)
        found = attempt(notes, label, compute)
    notes.extend(f"{label}: {warning.message}" for warning in caught
                 if issubclass(warning.category, RuntimeWarning))
    return found


def _few_systems(n: int) -> str | None:
    if n >= MIN_SYSTEMS:
        return None
    return (f"only {n} systems: below {MIN_SYSTEMS} no system-level correlation can reach p < .05 "
            "(Spearman, two-sided); read the numbers as descriptive")


def system_level(judge_ratings: Iterable[Any], human_ratings: Iterable[Any] | None = None, *,
                 criteria: Iterable[str] | None = None, n_resamples: int = 1000, seed: int | None = 0,
                 resample: Resample = "both", inputs: Mapping[str, str] | None = None) -> list[SystemRow]:
    """System-level Pearson and Spearman of every judge with the human mean, with intervals from
    resampling systems and items (``resample``; ``inputs`` maps item ids to shared inputs), the
    pairwise ranking accuracy and outlier systems. Items take their system from any rating that
    names one."""
    rows = []
    for part in _prepared(judge_ratings, human_ratings, criteria, inputs):
        for judge in part.judges.raters:
            rows.append(_system_row(part, judge, n_resamples, seed, resample))
    return rows


def _system_row(part: _Prepared, judge: str, n_resamples: int, seed: int | None,
                resample: Resample) -> SystemRow:
    notes: list[str] = []
    scores = part.judges.row(judge)
    human = part.human_mean
    usable = human is not None and scores.dtype != object
    if not usable:
        notes.append("system level: needs numeric scores from judge and humans")
    results: dict[str, BootstrapResult | None] = {"pearson": None, "spearman": None}
    for method in results if usable else ():
        results[method] = _noted(notes, f"system {method}", lambda m=method: system_level_ci(
            scores, human, part.systems, method=m, resample=resample, inputs=part.inputs,
            n_resamples=n_resamples, seed=seed))
    scored = ~missing_mask(scores) & ~missing_mask(part.systems)
    n = len(set(part.systems[scored].tolist()))
    if (warning := _few_systems(n)) is not None:
        notes.append(warning)
    accuracy = attempt(notes, "pairwise accuracy", lambda: pairwise_accuracy(human, scores, part.systems)) \
        if usable else None
    screen = _outliers(scores, human, part.systems, notes) if usable else None
    return SystemRow(part.criterion, judge, n, results["pearson"], results["spearman"], tuple(notes),
                     RESAMPLE_NAMES[resample], accuracy, screen.outliers if screen else (),
                     screen.pearson_without_outliers if screen else None, screen.weakest if screen else None)


def _outliers(scores: np.ndarray, human: Any, systems: np.ndarray,
              notes: list[str]) -> Influence:
    from convoscope.analysis._influence import influence

    keep = ~(np.isnan(scores) | np.isnan(human) | missing_mask(systems))
    names = sorted(set(systems[keep].tolist()))
    judge_means = {n: float(scores[keep][systems[keep] == n].mean()) for n in names}
    human_means = {n: float(human[keep][systems[keep] == n].mean()) for n in names}
    found = influence(judge_means, human_means)
    if found.outliers:
        notes.append(f"outlier systems (off the judge–people trend, Bonferroni outlier test at .05): "
                     f"{', '.join(found.outliers)}")
    return found


def system_comparisons(judge_ratings: Iterable[Any], human_ratings: Iterable[Any] | None = None, *,
                       criteria: Iterable[str] | None = None, n_resamples: int = 1000,
                       permutations: int = 1000, seed: int | None = 0, resample: Resample = "both",
                       inputs: Mapping[str, str] | None = None) -> list[SystemComparison]:
    """Every pair of judges at system level: Williams' t on system means, a paired bootstrap of
    r(A) - r(B) and a permutation test (Pearson r; systems and items resampled / permuted)."""
    found = []
    for part in _prepared(judge_ratings, human_ratings, criteria, inputs):
        if part.human_mean is None or not part.judges.numeric:
            continue
        for first, second in combinations(part.judges.raters, 2):
            found.append(_comparison(part, first, second, n_resamples, permutations, seed, resample))
    return found


def _comparison(part: _Prepared, first: str, second: str, n_resamples: int, permutations: int,
                seed: int | None, resample: Resample) -> SystemComparison:
    notes: list[str] = []
    a, b, human = part.judges.row(first), part.judges.row(second), part.human_mean
    williams = attempt(notes, "system Williams", lambda: system_williams_test(human, a, b, part.systems))
    boot = _noted(notes, "system bootstrap", lambda: system_paired_bootstrap(
        human, a, b, part.systems, resample=resample, inputs=part.inputs, n_resamples=n_resamples, seed=seed))
    perm = attempt(notes, "system permutation", lambda: system_permutation_test(
        human, a, b, part.systems, permute=resample, inputs=part.inputs, n_resamples=permutations,
        seed=seed)) if permutations else None
    n = williams.n if williams else 0
    if williams and (warning := _few_systems(n)) is not None:
        notes.append(warning)
    return SystemComparison(part.criterion, first, second, n, williams, boot, perm, tuple(notes))


def system_rankings(human_ratings: Iterable[Any], *, criteria: Iterable[str] | None = None,
                    n_resamples: int = 1000, seed: int | None = 0, alpha: float = 0.05,
                    correction: Correction = "holm",
                    inputs: Mapping[str, str] | None = None) -> list[SystemRanking]:
    """People's system ranking per criterion, from the mean human score of each item: ranks
    with intervals (items resampled) and one-sided tests between systems (Mann–Whitney U, or
    Wilcoxon signed-rank on shared inputs) with significance clusters."""
    from convoscope.analysis._tables import rater_matrices

    wanted = None if criteria is None else set(criteria)
    ratings = [r for r in human_ratings if wanted is None or str(r.criterion) in wanted]
    system_of = {str(r.item_id): str(r.system) for r in ratings if getattr(r, "system", None)}
    found = []
    for (criterion, _), matrix in sorted(rater_matrices(ratings).items()):
        if matrix.numeric:
            systems = np.array([system_of.get(item) for item in matrix.items], dtype=object)
            columns = None if inputs is None else np.array([inputs.get(i) for i in matrix.items],
                                                            dtype=object)
            found.append(_ranking(str(criterion), mean_pool(matrix.values), systems, columns,
                                  dict(n_resamples=n_resamples, seed=seed), alpha, correction))
    return found


def _ranking(criterion: str, scores: np.ndarray, systems: np.ndarray, columns: np.ndarray | None,
             resampling: dict[str, Any], alpha: float, correction: Correction) -> SystemRanking:
    notes: list[str] = []
    ranks = attempt(notes, "rank intervals", lambda: rank_intervals(scores, systems, inputs=columns,
                                                                    **resampling)) or ()
    tests = attempt(notes, "system tests", lambda: system_significance(
        scores, systems, inputs=columns, alpha=alpha, correction=correction))
    return SystemRanking(criterion, tuple(ranks), tests, tuple(notes))
