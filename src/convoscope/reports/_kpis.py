"""The KPI section (InCA): per KPI and rater — each judge, the pooled panel, each person, the
people pooled, and computed metrics — the relevance rate and the fulfilled rate among relevant
turns; the panel's agreement per KPI; and the measurements behind computed KPIs."""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from typing import Any

import numpy as np

from convoscope.judges import Verdict
from convoscope.reports._html import num, pct
from convoscope.reports._inputs import ReportInputs
from convoscope.reports._votes import CriterionVotes, rate


def kpi_section(inputs: ReportInputs, kpis: tuple[str, ...]) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    agreement_rows: list[dict[str, Any]] = []
    for kpi in kpis:
        votes = inputs.votes[kpi]
        rows.extend(_rate_rows(kpi, votes))
        agreement = _agreement_row(kpi, votes)
        if agreement:
            agreement_rows.append(agreement)
    return {"rows": rows, "agreement": agreement_rows, "measured": _measurements(inputs, kpis)}


def _rate_rows(kpi: str, votes: CriterionVotes) -> list[dict[str, Any]]:
    rows = []
    for source in votes.sources():
        items = votes.by_source[source].values()
        raters = votes.raters(source)
        for rater in raters:
            mine = [vote for v in items for vote in v.votes if vote.rater == rater]
            rows.append(_row(kpi, rater, [(v.value, v.relevant, v.unscored_reason) for v in mine]))
        panel = votes.panel_rater(source)
        if panel is not None or len(raters) > 1:
            name = panel or f"{source}: majority of {len(raters)}"
            pooled = [(v.pooled_value(), v.pooled_relevant(),
                       v.panel.unscored_reason if v.panel is not None else None) for v in items]
            rows.append(_row(kpi, name, pooled, pooled_row=True))
    return rows


def _row(kpi: str, rater: str, answers: Sequence[tuple[object, bool | None, str | None]], *,
         pooled_row: bool = False) -> dict[str, Any]:
    flagged = [relevant for _, relevant, _ in answers if relevant is not None]
    relevant_scored = [value for value, relevant, _ in answers if relevant is not False and value is not None]
    fulfilled = rate(sum(value == 1 for value in relevant_scored), len(relevant_scored))
    return {"kpi": kpi, "rater": rater, "pooled": pooled_row, "turns": len(answers),
            "relevant": sum(flagged) if flagged else "–", "relevance": pct(rate(sum(flagged), len(flagged))),
            "fulfilled": pct(fulfilled), "unscored": sum(value is None for value, _, _ in answers)}


def _agreement_row(kpi: str, votes: CriterionVotes) -> dict[str, Any] | None:
    from convoscope.analysis import fleiss_kappa, percent_agreement

    raters = votes.raters("judges")
    if len(raters) < 2:
        return None
    items = list(votes.by_source["judges"].values())
    values = [[_value_of(v.votes, rater) for v in items] for rater in raters]
    complete = [column for column in zip(*values, strict=True) if None not in column]
    if not complete:
        return {"kpi": kpi, "judges": len(raters), "turns": 0, "unanimous": "–", "pairwise": "–",
                "kappa": "–", "kappa_note": None, "relevant_unanimous": "–"}
    matrix = np.array(complete, dtype=float).T
    unanimous = float(np.mean([len(set(column)) == 1 for column in complete]))
    kappa_note = None
    try:
        kappa = num(fleiss_kappa(matrix))
    except ValueError:
        kappa, kappa_note = "–", "(one category only)"
    flags = [[_flag_of(v.votes, rater) for v in items] for rater in raters]
    flag_columns = [column for column in zip(*flags, strict=True) if None not in column]
    relevant_unanimous = rate(sum(len(set(c)) == 1 for c in flag_columns), len(flag_columns))
    return {"kpi": kpi, "judges": len(raters), "turns": len(complete), "unanimous": pct(unanimous),
            "pairwise": pct(percent_agreement(matrix)), "kappa": kappa, "kappa_note": kappa_note,
            "relevant_unanimous": pct(relevant_unanimous)}


def _value_of(votes: list[Verdict], rater: str) -> float | None:
    value = next((vote.value for vote in votes if vote.rater == rater), None)
    return float(value) if isinstance(value, int) else None


def _flag_of(votes: list[Verdict], rater: str) -> bool | None:
    return next((vote.relevant for vote in votes if vote.rater == rater), None)


def _measurements(inputs: ReportInputs, kpis: tuple[str, ...]) -> list[tuple[str, str, int, str, str, str]]:
    rows = []
    for kpi in kpis:
        measured: dict[str, list[float]] = {}
        for items in inputs.votes[kpi].by_source.get("metrics", {}).values():
            for vote in items.votes:
                for key, value in _raw_numbers(vote).items():
                    measured.setdefault(key, []).append(value)
        for key, values in measured.items():
            if key.startswith(("max_", "min_")):
                continue
            rows.append((kpi, key, len(values), num(statistics.fmean(values)),
                         num(statistics.median(values)), num(max(values))))
    return rows


def _raw_numbers(vote: Verdict) -> dict[str, float]:
    try:
        data = json.loads(vote.raw or "")
    except json.JSONDecodeError:
        return {}
    if not isinstance(data, dict):
        return {}
    return {key: float(value) for key, value in data.items() if isinstance(value, int | float)}
