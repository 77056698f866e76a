"""The campaign report (HTML): seed 003's reporting checklist filled from the campaign, then results.

The checklist (step 4 of the protocol) asks for the task's granularity, criteria with their
definitions and questions, the annotation format, sampling and qualification, how many annotators
were recruited and took part, the items, votes per item, agreement with the metric used, workload
per annotator, demographics and resources (time, payment, platform). Whatever the data can tell is
computed; what only the researcher knows comes from ``reporting:`` in campaign.yaml and is marked
when missing. One self-contained file: no script, no external asset; every text is escaped.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

from convoscope.campaigns._results import IDK_LABEL, NO_MAJORITY, OptionCount, SystemResult, answer_labels
from convoscope.campaigns._status import CampaignStatus

if TYPE_CHECKING:
    from convoscope.campaigns._campaign import Campaign

_STYLE = """body{font-family:system-ui,"Noto Sans CJK KR","NanumGothic",sans-serif;margin:2rem;color:#222;
max-width:70rem}table{border-collapse:collapse;margin:.5rem 0 1.5rem}td,th{border:1px solid #ccc;
padding:.3rem .5rem;vertical-align:top;text-align:left}th{background:#f3f3f3}.missing{color:#a40}
.num{text-align:right;font-variant-numeric:tabular-nums}.legend span{display:inline-block;margin-right:1rem}
.swatch{display:inline-block;width:.8rem;height:.8rem;margin-right:.3rem;vertical-align:middle}"""
_COLOURS = ["#3a7d44", "#c0392b", "#7f8c8d", "#d4a017", "#2c6fbb", "#8e44ad", "#16a085", "#e67e22"]


def render_report(campaign: Campaign) -> str:
    """The whole report as one HTML string."""
    status = campaign.status()
    results, options = campaign.results()
    spec = campaign.spec
    title = spec.title or spec.name
    body = (f"<h1>{escape(title)}</h1><p>Campaign <code>{escape(spec.name)}</code>: "
            f"{status.answers} answers from {sum(1 for a in status.annotators if a.answers)} annotators.</p>"
            f"<h2>Reporting checklist</h2>{_checklist(campaign, status)}"
            f"<h2>Results per system</h2>{_results(campaign, results)}"
            f"<h2>Why answers were negative</h2>{_options(options)}"
            f"{status_tables(status)}")
    return (f"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{escape(title)}"
            f"</title><style>{_STYLE}</style></head><body>{body}</body></html>")


def write_report(campaign: Campaign, out: str | Path) -> Path:
    path = Path(out)
    path.write_text(render_report(campaign), encoding="utf-8")
    return path


def _checklist(campaign: Campaign, status: CampaignStatus) -> str:
    spec, facts = campaign.spec, campaign.spec.reporting
    level = "dialogue level" if spec.granularity == "dialogue" else "response (turn) level"
    rows = [
        ("Evaluation granularity", f"{level}; absolute: each candidate is judged on its own"
         + ("; the ground-truth turn is judged as one more candidate" if spec.include_reference else "")),
        ("Quality dimensions", _criteria(campaign)),
        ("Annotation format", escape(facts.annotation_format)),
        ("Sampling criteria", _given(facts.sampling, "sampling")),
        ("Qualification task and acceptance", escape(_qualification_text(campaign))),
        ("Annotators recruited (invited)", str(status.invited)),
        ("Annotators who took part", str(sum(1 for a in status.annotators if a.answers))),
        ("Annotators qualified", _qualified_text(status)),
        ("Samples annotated", escape(_samples_text(campaign))),
        ("Votes per sample", escape(_votes_text(campaign))),
        ("Inter-annotator agreement (metric)", escape(_agreement_text(status))),
        ("Workload per annotator", escape(_workload_text(campaign, status))),
        ("Demographics", _given(facts.demographics, "demographics")),
        ("Time to do the task", escape(_time_text(campaign, status))),
        ("Payment", _given(facts.payment, "payment")),
        ("Platform", _given(facts.platform, "platform")),
    ]
    return "<table>" + "".join(f"<tr><th>{escape(name)}</th><td>{value}</td></tr>" for name, value in rows) \
        + "</table>"


def _given(text: str, field: str) -> str:
    if text.strip():
        return escape(text)
    return f"<span class=\"missing\">not stated: set <code>reporting.{field}</code> in campaign.yaml</span>"


def _criteria(campaign: Campaign) -> str:
    entries = []
    for criterion in campaign.criteria.values():
        answers = ", ".join(answer_labels(criterion))
        entries.append(f"<li><strong>{escape(criterion.name)}</strong>: {escape(criterion.definition)} "
                       f"<em>Question:</em> {escape(criterion.question)} "
                       f"<em>Answers:</em> {escape(answers)}</li>")
    return f"<ul>{''.join(entries)}</ul>"


def _qualification_text(campaign: Campaign) -> str:
    settings = campaign.spec.qualification
    if not settings.enabled:
        return "no qualification task"
    references = len(settings.reference_annotators)
    return (f"a qualification batch of {settings.contexts} contexts, judged like a main batch; an "
            f"annotator qualifies when Fleiss' kappa together with the {references} internal reference "
            f"annotator(s) is at least {settings.kappa_threshold:g}")


def _qualified_text(status: CampaignStatus) -> str:
    tried = [a for a in status.annotators if a.qualification is not None and not a.reference]
    if not tried:
        return "no annotator has finished the qualification batch"
    return f"{status.qualified} of the {len(tried)} who finished the qualification batch"


def _main_votes(campaign: Campaign) -> dict[str, int]:
    trial = {c.item_id for b in campaign.batches if b.kind == "qualification" for x in b.contexts
             for c in x.candidates}
    votes: dict[str, int] = {}
    for verdict in campaign.verdicts():
        if verdict.item_id not in trial:
            key = f"{verdict.item_id}\x1f{verdict.criterion}"
            votes[key] = votes.get(key, 0) + 1
    return votes


def _samples_text(campaign: Campaign) -> str:
    mains = [b for b in campaign.batches if b.kind == "main"]
    contexts = sum(len(b.contexts) for b in mains)
    candidates = sum(len(x.candidates) for b in mains for x in b.contexts)
    judged = len({key.split("\x1f")[0] for key in _main_votes(campaign)})
    return (f"{candidates} candidates for {contexts} contexts in {len(mains)} main batches; "
            f"{judged} candidates have at least one answer")


def _votes_text(campaign: Campaign) -> str:
    counts = list(_main_votes(campaign).values())
    if not counts:
        return "no votes yet"
    return (f"mean {statistics.mean(counts):.1f}, min {min(counts)}, max {max(counts)} votes per candidate "
            f"and criterion (planned: {campaign.spec.annotators_per_batch})")


def _agreement_text(status: CampaignStatus) -> str:
    rows = [b.agreement for b in status.batches if b.kind == "main" and b.agreement is not None]
    fleiss = [r.fleiss_kappa for r in rows if r.fleiss_kappa is not None]
    if not fleiss:
        return "not measurable yet (needs two annotators on a main batch)"
    cohen = [r.mean_cohen_kappa for r in rows if r.mean_cohen_kappa is not None]
    text = (f"Fleiss' kappa per main batch, \"I don't know\" as its own category: mean "
            f"{statistics.mean(fleiss):.3f} (range {min(fleiss):.3f} to {max(fleiss):.3f}, "
            f"{len(fleiss)} batches)")
    if cohen:
        text += f"; mean pairwise Cohen's kappa {statistics.mean(cohen):.3f}"
    return text


def _workload_text(campaign: Campaign, status: CampaignStatus) -> str:
    active = [a for a in status.annotators if a.answers]
    if not active:
        return "no answers yet"
    batches = [a.batches_finished for a in active]
    answers = [a.answers for a in active]
    return (f"main batches finished per annotator: median {statistics.median(batches):g} "
            f"(range {min(batches)}–{max(batches)}); answers per annotator: median "
            f"{statistics.median(answers):g} (range {min(answers)}–{max(answers)}); "
            f"{campaign.spec.contexts_per_batch} contexts per batch")


def _time_text(campaign: Campaign, status: CampaignStatus) -> str:
    spec = campaign.spec
    medians = [b.median_minutes for b in status.batches if b.median_minutes is not None]
    planned = ", ".join(part for part in (
        f"expected {spec.expected_minutes_per_batch:g} min" if spec.expected_minutes_per_batch else "",
        f"maximum {spec.max_minutes_per_batch:g} min" if spec.max_minutes_per_batch else "") if part)
    measured = (f"median {statistics.median(medians):.1f} min per finished batch (time on task pages)"
                if medians else "no finished batch yet")
    return measured + (f"; planned: {planned}" if planned else "")


def _results(campaign: Campaign, results: Sequence[SystemResult]) -> str:
    if not results:
        return "<p>No answers on main batches yet.</p>"
    parts = []
    for name, criterion in campaign.criteria.items():
        rows = [r for r in results if r.criterion == name]
        if not rows:
            continue
        labels = [*answer_labels(criterion), NO_MAJORITY]
        parts.append(f"<h3>{escape(name)}</h3>{_legend(labels)}{_chart(rows, labels)}{_table(rows, labels)}")
    return "".join(parts)


def _legend(labels: Sequence[str]) -> str:
    swatches = "".join(f"<span><i class=\"swatch\" style=\"background:{_COLOURS[i % len(_COLOURS)]}\">"
                       f"</i>{escape(label)}</span>" for i, label in enumerate(labels))
    return f"<p class=\"legend\">{swatches}</p>"


def _chart(rows: Sequence[SystemResult], labels: Sequence[str]) -> str:
    """Stacked horizontal bars: for each system, majority vote then all votes."""
    bar_width, height, left = 420, 18, 210
    bars = []
    for index, (row, kind) in enumerate((r, k) for r in rows for k in ("majority", "all votes")):
        shares = row.majority if kind == "majority" else row.all_votes
        y, x = index * (height + 6), float(left)
        bars.append(f"<text x=\"0\" y=\"{y + 13}\" font-size=\"12\">{escape(row.system)} · {kind}</text>")
        for i, label in enumerate(labels):
            width = bar_width * shares.get(label, 0.0) / 100
            if width > 0:
                bars.append(f"<rect x=\"{x:.1f}\" y=\"{y}\" width=\"{width:.1f}\" height=\"{height}\" "
                            f"fill=\"{_COLOURS[i % len(_COLOURS)]}\"><title>{escape(label)}: "
                            f"{shares.get(label, 0.0):.1f}%</title></rect>")
                x += width
    total = len(rows) * 2 * (height + 6)
    return (f"<svg role=\"img\" aria-label=\"answers per system\" width=\"{left + bar_width + 10}\" "
            f"height=\"{total}\" xmlns=\"http://www.w3.org/2000/svg\">{''.join(bars)}</svg>")


def _table(rows: Sequence[SystemResult], labels: Sequence[str]) -> str:
    head = "".join(f"<th>majority: {escape(label)}</th>" for label in labels)
    head += "".join(f"<th>votes: {escape(label)}</th>" for label in labels if label != NO_MAJORITY)
    body = ""
    for row in rows:
        cells = "".join(f"<td class=\"num\">{row.majority.get(label, 0.0):.1f}%</td>" for label in labels)
        cells += "".join(f"<td class=\"num\">{row.all_votes.get(label, 0.0):.1f}%</td>"
                         for label in labels if label != NO_MAJORITY)
        body += (f"<tr><td>{escape(row.system)}</td><td class=\"num\">{row.candidates}</td>"
                 f"<td class=\"num\">{row.votes}</td>{cells}</tr>")
    return f"<table><tr><th>system</th><th>candidates</th><th>votes</th>{head}</tr>{body}</table>"


def _options(options: Sequence[OptionCount]) -> str:
    if not options:
        return "<p>No negative or \"I don't know\" answers yet.</p>"
    body = "".join(f"<tr><td>{escape(o.criterion)}</td><td>{escape(o.system)}</td><td>{escape(o.option)}</td>"
                   f"<td class=\"num\">{o.count}</td><td class=\"num\">{o.percent:.1f}%</td></tr>"
                   for o in sorted(options, key=lambda o: (o.criterion, o.system, -o.count)))
    return (f"<p>Share of the negative and \"{escape(IDK_LABEL)}\" votes that chose each explanation "
            f"option (several may be chosen at once).</p><table><tr><th>criterion</th><th>system</th>"
            f"<th>option</th><th>votes</th><th>share</th></tr>{body}</table>")


def status_tables(status: CampaignStatus) -> str:
    """Agreement, time and flags per batch, then workload per annotator (report and dashboard)."""
    return (f"<h2>Agreement per batch</h2>{_agreement(status)}"
            f"<h2>Workload per annotator</h2>{_workload(status)}")


def _agreement(status: CampaignStatus) -> str:
    body = ""
    for row in status.batches:
        a = row.agreement
        stats = [a.fleiss_kappa, a.mean_cohen_kappa, a.strong_kappa] if a else [None] * 3
        cells = "".join(f"<td class=\"num\">{_number(value)}</td>" for value in stats)
        note = (a.note if a else None) or ""
        body += (f"<tr><td>{escape(row.batch)}</td><td>{row.finished}/{row.started}/{row.wanted or '—'}</td>"
                 f"<td class=\"num\">{row.answers}</td>{cells}"
                 f"<td class=\"num\">{_number(row.median_minutes, 1)}</td>"
                 f"<td>{escape(', '.join(row.over_time))}</td><td>{escape(', '.join(row.flagged))}</td>"
                 f"<td>{escape(note)}</td></tr>")
    head = ("batch", "finished/started/wanted", "answers", "Fleiss κ", "mean Cohen κ", "strong κ",
            "median min", "over time", "flagged", "note")
    return f"<table><tr>{''.join(f'<th>{name}</th>' for name in head)}</tr>{body}</table>"


def _workload(status: CampaignStatus) -> str:
    body = ""
    for a in status.annotators:
        result = a.qualification
        qualification = "—" if result is None else (
            f"{'yes' if result.qualified else 'no'} (κ {_number(result.kappa)})" if result.kappa is not None
            else f"{'yes' if result.qualified else 'not yet'} ({result.note or 'no kappa'})")
        if a.reference:
            qualification = "reference annotator"
        body += (f"<tr><td>{escape(a.annotator)}</td><td class=\"num\">{a.answers}</td>"
                 f"<td class=\"num\">{a.idk}</td><td class=\"num\">{a.batches_finished}</td>"
                 f"<td class=\"num\">{a.minutes:.1f}</td><td>{escape(qualification)}</td>"
                 f"<td>{escape(', '.join(a.flagged_in))}</td></tr>")
    return ("<table><tr><th>annotator</th><th>answers</th><th>I don't know</th><th>main batches</th>"
            f"<th>minutes</th><th>qualified</th><th>flagged in</th></tr>{body}</table>")


def _number(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"
