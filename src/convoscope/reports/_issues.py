"""The dialogue-issues section (MEDAL): a heatmap of issue rates per chatbot x language for each
source (judges, people), the mean overall score per chatbot, and the flagged dialogues behind
every cell, one click away (each cell links to the anchor listing its dialogues)."""

from __future__ import annotations

import statistics
from collections import defaultdict

from convoscope.judges import Verdict
from convoscope.reports._html import esc, heat_colour, num, pct, slug, table
from convoscope.reports._inputs import ReportInputs
from convoscope.reports._render_items import render_dialogue
from convoscope.reports._votes import SOURCE_TITLES, ItemVotes, rate

Cell = tuple[str, str]  # (system, language)
MAX_EXAMPLES = 30  # dialogues shown in full per cell; the ids of the rest are listed


def issues_section(inputs: ReportInputs, issues: tuple[str, ...], overall: str | None) -> str:
    sources = [s for s in ("judges", "people") if any(inputs.votes[i].by_source.get(s) for i in issues)]
    sides, examples = [], []
    for source in sources:
        heatmap, listed = _heatmap(inputs, issues, source)
        sides.append(f"<div class=side><h3>{esc(SOURCE_TITLES[source])}</h3>{heatmap}"
                     f"{_overall_table(inputs, overall, source)}</div>")
        examples.append(listed)
    note = ("<p class=note>Share of dialogues in which the issue is present (pooled over raters: "
            "the panel's verdict, else the most frequent answer), with flagged / judged counts. "
            "Click a cell for its dialogues and the raters' reasons.</p>")
    return (f"<section id=dialogue-issues><h2>Dialogue issues</h2>{note}"
            f"<div class=sides>{''.join(sides)}</div>{''.join(examples)}</section>")


def _heatmap(inputs: ReportInputs, issues: tuple[str, ...], source: str) -> tuple[str, str]:
    cells: set[Cell] = set()
    for issue in issues:
        cells |= {(v.system, v.language) for v in inputs.votes[issue].by_source.get(source, {}).values()}
    rows: list[list[str]] = []
    listings: list[str] = []
    for system, language in sorted(cells):
        row = [esc(system), esc(language)]
        for issue in issues:
            votes = [v for v in inputs.votes[issue].by_source.get(source, {}).values()
                     if (v.system, v.language) == (system, language)]
            flagged = [v for v in votes if v.pooled_value() == 1]
            judged = sum(v.pooled_value() is not None for v in votes)
            share = rate(len(flagged), judged)
            text = f"{pct(share)}<br><small>{len(flagged)}/{judged}</small>"
            style = f" style='background:{heat_colour(share)}'"
            label = f"{issue}: {len(flagged)} of {judged} dialogues of {system} ({language})"
            cell = f"<td class=heat{style} data-issue='{esc(issue)}' title='{esc(label)}'>"
            if flagged:
                anchor = slug("ex", source, issue, system, language, str(len(listings)))
                row.append(f"{cell}<a href='#{anchor}'>{text}</a></td>")
                listings.append(_examples(inputs, anchor, issue, source, system, language, flagged))
            else:
                row.append(f"{cell}{text}</td>")
        rows.append(row)
    headers = ["chatbot", "language", *(esc(issue) for issue in issues)]
    heatmap = table(headers, rows, cls=f"heatmap heatmap-{source}")
    title = f"<h3>Flagged dialogues — {esc(SOURCE_TITLES[source])}</h3>" if listings else ""
    return heatmap, f"{title}<div class=examples>{''.join(listings)}</div>"


def _examples(inputs: ReportInputs, anchor: str, issue: str, source: str, system: str, language: str,
              flagged: list[ItemVotes]) -> str:
    entries = []
    for votes in flagged[:MAX_EXAMPLES]:
        reasons = "".join(f"<li><b>{esc(v.rater)}</b>: {esc(_why(v))}</li>"
                          for v in votes.votes if v.value == 1)
        if votes.panel is not None and not reasons:
            reasons = f"<li><b>{esc(votes.panel.rater)}</b>: {esc(votes.panel.reason or '')}</li>"
        item = inputs.items.get(votes.item_id)
        dialogue = render_dialogue(item) if item is not None else ""
        entries.append(f"<li><b>{esc(votes.item_id)}</b>{dialogue}<ul>{reasons}</ul></li>")
    count = f"{len(flagged)} dialogue{'s' if len(flagged) != 1 else ''}"
    more = len(flagged) - MAX_EXAMPLES
    others = ", ".join(votes.item_id for votes in flagged[MAX_EXAMPLES:])
    rest = f"<p class=muted>… and {more} more: {esc(others)}</p>"
    return (f"<div class=example id='{anchor}'><h4>{esc(issue)} — {esc(system)} ({esc(language)}), "
            f"{count}</h4><ol>{''.join(entries)}</ol>{rest if more > 0 else ''}</div>")


def _why(verdict: Verdict) -> str:
    if verdict.reason:
        return verdict.reason
    if verdict.expected_value is not None:  # completion mode: a score, no words
        return f"(no reason: scored from token probabilities, P(present) = {verdict.expected_value:.2f})"
    return "(no reason given)"


def _overall_table(inputs: ReportInputs, overall: str | None, source: str) -> str:
    if overall is None or not inputs.votes[overall].by_source.get(source):
        return ""
    per_system: dict[str, list[float]] = defaultdict(list)
    for votes in inputs.votes[overall].by_source[source].values():
        value = votes.pooled_value(numeric_range=True)
        if isinstance(value, int | float):
            per_system[votes.system].append(float(value))
    rows = [[esc(system), f"<td class=num>{num(statistics.fmean(values))}</td>",
             f"<td class=num>{len(values)}</td>"] for system, values in sorted(per_system.items())]
    return "<h4>Overall score per chatbot</h4>" + table(["chatbot", f"mean {esc(overall)}", "dialogues"],
                                                        rows, cls="overall")
