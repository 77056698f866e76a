"""A self-contained HTML report of a scored survey: counts, score distributions, the ROC curve
of a fitted rule with its operating points, and a sortable, filterable table.

Rendered through the shared Jinja2 layer (``convoscope.html.render``, autoescaped); the ROC is a
hand-built inline SVG in the template: a few dozen points need no plotting library, and the page
stays one file with no external assets.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from convoscope.runs import OFFLINE_WARNING, is_embedded
from convoscope.survey._fit import DIMENSION_MAXIMA, DIMENSIONS, FittedModel
from convoscope.survey._score import ScoredAnswer, SurveyResult

_SIZE, _MARGIN = 220, 40  # plot area and room for the axes' labels, in SVG units


def render_report(result: SurveyResult, *, title: str = "Survey answers") -> str:
    """The report as one HTML string (UTF-8, so Korean renders as typed)."""
    from convoscope.html import render

    answers = result.answers
    counted = tuple(a for a in answers if not a.scores_excluded)
    baselines = list(dict.fromkeys(name for answer in answers for name in answer.baselines))
    return render(
        "survey/report.html", title=title, result=result, counts=Counter(a.decision for a in answers),
        gibberish=sum(a.gibberish for a in answers),
        grader=sum(bool(a.grader_signals) for a in answers),
        excluded=len(answers) - len(counted), grader_kinds=grader_kinds(answers),
        bases=Counter(a.score_basis for a in answers if a.scores),
        offline_warning=OFFLINE_WARNING if any(is_embedded(j) for j in result.judges) else None,
        histograms=[_histogram(name, counted) for name in DIMENSIONS],
        roc=_roc(result.fitted) if result.fitted and result.fitted.roc_fpr else None,
        against_length=_against_length(result.fitted),
        headers=["id", "question", "answer", "language", "gibberish", *DIMENSIONS, "overall",
                 *(f"baseline {name}" for name in baselines), "decision", "reasons", "follow-up"],
        rows=[_row(answer, baselines) for answer in answers])


def _against_length(fitted: Any) -> str:
    """The rule's cross-validated AUC and answer length's, with intervals (``_interval``)."""
    if fitted is None or fitted.aggregate == "llm":
        return ""
    from convoscope.survey._interval import compare_with_length, method

    found = compare_with_length(fitted)
    return f"{found[0].upper()}{found[1:]}. Intervals: {method(fitted)}." if found else ""


def grader_kinds(answers: tuple[ScoredAnswer, ...]) -> dict[str, int]:
    """Answers per kind of grader signal: each imitation class, phrase requests in words
    (``request``) and the judge's own flag (``judge``)."""
    kinds: Counter[str] = Counter()
    for answer in answers:
        kinds.update({signal.split(":", 1)[1] if signal.startswith("imitation:")
                      else "judge" if signal == "judge" else "request"
                      for signal in answer.grader_signals})
    return dict(kinds.most_common())


def write_report(result: SurveyResult, path: str | Path) -> None:
    Path(path).write_text(render_report(result), encoding="utf-8")


def _histogram(name: str, answers: tuple[ScoredAnswer, ...]) -> dict[str, Any]:
    values = Counter(a.scores.get(name) for a in answers if a.scores.get(name) is not None)
    most = max(values.values(), default=1)
    return {"name": name, "bars": [(value, values[value], 120 * values[value] // most)
                                   for value in range(DIMENSION_MAXIMA[name] + 1)]}


def _xy(false_accept: float, true_accept: float) -> tuple[float, float]:
    return round(_MARGIN + _SIZE * false_accept, 1), round(10 + _SIZE * (1 - true_accept), 1)


def _roc(fitted: FittedModel) -> dict[str, Any]:
    points = " ".join("{},{}".format(*_xy(f, t))
                      for f, t in zip(fitted.roc_fpr, fitted.roc_tpr, strict=True))
    markers = []
    for index, (name, point) in enumerate(fitted.points.items()):
        x, y = _xy(point.false_accept_rate, 1 - point.false_reject_rate)
        markers.append({"name": name, "x": x, "y": y, "threshold": point.threshold,
                        "far": point.false_accept_rate, "frr": point.false_reject_rate,
                        "colour": ("#c0392b", "#27ae60", "#d68910")[index % 3]})
    ticks = [{"value": f"{v:g}", "x": _xy(v, 0)[0], "y": _xy(0, v)[1]} for v in (0, 0.25, 0.5, 0.75, 1)]
    return {"fitted": fitted, "points": points, "markers": markers, "ticks": ticks,
            "size": _SIZE, "margin": _MARGIN, "origin": _xy(0, 0), "corner": _xy(1, 1)}


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:g}" if float(value).is_integer() else f"{value:.3f}"


def _row(answer: ScoredAnswer, baselines: list[str]) -> dict[str, Any]:
    reasons = [(name, reason) for name, reason in answer.reasons.items() if reason]
    if answer.gibberish:
        reasons = [("gibberish", ", ".join(answer.gibberish_reasons))]
    if answer.grader_signals:
        reasons.insert(0, ("addresses grader", ", ".join(answer.grader_signals)))
    scores = []
    for name in DIMENSIONS:
        value, expected = answer.scores.get(name), answer.expected.get(name)
        shown = "" if value is None else str(value)
        scores.append(shown + (f" ({expected:.2f})" if expected is not None else ""))
    return {"answer": answer, "scores": scores, "reasons": reasons,
            "overall": "" if answer.overall is None else f"{answer.overall:.2f}",
            "baselines": [_number(answer.baselines.get(name)) for name in baselines]}
