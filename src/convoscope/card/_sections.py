"""Each section of the card, computed from verdicts by the library function that owns the number.

No statistic is computed here: agreement is :func:`~convoscope.analysis.metaeval`, system level
:func:`~convoscope.analysis.system_level`, bias :func:`~convoscope.estimate.study_bias`,
self-consistency :func:`~convoscope.runs.self_consistency`, labels worth
:func:`~convoscope.estimate.ppi_mean`. This module chooses their inputs and says, as
:class:`NotComputed`, why a section is empty.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from convoscope.analysis import MIN_SYSTEMS, MetaevalRow, SystemRow, metaeval, system_level
from convoscope.card._model import Agreement, Cost, LabelsWorth, NotComputed
from convoscope.errors import ConfigError
from convoscope.estimate import BiasReport, ppi_mean, study_bias
from convoscope.judges import RaterKind


def exact(verdicts: Sequence[Any], score: str) -> list[Any]:
    """The verdicts as the card scores them: a Python judge's exact float (its ``expected_value``;
    ``value`` is only the nearest scale point) always, a model judge's expected value when
    ``score="expected_value"``. Item level, system level, bias and labels worth all read these."""
    from convoscope.analysis import Rating

    scored = []
    for verdict in verdicts:
        expected = getattr(verdict, "expected_value", None)
        python = RaterKind.of(str(verdict.rater)) is RaterKind.PYTHON
        if expected is None or verdict.value is None or not (python or score == "expected_value"):
            scored.append(verdict)
            continue
        scored.append(Rating(str(verdict.item_id), str(verdict.criterion), str(verdict.rater),
                             float(expected), language=getattr(verdict, "language", None),
                             system=getattr(verdict, "system", None), expected_value=float(expected)))
    return scored


def agreement_rows(ratings: Sequence[Any], humans: Sequence[Any], *, criteria: Sequence[str],
                   by_language: bool, options: Mapping[str, Any]) -> list[MetaevalRow]:
    """One :func:`metaeval` over every judge and baseline, per criterion and language."""
    return metaeval(ratings, humans, criteria=list(criteria), by="language" if by_language else None,
                    n_resamples=options["n_resamples"], confidence=options["confidence"],
                    seed=options["seed"], alpha=options["alpha"], alt_epsilon=options["alt_epsilon"],
                    score=options["score"])


def agreements(rows: Sequence[MetaevalRow], rater: str, languages: Sequence[str]
               ) -> tuple[tuple[Agreement, ...], list[NotComputed]]:
    """``rater``'s rows beside the baselines' rows on the same criterion and language."""
    mine = [row for row in rows if row.judge == rater and (row.group is None or not languages
                                                            or row.group in languages)]
    found = tuple(Agreement(row.criterion, row.group, row, tuple(
        other for other in rows if other.criterion == row.criterion and other.group == row.group
        and other.judge != rater and RaterKind.of(other.judge) is RaterKind.BASELINE)) for row in mine)
    missing = [NotComputed("agreement", f"no item in {language} was rated by both the judge and people")
               for language in languages if not any(a.language == language for a in found)]
    if not found:
        missing.append(NotComputed("agreement", "the judge scored no item people rated"))
    return found, missing + [entry for agreement in found for entry in _unmeasured(agreement)]


def _unmeasured(agreement: Agreement) -> list[NotComputed]:
    """Why a row has no correlation or no alt-test, in metaeval's own notes."""
    row, where = agreement.judge, f"{agreement.criterion}, {agreement.language or 'all languages'}"
    missing = []
    if row.spearman is None:
        said = [note for note in row.notes if note.startswith("spearman")] or ["no correlation"]
        missing.append(NotComputed("agreement", f"{where}: {'; '.join(said)}", agreement.criterion))
    judge_kind = RaterKind.of(row.judge)
    if row.alt_test is None and row.humans.n_humans >= 3 and judge_kind is not RaterKind.BASELINE:
        said = [note for note in row.notes if note.startswith("alt-test")] or ["not run"]
        missing.append(NotComputed("agreement", f"{where}: {'; '.join(said)}", agreement.criterion))
    return missing


def systems(ratings: Sequence[Any], humans: Sequence[Any], items: Sequence[Any], rater: str, *,
            criteria: Sequence[str], options: Mapping[str, Any]) -> tuple[tuple[SystemRow, ...],
                                                                            list[NotComputed]]:
    """:func:`system_level` for ``rater``, or why not (no system column, too few systems)."""
    named = {item.system for item in items if item.system}
    if len(named) < 2:
        return (), [NotComputed("systems", f"the items name {len(named)} system(s); system-level "
                                f"agreement needs two or more ({MIN_SYSTEMS}+ for a firm answer)")]
    mine = [r for r in ratings if r.rater == rater]
    try:
        rows = system_level(mine, humans, criteria=list(criteria), seed=options["seed"],
                            n_resamples=options["n_resamples"])
    except (ValueError, ConfigError) as error:
        return (), [NotComputed("systems", str(error))]
    return tuple(rows), []


def bias(verdicts: Sequence[Any], humans: Sequence[Any], items: Sequence[Any], *,
         criteria: Sequence[str], family: Sequence[str], options: Mapping[str, Any]
         ) -> tuple[tuple[BiasReport, ...], list[NotComputed]]:
    """:func:`study_bias` (length, languages, self-preference) and what it could not measure."""
    from convoscope.baselines import item_length

    lengths = {item.id: float(item_length(item)) for item in items}
    reports = study_bias(verdicts, humans, criteria=criteria, lengths=lengths, own_family=family,
                         score=options["score"])
    missing = []
    if not reports:
        missing.append(NotComputed("bias", "no numeric criterion with two or more items scored by "
                                   "both the judge and people"))
    if len({item.language for item in items if item.language}) < 2:
        missing.append(NotComputed("bias", "language gaps need items in two or more languages"))
    if not family:
        missing.append(NotComputed("bias", "self-preference needs the judge's model family "
                                   "(the systems built on it: --family JUDGE=SYSTEM,...)"))
    return tuple(reports), missing


def unscored(verdicts: Sequence[Any]) -> tuple[tuple[str, int], ...]:
    """Unscored verdicts by reason, most frequent first."""
    counts = Counter(str(v.unscored_reason) for v in verdicts if v.value is None)
    return tuple(counts.most_common())


def cost(verdicts: Sequence[Any], n_items: int, wall_time_s: float, new_calls: int) -> Cost:
    """Tokens, price and model time summed over the verdicts that made a call of their own."""
    calls = [v for v in verdicts if not getattr(v, "shared_call", False)]
    priced = [v.cost for v in calls if getattr(v, "cost", None) is not None]
    timed = [v.latency_s for v in calls if getattr(v, "latency_s", None) is not None]
    return Cost(items=n_items, verdicts=len(verdicts), calls=len(calls),
                prompt_tokens=sum(getattr(v, "prompt_tokens", 0) for v in calls),
                completion_tokens=sum(getattr(v, "completion_tokens", 0) for v in calls),
                cost=float(sum(priced)) if priced else None,
                model_seconds=float(sum(timed)) if timed else None, wall_time_s=wall_time_s,
                new_calls=new_calls)


def labels_worth(verdicts: Sequence[Any], humans: Sequence[Any], *, criteria: Sequence[str],
                 confidence: float) -> tuple[tuple[LabelsWorth, ...], list[NotComputed]]:
    """:func:`ppi_mean` of people's mean per criterion: labelled items are those people rated;
    the unlabelled pool is the judged items people did not rate, or, when people rated them
    all, every judged item (the judge run again on items like these)."""
    found, missing = [], []
    for criterion in criteria:
        people: dict[str, list[float]] = defaultdict(list)
        for rating in humans:
            if str(rating.criterion) == criterion and _number(rating.value) is not None:
                people[str(rating.item_id)].append(float(rating.value))
        judged = {str(v.item_id): float(v.value) for v in verdicts
                  if str(v.criterion) == criterion and _number(v.value) is not None}
        labelled = sorted(i for i in judged if i in people)
        pool = [i for i in judged if i not in people]
        described = "judged items people did not rate"
        if not pool:
            pool, described = list(judged), "every judged item (people rated them all)"
        try:
            zero_one = all(value in (0.0, 1.0) for i in labelled for value in people[i])  # a share
            estimate = ppi_mean([np.mean(people[i]) for i in labelled], [judged[i] for i in labelled],
                                [judged[i] for i in pool], confidence=confidence, share=zero_one)
        except ConfigError as error:
            missing.append(NotComputed("labels_worth", str(error), criterion))
            continue
        found.append(LabelsWorth(criterion, estimate, described))
    return tuple(found), missing


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)
