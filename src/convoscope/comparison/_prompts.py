"""The prompts each run actually sent for a flipped item, and their difference.

A store keeps, for each verdict, its task key: a hash of the rendered request and the judge, not
the request itself. A prompt is therefore found in one of two ways: in a run archive exported
with ``--prompts`` (``prompts.jsonl``), or rendered again from the items and criteria the run
read, with the judge its spec records. A prompt rendered again is used only when it hashes to the
verdict's task key, so what is shown is exactly what was sent. Otherwise the flip says what is
known: the two task keys.
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from convoscope.comparison._compare import CriterionChange, Flip
    from convoscope.comparison._stream import Source


def request_text(request: Any) -> str:
    """A rendered request as readable text: each message under its role, or the raw prompt."""
    if request.messages:
        return "\n".join(f"[{message.role}]\n{message.content}" for message in request.messages)
    return str(request.prompt or "")


def render(spec: Mapping[str, Any], item: Any, criterion: Any) -> tuple[str, str] | None:
    """The prompt a rubric judge recorded in ``spec`` sends for ``item`` on ``criterion``, and the
    task key it hashes to (as :meth:`RubricJudge.task_key`); None for judges that send none."""
    from convoscope.judges._judge import _digest
    from convoscope.judges._prompt import build_request

    identity = spec.get("judge") or {}
    if not isinstance(identity, Mapping) or identity.get("kind") != "rubric":
        return None
    try:
        request = build_request(criterion, item, mode=str(identity.get("mode", "chat")),
                                persona=identity.get("persona"),
                                max_tokens=int(identity.get("max_tokens", 400)))
    except ValueError:
        return None
    asked = hashlib.sha256(request.model_dump_json().encode()).hexdigest()
    key = _digest({"judge": dict(identity), "model": identity.get("model"), "request": asked,
                   "item_id": item.id, "criterion": criterion.name})
    return request_text(request), key


def prompt_diff(text_a: str, text_b: str) -> tuple[str, ...]:
    """The unified diff of two prompts, A → B (empty when they are the same)."""
    return tuple(difflib.unified_diff(text_a.splitlines(), text_b.splitlines(), "A", "B", lineterm="", n=2))


class _Book:
    """Where one side's prompts come from: its archive's prompts, or items and criteria to render
    them again (every criterion of that name is tried: the one that hashes to the key is it)."""

    def __init__(self, source: Source, items: Mapping[str, Any], criteria: Iterable[Any], keys: set[str]):
        self.spec = source.spec
        self.archived: dict[str, str] = {}
        self.criteria: dict[str, list[Any]] = {}
        archive = source.archive
        own: list[Any] = []
        if archive is not None:
            self.archived = archive.prompts(keys)
            items = items or {item.id: item for item in (archive.items() or [])}
            own = _archived_criteria(archive)
        for criterion in [*criteria, *own]:
            self.criteria.setdefault(criterion.name, []).append(criterion)
        self.items = items

    def text(self, key: str | None, item_id: str, criterion: str) -> str | None:
        if key is None:
            return None
        if key in self.archived:
            return self.archived[key]
        if item_id not in self.items:
            return None
        for candidate in self.criteria.get(criterion, []):
            rendered = render(self.spec, self.items[item_id], candidate)
            if rendered is not None and rendered[1] == key:
                return rendered[0]
        return None


def with_prompts(
    rows: Sequence[CriterionChange],
    first: Source,
    second: Source,
    *,
    items: Any,
    criteria_a: Iterable[Any],
    criteria_b: Iterable[Any],
) -> list[CriterionChange]:
    """Each kept flip with the difference of the two runs' prompts, or a note of what is known."""
    flips = [flip for row in rows for flip in row.flips]
    keys = {key for flip in flips for key in (flip.task_key_a, flip.task_key_b) if key}
    if not keys:
        return list(rows)
    by_id = _items(items, {flip.item_id for flip in flips})
    books = (_Book(first, by_id, criteria_a, keys), _Book(second, by_id, criteria_b, keys))
    return [replace(row, flips=tuple(_one(flip, *books) for flip in row.flips)) for row in rows]


def _one(flip: Flip, book_a: _Book, book_b: _Book) -> Flip:
    text_a = book_a.text(flip.task_key_a, flip.item_id, flip.criterion)
    text_b = book_b.text(flip.task_key_b, flip.item_id, flip.criterion)
    if text_a is not None and text_b is not None:
        difference = prompt_diff(text_a, text_b)
        note = "" if difference else "the same prompt in both runs"
        return replace(flip, prompt_diff=difference, prompt_note=note)
    if flip.task_key_a and flip.task_key_b:
        if flip.task_key_a == flip.task_key_b:
            note = "the same task key in both runs: the same prompt to the same judge"
        else:
            note = (f"prompts or judges differ (task keys A {flip.task_key_a[:12]}, "
                    f"B {flip.task_key_b[:12]}); "
                    "the prompts themselves are not at hand: export the runs with --prompts, "
                    "or give the items and criteria they read")
        return replace(flip, prompt_note=note)
    return flip


def _items(items: Any, wanted: set[str]) -> dict[str, Any]:
    """The flipped items, by id, from an items file or a list of items."""
    if items is None:
        return {}
    if isinstance(items, str | Path):
        from convoscope.items import read_items

        items = read_items(items)
    return {item.id: item for item in items if item.id in wanted}


def _archived_criteria(archive: Any) -> list[Any]:
    text = archive.criteria_text()
    if text is None:
        return []
    from convoscope.criteria._load import _parse_suite

    return list(_parse_suite(text, Path(archive.path)).criteria)
