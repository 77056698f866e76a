"""Server-rendered HTML: the annotator's page, the guidelines and the researcher dashboard.

Every piece of dialogue, guideline and annotator text goes through escape().
"""

from __future__ import annotations

import re
from html import escape
from pathlib import Path

from convoscope.campaigns import (
    CampaignSpec,
    CampaignStatus,
    Context,
    Task,
    Work,
    answer_choices,
    options_for,
    status_tables,
)
from convoscope.criteria import Criterion, ExplanationOption

_STYLE = """
body{font-family:system-ui,"Noto Sans CJK KR","NanumGothic",sans-serif;margin:0;color:#222}
header{padding:.5rem 1rem;background:#f3f3f3;display:flex;gap:1rem;align-items:center}
main{display:grid;grid-template-columns:1fr 1fr;gap:1.5rem;padding:1rem}main.single{display:block}
table{border-collapse:collapse;margin:.5rem 0 1rem}td,th{border:1px solid #ccc;padding:.25rem .5rem;
text-align:left}th{background:#f3f3f3}.num{text-align:right}
.turn{margin:.3rem 0}.speaker{font-weight:600}.candidate{border:2px solid #36c;padding:.6rem;
border-radius:6px;background:#eef3ff}.answer{display:block;margin:.4rem 0}.definition{color:#555;
font-size:.9em}.error{color:#b00;font-weight:600}progress{width:12rem}kbd{border:1px solid #999;
border-radius:3px;padding:0 .25rem;font-size:.8em}fieldset{margin:.6rem 0}
"""

# Progressive enhancement: without JavaScript every option group stays visible.
_SCRIPT = """
(function(){var form=document.getElementById('answer-form');if(!form)return;
function sync(){var chosen=form.querySelector('input[name=answer]:checked');
form.querySelectorAll('[data-after]').forEach(function(group){var show=chosen&&
group.getAttribute('data-after').split(' ').indexOf(chosen.value)>=0;group.hidden=!show;});}
form.addEventListener('change',sync);sync();
document.addEventListener('keydown',function(event){if(event.target.tagName==='TEXTAREA')return;
var radio=form.querySelector('input[name=answer][data-key="'+event.key+'"]');
if(radio){radio.checked=true;sync();event.preventDefault();}
else if(event.key==='Enter'){form.requestSubmit();event.preventDefault();}});})();
"""


def page(title: str, body: str) -> str:
    return (f"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{escape(title)}</title>"
            f"<meta name=\"viewport\" content=\"width=device-width\"><style>{_STYLE}</style></head>"
            f"<body>{body}<script>{_SCRIPT}</script></body></html>")


def message_page(title: str, text: str) -> str:
    return page(title, f"<main><section><h1>{escape(title)}</h1><p>{escape(text)}</p></section></main>")


def task_page(work: Work, criterion: Criterion, *, summary: str, guidelines_url: str,
              csrf: str, shown: float, error: str | None = None) -> str:
    """Context on the left; criterion, candidate, answers and explanation options on the right."""
    task = work.task
    assert task is not None and work.batch is not None
    context = next(c for c in work.batch.contexts if c.id == task.context_id)
    header = (f"<header><strong>{escape(work.batch.id)}</strong>"
              f"<progress max=\"{work.total}\" value=\"{work.done}\"></progress>"
              f"<span id=\"progress\">{work.done} of {work.total} answered</span>"
              f"<span>{escape(summary)} <a href=\"{escape(guidelines_url)}\" target=\"_blank\">"
              f"Full guidelines</a></span></header>")
    problem = f"<p class=\"error\" role=\"alert\">{escape(error)}</p>" if error else ""
    # The item's language picks the right glyphs (Han characters differ between ko, zh and ja).
    language = task.candidate.language
    lang = f" lang=\"{escape(language)}\"" if language else ""
    right = (f"<section><h2>{escape(criterion.name.capitalize())}</h2>"
             f"<p class=\"definition\">{escape(criterion.definition)}</p>"
             f"<p><strong>{escape(criterion.question)}</strong></p>{_position(work, context)}"
             f"<div class=\"candidate\" id=\"candidate\"{lang}>{_candidate(task)}</div>"
             f"{problem}{_form(task, criterion, csrf, shown)}</section>")
    body = f"{header}<main>{_context(context, lang)}{right}</main>"
    return page(f"{criterion.name} · {work.batch.id}", body)


def _position(work: Work, context: Context) -> str:
    """Where the annotator is: which dialogue of the batch, which candidate of the dialogue."""
    assert work.task is not None and work.batch is not None
    dialogue = [c.id for c in work.batch.contexts].index(context.id) + 1
    candidate = [c.item_id for c in context.candidates].index(work.task.candidate.item_id) + 1
    return (f"<p class=\"definition\" id=\"position\">Dialogue {dialogue} of {len(work.batch.contexts)} · "
            f"candidate {candidate} of {len(context.candidates)}</p>")


def _candidate(task: Task) -> str:
    if not task.candidate.text:  # dialogue granularity: the dialogue itself is judged
        return "<em>Judge the whole dialogue on the left.</em>"
    return escape(task.candidate.text)


def _context(context: Context, lang: str) -> str:
    turns = "".join(f"<p class=\"turn\"><span class=\"speaker\">{escape(turn.speaker)}:</span> "
                    f"<span{lang}>{escape(turn.text)}</span></p>" for turn in context.turns)
    return f"<section id=\"context\"><h2>Dialogue</h2>{turns}</section>"


def _form(task: Task, criterion: Criterion, csrf: str, shown: float) -> str:
    from convoscope.campaigns import task_key  # noqa: PLC0415  (one door, no cycle at import)

    choices = answer_choices(criterion)
    answers = "".join(
        f"<label class=\"answer\"><input type=\"radio\" name=\"answer\" required "
        f"value=\"{escape(value)}\" data-key=\"{number}\"> <kbd>{number}</kbd> "
        f"<strong>{escape(label)}</strong> <span class=\"definition\">{escape(definition)}</span></label>"
        for number, (value, label, definition) in enumerate(choices, start=1))
    note = ("<label>Note (required after “I don't know”)<br><textarea name=\"reason\" rows=\"3\" "
            "cols=\"50\"></textarea></label>")
    hidden = (f"<input type=\"hidden\" name=\"csrf\" value=\"{escape(csrf)}\">"
              f"<input type=\"hidden\" name=\"task\" value=\"{escape(task_key('', task))}\">"
              f"<input type=\"hidden\" name=\"shown\" value=\"{shown:.3f}\">")
    return (f"<form id=\"answer-form\" method=\"post\">{hidden}<fieldset><legend>Your answer</legend>"
            f"{answers}</fieldset>{_options(criterion, [value for value, _, _ in choices])}{note}"
            f"<p><button type=\"submit\">Save and next <kbd>Enter</kbd></button></p></form>")


def _options(criterion: Criterion, answers: list[str]) -> str:
    """One checkbox per option; ``data-after`` lists the answers after which it is shown."""
    offered: dict[str, tuple[ExplanationOption, list[str]]] = {}
    for value in answers:
        if value == "1":  # options are asked for after a negative or "I don't know" answer only
            continue
        for option in options_for(criterion, value):
            offered.setdefault(option.name, (option, []))[1].append(value)
    if not offered:
        return ""
    boxes = "".join(f"<label class=\"answer\" data-after=\"{escape(' '.join(values))}\">"
                    f"<input type=\"checkbox\" name=\"options\" value=\"{escape(option.name)}\"> "
                    f"{escape(option.name)} <span class=\"definition\">{escape(option.description)}"
                    f"</span></label>" for option, values in offered.values())
    after = " ".join(dict.fromkeys(value for _, values in offered.values() for value in values))
    return (f"<fieldset class=\"options\" id=\"options\" data-after=\"{escape(after)}\">"
            f"<legend>Why?</legend>{boxes}</fieldset>")


def guidelines_page(path: Path) -> str:
    """The full guidelines: a small, escaped subset of Markdown (headings, lists, bold, paragraphs)."""
    text = path.read_text(encoding="utf-8") if path.exists() else "No guidelines were written."
    return page("Guidelines", f"<main class=\"single\"><section>{markdown_html(text)}</section></main>")


def markdown_html(text: str) -> str:
    """Headings, bullet lists, **bold**, *italics* and paragraphs; anything else shows as typed, escaped."""
    blocks: list[str] = []
    items: list[str] = []
    paragraph: list[str] = []

    def flush(*, keep_items: bool = False) -> None:
        if paragraph:
            blocks.append(f"<p>{_inline(' '.join(paragraph))}</p>")
            paragraph.clear()
        if items and not keep_items:
            blocks.append("<ul>" + "".join(f"<li>{_inline(item)}</li>" for item in items) + "</ul>")
            items.clear()

    for line in text.splitlines():
        stripped = line.strip()
        heading = re.match(r"^(#{1,4})\s+(.*)$", stripped)
        if heading:
            flush()
            level = len(heading.group(1))
            blocks.append(f"<h{level}>{_inline(heading.group(2))}</h{level}>")
        elif stripped.startswith(("- ", "* ")):
            flush(keep_items=True)
            items.append(stripped[2:])
        elif stripped and items and line.startswith("  "):  # an indented line continues the item
            items[-1] += " " + stripped
        elif stripped:
            if items:
                flush()
            paragraph.append(stripped)
        else:
            flush()
    flush()
    return "".join(blocks)


def _inline(text: str) -> str:
    bold = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", escape(text))
    return re.sub(r"\*(\S[^*]*?)\*", r"<em>\1</em>", bold)


def dashboard_page(spec: CampaignSpec, status: CampaignStatus, *, report_url: str) -> str:
    """The researcher's view: totals, then agreement, time and flags per batch and per annotator."""
    flagged = sorted({name for row in status.batches for name in row.flagged})
    totals = (f"<p id=\"totals\">{status.invited} invited · {status.qualified} qualified · "
              f"{status.answers} answers · flagged: {escape(', '.join(flagged) or 'none')}</p>"
              f"<p><a href=\"{escape(report_url)}\">Report with the reporting checklist</a> · "
              f"reload this page for fresh figures</p>")
    body = (f"<main class=\"single\"><section><h1>{escape(spec.title or spec.name)}: status</h1>"
            f"{totals}{status_tables(status)}</section></main>")
    return page(f"{spec.name} status", body)
