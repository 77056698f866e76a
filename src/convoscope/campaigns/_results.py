"""Campaign results per system and criterion: majority vote, all votes, and why answers were negative.

Seed 003 reports human evaluation two ways: the share of candidates whose *majority* answer is
positive, negative or "I don't know", and the share of *all votes* with each answer; and, for the
negative answers, how often each explanation option was chosen. Pure functions over Verdicts.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from convoscope.criteria import Criterion
from convoscope.judges import Verdict

IDK_LABEL = "I don't know"
NO_MAJORITY = "no majority"
NOTE_ONLY = "(note only)"  # a negative answer explained by a note alone, no option ticked
NO_EXPLANATION = "(no explanation)"  # neither an option nor a note


class SystemResult(BaseModel):
    """Answers for one system under one criterion. Percentages are 0–100 and keyed by answer label."""

    model_config = ConfigDict(frozen=True)

    system: str
    criterion: str
    candidates: int
    votes: int
    majority: dict[str, float]  # answer label (or "no majority" for ties) -> % of candidates
    all_votes: dict[str, float]  # answer label -> % of votes


class OptionCount(BaseModel):
    """How often an explanation option was chosen with a negative or "I don't know" answer."""

    model_config = ConfigDict(frozen=True)

    system: str
    criterion: str
    option: str
    count: int
    negative_votes: int

    @property
    def percent(self) -> float:
        return 100.0 * self.count / self.negative_votes if self.negative_votes else 0.0


def answer_label(verdict: Verdict, criterion: Criterion | None) -> str | None:
    """The answer as people saw it ('appropriate', "I don't know"); None for other unscored rows."""
    if verdict.unscored_reason == "idk":
        return IDK_LABEL
    if verdict.value is None:
        return None
    return criterion.answer_word(verdict.value) if criterion else str(verdict.value)


def answer_labels(criterion: Criterion) -> list[str]:
    """Every answer label of a criterion in scale order, "I don't know" last."""
    labels = [criterion.answer_word(value) for value in criterion.scale.values()]
    return [*labels, IDK_LABEL] if criterion.scale.allow_idk else labels


def is_negative(verdict: Verdict, criterion: Criterion | None) -> bool:
    """A negative answer: "I don't know", or any value but the best one on the scale."""
    if verdict.unscored_reason == "idk":
        return True
    if verdict.value is None or criterion is None:
        return False
    return verdict.value != criterion.scale.values()[0]


def system_results(verdicts: Iterable[Verdict], criteria: Mapping[str, Criterion]) -> list[SystemResult]:
    """One row per (system, criterion), systems sorted, criteria in campaign order."""
    votes: dict[tuple[str, str], dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for verdict in verdicts:
        label = answer_label(verdict, criteria.get(verdict.criterion))
        if label is not None:
            votes[(verdict.system or "unknown", verdict.criterion)][verdict.item_id].append(label)
    order = {name: index for index, name in enumerate(criteria)}
    rows = []
    for (system, criterion), by_item in sorted(votes.items(),
                                               key=lambda kv: (kv[0][0], order.get(kv[0][1], 99))):
        every = [label for labels in by_item.values() for label in labels]
        majorities = [_majority(labels) for labels in by_item.values()]
        rows.append(SystemResult(system=system, criterion=criterion, candidates=len(by_item),
                                 votes=len(every), majority=_percentages(majorities),
                                 all_votes=_percentages(every)))
    return rows


def _majority(labels: Sequence[str]) -> str:
    """The most frequent answer; a tie between the top answers has no majority (stated, not broken)."""
    counts = Counter(labels).most_common()
    if len(counts) > 1 and counts[0][1] == counts[1][1]:
        return NO_MAJORITY
    return counts[0][0]


def _percentages(labels: Sequence[str]) -> dict[str, float]:
    total = len(labels)
    return {label: 100.0 * count / total for label, count in Counter(labels).most_common()}


def option_breakdown(verdicts: Iterable[Verdict], criteria: Mapping[str, Criterion]) -> list[OptionCount]:
    """Per (system, criterion): how many negative votes chose each option. A vote with no option
    counts once under NOTE_ONLY when it has a note, else under NO_EXPLANATION (the two are not the
    same finding: one says why in words, the other does not say why at all)."""
    negatives: Counter[tuple[str, str]] = Counter()
    chosen: Counter[tuple[str, str, str]] = Counter()
    for verdict in verdicts:
        if not is_negative(verdict, criteria.get(verdict.criterion)):
            continue
        key = (verdict.system or "unknown", verdict.criterion)
        negatives[key] += 1
        for option in verdict.options or (NOTE_ONLY if (verdict.reason or "").strip() else NO_EXPLANATION,):
            chosen[(*key, option)] += 1
    return [OptionCount(system=system, criterion=criterion, option=option, count=count,
                        negative_votes=negatives[(system, criterion)])
            for (system, criterion, option), count in sorted(chosen.items())]
