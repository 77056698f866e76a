"""System-level meta-evaluation: does a judge rank *systems* as people do, and how sure are we?

Items are laid out as a systems x columns matrix. When the systems answered the same inputs
(``inputs``: e.g. the context each response continues), columns are inputs, shared by all
systems; otherwise each system's items fill its own row and columns mean nothing across rows.
Resampling follows Deutsch, Dror and Roth (2021, "A Statistical Analysis of Summarization
Evaluation Metrics using Resampling Methods"):

- ``systems``: draw systems with replacement (Boot-Systems): how the correlation would vary
  with another set of systems;
- ``items``: draw items (shared inputs together, Boot-Inputs; else items within each system):
  how it would vary with other items for the same systems — narrow, and only about these systems;
- ``both`` (default): systems, then items (Boot-Both), the interval that generalises to both.

The permutation test of two judges swaps their (standardised) scores per system, per input or
both (Perm-Systems / Perm-Inputs / Perm-Both). Tests pin the intervals and p-values to
``nlpstats`` (Deutsch's library) within Monte-Carlo error, and the system-level Williams test to
``nlpstats.correlations.williams_test``.

With fewer than :data:`MIN_SYSTEMS` systems no system-level correlation can reach p < .05 with
Spearman's rho (n = 4: the smallest two-sided p is 2/24), so results say so.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from convoscope.analysis._bootstrap import BootstrapResult, _interval
from convoscope.analysis._correlation import CORRELATIONS, Method
from convoscope.analysis._significance import DependentCorrelationTest, PermutationResult, williams_t
from convoscope.analysis._validate import as_array, as_numbers, check_same_length, missing_mask

Resample = Literal["both", "systems", "items"]
RESAMPLES = ("both", "systems", "items")
RESAMPLE_NAMES = {"both": "systems and items resampled (Boot-Both)",
                  "systems": "systems resampled (Boot-Systems)",
                  "items": "items resampled within systems (Boot-Inputs)"}
MIN_SYSTEMS = 5
_CHUNK = 256


@dataclass(frozen=True)
class Layout:
    """Scores as systems x columns matrices (NaN where empty); ``paired``: columns are inputs."""

    systems: tuple[str, ...]
    matrices: tuple[np.ndarray, ...]
    paired: bool


def layout(*scores: Any, systems: Any, inputs: Any = None, name: str = "system level") -> Layout:
    """Lay out one or more score vectors (one value per item) by system (and input). Items with
    no system, or missing in any score vector, are left out."""
    arrays = [as_numbers(s, name=f"{name}: scores") for s in scores]
    labels = as_array(systems, name=f"{name}: systems", ndim=1)
    check_same_length(*arrays, labels, name=name)
    keep = ~missing_mask(labels)
    for array in arrays:
        keep &= ~np.isnan(array)
    names, row = np.unique(labels[keep].astype(str), return_inverse=True)
    if len(names) < 3:
        raise ValueError(f"{name}: needs at least 3 systems with scored items, got {len(names)}")
    if inputs is not None:
        columns = as_array(inputs, name=f"{name}: inputs", ndim=1)
        check_same_length(columns, labels, name=name)
        _, column = np.unique(columns[keep].astype(str), return_inverse=True)
    else:
        column = np.zeros(len(row), dtype=np.int64)
        for system in range(len(names)):  # the k-th item of each system in column k
            where = np.flatnonzero(row == system)
            column[where] = np.arange(len(where))
    width = int(column.max()) + 1
    if inputs is not None and len(set(zip(row.tolist(), column.tolist(), strict=True))) < len(row):
        raise ValueError(f"{name}: a system has two items for the same input")
    matrices = []
    for array in arrays:
        matrix = np.full((len(names), width), np.nan)
        matrix[row, column] = array[keep]
        matrices.append(matrix)
    return Layout(tuple(names.tolist()), tuple(matrices), inputs is not None)


def _means(data: Layout, method: str, rng: np.random.Generator, count: int) -> list[np.ndarray]:
    """``count`` resampled system means of every matrix: (count x systems) each."""
    if method not in RESAMPLES:
        raise ValueError(f"resample must be one of {RESAMPLES}, got {method!r}")
    matrices, m = data.matrices, len(data.systems)
    present = ~np.isnan(matrices[0])
    if method == "systems":
        means = [np.broadcast_to(np.nanmean(x, axis=1), (count, m)) for x in matrices]
    elif data.paired:
        columns = rng.integers(0, present.shape[1], (count, present.shape[1]))
        means = [np.nanmean(x[:, columns], axis=2).T for x in matrices]  # systems x count -> count x systems
    else:
        means = [np.empty((count, m)) for _ in matrices]
        for system in range(m):
            where = np.flatnonzero(present[system])
            drawn = where[rng.integers(0, len(where), (count, len(where)))]
            for out, x in zip(means, matrices, strict=True):
                out[:, system] = x[system, drawn].mean(axis=1)
    if method in ("both", "systems"):
        rows = rng.integers(0, m, (count, m))
        means = [np.take_along_axis(np.asarray(x), rows, axis=1) for x in means]
    return [np.asarray(x) for x in means]


def _replicates(data: Layout, method: str, statistic: Any, n_resamples: int,
                seed: int | None) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = []
    for start in range(0, n_resamples, _CHUNK):
        with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)  # an empty input column: mean of nothing
            out.append(statistic(*_means(data, method, rng, min(_CHUNK, n_resamples - start))))
    return np.concatenate(out)


def _system_r(method: str) -> Any:
    from convoscope.analysis._system import _row_correlations

    return lambda x, y: _row_correlations(x, y, method)


def system_level_ci(x: Any, y: Any, systems: Any, *, method: Method = "pearson", resample: Resample = "both",
                    inputs: Any = None, n_resamples: int = 1000, confidence: float = 0.95,
                    seed: int | None = 0) -> BootstrapResult:
    """System-level correlation of ``x`` and ``y`` (means per system) with a percentile
    interval from resampling ``systems``, ``items`` or ``both`` (see the module docstring).
    ``n_items`` in the result is the number of systems."""
    data = layout(x, y, systems=systems, inputs=inputs, name="system_level_ci")
    statistic = _system_r(method)
    estimate = float(CORRELATIONS[method](*_observed(data)))
    replicates = _replicates(data, resample, statistic, n_resamples, seed)
    return _interval(estimate, replicates, confidence, n_items=len(data.systems), name="system_level_ci")


def _observed(data: Layout) -> list[np.ndarray]:
    return [np.nanmean(matrix, axis=1) for matrix in data.matrices]


def system_paired_bootstrap(y_true: Any, y_pred_a: Any, y_pred_b: Any, systems: Any, *,
                            method: Method = "pearson", resample: Resample = "both", inputs: Any = None,
                            n_resamples: int = 1000, confidence: float = 0.95,
                            seed: int | None = 0) -> BootstrapResult:
    """Interval of r(human, A) − r(human, B) at system level, both on the same resamples."""
    data = layout(y_true, y_pred_a, y_pred_b, systems=systems, inputs=inputs, name="system_paired_bootstrap")
    r = _system_r(method)
    human, a, b = _observed(data)
    estimate = float(CORRELATIONS[method](a, human)) - float(CORRELATIONS[method](b, human))
    replicates = _replicates(data, resample, lambda h, x, z: r(x, h) - r(z, h), n_resamples, seed)
    return _interval(estimate, replicates, confidence, n_items=len(data.systems),
                     name="system_paired_bootstrap")


def system_williams_test(y_true: Any, y_pred_a: Any, y_pred_b: Any, systems: Any, *,
                         method: Method = "pearson") -> DependentCorrelationTest:
    """Williams' t on the system means (n = the number of systems): is judge A's system-level
    correlation with people different from judge B's? Two-sided."""
    from convoscope.analysis._significance import _three

    human, a, b = _observed(layout(y_true, y_pred_a, y_pred_b, systems=systems, name="system_williams_test"))
    if method == "kendall":
        raise ValueError("system_williams_test: method must be 'pearson' or 'spearman'")
    r_a, r_b, r_ab, n = _three(human, a, b, method, "system_williams_test")
    t, pvalue = williams_t(r_a, r_b, r_ab, n)
    return DependentCorrelationTest(r_a, r_b, r_ab, t, pvalue, n)


def system_permutation_test(y_true: Any, y_pred_a: Any, y_pred_b: Any, systems: Any, *,
                            method: Method = "pearson", permute: Resample = "both", inputs: Any = None,
                            n_resamples: int = 1000, seed: int | None = 0) -> PermutationResult:
    """Do judges A and B correlate differently with people at system level? Each judge's scores
    are standardised, then swapped between the judges per system (``systems``), per item or
    shared input (``items``) or both; two-sided p = (1 + #|null| >= |observed|) / (1 + resamples)."""
    data = layout(y_true, y_pred_a, y_pred_b, systems=systems, inputs=inputs, name="system_permutation_test")
    if permute not in RESAMPLES:
        raise ValueError(f"permute must be one of {RESAMPLES}, got {permute!r}")
    human, a, b = (_standardised(matrix) for matrix in data.matrices)
    statistic = CORRELATIONS[method]
    observed = float(statistic(np.nanmean(a, axis=1), np.nanmean(human, axis=1))
                     - statistic(np.nanmean(b, axis=1), np.nanmean(human, axis=1)))
    rng = np.random.default_rng(seed)
    r = _system_r(method)
    human_means = np.nanmean(human, axis=1)
    exceed = 0
    for start in range(0, n_resamples, _CHUNK):
        count = min(_CHUNK, n_resamples - start)
        swap = _swaps(rng, count, a.shape, permute, data.paired)
        first = np.nanmean(np.where(swap, b, a), axis=2)
        second = np.nanmean(np.where(swap, a, b), axis=2)
        target = np.broadcast_to(human_means, first.shape)
        null = r(first, target) - r(second, target)
        exceed += int(np.sum(np.abs(null) >= abs(observed) - 1e-12))
    return PermutationResult(observed, (exceed + 1) / (n_resamples + 1), n_resamples)


def _standardised(matrix: np.ndarray) -> np.ndarray:
    spread = np.nanstd(matrix)
    return (matrix - np.nanmean(matrix)) / spread if spread > 0 else matrix - np.nanmean(matrix)


def _swaps(rng: np.random.Generator, count: int, shape: tuple[int, ...], permute: str,
           paired: bool) -> np.ndarray:
    """count x systems x columns: True where the two judges' scores trade places."""
    m, n = shape
    swap = np.zeros((count, m, n), dtype=bool)
    if permute in ("systems", "both"):
        swap ^= rng.random((count, m, 1)) < 0.5
    if permute in ("items", "both"):
        cells = (count, 1, n) if paired else (count, m, n)
        swap ^= rng.random(cells) < 0.5
    return swap


@dataclass(frozen=True)
class PairwiseAccuracy:
    """Share of system pairs the judge orders as people do (Kocmi et al., 2021). Pairs people
    tie are left out; a judge tie counts as a wrong order."""

    accuracy: float
    agreeing: int
    n_pairs: int
    tied_by_people: int


def pairwise_accuracy(y_true: Any, y_pred: Any, systems: Any) -> PairwiseAccuracy:
    """Pairwise system-ranking accuracy of ``y_pred`` against ``y_true`` (system means).

    >>> pairwise_accuracy([1, 2, 3, 4], [1, 3, 2, 4], ["a", "b", "c", "d"]).accuracy
    0.8333333333333334
    """
    human, judge = _observed(layout(y_true, y_pred, systems=systems, name="pairwise_accuracy"))
    first, second = np.triu_indices(len(human), k=1)
    people = np.sign(human[first] - human[second])
    machine = np.sign(judge[first] - judge[second])
    counted = people != 0
    agreeing = int(np.sum((people == machine) & counted))
    n_pairs = int(counted.sum())
    if n_pairs == 0:
        raise ValueError("pairwise_accuracy: people tie every pair of systems")
    return PairwiseAccuracy(agreeing / n_pairs, agreeing, n_pairs, int((~counted).sum()))


def outlier_systems(means: dict[str, float], *, threshold: float = 2.5) -> tuple[str, ...]:
    """Systems whose mean lies more than ``threshold`` robust standard deviations from the
    median (median absolute deviation x 1.4826), the screen Mathur, Baldwin and Cohn (2020) use
    before system-level correlations: one outlier can make a correlation look strong.

    >>> outlier_systems({"a": 1.0, "b": 1.1, "c": 0.9, "d": 1.05, "e": 5.0})
    ('e',)
    """
    names = list(means)
    values = np.array([means[name] for name in names], dtype=float)
    centre = np.median(values)
    spread = 1.4826 * np.median(np.abs(values - centre))
    if spread == 0:
        return ()
    return tuple(name for name, value in zip(names, values, strict=True)
                 if abs(value - centre) / spread > threshold)


@dataclass(frozen=True)
class RankInterval:
    """A system's mean, its rank (1 = best) and the percentile interval of its rank."""

    system: str
    mean: float
    rank: float
    low: float
    high: float


def rank_intervals(scores: Any, systems: Any, *, higher_is_better: bool = True, inputs: Any = None,
                   n_resamples: int = 1000, confidence: float = 0.95,
                   seed: int | None = 0) -> tuple[RankInterval, ...]:
    """Each system's rank by mean score with an interval from resampling items (shared inputs
    together), best first. Ties share the average rank."""
    from scipy import stats

    data = layout(scores, systems=systems, inputs=inputs, name="rank_intervals")
    sign = -1.0 if higher_is_better else 1.0
    means = _observed(data)[0]
    rng = np.random.default_rng(seed)
    ranks = []
    for start in range(0, n_resamples, _CHUNK):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            drawn = _means(data, "items", rng, min(_CHUNK, n_resamples - start))[0]
        ranks.append(stats.rankdata(sign * drawn, axis=1))
    tail = (1 - confidence) / 2
    low, high = np.quantile(np.vstack(ranks), [tail, 1 - tail], axis=0)
    observed = stats.rankdata(sign * means)
    rows = [RankInterval(name, float(means[i]), float(observed[i]), float(low[i]), float(high[i]))
            for i, name in enumerate(data.systems)]
    return tuple(sorted(rows, key=lambda row: (row.rank, row.system)))
