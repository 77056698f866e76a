"""The prompts each run actually sent for one item and criterion, and their difference.

A store keeps, for each verdict, its task key: a hash of the rendered request and the judge, not
the request itself. A prompt is therefore found in one of two ways: in a run archive exported
with ``--prompts`` (``prompts.jsonl``), or rendered again from the items and criteria the run
read, with the judge its spec records (:class:`convoscope.archive._prompts.PromptBook`). A prompt
rendered again is used only when it hashes to the verdict's task key, so what is shown is exactly
what was sent. Otherwise what is known is said: the two task keys, and why each prompt is missing.

:func:`prompt_between` is the one answer per item: ``compare`` puts it on each flip, and
``view``'s side-by-side page on every item it lists.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from convoscope.archive._prompts import PromptBook

if TYPE_CHECKING:
    from convoscope.comparison._compare import CriterionChange, Flip
    from convoscope.comparison._stream import Source


def prompt_diff(text_a: str, text_b: str) -> tuple[str, ...]:
    """The unified diff of two prompts, A → B (empty when they are the same)."""
    return tuple(difflib.unified_diff(text_a.splitlines(), text_b.splitlines(), "A", "B", lineterm="", n=2))


class PromptDifference(NamedTuple):
    """How the prompts two runs sent for one item differ: ``lines``, a unified diff A → B of
    prompts checked against the task keys; ``same``, known to be the same (checked prompts, or one
    task key); ``note``, what is known when there is no diff."""

    lines: tuple[str, ...] = ()
    note: str = ""
    same: bool = False


def prompt_between(item_id: str, criterion: str, key_a: str | None, key_b: str | None,
                   book_a: PromptBook, book_b: PromptBook) -> PromptDifference:
    """The difference of the prompts runs A and B sent for ``item_id`` on ``criterion``: a diff
    only of prompts checked against the task keys ``key_a`` and ``key_b``, else why there is none."""
    text_a, why_a = book_a.find(key_a, item_id, criterion)
    text_b, why_b = book_b.find(key_b, item_id, criterion)
    if text_a is not None and text_b is not None:
        difference = prompt_diff(text_a, text_b)
        if difference:
            return PromptDifference(difference)
        return PromptDifference(note="the same prompt in both runs", same=True)
    missing = "; ".join(f"{side}: {why}" for side, text, why in (("A", text_a, why_a), ("B", text_b, why_b))
                        if text is None)
    if key_a and key_b:
        if key_a == key_b:
            return PromptDifference(note="the same task key in both runs: the same prompt to the same judge",
                                    same=True)
        return PromptDifference(note=f"prompts or judges differ (task keys A {key_a[:12]}, B {key_b[:12]}); "
                                f"the prompts themselves are not at hand ({missing})")
    return PromptDifference(note=f"the prompts are not known ({missing})")


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
