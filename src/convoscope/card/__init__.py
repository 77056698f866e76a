"""The judge card: how far a judge can be trusted, and for what, in one call.

:func:`judge_card` judges what the store does not hold yet, then assembles for each judge what
the library already computes — agreement with people per criterion and language beside the
human ceiling and the cheap baselines, the alternative annotator test, system-level agreement,
length / language / self-preference / position bias, sensitivity to the card's manipulation
probes, self-consistency over repeats, unscored verdicts, cost per 1,000 items and the labels a
judged item is worth — and a plain-words verdict chosen by the stated :class:`CardThresholds`.

    import convoscope as cs
    card = cs.judge_card(["embedded", "baseline:length"], "items.jsonl", "human.csv",
                         criteria=cs.select_criteria(files=["overall.yaml"]))
    print(card.to_markdown())
"""

from convoscope.card._build import judge_card, judge_card_async
from convoscope.card._model import (
    DEFAULT_THRESHOLDS,
    SCHEMA_VERSION,
    SECTIONS,
    THRESHOLD_MEANINGS,
    Agreement,
    CardThresholds,
    Cost,
    Finding,
    JudgeCard,
    JudgeReport,
    LabelsWorth,
    Manipulation,
    NotComputed,
    Provenance,
)
from convoscope.card._probes import Probe, card_probes, manipulation_counts, probe_items
from convoscope.card._verdict import findings as card_findings
from convoscope.card._verdict import paragraph as verdict_paragraph

__all__ = [
    "DEFAULT_THRESHOLDS",
    "SCHEMA_VERSION",
    "SECTIONS",
    "THRESHOLD_MEANINGS",
    "Agreement",
    "CardThresholds",
    "Cost",
    "Finding",
    "JudgeCard",
    "JudgeReport",
    "LabelsWorth",
    "Manipulation",
    "NotComputed",
    "Probe",
    "Provenance",
    "card_findings",
    "card_probes",
    "judge_card",
    "judge_card_async",
    "manipulation_counts",
    "probe_items",
    "verdict_paragraph",
]
