"""Writing a scored survey: one CSV row per answer, and reading it back for ``survey fit``."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

from convoscope.survey._fit import DIMENSION_MAXIMA, DIMENSIONS
from convoscope.survey._score import ScoredAnswer

COLUMNS: tuple[str, ...] = (
    "id", "question", "answer", "language", "gibberish", "gibberish_reasons",
    *DIMENSIONS, *(f"{name}_reason" for name in DIMENSIONS), "unscored", "overall",
    "overall_reason", "decision", "decision_reason", "weakest", "follow_up", "follow_up_source",
)


def answer_row(answer: ScoredAnswer) -> dict[str, str]:
    """The CSV row of one answer; empty cells mean 'not measured'. Baseline scores, when asked
    for, follow as ``baseline_<name>`` columns."""
    row: dict[str, object] = answer.model_dump(exclude={"scores", "reasons", "unscored", "baselines"})
    row["gibberish"] = "true" if answer.gibberish else "false"
    row["gibberish_reasons"] = ";".join(answer.gibberish_reasons)
    for name in DIMENSIONS:
        row[name] = answer.scores.get(name)
        row[f"{name}_reason"] = answer.reasons.get(name)
    row["unscored"] = ";".join(f"{k}={v}" for k, v in answer.unscored.items())
    row["overall"] = None if answer.overall is None else round(answer.overall, 4)
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


def read_scored_features(path: str | Path) -> dict[str, tuple[float, ...] | None]:
    """Normalised (0-1) dimension scores per answer id from a scored CSV; None when an answer
    was gibberish or a dimension is unscored (gibberish answers count as all zeros)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: file not found")
    features: dict[str, tuple[float, ...] | None] = {}
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in ("id", "gibberish", *DIMENSIONS) if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: line 1: missing column(s) {', '.join(missing)}; "
                             "expected the output of 'convoscope survey score'")
        for row in reader:
            features[row["id"]] = _features(path, reader.line_num, row)
    return features


def _features(path: Path, line: int, row: dict[str, str]) -> tuple[float, ...] | None:
    if row["gibberish"] == "true":
        return tuple(0.0 for _ in DIMENSIONS)
    values = []
    for name in DIMENSIONS:
        cell = (row.get(name) or "").strip()
        if not cell:
            return None
        try:
            values.append(int(cell) / DIMENSION_MAXIMA[name])
        except ValueError:
            raise ValueError(f"{path}: line {line}: field {name}: not an integer: {cell!r}") from None
    return tuple(values)


def read_labels(path: str | Path, *, id_col: str = "id", label_col: str = "label") -> dict[str, str]:
    """Expert labels (accept / hold / reject) per answer id, from a CSV."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: file not found")
    labels: dict[str, str] = {}
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        for column in (id_col, label_col):
            if column not in (reader.fieldnames or []):
                raise ValueError(f"{path}: line 1: field {column}: column not found")
        for row in reader:
            label = (row[label_col] or "").strip().lower()
            if label not in ("accept", "hold", "reject"):
                raise ValueError(f"{path}: line {reader.line_num}: field {label_col}: "
                                 f"expected accept, hold or reject, got {label!r}")
            labels[row[id_col]] = label
    return labels
