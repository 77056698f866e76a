"""``survey evaluate``: the judge's dimensions and the decision against a labels file, in one call
(issue 26, observation 4).

The labels file has an id column and any of: ``effort``, ``relevance``, ``completeness`` (on the
rubric scales), ``overall`` (0-4) and ``label`` (accept / hold / reject). Every labelled id must
be in the scored file; the count of those that are not is the error, so a labels file of another
survey or a wrong id column never passes as a small, quiet evaluation.

* Each dimension: Spearman, Kendall and quadratic-weighted kappa of the judge's score (argmax)
  against the label, and Spearman of the expected score, over the answers the judge scored
  (gibberish answers are never judged, so they are counted, not compared).
* ``overall``: Spearman and Kendall of the 0-1 overall against the 0-4 rating, every answer.
* The decision: the 3 x 3 table of label against decision, accuracy, Cohen's kappa (plain and
  quadratic on reject < hold < accept), precision and recall of "accept", and the AUC / EER of
  the overall score for accept against hold + reject, as seed 000 reports it.

A statistic that is undefined (a constant column, one class only) is None with the reason in
``notes``; the rest are still reported.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from convoscope.analysis import (
    cohen_kappa,
    equal_error_rate,
    kendall,
    precision,
    recall,
    roc_auc,
    spearman,
)
from convoscope.errors import ConfigError
from convoscope.items import open_text
from convoscope.survey._fit import DIMENSION_MAXIMA, DIMENSIONS, LABELS
from convoscope.survey._fitfile import check_label_ids
from convoscope.survey._output import number_cell, read_labels, read_scored_rows

ORDER = ("reject", "hold", "accept")  # the decision as an ordered scale


class DimensionAgreement(BaseModel):
    """The judge against the labels on one dimension (or on ``overall``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    n: int = Field(description="Answers with both a judge score and a label.")
    spearman: float | None = None
    kendall: float | None = None
    weighted_kappa: float | None = Field(default=None, description="Quadratic, on the rubric scale.")
    spearman_expected: float | None = Field(default=None, description="Of the expected score.")


class DecisionAgreement(BaseModel):
    """The decisions against the accept / hold / reject labels."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    n: int
    table: dict[str, dict[str, int]] = Field(description="label -> decision -> answers.")
    accuracy: float
    kappa: float | None = None
    weighted_kappa: float | None = Field(default=None, description="Quadratic, reject < hold < accept.")
    accept_precision: float | None = None
    accept_recall: float | None = None
    auc: float | None = Field(default=None, description="Overall score, accept vs hold + reject.")
    eer: float | None = None


class SurveyEvaluation(BaseModel):
    """What ``survey evaluate`` measured."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    labelled: int
    gibberish: int = Field(description="Labelled answers the filter kept from the judge.")
    dimensions: tuple[DimensionAgreement, ...] = ()
    decision: DecisionAgreement | None = None
    notes: tuple[str, ...] = ()


def evaluate_labelled(scored_path: str | Path, labels_path: str | Path, *, id_col: str = "id",
                      label_col: str = "label", encoding: str = "utf-8") -> SurveyEvaluation:
    """The judge's dimensions and the decision of ``scored_path`` (the CSV of ``survey score``)
    against ``labels_path``; see the module docstring."""
    rows = {row["id"]: (line, row) for line, row in read_scored_rows(scored_path)}
    header_has_label = label_col in _labels_header(labels_path, encoding)
    expert = read_labels(labels_path, id_col=id_col, label_col=label_col if header_has_label else None,
                         encoding=encoding)
    if expert.labels is None and expert.overall is None and not expert.dimensions:
        raise ConfigError(f"{labels_path}: line 1: nothing to compare: the header has none of "
                          f"{label_col}, overall, {', '.join(DIMENSIONS)}")
    keys = list(dict.fromkeys(key for source in (expert.labels, expert.overall, *expert.dimensions.values())
                              for key in source or {}))
    check_label_ids(keys, rows, labels_path, scored_path)
    notes: list[str] = []
    scored = Path(scored_path)

    def cell(key: str, column: str) -> float | None:
        line, row = rows[key]
        return number_cell(scored, line, row, column)

    judged = [key for key in keys if rows[key][1]["gibberish"] != "true"]
    found = [_dimension(name, [k for k in judged if k in values], values, cell, notes)
             for name, values in expert.dimensions.items()]
    if expert.overall is not None:
        found.append(_overall(keys, expert.overall, cell, notes))
    decision = None
    if expert.labels is not None:
        decision = _decision(keys, expert.labels, {key: rows[key][1] for key in keys}, cell, notes)
    return SurveyEvaluation(labelled=len(keys), gibberish=len(keys) - len(judged),
                            dimensions=tuple(found), decision=decision, notes=tuple(notes))


def _labels_header(path: str | Path, encoding: str) -> list[str]:
    with open_text(path, encoding=encoding) as lines:
        return next(csv.reader(lines), [])


def _safe(name: str, what: str, statistic: Callable[[], float], notes: list[str]) -> float | None:
    try:
        return float(statistic())
    except ValueError as error:
        notes.append(f"{name}: no {what} ({error})")
        return None


def _dimension(name: str, keys: Sequence[str], labels: dict[str, float],
               cell: Callable[[str, str], float | None], notes: list[str]) -> DimensionAgreement:
    pairs = [(value, labels[key]) for key in keys if (value := cell(key, name)) is not None]
    judge, truth = [p[0] for p in pairs], [p[1] for p in pairs]
    expected = [(value, labels[key]) for key in keys if (value := cell(key, f"{name}_expected")) is not None]
    scale = range(DIMENSION_MAXIMA[name] + 1)
    return DimensionAgreement(
        name=name, n=len(pairs),
        spearman=_safe(name, "Spearman", lambda: spearman(judge, truth), notes),
        kendall=_safe(name, "Kendall", lambda: kendall(judge, truth), notes),
        weighted_kappa=_safe(name, "weighted kappa", lambda: cohen_kappa(
            [int(v) for v in judge], [int(v) for v in truth], weights="quadratic", labels=scale), notes),
        spearman_expected=_safe(name, "Spearman of the expected score", lambda: spearman(
            [p[0] for p in expected], [p[1] for p in expected]), notes) if expected else None)


def _overall(keys: Sequence[str], labels: dict[str, float], cell: Callable[[str, str], float | None],
             notes: list[str]) -> DimensionAgreement:
    pairs = [(value, labels[key]) for key in keys if key in labels
             and (value := cell(key, "overall")) is not None]
    judge, truth = [p[0] for p in pairs], [p[1] for p in pairs]
    return DimensionAgreement(name="overall", n=len(pairs),
                              spearman=_safe("overall", "Spearman", lambda: spearman(judge, truth), notes),
                              kendall=_safe("overall", "Kendall", lambda: kendall(judge, truth), notes))


def _decision(keys: Sequence[str], labels: dict[str, str], rows: dict[str, dict[str, str]],
              cell: Callable[[str, str], float | None], notes: list[str]) -> DecisionAgreement:
    truth = [labels[key] for key in keys]
    made = [rows[key]["decision"] for key in keys]
    table = {label: {decision: sum(t == label and m == decision for t, m in zip(truth, made, strict=True))
                     for decision in LABELS} for label in LABELS}
    rank = {name: index for index, name in enumerate(ORDER)}
    accepted = [label == "accept" for label in truth]
    said = [decision == "accept" for decision in made]
    scored = [(value, ok) for key, ok in zip(keys, accepted, strict=True)
              if (value := cell(key, "overall")) is not None]
    return DecisionAgreement(
        n=len(keys), table=table,
        accuracy=sum(t == m for t, m in zip(truth, made, strict=True)) / len(keys),
        kappa=_safe("decision", "kappa", lambda: cohen_kappa(truth, made, labels=ORDER), notes),
        weighted_kappa=_safe("decision", "weighted kappa", lambda: cohen_kappa(
            [rank[t] for t in truth], [rank[m] for m in made], weights="quadratic", labels=range(3)), notes),
        accept_precision=_safe("decision", "precision of accept", lambda: precision(accepted, said), notes),
        accept_recall=_safe("decision", "recall of accept", lambda: recall(accepted, said), notes),
        auc=_safe("decision", "AUC", lambda: roc_auc([p[1] for p in scored], [p[0] for p in scored]), notes),
        eer=_safe("decision", "EER", lambda: equal_error_rate(
            [p[1] for p in scored], [p[0] for p in scored]).rate, notes))
