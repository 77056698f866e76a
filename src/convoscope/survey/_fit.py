"""Ridge weights and an accept threshold fitted on expert-labelled answers (seed 000, section 5.2).

Ridge is a few lines of linear algebra, so it lives here in numpy rather than pulling
scikit-learn into the runtime; the tests check it against scikit-learn's ``Ridge``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from convoscope.analysis import equal_error_rate, roc_auc, roc_curve, threshold_at

DIMENSIONS: tuple[str, ...] = ("effort", "relevance", "completeness")
DIMENSION_MAXIMA: dict[str, int] = {"effort": 7, "relevance": 4, "completeness": 4}
DEFAULT_ALPHAS: tuple[float, ...] = (0.001, 0.01, 0.1, 1.0, 10.0, 100.0)
LABELS: tuple[str, ...] = ("accept", "hold", "reject")


def ridge_fit(features: Any, target: Any, *, alpha: float) -> tuple[np.ndarray, float]:
    """Weights and intercept minimising ||y - Xw - b||^2 + alpha ||w||^2 (intercept not penalised).

    Same objective as ``sklearn.linear_model.Ridge(alpha, fit_intercept=True)``.
    """
    x, y = _matrix(features, target, "ridge_fit")
    if alpha < 0:
        raise ValueError(f"ridge_fit: alpha must be >= 0, got {alpha!r}")
    x_mean, y_mean = x.mean(axis=0), y.mean()
    centred = x - x_mean
    gram = centred.T @ centred + alpha * np.eye(x.shape[1])
    # lstsq rather than solve: alpha = 0 with collinear columns must not raise.
    weights = np.linalg.lstsq(gram, centred.T @ (y - y_mean), rcond=None)[0]
    return weights, float(y_mean - x_mean @ weights)


def choose_alpha(features: Any, target: Any, *, alphas: Sequence[float] = DEFAULT_ALPHAS,
                 folds: int = 5, seed: int = 0) -> float:
    """The alpha with the lowest mean squared error under k-fold cross-validation.

    Folds are a seeded shuffle so the choice is reproducible; ties go to the larger alpha
    (the simpler model).
    """
    x, y = _matrix(features, target, "choose_alpha")
    folds = min(folds, len(y))
    if folds < 2:
        raise ValueError("choose_alpha: need at least 2 labelled answers to cross-validate")
    order = np.random.default_rng(seed).permutation(len(y))
    parts = np.array_split(order, folds)
    best_alpha, best_error = float(alphas[0]), np.inf
    for alpha in sorted(alphas):
        errors = []
        for held_out in parts:
            train = np.setdiff1d(order, held_out)
            weights, intercept = ridge_fit(x[train], y[train], alpha=alpha)
            errors.append(np.mean((x[held_out] @ weights + intercept - y[held_out]) ** 2))
        if np.mean(errors) <= best_error:
            best_alpha, best_error = float(alpha), float(np.mean(errors))
    return best_alpha


def _matrix(features: Any, target: Any, name: str) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(features, dtype=float)
    y = np.asarray(target, dtype=float)
    if x.ndim != 2 or y.ndim != 1 or len(x) != len(y):
        raise ValueError(f"{name}: features must be 2-D with one row per target value")
    if len(y) == 0 or not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError(f"{name}: needs at least one row and no missing values")
    return x, y


class FittedModel(BaseModel):
    """What ``survey fit`` learned: ridge weights over normalised dimension scores (0-1) and the
    accept threshold on the resulting overall score. Saved as JSON; ``survey score --model``
    applies it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: int = 1
    dimensions: tuple[str, ...] = DIMENSIONS
    weights: tuple[float, ...]
    intercept: float
    alpha: float = Field(description="Ridge penalty chosen by cross-validation.")
    threshold: float = Field(description="Accept when the fitted overall score is at or above it.")
    threshold_rule: str = Field(description="'eer' or 'fpr<=X': how the threshold was chosen.")
    hold_band: float = Field(default=0.05, description="Scores within this of the threshold: hold.")
    auc: float | None = None
    equal_error_rate: float | None = None
    roc_fpr: tuple[float, ...] = ()
    roc_tpr: tuple[float, ...] = ()
    roc_thresholds: tuple[float, ...] = ()
    labelled: int = 0

    def predict(self, normalised: Sequence[float]) -> float:
        """Overall score for one answer's normalised dimension scores (in ``dimensions`` order)."""
        return float(np.dot(self.weights, normalised) + self.intercept)


def choose_threshold(accepted: Any, scores: Any, *,
                     target_fpr: float | None = None) -> tuple[float, str]:
    """The accept threshold on the ROC curve: at the equal-error rate, or the lowest threshold
    whose false-accept rate stays within ``target_fpr``."""
    if target_fpr is None:
        return float(equal_error_rate(accepted, scores).threshold), "eer"
    return float(threshold_at(accepted, scores, fpr=target_fpr).threshold), f"fpr<={target_fpr:g}"


def fit_model(normalised: Any, labels: Sequence[str], *, alphas: Sequence[float] = DEFAULT_ALPHAS,
              target_fpr: float | None = None, hold_band: float = 0.05,
              target: Literal["accept", "grade"] = "grade") -> FittedModel:
    """Fit ridge on expert labels and pick the threshold. Hold counts as reject (as in the seed).

    ``target="grade"`` regresses on accept=1, hold=0.5, reject=0 so the ordering of the three
    labels informs the weights; the ROC always uses accept vs the rest.
    """
    unknown = sorted({label for label in labels if label not in LABELS})
    if unknown:
        raise ValueError(f"labels must be accept, hold or reject; got {', '.join(unknown)}")
    accepted = np.array([label == "accept" for label in labels])
    if accepted.all() or not accepted.any():
        raise ValueError("fit needs both accepted and not-accepted answers among the labels")
    grade = {"accept": 1.0, "hold": 0.5 if target == "grade" else 0.0, "reject": 0.0}
    y = np.array([grade[label] for label in labels])
    alpha = choose_alpha(normalised, y, alphas=alphas)
    weights, intercept = ridge_fit(normalised, y, alpha=alpha)
    scores = np.asarray(normalised, dtype=float) @ weights + intercept
    threshold, rule = choose_threshold(accepted, scores, target_fpr=target_fpr)
    fpr, tpr, thresholds = roc_curve(accepted, scores)
    return FittedModel(
        weights=tuple(float(w) for w in weights), intercept=intercept, alpha=alpha,
        threshold=threshold, threshold_rule=rule, hold_band=hold_band,
        auc=roc_auc(accepted, scores), equal_error_rate=float(equal_error_rate(accepted, scores).rate),
        roc_fpr=tuple(map(float, fpr)), roc_tpr=tuple(map(float, tpr)),
        roc_thresholds=tuple(float(t) if np.isfinite(t) else 1e9 for t in thresholds),
        labelled=len(labels),
    )


def save_model(model: FittedModel, path: str | Path) -> None:
    Path(path).write_text(model.model_dump_json(indent=2) + "\n", encoding="utf-8")


def load_model(path: str | Path) -> FittedModel:
    """Read a fitted model; a missing or malformed file is a ValueError naming it."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: fitted model not found")
    try:
        return FittedModel.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (json.JSONDecodeError, ValueError) as error:
        raise ValueError(f"{path}: not a fitted survey model ({str(error).splitlines()[0]})") from None
