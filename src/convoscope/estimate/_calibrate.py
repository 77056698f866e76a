"""Calibrate a judge on people: a monotone map from the judge's score to the human scale.

Isotonic regression (scipy's pool-adjacent-violators) fitted on the items both have rated; the
map is a step function between knots, interpolated linearly and held flat beyond the ends, so
it never reverses the judge's order. Agreement before and after is measured out of fold, so a
calibration is never credited with what it memorised.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import isotonic_regression

from convoscope.errors import ConfigError


@dataclass(frozen=True)
class Calibration:
    """A fitted monotone map. ``apply`` takes judge scores and returns human-scale values.

    ``name`` identifies it in reports (e.g. ``isotonic:<judge>→<criterion>``); ``knots_x`` are
    judge scores, ``knots_y`` the fitted human-scale values at them. ``fitted_on`` lists the
    items whose human labels it learnt from, so :func:`convoscope.estimate.estimate` can refuse
    to use those labels again (None: not recorded, and then not usable for an estimate)."""

    name: str
    knots_x: tuple[float, ...]
    knots_y: tuple[float, ...]
    n: int
    scale: tuple[float, float] | None = None
    fitted_on: tuple[str, ...] | None = None

    def apply(self, scores: Any) -> np.ndarray:
        values = np.interp(np.asarray(scores, dtype=float), self.knots_x, self.knots_y)
        if self.scale is not None:
            values = np.clip(values, *self.scale)
        return values

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "knots_x": list(self.knots_x), "knots_y": list(self.knots_y),
                "n": self.n, "scale": list(self.scale) if self.scale else None,
                "fitted_on": None if self.fitted_on is None else list(self.fitted_on)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Calibration:
        scale, fitted_on = data.get("scale"), data.get("fitted_on")
        return cls(name=data["name"], knots_x=tuple(data["knots_x"]), knots_y=tuple(data["knots_y"]),
                   n=int(data["n"]), scale=tuple(scale) if scale else None,
                   fitted_on=None if fitted_on is None else tuple(map(str, fitted_on)))


def fit_isotonic(judge_scores: Any, human_scores: Any, *, name: str = "isotonic",
                 scale: tuple[float, float] | None = None, item_ids: Any = None) -> Calibration:
    """Fit a non-decreasing map from judge scores to human scores. ``item_ids`` (one per pair)
    are recorded as ``fitted_on``.

    Example: ``fit_isotonic([1, 2, 3, 4], [1, 1, 3, 4]).apply([2.5])``."""
    x = np.asarray(judge_scores, dtype=float).reshape(-1)
    y = np.asarray(human_scores, dtype=float).reshape(-1)
    if len(x) != len(y):
        raise ConfigError(f"{len(x)} judge scores but {len(y)} human scores: they must pair up")
    ids = None if item_ids is None else [str(i) for i in item_ids]
    if ids is not None and len(ids) != len(x):
        raise ConfigError(f"{len(ids)} item ids for {len(x)} score pairs: they must pair up")
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    if len(x) < 2:
        raise ConfigError("a calibration needs at least 2 items rated by both the judge and people")
    # Pool items with the same judge score first (weights = counts), then fit in score order.
    knots, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    means = np.bincount(inverse, weights=y) / counts
    fitted = isotonic_regression(means, weights=counts.astype(float), increasing=True).x
    fitted_on = None if ids is None else tuple(i for i, kept in zip(ids, keep, strict=True) if kept)
    return Calibration(name=name, knots_x=tuple(map(float, knots)), knots_y=tuple(map(float, fitted)),
                       n=int(len(x)), scale=scale, fitted_on=fitted_on)


@dataclass(frozen=True)
class AgreementScores:
    spearman: float | None
    qwk: float | None
    accuracy: float | None


@dataclass(frozen=True)
class CalibrationReport:
    """Out-of-fold agreement with people before and after calibration, overall and per group."""

    before: AgreementScores
    after: AgreementScores
    n: int
    folds: int
    groups: dict[str, tuple[AgreementScores, AgreementScores]] = field(default_factory=dict)


def _agreement(predicted: np.ndarray, human: np.ndarray, levels: np.ndarray | None) -> AgreementScores:
    from convoscope.analysis import cohen_kappa, spearman

    def safe(function: Any) -> float | None:
        try:
            return float(function())
        except ValueError:
            return None  # constant input: undefined, reported as missing

    if levels is None:
        return AgreementScores(safe(lambda: spearman(predicted, human)), None, None)
    def nearest(values: np.ndarray) -> np.ndarray:
        return levels[np.abs(values[:, None] - levels[None, :]).argmin(axis=1)]

    # People's means (several raters per item) fall between levels: round both sides.
    rounded, human_levels = nearest(predicted), nearest(human)
    return AgreementScores(
        spearman=safe(lambda: spearman(predicted, human)),
        qwk=safe(lambda: cohen_kappa(rounded, human_levels, weights="quadratic", labels=list(levels))),
        accuracy=float(np.mean(rounded == human_levels)),
    )


def cross_validate(judge_scores: Any, human_scores: Any, *, folds: int = 5, seed: int = 0,
                   levels: Any = None, groups: Any = None) -> CalibrationReport:
    """Agreement of the raw judge score and of the calibrated score with people, out of fold.

    ``levels`` (e.g. ``range(0, 5)``) are the human scale's values: with them the judge's scores
    and the people's means are rounded to the nearest level for quadratic-weighted kappa and
    accuracy. ``groups`` (e.g.
    the language of each item) adds the same figures per group."""
    x = np.asarray(judge_scores, dtype=float).reshape(-1)
    y = np.asarray(human_scores, dtype=float).reshape(-1)
    if len(x) != len(y) or len(x) < folds:
        raise ConfigError(f"cross-validation needs paired scores and at least {folds} items")
    order = np.random.default_rng(seed).permutation(len(x))
    calibrated = np.empty(len(x))
    for fold in np.array_split(order, folds):
        train = np.setdiff1d(order, fold)
        calibrated[fold] = fit_isotonic(x[train], y[train]).apply(x[fold])
    level_array = None if levels is None else np.asarray(list(levels), dtype=float)
    report_groups: dict[str, tuple[AgreementScores, AgreementScores]] = {}
    if groups is not None:
        labels = np.asarray(groups, dtype=object)
        for group in sorted(set(labels.tolist()), key=str):
            mask = labels == group
            report_groups[str(group)] = (_agreement(x[mask], y[mask], level_array),
                                         _agreement(calibrated[mask], y[mask], level_array))
    return CalibrationReport(before=_agreement(x, y, level_array),
                             after=_agreement(calibrated, y, level_array),
                             n=len(x), folds=folds, groups=report_groups)


def apply_calibration(verdicts: Any, calibration: Calibration, *, judge: str,
                      levels: Any = None, score: str = "expected_value") -> list[Any]:
    """The judge's verdicts mapped through ``calibration``, as new verdicts of a rater named
    ``<judge>|calibrated:<calibration name>`` so every table and report shows which map made
    the value. ``expected_value`` holds the calibrated score; ``value`` the nearest of
    ``levels`` (or the rounded score). Unscored verdicts stay unscored."""
    level_array = None if levels is None else np.asarray(list(levels), dtype=float)
    rater = f"{judge}|calibrated:{calibration.name}"
    out = []
    for verdict in verdicts:
        if verdict.rater != judge:
            continue
        raw = verdict.expected_value if score == "expected_value" and verdict.expected_value is not None \
            else verdict.value
        try:
            number = float(raw) if raw is not None else None
        except (TypeError, ValueError):
            number = None
        if number is None:
            out.append(verdict.model_copy(update={"rater": rater}))
            continue
        mapped = float(calibration.apply([number])[0])
        nearest = (level_array[np.abs(level_array - mapped).argmin()] if level_array is not None
                   else round(mapped))
        out.append(verdict.model_copy(update={"rater": rater, "expected_value": mapped,
                                              "value": int(nearest), "distribution": None}))
    return out
