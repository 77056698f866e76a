"""What the annotator's pages show: template contexts built from the campaign (no HTML here)."""

from __future__ import annotations

from typing import Any

from convoscope.campaigns import (
    IDK,
    N_,
    TIE,
    Campaign,
    Task,
    Work,
    answer_choices,
    choices,
    options_for,
    pair_order,
    task_key,
)
from convoscope.criteria import Criterion
from convoscope.judges import Verdict

# Speaker names that dialogue data commonly uses for roles: shown in the interface's language.
# Any other name (a person's, "A", "B") is data and shown as written.
SPEAKERS = {name: name for name in (N_("user"), N_("system"), N_("bot"), N_("assistant"), N_("human"))}


def task_context(campaign: Campaign, work: Work, task: Task, *, annotator: str, token: str, csrf: str,
                 error: str | None = None, index: int | None = None,
                 current: Verdict | None = None, form: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """The task page: the dialogue, the candidate (or a pair), the answers and the options that apply.

    ``index`` is set when an earlier answer is being changed (``current`` is that answer);
    ``form`` refills the page with what the annotator sent when the server refused it. A pair's
    two responses are shown in the order drawn for this annotator (``pair_order``).
    """
    assert work.batch is not None
    criterion = campaign.criteria[task.criterion]
    context = next(c for c in work.batch.contexts if c.id == task.context_id)
    tasks = campaign.tasks(work.batch)
    position = tasks.index(task)
    shown = pair_order(annotator, task.candidate) if task.candidate.pair is not None else None
    chosen, chosen_options, note = _chosen(current, form, shown)
    return {
        "title": f"{criterion.name} · {work.batch.id}", "batch": work.batch.id, "done": work.done,
        "batch_number": _batch_number(work.batch.id), "batch_kind": work.batch.kind,
        "total": work.total, "summary": campaign.spec.guidelines_summary,
        "guidelines_url": f"/a/{token}/guidelines", "turns": [_turn(turn) for turn in context.turns],
        "text_lang": task.candidate.language or "", "criterion": criterion,
        "position": {"dialogue": [c.id for c in work.batch.contexts].index(context.id) + 1,
                     "dialogues": len(work.batch.contexts),
                     "candidate": [c.item_id for c in context.candidates].index(task.candidate.item_id) + 1,
                     "candidates": len(context.candidates)},
        "candidate": task.candidate.text, "pair": [side.text for side in shown] if shown else None,
        "error": error, "csrf": csrf, "task_id": task_key("", task),
        "choices": [{"value": v, "label": label, "definition": d}
                    for v, label, d in choices(task, criterion)],
        **(_options(criterion) if shown is None else {"options": [], "options_after": ""}),
        "chosen": chosen, "chosen_options": chosen_options, "note": note,
        "max_note": campaign.spec.max_note_chars, "editing": index is not None,
        "action": f"/a/{token}/edit/{index}" if index is not None else f"/a/{token}",
        "back_url": f"/a/{token}/edit/{position - 1}" if position > 0 else None,
        "home_url": f"/a/{token}",
    }


def _chosen(current: Verdict | None, form: dict[str, list[str]] | None,
            shown: tuple[Any, Any] | None) -> tuple[str, list[str], str]:
    if form is not None:
        return form.get("answer", [""])[0], form.get("options", []), form.get("reason", [""])[0]
    if current is None:
        return "", [], ""
    answer = IDK if current.unscored_reason == IDK else str(current.value)
    if shown is not None and answer not in (IDK, TIE):  # a pair: the winner back to its place on screen
        answer = "1" if answer == shown[0].system else "2"
    return answer, list(current.options or ()), current.reason or ""


def _options(criterion: Criterion) -> dict[str, Any]:
    """One checkbox per option with the answers after which it is offered (``data-after``).

    Every option the criterion defines is offered, positive ones too (the guidelines' "coherence"
    after *appropriate*); "I don't know" offers the negative ones.
    """
    offered: dict[str, dict[str, Any]] = {}
    for value, _, _ in answer_choices(criterion):
        for option in options_for(criterion, value):
            entry = offered.setdefault(option.name, {"name": option.name, "description": option.description,
                                                     "values": []})
            entry["values"].append(value)
    options = [{**entry, "after": " ".join(entry["values"])} for entry in offered.values()]
    after = " ".join(dict.fromkeys(value for entry in offered.values() for value in entry["values"]))
    return {"options": options, "options_after": after}


def _batch_number(batch_id: str) -> int | None:
    """1 for ``batch-001``: the page says "Batch 1" in the annotator's language."""
    number = batch_id.rsplit("-", 1)[-1]
    return int(number) if number.isdigit() else None


def _turn(turn: Any) -> dict[str, Any]:
    """A dialogue turn for the page: ``role`` is the catalogue's word for a known speaker role."""
    return {"speaker": turn.speaker, "role": SPEAKERS.get(turn.speaker.strip().lower()), "text": turn.text}
