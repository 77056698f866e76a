"""Dialogue text for the examples in a report (the template escapes it turn by turn)."""

from __future__ import annotations

from typing import Any

from convoscope.items import Item


def dialogue_turns(item: Item, *, max_turns: int = 12) -> dict[str, Any] | None:
    """The item's turns (the last ``max_turns`` of the context, then the response) and how many
    earlier turns were left out; None when the item has no text."""
    turns = [(turn.speaker, turn.text) for turn in item.context[-max_turns:]]
    if item.response is not None:
        turns.append((item.system or "response", item.response))
    if not turns:
        return None
    return {"turns": turns, "skipped": len(item.context) - min(len(item.context), max_turns)}
