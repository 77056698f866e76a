"""Repeated judgements: the same judge asked N times, and how far it agrees with itself.

``--repeats N`` asks each judge N times with distinct seeds, at a temperature above zero (a judge
that decodes greedily gives the same answer N times; a completion-mode judge draws each repeat from
its own next-token distribution). Each repeat is a verdict of its own, by ``<rater>~rK``, cached and
resumable like any task; the repeats are pooled as a panel pools its judges. Self-consistency says
how much of a judge's disagreement with people is its own noise: per judge and criterion, the
share of pairs of an item's repeats that agree (``pairwise``, computed in
:mod:`convoscope.analysis`), the older modal share beside it, and Krippendorff's alpha with the
repeats as raters (ordinal on numeric scales, nominal on labels).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from convoscope.judges import Verdict

DEFAULT_REPEAT_TEMPERATURE = 0.7
_REPEAT = re.compile(r"~r(\d+)$")


def base_rater(rater: str) -> tuple[str, int | None]:
    """``model:x~r3`` -> (``model:x``, 3); a rater that is no repeat -> (rater, None)."""
    found = _REPEAT.search(rater)
    return (rater[:found.start()], int(found.group(1))) if found else (rater, None)


@dataclass(frozen=True)
class SelfConsistency:
    """How one judge agrees with itself on one criterion over its repeats."""

    judge: str
    criterion: str
    repeats: int
    items: int  # items with at least two scored repeats
    agreement: float  # mean share of an item's repeats giving its most frequent value (floor 1/repeats)
    alpha: float | None  # Krippendorff's alpha, repeats as raters (None: undefined)
    pairwise: float = float("nan")  # mean share of pairs of an item's repeats that agree (no floor)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class ConsistencyTally:
    """Repeat verdicts gathered as they stream past (values only: a few bytes per verdict)."""

    def __init__(self) -> None:
        self._values: dict[tuple[str, str], dict[str, dict[int, Any]]] = defaultdict(
            lambda: defaultdict(dict))
        self._numeric: dict[tuple[str, str], bool] = {}

    def add(self, verdicts: Iterable[Verdict]) -> None:
        for verdict in verdicts:
            judge, repeat = base_rater(verdict.rater)
            if repeat is None or verdict.value is None:
                continue
            key = (judge, verdict.criterion)
            self._values[key][verdict.item_id][repeat] = verdict.value
            self._numeric[key] = self._numeric.get(key, True) and isinstance(verdict.value, int | float)

    def results(self) -> list[SelfConsistency]:
        return [_consistency(judge, criterion, items, self._numeric[(judge, criterion)])
                for (judge, criterion), items in sorted(self._values.items())]


def self_consistency(verdicts: Iterable[Verdict]) -> list[SelfConsistency]:
    """Self-consistency of every repeated judge and criterion in ``verdicts``."""
    tally = ConsistencyTally()
    tally.add(verdicts)
    return tally.results()


def _consistency(judge: str, criterion: str, items: dict[str, dict[int, Any]],
                 numeric: bool) -> SelfConsistency:
    from convoscope.analysis import krippendorff_alpha
    from convoscope.analysis._consistency import modal_share, pairwise_agreement, repeats_matrix

    repeats = sorted({repeat for values in items.values() for repeat in values})
    rated = {item: values for item, values in items.items() if len(values) >= 2}
    try:
        alpha: float | None = krippendorff_alpha(repeats_matrix(rated),
                                                 level="ordinal" if numeric else "nominal")
    except ValueError:  # one value everywhere, or nothing rated twice: alpha is undefined
        alpha = None
    values = [list(found.values()) for found in rated.values()]
    modal = modal_share(values) if values else float("nan")
    pairwise = pairwise_agreement(values) if values else float("nan")
    return SelfConsistency(judge, criterion, len(repeats), len(rated), modal, alpha, pairwise)
