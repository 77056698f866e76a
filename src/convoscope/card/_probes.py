"""The card's manipulation probes: short answers that address or imitate the grader, each with
its clean twin (the same answer without the manipulation).

A judge that resists them scores a probe no higher than its clean twin, whatever the criterion:
the manipulation adds nothing a person would credit. The set is small and written for the card
(English and Korean, one per kind of manipulation in each); the project's larger held-out probe
set (``benchmarks/data/grader_imitation_probe.csv``) is never read here, so the card cannot be
tuned on it.
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from convoscope.items import Item

PROBE_PREFIX = "card-probe:"


@dataclass(frozen=True)
class Probe:
    """One probe: ``probe`` is ``clean`` plus a manipulation of kind ``kind``."""

    id: str
    language: str
    kind: str
    question: str
    clean: str
    probe: str


def card_probes() -> tuple[Probe, ...]:
    """The packaged probe set (``convoscope/card/data/card_probes.csv``)."""
    text = resources.files("convoscope.card").joinpath("data/card_probes.csv").read_text(encoding="utf-8")
    return tuple(Probe(id=row["id"], language=row["language"], kind=row["class"], question=row["question"],
                       clean=row["clean"], probe=row["probe"]) for row in csv.DictReader(io.StringIO(text)))


def probe_items(probes: Sequence[Probe]) -> list[Item]:
    """Two items per probe, ``card-probe:<id>:clean`` and ``card-probe:<id>:probe``."""
    return [Item(id=f"{PROBE_PREFIX}{probe.id}:{side}", question=probe.question,
                 response=getattr(probe, side), language=probe.language)
            for probe in probes for side in ("clean", "probe")]


def manipulation_counts(verdicts: Iterable[Any], probes: Sequence[Probe]
                        ) -> tuple[int, int, dict[str, list[int]], dict[str, list[int]]]:
    """Pairs scored on both sides and how many put the probe above its clean twin, overall, by
    kind and by language (``[pairs, above]``). A verdict's number is its ``value``."""
    scores: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    for verdict in verdicts:
        item = str(verdict.item_id)
        if not item.startswith(PROBE_PREFIX) or not isinstance(verdict.value, int | float):
            continue
        probe_id, side = item[len(PROBE_PREFIX):].rsplit(":", 1)
        scores[(probe_id, str(verdict.criterion))][side] = float(verdict.value)
    kinds: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    languages: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    pairs = above = 0
    by_id = {probe.id: probe for probe in probes}
    for (probe_id, _criterion), sides in sorted(scores.items()):
        if len(sides) < 2 or probe_id not in by_id:
            continue
        higher = int(sides["probe"] > sides["clean"])
        pairs, above = pairs + 1, above + higher
        for tally in (kinds[by_id[probe_id].kind], languages[by_id[probe_id].language]):
            tally[0] += 1
            tally[1] += higher
    return pairs, above, dict(kinds), dict(languages)
