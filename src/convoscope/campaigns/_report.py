"""The campaign report (HTML): seed 003's reporting checklist filled from the campaign, then results.

The checklist (step 4 of the protocol) asks for the task's granularity, criteria with their
definitions and questions, the annotation format, sampling and qualification, how many annotators
were recruited and took part, the items, votes per item, agreement with the metric used, workload
per annotator, demographics and resources (time, payment, platform). Whatever the data can tell is
computed; what only the researcher knows comes from ``reporting:`` in campaign.yaml and is marked
when missing or still the template's placeholder. One self-contained file rendered through the
shared Jinja2 layer (``campaign/report.html``, autoescaped): no script, no external asset.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convoscope.campaigns._answers import pair_choices
from convoscope.campaigns._pair_results import PairResults
from convoscope.campaigns._questionnaire import PARTS
from convoscope.campaigns._results import IDK_LABEL, NO_MAJORITY, SystemResult, answer_labels
from convoscope.campaigns._secure import private_file
from convoscope.campaigns._spec import Reporting
from convoscope.campaigns._status import CampaignStatus

if TYPE_CHECKING:
    from convoscope.campaigns._campaign import Campaign

# From Okabe & Ito's colour-universal-design palette (2008), ordered so that the colours an answer
# scale uses first stay far apart for readers with protan-, deuter- or tritanopia (at least 30
# CIELAB units under Machado et al.'s 2009 simulation; tests/campaigns/test_campaign_smaller.py):
# blue (positive), vermillion (negative), light grey ("I don't know"), charcoal ("no majority"),
# then sky blue, orange, bluish green, reddish purple. Bars also carry their label and share.
COLOURS = ["#0072B2", "#D55E00", "#BBBBBB", "#333333", "#56B4E9", "#E69F00", "#009E73", "#CC79A7"]
# Text left from the campaign template: "..." or "…" where the researcher was to fill in facts.
_PLACEHOLDER = re.compile(r"\.\.\.|…|<[^>]*>|\bTODO\b|\bTBD\b", re.IGNORECASE)


def render_report(campaign: Campaign, *, everything: bool = False,
                  exclude_side_biased: bool | None = None, n_resamples: int = 1000) -> str:
    """The whole report as one HTML string (only answers that count, unless ``everything``;
    in a pairwise campaign, ``exclude_side_biased`` defaults to the spec's and ``n_resamples``
    bootstrap resamples give the intervals)."""
    from convoscope.html import render

    status = campaign.status(everything=everything)
    results, options = campaign.results(everything=everything)
    spec = campaign.spec
    exclude = spec.exclude_side_biased if exclude_side_biased is None else exclude_side_biased
    pairs = (_pair_tables(campaign.pair_results(everything=everything, exclude_side_biased=exclude,
                                                n_resamples=n_resamples))
             if spec.pairwise else None)
    return render("campaign/report.html", title=spec.title or spec.name, spec=spec, status=status,
                  active=sum(1 for a in status.annotators if a.counted), everything=everything,
                  checklist=_checklist(campaign, status), charts=_charts(campaign, results),
                  options=sorted(options, key=lambda o: (o.criterion, o.system, -o.count)),
                  idk_label=IDK_LABEL, colours=COLOURS, pairs=pairs, exclude_side_biased=exclude,
                  side_biased=campaign.side_biased(everything=everything) if spec.pairwise else {},
                  comments=_comments(campaign))


def _comments(campaign: Campaign) -> list[dict[str, str]]:
    """Free-text questionnaire answers, as people wrote them (escaped by the template)."""
    texts = {(part, q.id): q.text for part in PARTS for q in campaign.questions(part) if q.kind == "text"}
    return [{"annotator": row["annotator"], "question": texts[(row["part"], row["question"])],
             "answer": str(row["answer"])} for row in campaign.questionnaire_rows()
            if (row["part"], row["question"]) in texts]


def _pair_tables(results: Sequence[PairResults]) -> list[dict[str, Any]]:
    """Per criterion: one row per system (win rate by majority and by all votes, Bradley–Terry)."""
    tables = []
    for result in results:
        majority = {w.system: w for w in result.majority}
        strengths = {s.system: s for s in result.strengths}
        rows = [{"system": w.system, "comparisons": w.comparisons, "all": w,
                 "majority": majority.get(w.system), "strength": strengths.get(w.system)}
                for w in result.all_votes]
        tables.append({"result": result, "rows": rows})
    return tables


def write_report(campaign: Campaign, out: str | Path, *, everything: bool = False,
                 exclude_side_biased: bool | None = None) -> Path:
    """Write the report to ``out``, readable by its owner only (it quotes annotators' notes)."""
    path = Path(out)
    html = render_report(campaign, everything=everything, exclude_side_biased=exclude_side_biased)
    with private_file(path) as handle:
        handle.write(html)
    return path


def _row(name: str, text: str = "", *, missing: str = "", items: list[dict[str, str]] | None = None
         ) -> dict[str, Any]:
    return {"name": name, "text": text, "missing": missing, "entries": items or []}


def _checklist(campaign: Campaign, status: CampaignStatus) -> list[dict[str, Any]]:
    spec, facts = campaign.spec, campaign.spec.reporting
    level = "dialogue level" if spec.granularity == "dialogue" else "response (turn) level"
    if spec.pairwise:
        granularity = (f"{level}; pairwise: two responses to the same context side by side, the order on "
                       "screen drawn per annotator and recorded with each answer"
                       + ("; the ground-truth turn takes part as the system 'reference'"
                          if spec.include_reference else ""))
    else:
        granularity = (f"{level}; absolute: each candidate is judged on its own"
                       + ("; the ground-truth turn is judged as one more candidate"
                          if spec.include_reference else ""))
    annotation = facts.annotation_format
    if spec.pairwise and annotation == Reporting.model_fields["annotation_format"].default:
        annotation = ("one answer per pair and criterion: response 1 better, response 2 better, tie, or "
                      "\"I don't know\" (with a note), and an optional free-text note")
    return [
        _row("Evaluation granularity", granularity),
        _row("Quality dimensions", items=_criteria(campaign)),
        _given("Annotation format", annotation, "annotation_format"),
        _given("Sampling criteria", facts.sampling, "sampling"),
        _row("Qualification task and acceptance", _qualification_text(campaign)),
        _row("Attention checks", _attention_text(campaign, status)),
        _row("Annotators recruited (invited)", str(status.invited)),
        _row("Annotators who took part", str(sum(1 for a in status.annotators if a.answers))),
        _row("Annotators qualified", _qualified_text(status)),
        _row("Annotators excluded", _excluded_text(status)),
        _row("Samples annotated", _samples_text(campaign)),
        _row("Votes per sample", _votes_text(campaign)),
        _row("Inter-annotator agreement (metric)", _agreement_text(status)),
        _row("Workload per annotator", _workload_text(campaign, status)),
        _demographics(campaign, status),
        _row("Time to do the task", _time_text(campaign, status)),
        _given("Payment", facts.payment, "payment"),
        _given("Platform", facts.platform, "platform"),
    ]


def _given(name: str, text: str, field: str) -> dict[str, Any]:
    if not text.strip():
        return _row(name, missing=f"not stated: set reporting.{field} in campaign.yaml")
    if _PLACEHOLDER.search(text):
        return _row(name, missing=f"unfilled placeholder in reporting.{field} (\"{text.strip()}\"): "
                                  "replace it with the facts of this study")
    return _row(name, text)


def _demographics(campaign: Campaign, status: CampaignStatus) -> dict[str, Any]:
    """The researcher's statement, and the choice questions of the ``before`` questionnaire counted
    over the annotators whose answers count (free text is listed at the end, never summed)."""
    given = _given("Demographics", campaign.spec.reporting.demographics, "demographics")
    counted = {a.annotator for a in status.annotators if a.counted}
    questions = {q.id: q for q in campaign.questions("before") if q.kind in ("choice", "choices")}
    tallies: dict[str, Counter[str]] = {name: Counter() for name in questions}
    people: set[str] = set()
    for row in campaign.questionnaire_rows():
        if row["part"] == "before" and row["question"] in questions and row["annotator"] in counted:
            people.add(row["annotator"])
            answers = row["answer"] if isinstance(row["answer"], list) else [row["answer"]]
            tallies[row["question"]].update(answers)
    if not people:
        return given
    counts = "; ".join(f"{questions[name].text} " + ", ".join(f"{choice} {tally[choice]}"
                                                              for choice in questions[name].choices)
                       for name, tally in tallies.items())
    summary = (f"from the questionnaire before the task ({len(people)} annotators whose answers count): "
               f"{counts}")
    return _row("Demographics", f"{given['text']}; {summary}" if given["text"] else summary)


def _criteria(campaign: Campaign) -> list[dict[str, str]]:
    if campaign.spec.pairwise:
        return [{"name": name, "definition": c.definition,
                 "question": f"Which response is better on {c.name}?",
                 "answers": ", ".join(label for _, label, _ in pair_choices(c))}
                for name, c in campaign.criteria.items()]
    return [{"name": c.name, "definition": c.definition, "question": c.question,
             "answers": ", ".join(answer_labels(c))} for c in campaign.criteria.values()]


def _attention_text(campaign: Campaign, status: CampaignStatus) -> str:
    mains = [b for b in campaign.batches if b.kind == "main"]
    contexts = sum(1 for b in mains for x in b.contexts if b.is_gold(x))
    if not contexts:
        return "none"
    checks = sum(row.gold_tasks for row in status.batches)
    rule = campaign.spec.attention
    failed = sum(1 for a in status.annotators if a.gold_failed > rule.max_failures)
    return (f"{rule.per_batch} gold context(s) in every main batch, asked only on the criterion each checks: "
            f"{contexts} gold contexts placed ({checks} checks), never counted as samples; more than "
            f"{rule.max_failures} failed check(s) → {rule.action}; {failed} annotator(s) over the limit")


def _excluded_text(status: CampaignStatus) -> str:
    out = [a for a in status.annotators if a.not_counted > 0 and not a.reference]
    if not out:
        return "none"
    return "; ".join(f"{a.annotator}: {a.not_counted} answers not counted ("
                     + (f"blocked: {a.blocked}" if a.blocked else f"left: {a.left}" if a.left
                        else "not invited" if not a.invited
                        else "not qualified" if a.qualification is not None and not a.qualification.qualified
                        else "no qualification decision") + ")" for a in out)


def _qualification_text(campaign: Campaign) -> str:
    settings = campaign.spec.qualification
    if not settings.enabled:
        return "no qualification task"
    references = len(settings.reference_annotators)
    return (f"a qualification batch of {settings.contexts} contexts, judged like a main batch; an "
            f"annotator qualifies when Cohen's kappa with each of the {references} internal reference "
            f"annotator(s) is at least {settings.min_kappa:g} and at least {settings.min_accuracy:.0%} of "
            "their answers equal the references' majority answer")


def _qualified_text(status: CampaignStatus) -> str:
    if not status.qualification_enabled:
        return "qualification off"
    tried = [a for a in status.annotators if a.qualification is not None and not a.reference]
    if not tried:
        return "no annotator has finished the qualification batch"
    blocked = status.qualified_then_blocked
    return (f"{status.passed} of the {len(tried)} who finished the qualification batch"
            + (f" ({blocked} of them blocked since)" if blocked else ""))


def _main_votes(campaign: Campaign) -> dict[str, int]:
    trial = {c.item_id for b in campaign.batches if b.kind == "qualification" for x in b.contexts
             for c in x.candidates}
    votes: dict[str, int] = {}
    for verdict in campaign.verdicts():
        batch = campaign.owner.get(verdict.item_id)
        if verdict.item_id not in trial and batch is not None and verdict.item_id not in batch.gold:
            key = f"{verdict.item_id}\x1f{verdict.criterion}"
            votes[key] = votes.get(key, 0) + 1
    return votes


def _samples_text(campaign: Campaign) -> str:
    mains = [b for b in campaign.batches if b.kind == "main"]
    contexts = sum(len(b.samples()) for b in mains)
    candidates = sum(len(x.candidates) for b in mains for x in b.samples())
    judged = len({key.split("\x1f")[0] for key in _main_votes(campaign)})
    what = "pairs" if campaign.spec.pairwise else "candidates"
    text = (f"{candidates} {what} for {contexts} contexts in {len(mains)} main batches (attention checks "
            f"not included); {judged} {what} have at least one answer")
    if campaign.chosen:
        random = sum("random" in reasons for reasons in campaign.chosen.values())
        text += (f"; {len(campaign.chosen)} items were chosen from a judged run, {random} of them in a "
                 "uniform random sample (see \"How items were chosen\")")
    return text


def _votes_text(campaign: Campaign) -> str:
    counts = list(_main_votes(campaign).values())
    if not counts:
        return "no votes yet"
    what = "pair" if campaign.spec.pairwise else "candidate"
    return (f"mean {statistics.mean(counts):.1f}, min {min(counts)}, max {max(counts)} votes per {what} "
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
    answers = [a.answers - a.gold_answers for a in active]
    return (f"main batches finished per annotator: median {statistics.median(batches):g} "
            f"(range {min(batches)}–{max(batches)}); answers per annotator: median "
            f"{statistics.median(answers):g} (range {min(answers)}–{max(answers)}; attention checks apart); "
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


def _charts(campaign: Campaign, results: Sequence[SystemResult]) -> list[dict[str, Any]]:
    """Per criterion: stacked horizontal bars (majority, then all votes, per system) and a table."""
    charts = []
    for name, criterion in campaign.criteria.items():
        rows = [r for r in results if r.criterion == name]
        if not rows:
            continue
        labels = [*answer_labels(criterion), NO_MAJORITY]
        bars = []
        for index, (row, kind) in enumerate((r, k) for r in rows for k in ("majority", "all votes")):
            shares = row.majority if kind == "majority" else row.all_votes
            parts, x = [], 210.0
            for colour, label in enumerate(labels):
                width = 420 * shares.get(label, 0.0) / 100
                if width > 0:
                    parts.append({"x": x, "width": width, "label": label, "percent": shares.get(label, 0.0),
                                  "colour": colour % len(COLOURS)})
                    x += width
            bars.append({"y": index * 24, "name": f"{row.system} · {kind}", "parts": parts})
        charts.append({"criterion": name, "labels": labels, "rows": rows, "bars": bars, "width": 640,
                       "height": len(bars) * 24, "vote_labels": [x for x in labels if x != NO_MAJORITY]})
    return charts


def status_tables(status: CampaignStatus) -> str:
    """Agreement, time and flags per batch, workload per annotator and notes (report and dashboard)."""
    from convoscope.html import environment

    template = environment().get_template("campaign/status_tables.html")
    return str(template.module.status_tables(status))
