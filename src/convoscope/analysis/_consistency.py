"""Self-consistency: how far a judge asked several times agrees with itself.

Per item, the share of *pairs* of its repeats that gave the same value, averaged over items
(the observed agreement of Fleiss' kappa, P̄). Unlike the share of repeats that give the
item's most frequent value, it has no floor: two repeats that disagree score 0, not 50 %.
With 2 repeats per item it is simply the share of items whose two repeats agree.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any


def pairwise_agreement(repeats_by_item: Iterable[Iterable[Any]]) -> float:
    """Mean over items (with two or more values) of the share of their value pairs that agree.

    >>> pairwise_agreement([[1, 1], [1, 2], [3, 3, 3]])
    0.6666666666666666
    """
    shares = []
    for values in repeats_by_item:
        values = list(values)
        n = len(values)
        if n < 2:
            continue
        same = sum(count * (count - 1) for count in Counter(values).values())
        shares.append(same / (n * (n - 1)))
    if not shares:
        raise ValueError("pairwise_agreement: no item has two or more repeats")
    return sum(shares) / len(shares)


def modal_share(repeats_by_item: Iterable[Iterable[Any]]) -> float:
    """Mean over items of the share of repeats giving the item's most frequent value (floor 1/k
    with k repeats: two repeats that disagree still score .5). Kept for comparison."""
    shares = [Counter(v).most_common(1)[0][1] / len(v) for v in map(list, repeats_by_item) if len(v) >= 2]
    if not shares:
        raise ValueError("modal_share: no item has two or more repeats")
    return sum(shares) / len(shares)


def repeats_matrix(items: Mapping[str, Mapping[int, Any]]) -> list[list[Any]]:
    """Repeats x items (None where a repeat is missing), for Krippendorff's alpha."""
    repeats = sorted({repeat for values in items.values() for repeat in values})
    return [[items[item].get(repeat) for item in items] for repeat in repeats]
