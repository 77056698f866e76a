"""``survey fit`` as one library call: pair a scored CSV with expert labels, fit the rule, compare
feature sets, and list the ROC rows with the chosen operating points marked."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from convoscope.errors import ConfigError
from convoscope.survey._features import compare_feature_sets
from convoscope.survey._fit import DIMENSIONS, FitAggregate, FittedModel, fit_model
from convoscope.survey._output import ScoredFeatures, read_labels, read_scored_features


def fit_labelled(scored_path: str | Path, labels_path: str | Path, *, id_col: str = "id",
                 label_col: str | None = "label", overall_col: str | None = None,
                 overall_max: float = 4.0, accept_min: float | None = None,
                 aggregate: FitAggregate = "sum", hold_far: float | None = None,
                 hold_frr: float | None = None, basis: str = "auto",
                 folds: int = 5, features: Sequence[str] = DIMENSIONS,
                 encoding: str = "utf-8") -> tuple[FittedModel, list[str]]:
    """Fit on the labelled answers that are fully scored; return the model and what was done.

    Every labelled id must be in the scored file (the count of those that are not is the error);
    labelled answers with an unscored dimension are left out and counted. ``features`` are the
    model's inputs (see :data:`~convoscope.survey.FEATURES`); beside the fit, every feature set
    the file allows is compared by cross-validated AUC / EER (``FittedModel.compared``)."""
    scored = read_scored_features(scored_path, basis=basis)
    expert = read_labels(labels_path, id_col=id_col, label_col=label_col, overall_col=overall_col,
                         encoding=encoding)
    keys = list((expert.labels or expert.overall or {}).keys())
    check_label_ids(keys, scored.features, labels_path, scored_path)
    usable = [key for key in keys if scored.features.get(key) is not None
              and (aggregate != "llm" or scored.overall.get(key) is not None)]
    if len(usable) < 4:
        raise ConfigError(f"{labels_path}: only {len(usable)} labelled answers match fully scored "
                          f"rows of {scored_path}; need at least 4")
    columns = _columns(scored, usable, features, scored_path)
    labels = None if expert.labels is None else [expert.labels[key] for key in usable]
    overall = None if expert.overall is None else [expert.overall[key] for key in usable]
    fitted = fit_model(
        [[columns[name][row] for name in features] for row in range(len(usable))], labels,
        overall=overall, overall_max=overall_max, accept_min=accept_min, aggregate=aggregate,
        llm=([value for key in usable if (value := scored.overall[key]) is not None]
             if aggregate == "llm" else None),
        hold_far=hold_far, hold_frr=hold_frr, folds=folds, features=features)
    compared = compare_feature_sets(columns, labels, overall=overall, overall_max=overall_max,
                                    accept_min=accept_min, folds=folds)
    fitted = fitted.model_copy(update={"compared": compared, "score_basis": scored.basis})
    lines = [f"fitted on {len(usable)} labelled answers ({len(keys) - len(usable)} without a full "
             f"score in {scored_path}); dimension scores: {scored.basis}; inputs: {', '.join(features)}"]
    return fitted, lines


def check_label_ids(keys: Sequence[str], scored: Mapping[str, object], labels_path: str | Path,
                    scored_path: str | Path) -> None:
    """Refuse labelled ids that are not in the scored file, with their count (a wrong id column
    or a labels file of another survey must not pass as a small, quiet fit)."""
    unknown = [key for key in keys if key not in scored]
    if unknown:
        shown = ", ".join(repr(key) for key in unknown[:5]) + (", ..." if len(unknown) > 5 else "")
        raise ConfigError(f"{labels_path}: {len(unknown)} of {len(keys)} labelled ids are not in "
                          f"{scored_path} ({shown}); check the id column and that both files "
                          "come from the same survey")


def _columns(scored: ScoredFeatures, usable: list[str], features: Sequence[str],
             scored_path: str | Path) -> dict[str, list[float]]:
    columns = scored.columns(usable)
    missing = [name for name in features if name not in columns]
    if missing:
        raise ConfigError(f"{scored_path}: no feature_{missing[0]} values; score the answers again "
                          "with this version of convoscope (it writes the feature_* columns)")
    return columns


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


