"""Candidates that share a context, and the ground-truth turn as one more candidate.

The response-candidate protocol (seeds 002 / 003) judges several systems' responses to the same
dialogue context together with the turn that really followed it, so that the human (or judge)
verdicts on the reference show how strict the raters are. Items that share a context are grouped
by ``meta['context_id']`` or, without one, by their turns.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable

from convoscope.errors import ConfigError
from convoscope.items._model import Item

REFERENCE_SYSTEM = "reference"


def context_key(item: Item) -> str:
    """Items with the same ``meta['context_id']`` (or, without one, the same turns) share a context."""
    if "context_id" in item.meta:
        return str(item.meta["context_id"])
    text = "\n".join(f"{turn.speaker}\x1f{turn.text}" for turn in item.context)
    return "ctx-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def reference_candidate(item: Item) -> Item | None:
    """The item's reference turn as a candidate of its own (system ``reference``), or None.

    Its id is ``<context key>:reference``; the reference is not shown to judges of itself.
    """
    if not item.reference or item.response is None:
        return None
    key = context_key(item)
    return item.model_copy(update={
        "id": f"{key}:reference", "response": item.reference, "reference": None,
        "system": REFERENCE_SYSTEM, "meta": {**item.meta, "context_id": key, "reference_candidate": True}})


def with_reference_candidates(items: Iterable[Item]) -> list[Item]:
    """The items, each context's candidates followed by its reference turn (once per context).

    A context whose items carry no reference gets none; an id that is already taken is an error.
    """
    grouped: dict[str, list[Item]] = {}
    for item in items:
        grouped.setdefault(context_key(item), []).append(item)
    result: list[Item] = []
    for candidates in grouped.values():
        result.extend(candidates)
        reference = next((found for item in candidates if (found := reference_candidate(item))), None)
        if reference is not None:
            result.append(reference)
    duplicated = sorted(item_id for item_id, n in Counter(item.id for item in result).items() if n > 1)
    if duplicated:
        raise ConfigError(f"reference candidates clash with existing item ids: {', '.join(duplicated)}")
    return result
