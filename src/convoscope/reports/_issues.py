"""The dialogue-issues section (MEDAL): a heatmap of issue rates per chatbot x language for each
source (judges, people), the mean overall score per chatbot, and the flagged dialogues behind
every cell, one click away (each cell links to the anchor listing its dialogues)."""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any
from urllib.parse import urlencode

from convoscope.judges import Verdict
from convoscope.reports._html import heat_colour, num, pct, slug
from convoscope.reports._inputs import ReportInputs
from convoscope.reports._render_items import dialogue_turns
from convoscope.reports._votes import SOURCE_TITLES, ItemVotes, rate

Cell = tuple[str, str]  # (system, language)
MAX_EXAMPLES = 30  # dialogues shown in full per cell; the ids of the rest are listed


def issues_section(inputs: ReportInputs, issues: tuple[str, ...], overall: str | None,
                   viewer_url: str | None = None) -> dict[str, Any]:
    """``viewer_url``: where ``convoscope view`` serves these verdicts; each cell then also links
    to the viewer, filtered to that issue, chatbot and language."""
    sources = [s for s in ("judges", "people") if any(inputs.votes[i].by_source.get(s) for i in issues)]
    sides = []
    for source in sources:
        rows, listings = _heatmap(inputs, issues, source, viewer_url)
        sides.append({"source": source, "title": SOURCE_TITLES[source], "issues": issues, "rows": rows,
                      "listings": listings, "overall": _overall_table(inputs, overall, source),
                      "overall_name": overall})
    return {"sides": sides}


def _heatmap(inputs: ReportInputs, issues: tuple[str, ...], source: str,
             viewer_url: str | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    cells: set[Cell] = set()
    for issue in issues:
        cells |= {(v.system, v.language) for v in inputs.votes[issue].by_source.get(source, {}).values()}
    rows: list[dict[str, Any]] = []
    listings: list[dict[str, Any]] = []
    for system, language in sorted(cells):
        row: dict[str, Any] = {"system": system, "language": language, "cells": []}
        for issue in issues:
            votes = [v for v in inputs.votes[issue].by_source.get(source, {}).values()
                     if (v.system, v.language) == (system, language)]
            flagged = [v for v in votes if v.pooled_value() == 1]
            judged = sum(v.pooled_value() is not None for v in votes)
            share = rate(len(flagged), judged)
            anchor = slug("ex", source, issue, system, language, str(len(listings))) if flagged else None
            if anchor is not None:
                listings.append(_examples(inputs, anchor, issue, system, language, flagged))
            cell = {"issue": issue, "share": pct(share), "flagged": len(flagged), "judged": judged,
                    "colour": heat_colour(share), "anchor": anchor,
                    "viewer": _viewer_link(viewer_url, issue, system, language) if flagged else None,
                    "label": f"{issue}: {len(flagged)} of {judged} dialogues of {system} ({language})"}
            row["cells"].append(cell)
        rows.append(row)
    return rows, listings


def _viewer_link(viewer_url: str | None, issue: str, system: str, language: str) -> str | None:
    if not viewer_url:
        return None
    query = {"criterion": issue, "value": "1", "system": system, "language": language}
    return viewer_url.rstrip("/") + "/?" + urlencode({k: v for k, v in query.items() if v})


def _examples(inputs: ReportInputs, anchor: str, issue: str, system: str, language: str,
              flagged: list[ItemVotes]) -> dict[str, Any]:
    entries = []
    for votes in flagged[:MAX_EXAMPLES]:
        reasons = [(v.rater, _why(v)) for v in votes.votes if v.value == 1]
        if votes.panel is not None and not reasons:
            reasons = [(votes.panel.rater, votes.panel.reason or "")]
        item = inputs.items.get(votes.item_id)
        entries.append({"item_id": votes.item_id, "reasons": reasons,
                        "dialogue": dialogue_turns(item) if item is not None else None})
    return {"anchor": anchor, "issue": issue, "system": system, "language": language,
            "count": len(flagged), "entries": entries,
            "others": [votes.item_id for votes in flagged[MAX_EXAMPLES:]]}


def _why(verdict: Verdict) -> str:
    if verdict.reason:
        return verdict.reason
    if verdict.expected_value is not None:  # completion mode: a score, no words
        return f"(no reason: scored from token probabilities, P(present) = {verdict.expected_value:.2f})"
    return "(no reason given)"


def _overall_table(inputs: ReportInputs, overall: str | None, source: str) -> list[tuple[str, str, int]]:
    """(chatbot, mean overall score, dialogues) per chatbot; empty without an overall criterion."""
    if overall is None or not inputs.votes[overall].by_source.get(source):
        return []
    per_system: dict[str, list[float]] = defaultdict(list)
    for votes in inputs.votes[overall].by_source[source].values():
        value = votes.pooled_value(numeric_range=True)
        if isinstance(value, int | float):
            per_system[votes.system].append(float(value))
    return [(system, num(statistics.fmean(values)), len(values))
            for system, values in sorted(per_system.items())]
