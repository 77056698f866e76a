"""Pairs of responses to the same context, as items a pairwise judge can take.

Items answer the same context when they share ``meta.context_id``, or else the same context
turns (:func:`convoscope.items.context_key`). Each pair of systems answering one context
becomes one pair item: its ``response`` is system A's text and ``meta.pair`` holds both sides,
so the run machinery (resume, store, cache) treats it as any other item.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from itertools import combinations

from convoscope.errors import ConfigError
from convoscope.items import Item, context_key

PAIR_KEY = "pair"


def make_pairs(items: Iterable[Item], *, systems: Sequence[str] | None = None) -> list[Item]:
    """Every pair of systems answering the same context (systems in sorted order: A < B).

    ``systems`` limits the pairs to those systems. Items need ``system`` and ``response``."""
    groups: dict[str, dict[str, Item]] = defaultdict(dict)
    wanted = set(systems) if systems else None
    for item in items:
        if item.system is None or item.response is None:
            raise ConfigError(f"item {item.id!r} needs a system and a response to be compared in pairs")
        if wanted is not None and item.system not in wanted:
            continue
        key = context_key(item)
        if item.system in groups[key]:
            raise ConfigError(f"system {item.system!r} answers context {key!r} twice "
                              f"(items {groups[key][item.system].id!r} and {item.id!r})")
        groups[key][item.system] = item
    pairs = []
    for key, answers in groups.items():
        for a, b in combinations(sorted(answers), 2):
            first, second = answers[a], answers[b]
            pairs.append(first.model_copy(update={
                "id": f"{key}:{a}~{b}", "system": f"{a}~{b}", "reference": None,
                "meta": {**first.meta, PAIR_KEY: {
                    "a": {"system": a, "item_id": first.id, "response": first.response},
                    "b": {"system": b, "item_id": second.id, "response": second.response}}}}))
    if not pairs:
        raise ConfigError("no context is answered by two systems: nothing to compare")
    return pairs


def pair_sides(item: Item) -> tuple[dict[str, str], dict[str, str]]:
    """System A's and system B's side of a pair item."""
    pair = item.meta.get(PAIR_KEY)
    if not isinstance(pair, dict) or "a" not in pair or "b" not in pair:
        raise ConfigError(f"item {item.id!r} is not a pair (make pairs with make_pairs first)")
    return pair["a"], pair["b"]
