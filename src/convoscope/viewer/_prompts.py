"""The prompt difference of one item on the side-by-side page, found as ``compare`` finds a
flip's (:func:`convoscope.archive._prompts.prompt_between`): from the prompts an archive
exported with ``--prompts`` carries, or rendered again from the items and criteria at hand and
shown only when each prompt hashes to its verdict's task key. Otherwise the page says what is
known: the two task keys, and why each prompt is missing.
"""

from __future__ import annotations

from collections import ChainMap
from typing import Any

from convoscope.archive._prompts import PromptBook, PromptDifference, prompt_between
from convoscope.viewer._runs import RunInfo
from convoscope.viewer._side import Pair


def run_book(run: RunInfo, items: dict[str, Any], criteria: list[Any]) -> PromptBook:
    """Where ``run``'s prompts come from: its archive's prompts; else its archive's items and
    criteria, then those given to ``view`` (every wording tried: the one that hashes is it)."""
    return PromptBook(run.spec, items=ChainMap(run.items, items),
                      criteria=[*run.criteria.values(), *criteria], archived=run.prompts)


def prompt_difference(pair: Pair, a: RunInfo, b: RunInfo, book_a: PromptBook,
                      book_b: PromptBook) -> PromptDifference:
    """The difference between the prompts runs ``a`` and ``b`` sent for ``pair``'s item and criterion."""
    if pair.a is None or pair.b is None:
        return PromptDifference(note=f"only run {'B' if pair.a is None else 'A'} judged it: one prompt, "
                                "no difference")
    key = (pair.item_id, pair.criterion)
    return prompt_between(pair.item_id, pair.criterion, a.task_keys.get(key), b.task_keys.get(key),
                          book_a, book_b)
