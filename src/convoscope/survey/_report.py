"""A self-contained HTML report of a scored survey: counts, score distributions, ROC curve and
a sortable, filterable table. Every piece of answer text is escaped; no external assets."""

from __future__ import annotations

import html
from collections import Counter
from pathlib import Path

from convoscope.runs import OFFLINE_WARNING, is_embedded
from convoscope.survey._fit import DIMENSION_MAXIMA, DIMENSIONS, FittedModel
from convoscope.survey._score import ScoredAnswer, SurveyResult

_STYLE = """body{font-family:system-ui,'Noto Sans KR','Malgun Gothic',sans-serif;margin:2em}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px;vertical-align:top}
th{cursor:pointer;background:#f3f3f3}.bar{display:inline-block;background:#4a7;height:12px}
.warning{background:#fff6d6;border-left:4px solid #d9a400;padding:.5em .8em;max-width:60em}
.accept{color:#060}.hold{color:#a60}.reject{color:#a00}.charts{display:flex;gap:3em}"""

_SCRIPT = """function sortBy(n){const t=document.getElementById('answers'),b=t.tBodies[0];
const r=[...b.rows],d=t.dataset.dir==='a'?-1:1;t.dataset.dir=d===1?'a':'d';
r.sort((x,y)=>{const a=x.cells[n].innerText,c=y.cells[n].innerText,p=parseFloat(a),q=parseFloat(c);
return d*(isNaN(p)||isNaN(q)?a.localeCompare(c):p-q)});r.forEach(e=>b.appendChild(e))}
function filt(){const q=document.getElementById('q').value.toLowerCase();
for(const e of document.getElementById('answers').tBodies[0].rows)
e.style.display=e.innerText.toLowerCase().includes(q)?'':'none'}"""


def render_report(result: SurveyResult, *, title: str = "Survey answers") -> str:
    """The report as one HTML string (UTF-8, so Korean renders as typed)."""
    answers = result.answers
    counts = Counter(answer.decision for answer in answers)
    gibberish = sum(answer.gibberish for answer in answers)
    summary = (f"<p>{len(answers)} answers: {gibberish} gibberish (never judged), "
               f"<span class=accept>{counts['accept']} accepted</span>, "
               f"<span class=hold>{counts['hold']} held</span>, "
               f"<span class=reject>{counts['reject']} rejected</span>. "
               f"Overall by {html.escape(result.aggregation)}; threshold "
               f"{result.threshold:.3f} ± {result.hold_band:.3f}. "
               f"Model calls: {result.model_calls}; judgements from the response cache: "
               f"{result.cache_hits}, resumed from the store: {result.resumed}.</p>")
    if any(is_embedded(judge) for judge in result.judges):
        summary += ("<p class=warning role=note><strong>Offline judge.</strong> "
                    f"{html.escape(OFFLINE_WARNING)}</p>")
    charts = "".join(_histogram(name, answers) for name in DIMENSIONS)
    roc = _roc_svg(result.fitted) if result.fitted and result.fitted.roc_fpr else ""
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
            f"</title><style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>{summary}"
            f"<div class=charts>{charts}{roc}</div>{_table(answers)}"
            f"<script>{_SCRIPT}</script></body></html>\n")


def write_report(result: SurveyResult, path: str | Path) -> None:
    Path(path).write_text(render_report(result), encoding="utf-8")


def _histogram(name: str, answers: tuple[ScoredAnswer, ...]) -> str:
    values = Counter(a.scores.get(name) for a in answers if a.scores.get(name) is not None)
    most = max(values.values(), default=1)
    rows = "".join(f"<tr><td>{v}</td><td><span class=bar style='width:{120 * values[v] // most}px'>"
                   f"</span> {values[v]}</td></tr>" for v in range(DIMENSION_MAXIMA[name] + 1))
    return f"<div><h3>{name}</h3><table>{rows}</table></div>"


def _roc_svg(fitted: FittedModel) -> str:
    points = " ".join(f"{10 + 180 * f:.1f},{190 - 180 * t:.1f}"
                      for f, t in zip(fitted.roc_fpr, fitted.roc_tpr, strict=True))
    return (f"<div><h3>ROC (AUC {fitted.auc or 0:.2f}, EER {fitted.equal_error_rate or 0:.2f})</h3>"
            "<svg width=200 height=200 role=img aria-label='ROC curve'>"
            "<rect x=10 y=10 width=180 height=180 fill=none stroke=#999 />"
            "<line x1=10 y1=190 x2=190 y2=10 stroke=#ccc stroke-dasharray=4 />"
            f"<polyline points='{points}' fill=none stroke=#36c stroke-width=2 /></svg>"
            "<p>x: false accept rate, y: true accept rate</p></div>")


def _table(answers: tuple[ScoredAnswer, ...]) -> str:
    baselines = list(dict.fromkeys(name for answer in answers for name in answer.baselines))
    headers = ["id", "question", "answer", "gibberish", *DIMENSIONS, "overall",
               *(f"baseline {name}" for name in baselines), "decision", "reasons", "follow-up"]
    head = "".join(f"<th onclick='sortBy({i})'>{html.escape(h)}</th>" for i, h in enumerate(headers))
    body = "".join(_row(answer, baselines) for answer in answers)
    return ("<h2>Answers</h2><input id=q placeholder='filter…' oninput='filt()'>"
            f"<table id=answers><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:g}" if float(value).is_integer() else f"{value:.3f}"


def _row(answer: ScoredAnswer, baselines: list[str]) -> str:
    reasons = "<br>".join(f"<b>{name}</b>: {html.escape(reason)}"
                          for name, reason in answer.reasons.items() if reason)
    if answer.gibberish:
        reasons = html.escape("gibberish: " + ", ".join(answer.gibberish_reasons))
    cells = [answer.id, answer.question or "", answer.answer, "yes" if answer.gibberish else "",
             *("" if answer.scores.get(n) is None else str(answer.scores[n]) for n in DIMENSIONS),
             "" if answer.overall is None else f"{answer.overall:.2f}",
             *(_number(answer.baselines.get(name)) for name in baselines)]
    escaped = "".join(f"<td>{html.escape(cell)}</td>" for cell in cells)
    return (f"<tr>{escaped}<td class={answer.decision}>{answer.decision}</td><td>{reasons}</td>"
            f"<td>{html.escape(answer.follow_up or '')}</td></tr>")
