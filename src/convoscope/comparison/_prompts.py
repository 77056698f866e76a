"""The prompts each run actually sent for one item and criterion, and their difference.

A store keeps, for each verdict, its task key: a hash of the rendered request and the judge, not
the request itself. A prompt is therefore found in one of two ways: in a run archive exported
with ``--prompts`` (``prompts.jsonl``), or rendered again from the items and criteria the run
read, with the judge its spec records (:class:`convoscope.archive._prompts.PromptBook`). A prompt
rendered again is used only when it hashes to the verdict's task key, so what is shown is exactly
what was sent. Otherwise what is known is said: the two task keys, and why each prompt is missing.

:func:`convoscope.archive._prompts.prompt_between` is the one answer per item: ``compare`` puts
it on each flip, and ``view``'s side-by-side page on every item it lists.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convoscope.archive._prompts import PromptBook, prompt_between

if TYPE_CHECKING:
    from convoscope.comparison._compare import CriterionChange, Flip
    from convoscope.comparison._stream import Source


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
    if not keys:  # verdict files on both sides: nothing recorded what was asked
        return list(rows)
    by_id = _items(items, {flip.item_id for flip in flips})
    books = (_book(first, by_id, criteria_a, keys), _book(second, by_id, criteria_b, keys))
    return [replace(row, flips=tuple(_one(flip, *books) for flip in row.flips)) for row in rows]


def _book(source: Source, items: Mapping[str, Any], criteria: Iterable[Any], keys: set[str]) -> PromptBook:
    """One side's prompts: its archive's, or rendered from the items and criteria given (an
    archive's own when none are given)."""
    archive = source.archive
    if archive is None:
        return PromptBook(source.spec, items=items, criteria=criteria)
    items = items or {item.id: item for item in (archive.items() or [])}
    return PromptBook(source.spec, items=items, criteria=[*criteria, *archive.criteria()],
                      archived=archive.prompts(keys))


def _one(flip: Flip, book_a: PromptBook, book_b: PromptBook) -> Flip:
    found = prompt_between(flip.item_id, flip.criterion, flip.task_key_a, flip.task_key_b, book_a, book_b)
    return replace(flip, prompt_diff=found.lines, prompt_note=found.note)


def _items(items: Any, wanted: set[str]) -> dict[str, Any]:
    """The flipped items, by id, from an items file or a list of items."""
    if items is None:
        return {}
    if isinstance(items, str | Path):
        from convoscope.items import read_items

        items = read_items(items)
    return {item.id: item for item in items if item.id in wanted}
