"""Dialogue text for the examples in a report, escaped turn by turn."""

from __future__ import annotations

from convoscope.items import Item
from convoscope.reports._html import esc


def render_dialogue(item: Item, *, max_turns: int = 12) -> str:
    """The item's turns (the last ``max_turns`` of the context, then the response)."""
    turns = [(turn.speaker, turn.text) for turn in item.context[-max_turns:]]
    if item.response is not None:
        turns.append((item.system or "response", item.response))
    if not turns:
        return ""
    skipped = len(item.context) - min(len(item.context), max_turns)
    head = f"<div class=muted>… {skipped} earlier turns</div>" if skipped else ""
    lines = "".join(f"<div><b>{esc(speaker)}</b>: {esc(text)}</div>" for speaker, text in turns)
    return f"<div class=turns>{head}{lines}</div>"
