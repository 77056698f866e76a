"""``survey fit`` as one library call: pair a scored CSV with expert labels, fit the rule, and
list the ROC rows with the chosen operating points marked."""

from __future__ import annotations

from pathlib import Path

from convoscope.errors import ConfigError
from convoscope.survey._fit import FitAggregate, FittedModel, fit_model
from convoscope.survey._output import read_labels, read_scored_features


def fit_labelled(scored_path: str | Path, labels_path: str | Path, *, id_col: str = "id",
                 label_col: str | None = "label", overall_col: str | None = None,
                 overall_max: float = 4.0, accept_min: float | None = None,
                 aggregate: FitAggregate = "sum", hold_far: float | None = None,
                 hold_frr: float | None = None, basis: str = "auto",
                 folds: int = 5) -> tuple[FittedModel, list[str]]:
    """Fit on the labelled answers that are fully scored; return the model and what was done."""
    scored = read_scored_features(scored_path, basis=basis)
    expert = read_labels(labels_path, id_col=id_col, label_col=label_col, overall_col=overall_col)
    keys = list((expert.labels or expert.overall or {}).keys())
    usable = [key for key in keys if scored.features.get(key) is not None
              and (aggregate != "llm" or scored.overall.get(key) is not None)]
    if len(usable) < 4:
        raise ConfigError(f"{labels_path}: only {len(usable)} labelled answers match fully scored "
                         f"rows of {scored_path}; need at least 4")
    fitted = fit_model(
        [scored.features[key] for key in usable],
        None if expert.labels is None else [expert.labels[key] for key in usable],
        overall=None if expert.overall is None else [expert.overall[key] for key in usable],
        overall_max=overall_max, accept_min=accept_min, aggregate=aggregate,
        llm=([value for key in usable if (value := scored.overall[key]) is not None]
             if aggregate == "llm" else None),
        hold_far=hold_far, hold_frr=hold_frr, folds=folds)
    lines = [f"fitted on {len(usable)} labelled answers ({len(keys) - len(usable)} without a full "
             f"score in {scored_path}); dimension scores: {scored.basis}"]
    return fitted, lines


def roc_rows(fitted: FittedModel) -> list[tuple[str, float, float, str]]:
    """(threshold, false-accept rate, true-accept rate, chosen-point names) per ROC point."""
    marks: dict[float, list[str]] = {}
    for name, point in fitted.points.items():
        marks.setdefault(round(point.threshold, 9), []).append(name)
    rows = []
    for threshold, far, tar in zip(fitted.roc_thresholds, fitted.roc_fpr, fitted.roc_tpr, strict=True):
        shown = "inf" if threshold >= 1e9 else f"{threshold:.4f}"
        rows.append((shown, far, tar, ", ".join(marks.get(round(threshold, 9), []))))
    return rows
