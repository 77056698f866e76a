"""The KPI section (InCA): per KPI and rater — each judge, the pooled panel, each person, the
people pooled, and computed metrics — the relevance rate and the fulfilled rate among relevant
turns; the panel's agreement per KPI; and the measurements behind computed KPIs."""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence

import numpy as np

from convoscope.judges import Verdict
from convoscope.reports._html import esc, num, pct, table
from convoscope.reports._inputs import ReportInputs
from convoscope.reports._votes import CriterionVotes, rate


def kpi_section(inputs: ReportInputs, kpis: tuple[str, ...]) -> str:
    rows: list[list[str]] = []
    agreement_rows: list[list[str]] = []
    for kpi in kpis:
        votes = inputs.votes[kpi]
        rows.extend(_rate_rows(kpi, votes))
        agreement = _agreement_row(kpi, votes)
        if agreement:
            agreement_rows.append(agreement)
    headers = ["KPI", "rater", "turns", "relevant", "relevance rate", "fulfilled among relevant",
               "unscored"]
    body = table(headers, rows, cls="kpis")
    if agreement_rows:
        body += "<h3>Panel agreement</h3>" + table(
            ["KPI", "judges", "turns rated by all", "unanimous (fulfilled)", "pairwise agreement",
             "Fleiss' kappa", "unanimous (relevant)"], agreement_rows, cls="agreement")
    measured = _measurements(inputs, kpis)
    note = ("<p class=note>Relevance rate: share of turns a rater marked relevant to the KPI. "
            "Fulfilled among relevant: share fulfilled among the scored turns not marked irrelevant. "
            "Pooled rows use the panel's verdict (max-vote) and the majority of the judges' "
            "relevance flags; computed KPIs (rater metric:…) apply to every turn.</p>")
    return f"<section id=kpis><h2>KPIs</h2>{note}{body}{measured}</section>"


def _rate_rows(kpi: str, votes: CriterionVotes) -> list[list[str]]:
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
         pooled_row: bool = False) -> list[str]:
    flagged = [relevant for _, relevant, _ in answers if relevant is not None]
    relevant_scored = [value for value, relevant, _ in answers if relevant is not False and value is not None]
    unscored = sum(value is None for value, _, _ in answers)
    fulfilled = rate(sum(value == 1 for value in relevant_scored), len(relevant_scored))
    name = f"<b>{esc(rater)}</b>" if pooled_row else esc(rater)
    return [esc(kpi), name, f"<td class=num>{len(answers)}</td>",
            f"<td class=num>{sum(flagged) if flagged else '–'}</td>",
            f"<td class='num relevance'>{pct(rate(sum(flagged), len(flagged)))}</td>",
            f"<td class='num fulfilled'>{pct(fulfilled)}</td>",
            f"<td class=num>{unscored}</td>"]


def _agreement_row(kpi: str, votes: CriterionVotes) -> list[str] | None:
    from convoscope.analysis import fleiss_kappa, percent_agreement

    raters = votes.raters("judges")
    if len(raters) < 2:
        return None
    items = list(votes.by_source["judges"].values())
    values = [[_value_of(v.votes, rater) for v in items] for rater in raters]
    complete = [column for column in zip(*values, strict=True) if None not in column]
    if not complete:
        return [esc(kpi), str(len(raters)), "<td class=num>0</td>", "–", "–", "–", "–"]
    matrix = np.array(complete, dtype=float).T
    unanimous = float(np.mean([len(set(column)) == 1 for column in complete]))
    try:
        kappa = num(fleiss_kappa(matrix))
    except ValueError:
        kappa = "– <small>(one category only)</small>"
    flags = [[_flag_of(v.votes, rater) for v in items] for rater in raters]
    flag_columns = [column for column in zip(*flags, strict=True) if None not in column]
    relevant_unanimous = rate(sum(len(set(c)) == 1 for c in flag_columns), len(flag_columns))
    return [esc(kpi), str(len(raters)), f"<td class=num>{len(complete)}</td>",
            f"<td class=num>{pct(unanimous)}</td>", f"<td class=num>{pct(percent_agreement(matrix))}</td>",
            f"<td class=num>{kappa}</td>", f"<td class=num>{pct(relevant_unanimous)}</td>"]


def _value_of(votes: list[Verdict], rater: str) -> float | None:
    value = next((vote.value for vote in votes if vote.rater == rater), None)
    return float(value) if isinstance(value, int) else None


def _flag_of(votes: list[Verdict], rater: str) -> bool | None:
    return next((vote.relevant for vote in votes if vote.rater == rater), None)


def _measurements(inputs: ReportInputs, kpis: tuple[str, ...]) -> str:
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
            rows.append([esc(kpi), esc(key), f"<td class=num>{len(values)}</td>",
                         f"<td class=num>{num(statistics.fmean(values))}</td>",
                         f"<td class=num>{num(statistics.median(values))}</td>",
                         f"<td class=num>{num(max(values))}</td>"])
    if not rows:
        return ""
    return "<h3>Computed KPIs: measurements</h3>" + table(
        ["KPI", "measure", "turns", "mean", "median", "max"], rows, cls="measurements")


def _raw_numbers(vote: Verdict) -> dict[str, float]:
    try:
        data = json.loads(vote.raw or "")
    except json.JSONDecodeError:
        return {}
    if not isinstance(data, dict):
        return {}
    return {key: float(value) for key, value in data.items() if isinstance(value, int | float)}
