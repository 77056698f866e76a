"""Judges against each other, systems against systems, and the published protocols that need
more than one number per judge: what ``convoscope metaeval`` adds below its main table.

- :func:`compare_judges`: for every pair of judges on a criterion, is one closer to people?
  Williams' t and Steiger's Z on Spearman's rho with the human mean (dependent correlations), a
  paired bootstrap interval of the rho difference, a paired permutation test of the same, and on
  binary criteria McNemar's test of who matches the human majority more often.
- :func:`per_rater_average`: each judge scored against every human annotation set on its own,
  then averaged (the protocol of GPT-ABCEval, Finch et al. 2023), instead of against the
  majority of the humans.
- :func:`dialogue_level`: turn ratings averaged per dialogue, for a dialogue-level view.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from itertools import combinations
from typing import Any

import numpy as np

from convoscope.analysis._bootstrap import BootstrapResult, paired_bootstrap_diff
from convoscope.analysis._classification import McNemarResult, binary_scores, mcnemar
from convoscope.analysis._correlation import spearman
from convoscope.analysis._metaeval import _criteria, _one, _split
from convoscope.analysis._pooling import majority_vote, mean_pool
from convoscope.analysis._significance import (
    DependentCorrelationTest,
    PermutationResult,
    permutation_test,
    steiger_test,
    williams_test,
)
from convoscope.analysis._summary import attempt
from convoscope.analysis._tables import RaterMatrix, Rating


@dataclass(frozen=True)
class JudgeComparison:
    """Judge A against judge B on one criterion; every test is None (with a note) when undefined."""

    criterion: str
    judge_a: str
    judge_b: str
    n_items: int
    williams: DependentCorrelationTest | None
    steiger: DependentCorrelationTest | None
    bootstrap: BootstrapResult | None  # rho(human, A) - rho(human, B)
    permutation: PermutationResult | None  # Spearman rho difference, paired permutation
    mcnemar: McNemarResult | None  # binary criteria: matching the human majority
    notes: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _matrices(judge_ratings: Iterable[Any], human_ratings: Iterable[Any] | None,
              criteria: Iterable[str] | None) -> list[tuple[str, RaterMatrix, RaterMatrix]]:
    judges, humans = _split(judge_ratings, human_ratings)
    wanted = _criteria(judges, humans, list(criteria) if criteria else None)
    found = []
    for criterion in wanted:
        human = _one(humans, criterion, "value")
        found.append((criterion, _one(judges, criterion, "value").select(items=human.items), human))
    return found


def compare_judges(judge_ratings: Iterable[Any], human_ratings: Iterable[Any] | None = None, *,
                   criteria: Iterable[str] | None = None, n_resamples: int = 2000, seed: int | None = 0,
                   permutations: int = 1000, ties: str = "low") -> list[JudgeComparison]:
    """Every pair of judges on every criterion both judged (see the module docstring).

    Example: ``compare_judges(read_ratings("verdicts.jsonl"), read_ratings("humans.csv"))``.
    """
    comparisons = []
    for criterion, judges, humans in _matrices(judge_ratings, human_ratings, criteria):
        if not humans.numeric or not judges.numeric:
            continue
        human_mean = mean_pool(humans.values)
        majority = majority_vote(humans.values, ties=ties)  # type: ignore[arg-type]
        for first, second in combinations(judges.raters, 2):
            a, b = judges.row(first), judges.row(second)
            comparisons.append(_compare(criterion, first, second, a, b, human_mean, majority,
                                        n_resamples, seed, permutations))
    return comparisons


def _compare(criterion: str, first: str, second: str, a: np.ndarray, b: np.ndarray, human: np.ndarray,
             majority: np.ndarray, n_resamples: int, seed: int | None, permutations: int) -> JudgeComparison:
    notes: list[str] = []
    n_items = int((~(np.isnan(a) | np.isnan(b) | np.isnan(human))).sum())
    williams = attempt(notes, "Williams", lambda: williams_test(human, a, b, method="spearman"))
    steiger = attempt(notes, "Steiger", lambda: steiger_test(human, a, b, method="spearman"))
    bootstrap = attempt(notes, "paired bootstrap", lambda: paired_bootstrap_diff(
        spearman, human, a, b, n_resamples=n_resamples, seed=seed))
    permutation = attempt(notes, "permutation", lambda: permutation_test(
        spearman, human, a, b, n_resamples=permutations, seed=seed)) if permutations else None
    return JudgeComparison(criterion, first, second, n_items, williams, steiger, bootstrap, permutation,
                           _mcnemar(a, b, majority, notes), tuple(notes))


def _mcnemar(a: np.ndarray, b: np.ndarray, majority: np.ndarray, notes: list[str]) -> McNemarResult | None:
    both = ~(np.isnan(a) | np.isnan(b) | np.isnan(majority))
    labels = set(np.unique(np.concatenate([a[both], b[both], majority[both]])).tolist())
    if len(labels) != 2:
        return None
    return attempt(notes, "McNemar", lambda: mcnemar(a[both] == majority[both], b[both] == majority[both]))


@dataclass(frozen=True)
class SetAverage:
    """A judge scored against each human annotation set alone, averaged over the sets."""

    criterion: str
    judge: str
    n_sets: int
    f1_pos: float | None
    f1_neg: float | None
    accuracy: float | None
    spearman: float | None
    per_set: tuple[tuple[str, float | None, float | None, float | None], ...]  # rater, F1+, F1-, acc

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def per_rater_average(judge_ratings: Iterable[Any], human_ratings: Iterable[Any] | None = None, *,
                      criteria: Iterable[str] | None = None, positive: Any = 1) -> list[SetAverage]:
    """Each judge against each human rater (annotation set) separately, then the mean over sets:
    GPT-ABCEval's protocol (F1 of both classes and accuracy, as percentages in the paper).

    Example: ``per_rater_average(gpt_labels, human_labels)`` on ABC-Eval gives ChatGPT's F1+
    of .406 on "irrelevant", as printed (40.6).
    """
    rows = []
    for criterion, judges, humans in _matrices(judge_ratings, human_ratings, criteria):
        for judge in judges.raters:
            scores = judges.row(judge)
            per_set = []
            for rater in humans.raters:
                result = _scores_against(humans.row(rater), scores, positive)
                per_set.append((rater, *result))
            rows.append(SetAverage(criterion, judge, len(per_set), *_means(per_set),
                                   spearman=_mean_spearman(humans, scores), per_set=tuple(per_set)))
    return rows


def _scores_against(reference: np.ndarray, scores: np.ndarray,
                    positive: Any) -> tuple[float | None, float | None, float | None]:
    try:
        result = binary_scores(reference, scores, positive=positive)
    except ValueError:
        return None, None, None
    return result.f1_pos, result.f1_neg, result.accuracy


def _means(per_set: list[tuple[Any, ...]]) -> tuple[float | None, float | None, float | None]:
    columns = []
    for index in (1, 2, 3):
        values = [row[index] for row in per_set if row[index] is not None]
        columns.append(float(np.mean(values)) if values else None)
    return columns[0], columns[1], columns[2]


def _mean_spearman(humans: RaterMatrix, scores: np.ndarray) -> float | None:
    if not humans.numeric or scores.dtype == object:
        return None
    values = []
    for rater in humans.raters:
        try:
            values.append(spearman(humans.row(rater), scores))
        except ValueError:
            continue
    return float(np.mean(values)) if values else None


DEFAULT_DIALOGUE = r"^(.*):[^:]*$"


def dialogue_level(ratings: Iterable[Any], *, dialogue_of: str | Callable[[str], str] = DEFAULT_DIALOGUE
                   ) -> list[Rating]:
    """Turn ratings averaged per dialogue and rater: one :class:`Rating` per (dialogue, rater,
    criterion). ``dialogue_of`` maps an item id to its dialogue: a regular expression whose
    first group is the dialogue (default: the id up to its last ':', as in ``abc:<dialogue>:<turn>``)
    or a function. Text labels and unscored ratings are skipped.

    >>> turns = [Rating("d1:0", "q", "h", 1), Rating("d1:1", "q", "h", 0), Rating("d2:0", "q", "h", 1)]
    >>> [(r.item_id, r.value) for r in dialogue_level(turns)]
    [('d1', 0.5), ('d2', 1.0)]
    """
    if isinstance(dialogue_of, str):
        pattern = re.compile(dialogue_of)

        def find(item: str) -> str:
            match = pattern.match(item)
            return match.group(1) if match else item

        dialogue_of = find
    sums: dict[tuple[str, str, str], list[float]] = {}
    systems: dict[str, str | None] = {}
    for rating in ratings:
        if not isinstance(rating.value, int | float) or isinstance(rating.value, bool):
            continue
        dialogue = dialogue_of(str(rating.item_id))
        sums.setdefault((dialogue, str(rating.rater), str(rating.criterion)), []).append(float(rating.value))
        systems.setdefault(dialogue, getattr(rating, "system", None))
    return [Rating(item_id=dialogue, criterion=criterion, rater=rater,
                   value=math.fsum(values) / len(values),
                   system=systems[dialogue]) for (dialogue, rater, criterion), values in sums.items()]

