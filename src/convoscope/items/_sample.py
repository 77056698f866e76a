"""A reproducible (stratified) random sample of items, drawn in one pass over any input.

Each item gets a uniform number from a hash of the seed and its id, so the sample does not depend
on the input's order, the same seed draws the same items again, and an input that grew keeps the
items it had drawn unless newcomers draw smaller numbers (bottom-k sampling). With strata, the
sample size is shared in proportion to each stratum's size (largest remainders; every stratum
present gets at least one item when the sample is large enough to give one to each), and each
stratum's items are its bottom-k. Memory: at most ``n`` candidates per stratum, never the input.
"""

from __future__ import annotations

import hashlib
import heapq
from collections import Counter
from collections.abc import Iterable
from typing import Any

from convoscope.errors import ConfigError
from convoscope.items._model import Item

_TOP_FIELDS = ("language", "system", "question", "reference")


def draw(seed: int, item_id: str) -> float:
    """The item's number in [0, 1): the same for the same seed and id, on every machine."""
    digest = hashlib.blake2b(f"{seed}\x1f{item_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def stratum_of(item: Item, field: str) -> str:
    """The value an item is stratified by: ``language``, ``system``, ``question``, or ``meta.KEY``
    (a missing value is its own stratum, ``""``)."""
    if field in _TOP_FIELDS:
        value: Any = getattr(item, field)
    elif field.startswith("meta."):
        value = item.meta.get(field.removeprefix("meta."))
    else:
        raise ConfigError(f"cannot stratify by {field!r}: use language, system, question, reference "
                          "or meta.KEY")
    return "" if value is None else str(value)


def sample_items(items: Iterable[Item], n: int, *, stratify_by: str | None = None,
                 seed: int = 0) -> list[Item]:
    """``n`` items drawn at random (all of them when there are fewer), in input order."""
    if n < 1:
        raise ConfigError(f"a sample needs at least one item, not {n}")
    if stratify_by is not None:
        stratum_of(Item(id="probe"), stratify_by)  # a bad field fails before the input is read
    heaps: dict[str, list[tuple[float, int, Item]]] = {}
    sizes: Counter[str] = Counter()
    for position, item in enumerate(items):
        stratum = stratum_of(item, stratify_by) if stratify_by else ""
        sizes[stratum] += 1
        heap = heaps.setdefault(stratum, [])
        entry = (-draw(seed, item.id), position, item)  # a max-heap of the n smallest numbers
        if len(heap) < n:
            heapq.heappush(heap, entry)
        elif entry > heap[0]:
            heapq.heapreplace(heap, entry)
    shares = allocate(n, sizes)
    chosen: list[tuple[int, Item]] = []
    for stratum, heap in heaps.items():
        best = sorted(heap, reverse=True)[: shares[stratum]]  # smallest numbers first
        chosen.extend((position, item) for _, position, item in best)
    return [item for _, item in sorted(chosen, key=lambda pair: pair[0])]


def allocate(n: int, sizes: Counter[str]) -> dict[str, int]:
    """``n`` shared in proportion to ``sizes`` by largest remainders, never more than a stratum
    has; when ``n`` allows, every stratum gets at least one."""
    total = sum(sizes.values())
    if n >= total:
        return dict(sizes)
    exact = {stratum: n * size / total for stratum, size in sizes.items()}
    shares = {stratum: int(value) for stratum, value in exact.items()}
    if n >= len(sizes):
        for stratum in sizes:
            shares[stratum] = max(shares[stratum], 1)
    left = n - sum(shares.values())
    by_remainder = sorted(sizes, key=lambda stratum: (exact[stratum] - int(exact[stratum]), stratum),
                          reverse=True)
    for stratum in by_remainder:
        if left <= 0:
            break
        if shares[stratum] < sizes[stratum]:
            shares[stratum] += 1
            left -= 1
    while left < 0:  # the minimum of one took more than n allowed: take back from the largest
        largest = max(shares, key=lambda stratum: shares[stratum])
        shares[largest] -= 1
        left += 1
    return shares
