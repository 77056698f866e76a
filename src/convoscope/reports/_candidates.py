"""The response-candidates section (protocols 002/003): per system and criterion the share of
positive answers by majority (one pooled answer per candidate) and by all votes (every rater's
answer counts), the negative and "I don't know" shares, and the breakdown of negative answers by
the explanation options chosen (the protocol's sub-dimension chart)."""

from __future__ import annotations

from collections import Counter

from convoscope.reports._html import PALETTE, esc, pct, table
from convoscope.reports._inputs import ReportInputs
from convoscope.reports._votes import SOURCE_TITLES, ItemVotes, rate

REFERENCE_SYSTEMS = {"ground-truth", "ground_truth", "reference", "gold", "human"}
NO_OPTION = "(no option chosen)"


def candidates_section(inputs: ReportInputs, criteria: tuple[str, ...]) -> str:
    sources = [s for s in ("judges", "people") if any(inputs.votes[c].by_source.get(s) for c in criteria)]
    sides = [f"<div class=side><h3>{esc(SOURCE_TITLES[source])}</h3>"
             f"{_results_table(inputs, criteria, source)}"
             f"{_negative_breakdown(inputs, criteria, source)}</div>" for source in sources]
    note = ("<p class=note>By majority: one answer per candidate (the panel's verdict, else the most "
            "frequent answer; ties go to the negative answer). By all votes: every rater's answer "
            "counts. \"I don't know\" answers count in the all-votes denominator only. Systems named "
            "ground-truth, reference or gold are the reference candidate.</p>")
    return (f"<section id=response-candidates><h2>Response candidates</h2>{note}"
            f"<div class=sides>{''.join(sides)}</div></section>")


def _systems(inputs: ReportInputs, criteria: tuple[str, ...], source: str) -> list[str]:
    names = {votes.system for c in criteria for votes in inputs.votes[c].by_source.get(source, {}).values()}
    return sorted(names, key=lambda name: (name.lower() in REFERENCE_SYSTEMS, name))


def _results_table(inputs: ReportInputs, criteria: tuple[str, ...], source: str) -> str:
    rows = []
    for criterion in criteria:
        by_item = inputs.votes[criterion].by_source.get(source, {})
        for system in _systems(inputs, criteria, source):
            items = [v for v in by_item.values() if v.system == system]
            if not items:
                continue
            pooled = [v.pooled_value() for v in items]
            decided = [value for value in pooled if value is not None]
            votes = [vote for v in items for vote in v.votes]
            positive = sum(vote.value == 1 for vote in votes)
            negative = sum(vote.value == 0 for vote in votes)
            idk = sum(vote.unscored_reason == "idk" for vote in votes)
            counted = positive + negative + idk
            reference = system.lower() in REFERENCE_SYSTEMS
            label = esc(system) + (" <small>(reference)</small>" if reference else "")
            by_majority = rate(sum(value == 1 for value in decided), len(decided))
            rows.append([esc(criterion), label,
                         f"<td class='num majority'>{pct(by_majority)}</td>",
                         f"<td class='num allvotes'>{pct(rate(positive, counted))}</td>",
                         f"<td class=num>{pct(rate(negative, counted))}</td>",
                         f"<td class=num>{pct(rate(idk, counted))}</td>",
                         f"<td class=num>{len(items)}</td>", f"<td class=num>{len(votes)}</td>"])
    headers = ["criterion", "system", "positive (majority)", "positive (all votes)", "negative (all votes)",
               "I don't know", "candidates", "votes"]
    return table(headers, rows, cls="candidates")


def _negative_breakdown(inputs: ReportInputs, criteria: tuple[str, ...], source: str) -> str:
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
        legend = "".join(f"<span><i style='background:{colour[o]}'></i>{esc(o)}</span>" for o in options)
        rows = [[esc(system), _bar(count, colour),
                 esc(", ".join(f"{option}: {n}" for option, n in sorted(count.items())))]
                for system, count in counts.items() if count]
        blocks.append(f"<h4>Why negative: {esc(criterion)}</h4><div class=legend>{legend}</div>"
                      + table(["system", "share of options among negative votes", "counts"], rows,
                              cls="breakdown"))
    return "".join(blocks)


def _option_counts(items: list[ItemVotes]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for votes in items:
        for vote in votes.votes:
            if vote.value == 0:
                counts.update(vote.options or (NO_OPTION,))
    return counts


def _bar(count: Counter[str], colour: dict[str, str]) -> str:
    total = sum(count.values())
    spans = "".join(f"<span style='width:{100 * n / total:.1f}%;background:{colour[option]}' "
                    f"title='{esc(option)}: {n}'></span>" for option, n in sorted(count.items()))
    return f"<div class=bar>{spans}</div>"
