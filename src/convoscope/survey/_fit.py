"""Seed 000's decision rule, fitted on expert-labelled answers (section 5.2).

* The overall score is an aggregate of the three normalised dimension scores: their mean (the
  seed's Sum, rescaled to 0-1; the default), ridge weights fitted to the experts' *overall
  quality* ratings (0-4, or any numeric column), or the LLM synthesis. It is clipped to 0-1.
  Ridge weights may also take judge-free features of the answer (its length, lexical diversity,
  question-answer TF-IDF similarity, the gibberish flag; see ``_features``), weighted as written.
* The accept threshold sits at the equal-error rate of the ROC of that aggregate against the
  experts' acceptance, where "hold" counts as not accepted, as in the seed.
* An optional hold band comes from two more ROC operating points: the lowest score that keeps
  false accepts within ``hold_far`` and the highest that keeps false rejects within
  ``hold_frr``. Both are scores that labelled answers actually reach and each is clamped to the
  EER threshold's side, so neither accept nor reject can become unreachable.
* AUC and EER are reported by stratified k-fold cross-validation (scores predicted for answers
  the weights never saw) beside the in-sample figures.

Ridge is a few lines of linear algebra, so it lives here in numpy rather than pulling
scikit-learn into the runtime; the tests check it against scikit-learn's ``Ridge``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from convoscope.analysis import equal_error_rate, roc_auc, roc_curve, threshold_at
from convoscope.errors import ConfigError

DIMENSIONS: tuple[str, ...] = ("effort", "relevance", "completeness")
DIMENSION_MAXIMA: dict[str, int] = {"effort": 7, "relevance": 4, "completeness": 4}
DEFAULT_ALPHAS: tuple[float, ...] = (0.001, 0.01, 0.1, 1.0, 10.0, 100.0)
LABELS: tuple[str, ...] = ("accept", "hold", "reject")
FitAggregate = Literal["sum", "ridge", "llm"]


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


class RocPoint(BaseModel):
    """One operating point: accept when the overall score is at or above ``threshold``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    threshold: float
    false_accept_rate: float
    false_reject_rate: float


class FeatureSetScore(BaseModel):
    """How well one set of features separates accepted answers (``survey fit`` compares sets)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="'judge', 'length', 'judge+length', ... (see FEATURE_SETS).")
    features: tuple[str, ...]
    aggregate: FitAggregate
    auc_cv: float | None = Field(description="AUC of out-of-fold scores (Sum: in-sample, no fit).")
    eer_cv: float | None
    auc_in_sample: float | None
    eer_in_sample: float | None
    out_of_fold: tuple[float, ...] = Field(
        default=(), description="Each labelled answer's out-of-fold score, in the fit's order "
        "(paired AUC comparisons; empty for the Sum and for models saved before issue 38).")


class FittedModel(BaseModel):
    """What ``survey fit`` learned. Saved as JSON; ``survey score --model`` applies it.

    Accept when the overall score >= ``accept_at``; reject when it is < ``reject_below``; hold in
    between (no band when the two are equal)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: int = 3
    aggregate: FitAggregate = "sum"
    dimensions: tuple[str, ...] = Field(default=DIMENSIONS, description=(
        "The inputs the weights apply to: judge dimensions (normalised 0-1) and, from version 3, "
        "judge-free features of the answer (log_words, distinct_ratio, tfidf, gibberish)."))
    weights: tuple[float, ...] = Field(default=(1 / 3, 1 / 3, 1 / 3),
                                       description="One per input, on the inputs as written.")
    intercept: float = 0.0
    alpha: float | None = Field(default=None, description="Ridge penalty chosen by CV (ridge only).")
    target: str = Field(default="", description="What the ridge weights were fitted to.")
    accept_at: float = Field(description="The EER threshold on the overall score.")
    reject_below: float = Field(description="Lower edge of the hold band (= accept_at: no band).")
    hold_rule: str = Field(default="none", description="How the hold band was chosen.")
    positives: str = Field(default="label == accept", description="Which answers count as accepted.")
    auc_in_sample: float | None = None
    eer_in_sample: float | None = None
    auc_cv: float | None = Field(default=None, description="AUC of out-of-fold scores.")
    eer_cv: float | None = None
    cv_folds: int = 0
    cv_note: str = ""
    out_of_fold: tuple[float, ...] = Field(
        default=(), description="Each labelled answer's out-of-fold score, in the fit's order.")
    out_of_fold_accepted: tuple[bool, ...] = Field(
        default=(), description="Whether each of those answers counts as accepted.")
    roc_fpr: tuple[float, ...] = ()
    roc_tpr: tuple[float, ...] = ()
    roc_thresholds: tuple[float, ...] = ()
    points: dict[str, RocPoint] = Field(default_factory=dict,
                                        description="The chosen operating points by name.")
    labelled: int = 0
    n_accepted: int = Field(default=0, description="Labelled answers that count as accepted.")
    n_not_accepted: int = Field(default=0, description="Labelled answers that do not (hold, reject).")
    notes: tuple[str, ...] = ()
    score_basis: str = Field(default="", description="Dimension scores fitted on: expected / argmax.")
    compared: tuple[FeatureSetScore, ...] = Field(
        default=(), description="Cross-validated AUC / EER of each feature set, on the same labels.")
    fitted_for: str = Field(default="", description="The judge whose scores it was fitted on, when "
                            "it is only meaningful for that judge (the shipped model: embedded).")
    source: str = Field(default="", description="Where the labelled answers came from.")
    prompt_fingerprint: str = Field(default="", description="Hash of the judge prompts the scores "
                                    "came from (the shipped model), to tell when they changed.")

    def predict(self, values: Mapping[str, float] | Sequence[float]) -> float:
        """Overall score (clipped to 0-1) for one answer: its inputs by name, or in the order of
        ``dimensions``; the same arithmetic as the fit, so an answer on a threshold lands on the
        same side."""
        if self.aggregate == "llm":
            raise ValueError("an llm-aggregate model takes the synthesis score, not dimensions")
        if isinstance(values, Mapping):
            missing = [name for name in self.dimensions if name not in values]
            if missing:
                raise ConfigError(f"the fitted model weighs {', '.join(missing)}, which this answer "
                                  "does not have; score it with this version of convoscope")
        row = [values[name] for name in self.dimensions] if isinstance(values, Mapping) else list(values)
        return float(aggregate_scores([row], aggregate=self.aggregate,
                                      weights=self.weights, intercept=self.intercept)[0])


def aggregate_scores(features: Any, *, aggregate: FitAggregate, weights: Sequence[float] | None = None,
                     intercept: float = 0.0, llm: Any = None) -> np.ndarray:
    """The overall score of each answer, clipped to 0-1: mean of the normalised dimensions (Sum),
    a weighted sum (ridge) or the LLM synthesis passed in ``llm``."""
    if aggregate == "llm":
        return np.clip(np.asarray(llm, dtype=float), 0.0, 1.0)
    x = np.asarray(features, dtype=float)
    raw = x.mean(axis=1) if aggregate == "sum" else x @ np.asarray(weights) + intercept
    return np.clip(raw, 0.0, 1.0)


def choose_threshold(accepted: Any, scores: Any, *,
                     target_fpr: float | None = None) -> tuple[float, str]:
    """The accept threshold on the ROC curve: at the equal-error rate, or the lowest threshold
    whose false-accept rate stays within ``target_fpr``."""
    if target_fpr is None:
        return float(equal_error_rate(accepted, scores).threshold), "eer"
    return float(threshold_at(accepted, scores, fpr=target_fpr).threshold), f"fpr<={target_fpr:g}"


def _point(accepted: np.ndarray, scores: np.ndarray, threshold: float) -> RocPoint:
    taken = scores >= threshold
    return RocPoint(threshold=float(threshold),
                    false_accept_rate=float(taken[~accepted].mean()),
                    false_reject_rate=float((~taken[accepted]).mean()))


def hold_band(accepted: Any, scores: Any, *, accept_at: float, hold_far: float | None,
              hold_frr: float | None) -> tuple[float, float, str, tuple[str, ...]]:
    """(accept_at, reject_below, rule, notes) for a hold band between two operating points.

    Upper edge: the lowest threshold with false-accept rate <= ``hold_far``, never below the EER
    threshold. Lower edge: the highest threshold with false-reject rate <= ``hold_frr``, never
    above it. Both are scores of labelled answers, so an answer reaches each side."""
    accepted, scores = np.asarray(accepted, dtype=bool), np.asarray(scores, dtype=float)
    if hold_far is None and hold_frr is None:
        return accept_at, accept_at, "none", ()
    notes: list[str] = []
    upper = accept_at
    if hold_far is not None:
        found = float(threshold_at(accepted, scores, fpr=hold_far).threshold)
        if not np.isfinite(found):
            notes.append(f"no score keeps false accepts within {hold_far:g}; the EER threshold stands")
        upper = max(accept_at, found) if np.isfinite(found) else accept_at
    lower = accept_at
    if hold_frr is not None:
        fpr, tpr, thresholds = roc_curve(accepted, scores)
        reachable = [t for t, rate in zip(thresholds, tpr, strict=True)
                     if np.isfinite(t) and 1 - rate <= hold_frr]
        lower = min(accept_at, max(reachable)) if reachable else accept_at
        if not (scores < lower).any():
            notes.append("no labelled answer scores below the false-reject point; "
                         "the band's lower edge is the EER threshold")
            lower = accept_at
    shown = ("-" if hold_frr is None else f"{hold_frr:g}", "-" if hold_far is None else f"{hold_far:g}")
    rule = f"hold between the FRR<={shown[0]} and FAR<={shown[1]} points"
    return float(upper), float(lower), rule, tuple(notes)


def _stratified_folds(accepted: np.ndarray, folds: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    parts: list[list[int]] = [[] for _ in range(folds)]
    for cls in (True, False):
        members = rng.permutation(np.flatnonzero(accepted == cls))
        for position, index in enumerate(members):
            parts[position % folds].append(int(index))
    return [np.array(sorted(part)) for part in parts if part]


def cross_validated_scores(features: Any, target: Any, accepted: Any, *, folds: int = 5,
                           alphas: Sequence[float] = DEFAULT_ALPHAS, seed: int = 0) -> np.ndarray:
    """Out-of-fold ridge scores: each answer scored by weights fitted without it (stratified
    folds on acceptance, alpha re-chosen inside every training split)."""
    x, y = _matrix(features, target, "cross_validated_scores")
    accepted = np.asarray(accepted, dtype=bool)
    out = np.empty(len(y))
    for held_out in _stratified_folds(accepted, folds, seed):
        train = np.setdiff1d(np.arange(len(y)), held_out)
        alpha = choose_alpha(x[train], y[train], alphas=alphas, folds=min(5, len(train)))
        weights, intercept = ridge_fit(x[train], y[train], alpha=alpha)
        out[held_out] = np.clip(x[held_out] @ weights + intercept, 0.0, 1.0)
    return out


def _accepted_and_target(
    labels: Sequence[str] | None, overall: Sequence[float] | None, overall_max: float,
    accept_min: float | None,
) -> tuple[np.ndarray, np.ndarray, str, str]:
    if labels is not None:
        unknown = sorted({label for label in labels if label not in LABELS})
        if unknown:
            raise ConfigError(f"labels must be accept, hold or reject; got {', '.join(unknown)}")
    if overall is not None:
        rating = np.asarray(overall, dtype=float)
        if not np.isfinite(rating).all():
            raise ConfigError("overall ratings must all be numbers")
        target, target_name = rating / overall_max, f"expert overall quality (0-{overall_max:g})"
    else:
        # Without ratings, regress on acceptance; hold counts as not accepted, as in the seed.
        target = np.array([1.0 if label == "accept" else 0.0 for label in labels or ()])
        target_name = "acceptance (accept 1, hold and reject 0)"
    if labels is not None:
        accepted, positives = np.array([label == "accept" for label in labels]), "label == accept"
    else:
        cut = accept_min if accept_min is not None else 0.75 * overall_max
        accepted, positives = np.asarray(overall, dtype=float) >= cut, f"overall >= {cut:g}"
    if accepted.all() or not accepted.any():
        raise ConfigError("fit needs both accepted and not-accepted answers among the labels")
    return accepted, target, target_name, positives


def fit_model(normalised: Any, labels: Sequence[str] | None = None, *,
              overall: Sequence[float] | None = None, overall_max: float = 4.0,
              accept_min: float | None = None, aggregate: FitAggregate = "sum",
              llm: Sequence[float] | None = None, alphas: Sequence[float] = DEFAULT_ALPHAS,
              hold_far: float | None = None, hold_frr: float | None = None,
              folds: int = 5, features: Sequence[str] = DIMENSIONS) -> FittedModel:
    """Fit the decision rule on labelled answers (see the module docstring).

    ``normalised`` has one column per name in ``features`` (by default the three normalised
    dimension scores). ``labels`` are accept / hold / reject; ``overall`` are expert
    overall-quality ratings on 0..``overall_max``. Give either or both: ratings train the ridge
    weights, labels define which answers count as accepted (else ``overall >= accept_min``, by
    default 3 of 4)."""
    if labels is None and overall is None:
        raise ConfigError("fit needs expert labels (accept / hold / reject) or overall ratings")
    if aggregate == "sum" and tuple(features) != DIMENSIONS:
        raise ConfigError("the Sum averages the judge's three dimensions; weighing other features "
                          "needs the ridge aggregate")
    x = np.asarray(normalised, dtype=float)
    accepted, target, target_name, positives = _accepted_and_target(labels, overall, overall_max,
                                                                    accept_min)
    fitted: dict[str, Any] = {"aggregate": aggregate, "positives": positives,
                              "dimensions": tuple(features)}
    if aggregate == "ridge":
        alpha = choose_alpha(x, target, alphas=alphas)
        weights, intercept = ridge_fit(x, target, alpha=alpha)
        fitted |= {"weights": tuple(map(float, weights)), "intercept": intercept, "alpha": alpha,
                   "target": target_name}
    scores = aggregate_scores(x, aggregate=aggregate, weights=fitted.get("weights"),
                              intercept=fitted.get("intercept", 0.0), llm=llm)
    accept_at = float(equal_error_rate(accepted, scores).threshold)
    upper, lower, rule, notes = hold_band(accepted, scores, accept_at=accept_at,
                                          hold_far=hold_far, hold_frr=hold_frr)
    fpr, tpr, thresholds = roc_curve(accepted, scores)
    points = {"accept (EER)": _point(accepted, scores, accept_at)}
    if upper != accept_at:
        points["accept (FAR target)"] = _point(accepted, scores, upper)
    if lower != accept_at:
        points["reject below (FRR target)"] = _point(accepted, scores, lower)
    return FittedModel(
        **fitted, accept_at=upper, reject_below=lower, hold_rule=rule,
        auc_in_sample=roc_auc(accepted, scores),
        eer_in_sample=float(equal_error_rate(accepted, scores).rate),
        **_cross_validated(x, target, accepted, aggregate=aggregate, folds=folds, alphas=alphas),
        roc_fpr=tuple(map(float, fpr)), roc_tpr=tuple(map(float, tpr)),
        roc_thresholds=tuple(float(t) if np.isfinite(t) else 1e9 for t in thresholds),
        points=points, labelled=len(accepted), n_accepted=int(accepted.sum()),
        n_not_accepted=int((~accepted).sum()), notes=notes)


def _cross_validated(x: np.ndarray, target: np.ndarray, accepted: np.ndarray, *,
                     aggregate: FitAggregate, folds: int, alphas: Sequence[float]) -> dict[str, Any]:
    """AUC / EER of out-of-fold scores for ridge; nothing to cross-validate for Sum and LLM."""
    folds = max(2, min(folds, int(accepted.sum()), int((~accepted).sum())))
    if aggregate != "ridge":
        return {"auc_cv": None, "eer_cv": None, "cv_folds": folds, "cv_note": (
            f"{aggregate}: no fitted weights, so the in-sample AUC is already out-of-sample")}
    out_of_fold = cross_validated_scores(x, target, accepted, folds=folds, alphas=alphas)
    # Kept per answer so two rules can be compared paired on the same answers (DeLong).
    return {"auc_cv": roc_auc(accepted, out_of_fold),
            "eer_cv": float(equal_error_rate(accepted, out_of_fold).rate), "cv_folds": folds,
            "cv_note": f"{folds}-fold stratified cross-validation of the ridge weights",
            "out_of_fold": tuple(round(float(v), 6) for v in out_of_fold),
            "out_of_fold_accepted": tuple(bool(v) for v in accepted)}


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
        raise ConfigError(f"{path}: not a fitted survey model ({str(error).splitlines()[0]})") from None
