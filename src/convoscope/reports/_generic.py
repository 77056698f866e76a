"""Sections every verdict file gets: an overview (verdicts, items, raters, unscored reasons) and,
for criteria no specific section claims, the mean score per rater and per system."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict

from convoscope.reports._html import esc, num, table
from convoscope.reports._inputs import ReportInputs
from convoscope.reports._votes import source_of


def overview_section(inputs: ReportInputs, source_name: str) -> str:
    verdicts = inputs.verdicts
    raters = Counter(source_of(v.rater) for v in verdicts)
    unscored = Counter(v.unscored_reason or "unknown" for v in verdicts if v.value is None)
    rows = [["file", esc(source_name)], ["verdicts", str(len(verdicts))],
            ["items", str(len({v.item_id for v in verdicts}))],
            ["criteria", esc(", ".join(inputs.votes))],
            ["raters", esc(", ".join(sorted({v.rater for v in verdicts})))],
            ["verdicts by source", esc(", ".join(f"{k}: {n}" for k, n in sorted(raters.items())))],
            ["unscored", esc(", ".join(f"{k}: {n}" for k, n in sorted(unscored.items())) or "none")]]
    warning = ""
    if any("embedded:" in verdict.rater for verdict in verdicts):
        from convoscope.runs import OFFLINE_WARNING

        warning = f"<p class=warning role=note><strong>Offline judge.</strong> {esc(OFFLINE_WARNING)}</p>"
    return f"<section id=overview><h2>Overview</h2>{warning}{table([], rows, cls='overview')}</section>"


def generic_section(inputs: ReportInputs, criteria: tuple[str, ...]) -> str:
    rows = []
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
            rows.append([esc(criterion), esc(rater), f"<td class=num>{len(values)}</td>",
                         f"<td class=num>{num(statistics.fmean(values))}</td>", esc(systems)])
        for label, count in sorted(labels.items()):
            rows.append([esc(criterion), esc(label), f"<td class=num>{count}</td>", "–", ""])
    if not rows:
        return ""
    return ("<section id=scores><h2>Scores</h2>"
            + table(["criterion", "rater", "scored", "mean", "mean per system"], rows, cls="scores")
            + "</section>")
