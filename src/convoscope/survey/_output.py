"""Writing a scored survey: one CSV row per answer, and reading it back for ``survey fit``."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from convoscope.errors import ConfigError
from convoscope.items import open_text
from convoscope.survey._features import TEXT_FEATURES
from convoscope.survey._fit import DIMENSION_MAXIMA, DIMENSIONS
from convoscope.survey._score import ScoredAnswer

COLUMNS: tuple[str, ...] = (
    "id", "question", "answer", "language", "gibberish", "gibberish_reasons", "addresses_grader",
    "scores_excluded",
    # The expected scores lead: they decide whenever the judge gives probabilities (the embedded
    # default), while its most likely scores are nearly constant (issue 38).
    *(f"{name}_expected" for name in DIMENSIONS), "score_basis", *DIMENSIONS,
    *(f"{name}_reason" for name in DIMENSIONS), "unscored", "overall",
    "overall_reason", "decision", "decision_reason", "weakest", "follow_up", "follow_up_source",
    *(f"feature_{name}" for name in TEXT_FEATURES),
)


def answer_row(answer: ScoredAnswer) -> dict[str, str]:
    """The CSV row of one answer; empty cells mean 'not measured'. Baseline scores, when asked
    for, follow as ``baseline_<name>`` columns."""
    row: dict[str, object] = answer.model_dump(
        exclude={"scores", "reasons", "unscored", "baselines", "expected", "grader_signals", "features"})
    row["gibberish"] = "true" if answer.gibberish else "false"
    row["gibberish_reasons"] = ";".join(answer.gibberish_reasons)
    row["addresses_grader"] = ";".join(answer.grader_signals)
    row["scores_excluded"] = "true" if answer.scores_excluded else "false"
    for name in DIMENSIONS:
        row[name] = answer.scores.get(name)
        expected = answer.expected.get(name)
        row[f"{name}_expected"] = None if expected is None else round(expected, 4)
        row[f"{name}_reason"] = answer.reasons.get(name)
    row["unscored"] = ";".join(f"{k}={v}" for k, v in answer.unscored.items())
    row["overall"] = None if answer.overall is None else round(answer.overall, 4)
    for name, feature in answer.features.items():
        row[f"feature_{name}"] = round(feature, 4)
    for name, value in answer.baselines.items():
        row[f"baseline_{name}"] = None if value is None else round(value, 4)
    return {key: "" if row.get(key) is None else str(row[key]) for key in (*COLUMNS, *_extra(answer))}


def _extra(answer: ScoredAnswer) -> list[str]:
    return [f"baseline_{name}" for name in answer.baselines]


def write_scored_csv(answers: Sequence[ScoredAnswer], path: str | Path) -> int:
    extra = list(dict.fromkeys(column for answer in answers for column in _extra(answer)))
    with Path(path).open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=[*COLUMNS, *extra])
        writer.writeheader()
        writer.writerows(answer_row(answer) for answer in answers)
    return len(answers)


class ScoredFeatures(NamedTuple):
    """Per answer id: normalised (0-1) dimension scores (None when a dimension is unscored;
    gibberish answers count as all zeros), the scored CSV's own overall (for ``llm``) and the
    judge-free features from its ``feature_*`` columns (empty for files written before them)."""

    features: dict[str, tuple[float, ...] | None]
    overall: dict[str, float | None]
    basis: str  # "expected" or "argmax"
    text: dict[str, dict[str, float]] = {}

    def columns(self, keys: Sequence[str]) -> dict[str, list[float]]:
        """One list per feature name (the dimensions and the judge-free features present in
        the file) over ``keys``, which must all be fully scored."""
        columns = {name: [self.features[key][index] for key in keys]  # type: ignore[index]
                   for index, name in enumerate(DIMENSIONS)}
        present = [name for name in TEXT_FEATURES if all(name in self.text.get(key, {}) for key in keys)]
        return columns | {name: [self.text[key][name] for key in keys] for name in present}


def read_scored_rows(path: str | Path) -> list[tuple[int, dict[str, str]]]:
    """(line, row) of every answer in the output of ``survey score``; a file without its
    columns is an error naming them."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: file not found")
    with open_text(path) as lines:
        reader = csv.DictReader(lines)
        missing = [c for c in ("id", "gibberish", *DIMENSIONS) if c not in (reader.fieldnames or [])]
        if missing:
            raise ConfigError(f"{path}: line 1: missing column(s) {', '.join(missing)}; "
                             "expected the output of 'convoscope survey score'")
        return [(reader.line_num, row) for row in reader]


def read_scored_features(path: str | Path, *, basis: str = "auto",
                         include_flagged: bool = False) -> ScoredFeatures:
    """Read the output of ``survey score``. ``basis``: "expected" (probability-weighted
    scores), "argmax" (most likely scores) or "auto" (expected when every judged row has them).
    Rows whose scores were excluded (answers that address or imitate the grader) have no
    features unless ``include_flagged``: a judge talked into a score is no evidence to fit on."""
    path = Path(path)
    rows = read_scored_rows(path)
    if basis == "auto":
        judged = [row for _, row in rows if row["gibberish"] != "true"]
        basis = "expected" if judged and all((row.get(f"{name}_expected") or "").strip()
                                             for row in judged for name in DIMENSIONS) else "argmax"
    features = {row["id"]: None if row.get("scores_excluded") == "true" and not include_flagged
                else _features(path, line, row, basis) for line, row in rows}
    overall = {row["id"]: number_cell(path, line, row, "overall") for line, row in rows}
    text = {row["id"]: {name: value for name in TEXT_FEATURES
                        if (value := number_cell(path, line, row, f"feature_{name}")) is not None}
            for line, row in rows}
    return ScoredFeatures(features, overall, basis, text)


def number_cell(path: Path, line: int, row: dict[str, str], column: str) -> float | None:
    cell = (row.get(column) or "").strip()
    if not cell:
        return None
    try:
        return float(cell)
    except ValueError:
        raise ConfigError(f"{path}: line {line}: field {column}: not a number: {cell!r}") from None


def _features(path: Path, line: int, row: dict[str, str], basis: str) -> tuple[float, ...] | None:
    if row["gibberish"] == "true":
        return tuple(0.0 for _ in DIMENSIONS)
    values = []
    for name in DIMENSIONS:
        column = f"{name}_expected" if basis == "expected" else name
        value = number_cell(path, line, row, column)
        if value is None:
            return None
        values.append(value / DIMENSION_MAXIMA[name])
    return tuple(values)


class ExpertLabels(NamedTuple):
    """Per answer id: accept / hold / reject (when the file has the label column), a numeric
    overall-quality rating (when it has the overall column) and the experts' dimension scores
    (for each of effort, relevance, completeness the file has; empty cells are left out)."""

    labels: dict[str, str] | None
    overall: dict[str, float] | None
    dimensions: dict[str, dict[str, float]] = {}


def read_labels(path: str | Path, *, id_col: str = "id", label_col: str | None = "label",
                overall_col: str | None = None, encoding: str = "utf-8") -> ExpertLabels:
    """Expert labels from a CSV. Name the columns to use; a named column must exist. With the
    defaults, ``label`` is used and an ``overall`` column is used when present."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: file not found")
    with open_text(path, encoding=encoding) as lines:
        reader = csv.DictReader(lines)
        header = reader.fieldnames or []
        if overall_col is None and "overall" in header:
            overall_col = "overall"
        if label_col == "label" and "label" not in header and overall_col is not None:
            label_col = None
        for column in (id_col, label_col, overall_col):
            if column is not None and column not in header:
                raise ConfigError(f"{path}: line 1: field {column}: column not found "
                                 f"(the header has {', '.join(header)})")
        labels: dict[str, str] | None = {} if label_col else None
        overall: dict[str, float] | None = {} if overall_col else None
        dimensions: dict[str, dict[str, float]] = {name: {} for name in DIMENSIONS if name in header}
        for row in reader:
            key = row[id_col]
            for name, values in dimensions.items():
                if (value := number_cell(path, reader.line_num, row, name)) is not None:
                    values[key] = value
            if labels is not None and label_col is not None:
                labels[key] = _label(path, reader.line_num, row, label_col)
            if overall is not None and overall_col is not None:
                value = number_cell(path, reader.line_num, row, overall_col)
                if value is None:
                    raise ConfigError(f"{path}: line {reader.line_num}: field {overall_col}: empty")
                overall[key] = value
    return ExpertLabels(labels, overall, dimensions)


def _label(path: Path, line: int, row: dict[str, str], column: str) -> str:
    label = (row[column] or "").strip().lower()
    if label not in ("accept", "hold", "reject"):
        raise ConfigError(f"{path}: line {line}: field {column}: "
                         f"expected accept, hold or reject, got {label!r}")
    return label
