"""The card as Markdown and as one self-contained HTML page (the project's one Jinja2 layer).

Both read the same tables (:func:`tables`), so the two forms never say different things. Every
string that came from a user (judge names, criterion names, reasons) is escaped by Jinja2 in the
page and has its pipes escaped in Markdown.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from convoscope.card._model import CardThresholds, JudgeCard, JudgeReport

Table = tuple[str, tuple[str, ...], tuple[tuple[str, ...], ...]]


@dataclass(frozen=True)
class Bar:
    """One criterion (and language) on a judge's plot: ρ with its interval, the ceiling and the
    best baseline, all on the [-1, 1] scale."""

    label: str
    rho: float
    low: float
    high: float
    ceiling: float | None
    baseline: float | None


def _f(value: float | None, digits: int = 2) -> str:
    """A number, or a dash for none and for a non-finite one (never "inf" or "nan" on a card)."""
    return "–" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def _ci(result: Any) -> str:
    return "–" if result is None else f"{result.estimate:.2f} [{result.low:.2f}, {result.high:.2f}]"


def _agreement(report: JudgeReport) -> Table:
    rows = []
    for a in report.agreement:
        best = a.best_baseline
        rows.append((a.criterion, a.language or "all", str(a.judge.n_items), _ci(a.judge.spearman),
                     _f(a.judge.kappa), _f(a.judge.humans.loo_spearman), _f(a.judge.humans.alpha),
                     "–" if best is None else f"{best.judge.split(':', 1)[-1]} {_ci(best.spearman)}",
                     a.replaces_annotator))
    return ("Agreement with people", ("criterion", "language", "items", "Spearman ρ [95% CI]", "κ",
                                      "ceiling (people, leave-one-out ρ)", "people's α", "best baseline ρ",
                                      "can replace an annotator"), tuple(rows))


def _systems(report: JudgeReport) -> Table:
    rows = tuple((s.criterion, str(s.n_systems), _ci(s.spearman), _ci(s.pearson),
                  "–" if s.pairwise_accuracy is None else _f(s.pairwise_accuracy.accuracy), s.resample,
                  "; ".join(s.notes)) for s in report.systems)
    return ("System level", ("criterion", "systems", "Spearman ρ [CI]", "Pearson r [CI]",
                             "pairwise accuracy", "intervals", "notes"), rows)


def _bias(report: JudgeReport) -> Table:
    rows: list[tuple[str, ...]] = []
    for b in report.bias:
        if b.length:
            rows.append((b.criterion, "length", f"residual ρ {b.length.rho:.2f} (p {b.length.pvalue:.3f})"))
        for language, gap in b.languages.items() if len(b.languages) > 1 else ():
            rows.append((b.criterion, f"language {language}", f"mean residual {gap.mean_residual:+.2f} SD "
                         f"(p {_f(gap.pvalue, 3)}, n {gap.n})"))
        if b.self_preference:
            own = b.self_preference
            rows.append((b.criterion, "self-preference",
                         f"{own.mean_residual:+.2f} SD (p {_f(own.pvalue, 3)})"))
    for criterion, flips in report.position:
        rows.append((criterion, "position", f"{flips.flips} of {flips.pairs} pairs flipped with the order "
                     f"({flips.rate:.0%})"))
    if report.manipulation:
        m = report.manipulation
        kinds = ", ".join(f"{kind} {above}/{pairs}" for kind, pairs, above in m.by_class)
        rows.append(("all", "manipulation", f"{m.above} of {m.pairs} probes above their clean answer "
                     f"({_f(m.share)}); {kinds}"))
    return ("Biases", ("criterion", "kind", "measured"), tuple(rows))


def _consistency(report: JudgeReport) -> Table:
    rows = tuple((c.criterion, str(c.repeats), str(c.items), _f(c.pairwise), _f(c.alpha))
                 for c in report.consistency)
    unscored = ", ".join(f"{reason} {n}" for reason, n in report.unscored) or "none"
    share = report.unscored_share
    rows += (("unscored", "", str(report.verdicts), f"{_f(share)} of verdicts", unscored),)
    return ("Self-consistency and unscored verdicts", ("criterion", "repeats", "items",
                                                        "pairs of repeats agreeing", "α (repeats as raters)"),
            rows)


def _cost(report: JudgeReport) -> Table:
    if report.cost is None:
        return ("Cost and latency per 1,000 items", ("what", "per 1,000 items", "measured"), ())
    per = report.cost.per_1000_items()
    c = report.cost
    rows = (("model calls", _f(per["calls"], 0), str(c.calls)),
            ("prompt tokens", _f(per["prompt_tokens"], 0), str(c.prompt_tokens)),
            ("completion tokens", _f(per["completion_tokens"], 0), str(c.completion_tokens)),
            ("price", "unknown" if per["cost"] is None else _f(per["cost"], 4), _f(c.cost, 4)),
            ("model time (s, one call at a time)", _f(per["model_seconds"], 1), _f(c.model_seconds, 1)),
            ("this card's judging wall time (s, items and probes)", "", f"{c.wall_time_s:.1f}"),
            ("model calls this card made (items and probes)", "", str(c.new_calls)))
    return ("Cost and latency per 1,000 items",
            ("what", "per 1,000 items", f"measured on {c.items} items"), rows)


def _worth(report: JudgeReport) -> Table:
    rows = tuple((w.criterion, str(w.estimate.n_human), str(w.estimate.n_judged),
                  _f(w.estimate.effective_n, 1), _f(w.per_label), w.unlabelled)
                 for w in report.labels_worth)
    return ("Labels worth (prediction-powered inference)", ("criterion", "people's labels", "judged items",
                                                             "as precise as labels alone", "per label",
                                                             "unlabelled pool"), rows)


def tables(report: JudgeReport) -> list[Table]:
    """Every section of one judge's card as (title, headers, rows)."""
    return [_agreement(report), _systems(report), _bias(report), _consistency(report), _cost(report),
            _worth(report)]


def side_by_side(card: JudgeCard) -> Table:
    """One row per judge and criterion: the headline numbers of every card, for comparing judges."""
    rows = []
    for report in card.judges:
        for a in (a for a in report.agreement if a.language is None):
            system = next((s.spearman for s in report.systems if s.criterion == a.criterion), None)
            worth = next((w for w in report.labels_worth if w.criterion == a.criterion), None)
            share = report.manipulation.share if report.manipulation else None
            tokens = _f(report.cost.per_1000_items()["prompt_tokens"], 0) if report.cost else "–"
            rows.append((report.judge, a.criterion, _ci(a.judge.spearman), a.replaces_annotator, _ci(system),
                         _f(share), _f(report.unscored_share), tokens,
                         "–" if worth is None else _f(worth.per_label)))
    return ("Side by side", ("judge", "criterion", "ρ with people [CI]", "can replace an annotator",
                             "system ρ [CI]", "probes above clean", "unscored", "prompt tokens / 1,000 items",
                             "labels worth per label"), tuple(rows))


def thresholds_table(thresholds: CardThresholds) -> Table:
    from convoscope.card._model import THRESHOLD_MEANINGS

    rows = tuple((name, str(value), THRESHOLD_MEANINGS[name]) for name, value in asdict(thresholds).items())
    return ("Thresholds of the verdict", ("threshold", "value", "meaning"), rows)


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _markdown_table(table: Table, level: str = "###") -> list[str]:
    title, headers, rows = table
    lines = [f"{level} {title}", ""]
    if not rows:
        return [*lines, "(nothing measured)", ""]
    lines += ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(_cell(cell) for cell in row) + " |" for row in rows]
    return [*lines, ""]


def provenance_table(card: JudgeCard) -> Table:
    """Where the card comes from (a model card's provenance fields)."""
    origin = card.provenance
    if origin is None:
        return ("Provenance", ("what", "value"), ())
    rows = [("convoscope version", origin.convoscope_version), ("made (UTC)", origin.created),
            ("data source", origin.data_source or "not stated"), ("licence", origin.licence or "not stated"),
            ("intended use", origin.intended_use), ("limits", origin.limits)]
    rows += [(f"judge {judge}", f"model version reported: {served}; prompt hash {digest}")
             for judge, served, digest in origin.judges]
    return ("Provenance", ("what", "value"), tuple(rows))


def markdown(card: JudgeCard) -> str:
    lines = ["# Judge card", "", f"{card.n_items} items, {card.n_rated_items} rated by people "
             f"({card.n_annotators} annotators); criteria: {', '.join(card.criteria)}; "
             f"languages: {', '.join(card.languages) or 'not given'}.", ""]
    lines += _markdown_table(side_by_side(card), "##")
    for report in card.judges:
        lines += [f"## {_cell(report.judge)}", "", f"**Verdict.** {_cell(report.verdict)}", ""]
        for table in tables(report):
            lines += _markdown_table(table)
        if report.not_computed:
            lines += ["### Not computed", ""]
            lines += [f"- {entry.section}{f' ({entry.criterion})' if entry.criterion else ''}: "
                      f"{_cell(entry.reason)}" for entry in report.not_computed]
            lines.append("")
    lines += _markdown_table(thresholds_table(card.thresholds), "##")
    lines += _markdown_table(provenance_table(card), "##")
    lines.append("Settings: " + ", ".join(f"{key} {value}" for key, value in card.settings) + ".")
    return "\n".join(lines) + "\n"


def bars(report: JudgeReport) -> list[Bar]:
    found = []
    for a in report.agreement:
        if a.judge.spearman is None:
            continue
        best = a.best_baseline
        found.append(Bar(f"{a.criterion} · {a.language or 'all'}", a.judge.spearman.estimate,
                         a.judge.spearman.low, a.judge.spearman.high, a.judge.humans.loo_spearman,
                         None if best is None or best.spearman is None else best.spearman.estimate))
    return found


def html(card: JudgeCard, *, title: str) -> str:
    from convoscope.html import render

    judges = [{"report": r, "tables": tables(r), "bars": bars(r)} for r in card.judges]
    return render("card/card.html", title=title, card=card, judges=judges,
                  thresholds=thresholds_table(card.thresholds), summary=side_by_side(card),
                  provenance=provenance_table(card))
