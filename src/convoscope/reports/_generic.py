"""Sections every verdict file gets: an overview (verdicts, items, raters, unscored reasons) and,
for criteria no specific section claims, the mean score per rater and per system."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from typing import Any

from convoscope.reports._html import num
from convoscope.reports._inputs import ReportInputs
from convoscope.reports._votes import source_of


def overview_section(inputs: ReportInputs, source_name: str) -> dict[str, Any]:
    verdicts = inputs.verdicts
    raters = Counter(source_of(v.rater) for v in verdicts)
    unscored = Counter(v.unscored_reason or "unknown" for v in verdicts if v.value is None)
    rows = [("file", source_name), ("verdicts", len(verdicts)),
            ("items", len({v.item_id for v in verdicts})),
            ("criteria", ", ".join(inputs.votes)),
            ("raters", ", ".join(sorted({v.rater for v in verdicts}))),
            ("verdicts by source", ", ".join(f"{k}: {n}" for k, n in sorted(raters.items()))),
            ("unscored", ", ".join(f"{k}: {n}" for k, n in sorted(unscored.items())) or "none")]
    warning = None
    if any("embedded:" in verdict.rater for verdict in verdicts):
        from convoscope.runs import OFFLINE_WARNING

        warning = OFFLINE_WARNING
    return {"rows": rows, "warning": warning}


def generic_section(inputs: ReportInputs, criteria: tuple[str, ...]) -> dict[str, Any] | None:
    """Rows of (criterion, rater, scored, mean, means per system); None when nothing is numeric."""
    rows: list[tuple[str, str, int, str, str]] = []
    for criterion in criteria:
        by_rater: dict[str, list[float]] = defaultdict(list)
        by_system: dict[tuple[str, str], list[float]] = defaultdict(list)
        labels: Counter[str] = Counter()
        for verdict in inputs.verdicts:
            if verdict.criterion != criterion or verdict.value is None:
                continue
            if isinstance(verdict.value, str):
                labels[f"{verdict.rater}: {verdict.value}"] += 1
                continue
            by_rater[verdict.rater].append(float(verdict.value))
            by_system[(verdict.rater, verdict.system or "(no system)")].append(float(verdict.value))
        for rater, values in by_rater.items():
            systems = "; ".join(f"{system}: {num(statistics.fmean(v))} (n={len(v)})"
                                for (who, system), v in sorted(by_system.items()) if who == rater)
            rows.append((criterion, rater, len(values), num(statistics.fmean(values)), systems))
        for label, count in sorted(labels.items()):
            rows.append((criterion, label, count, "–", ""))
    return {"rows": rows} if rows else None
