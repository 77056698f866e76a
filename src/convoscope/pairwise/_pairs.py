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


def make_pairs(items: Iterable[Item], *, systems: Sequence[str] | None = None,
               per_context: int | None = None) -> list[Item]:
    """Every pair of systems answering the same context (systems in sorted order: A < B).

    ``systems`` limits the pairs to those systems. Items need ``system`` and ``response``.
    ``per_context`` keeps that many pairs per context, rotating through every pair of systems
    from one context to the next (context *i* takes the pairs after those of context *i − 1*, in a
    fixed order that spreads the systems), so over many contexts each pair is asked about equally
    often and every system is compared; the same items give the same pairs every time."""
    if per_context is not None and per_context < 1:
        raise ConfigError("per_context must be at least 1")
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
    start = 0
    for key, answers in groups.items():
        chosen = list(combinations(sorted(answers), 2))
        if per_context is not None and per_context < len(chosen):
            spread = _spread(chosen)
            offset = start % len(spread)
            chosen = sorted((spread + spread)[offset:offset + per_context])
            start += per_context
        for a, b in chosen:
            first, second = answers[a], answers[b]
            pairs.append(first.model_copy(update={
                "id": f"{key}:{a}~{b}", "system": f"{a}~{b}", "reference": None,
                "meta": {**first.meta, PAIR_KEY: {
                    "a": {"system": a, "item_id": first.id, "response": first.response},
                    "b": {"system": b, "item_id": second.id, "response": second.response}}}}))
    if not pairs:
        raise ConfigError("no context is answered by two systems: nothing to compare")
    return pairs


def _spread(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The pairs reordered so that consecutive pairs share as few systems as possible (greedy):
    any run of them compares many different systems."""
    left, order = list(pairs), []
    seen: dict[str, int] = {}
    while left:
        best = min(left, key=lambda pair: (seen.get(pair[0], 0) + seen.get(pair[1], 0),
                                           left.index(pair)))
        left.remove(best)
        order.append(best)
        for system in best:
            seen[system] = seen.get(system, 0) + 1
    return order


def pair_sides(item: Item) -> tuple[dict[str, str], dict[str, str]]:
    """System A's and system B's side of a pair item."""
    pair = item.meta.get(PAIR_KEY)
    if not isinstance(pair, dict) or "a" not in pair or "b" not in pair:
        raise ConfigError(f"item {item.id!r} is not a pair (make pairs with make_pairs first)")
    return pair["a"], pair["b"]
