"""The response-candidates section (protocols 002/003): per system and criterion the share of
positive answers by majority (one pooled answer per candidate) and by all votes (every rater's
answer counts), the negative and "I don't know" shares, and the breakdown of negative answers by
the explanation options chosen (the protocol's sub-dimension chart)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from convoscope.reports._html import PALETTE, pct
from convoscope.reports._inputs import ReportInputs
from convoscope.reports._votes import SOURCE_TITLES, ItemVotes, rate

REFERENCE_SYSTEMS = {"ground-truth", "ground_truth", "reference", "gold", "human"}
NO_OPTION = "(no option chosen)"


def candidates_section(inputs: ReportInputs, criteria: tuple[str, ...]) -> dict[str, Any]:
    sources = [s for s in ("judges", "people") if any(inputs.votes[c].by_source.get(s) for c in criteria)]
    return {"sides": [{"title": SOURCE_TITLES[source], "rows": _results(inputs, criteria, source),
                       "breakdowns": _negative_breakdown(inputs, criteria, source)}
                      for source in sources]}


def _systems(inputs: ReportInputs, criteria: tuple[str, ...], source: str) -> list[str]:
    names = {votes.system for c in criteria for votes in inputs.votes[c].by_source.get(source, {}).values()}
    return sorted(names, key=lambda name: (name.lower() in REFERENCE_SYSTEMS, name))


def _results(inputs: ReportInputs, criteria: tuple[str, ...], source: str) -> list[dict[str, Any]]:
    rows = []
    for criterion in criteria:
        by_item = inputs.votes[criterion].by_source.get(source, {})
        for system in _systems(inputs, criteria, source):
            items = [v for v in by_item.values() if v.system == system]
            if not items:
                continue
            decided = [value for value in (v.pooled_value() for v in items) if value is not None]
            votes = [vote for v in items for vote in v.votes]
            positive = sum(vote.value == 1 for vote in votes)
            negative = sum(vote.value == 0 for vote in votes)
            idk = sum(vote.unscored_reason == "idk" for vote in votes)
            counted = positive + negative + idk
            rows.append({"criterion": criterion, "system": system,
                         "reference": system.lower() in REFERENCE_SYSTEMS,
                         "majority": pct(rate(sum(value == 1 for value in decided), len(decided))),
                         "positive": pct(rate(positive, counted)), "negative": pct(rate(negative, counted)),
                         "idk": pct(rate(idk, counted)), "candidates": len(items), "votes": len(votes)})
    return rows


def _negative_breakdown(inputs: ReportInputs, criteria: tuple[str, ...], source: str) -> list[dict[str, Any]]:
    blocks = []
    for criterion in criteria:
        by_item = inputs.votes[criterion].by_source.get(source, {})
        counts = {system: _option_counts([v for v in by_item.values() if v.system == system])
                  for system in _systems(inputs, criteria, source)}
        options = sorted({option for count in counts.values() for option in count},
                         key=lambda option: (option == NO_OPTION, option))
        if not options:
            continue
        colour = {option: PALETTE[index % len(PALETTE)] for index, option in enumerate(options)}
        rows = [{"system": system, "bar": _bar(count, colour),
                 "counts": ", ".join(f"{option}: {n}" for option, n in sorted(count.items()))}
                for system, count in counts.items() if count]
        blocks.append({"criterion": criterion, "legend": [(o, colour[o]) for o in options], "rows": rows})
    return blocks


def _option_counts(items: list[ItemVotes]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for votes in items:
        for vote in votes.votes:
            if vote.value == 0:
                counts.update(vote.options or (NO_OPTION,))
    return counts


def _bar(count: Counter[str], colour: dict[str, str]) -> list[dict[str, Any]]:
    """The bar's segments: option, count, width in percent, colour."""
    total = sum(count.values())
    return [{"option": option, "count": n, "width": f"{100 * n / total:.1f}", "colour": colour[option]}
            for option, n in sorted(count.items())]
