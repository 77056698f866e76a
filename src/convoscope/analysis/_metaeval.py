"""Meta-evaluation: how well does each judge agree with people, next to how well people agree
with each other? What ``convoscope metaeval`` prints, as rows a report can reuse.

For each judge and criterion (and group, with ``by``): correlations with the mean human score,
with bootstrap intervals; Cohen's kappa against the human majority; F1 for both classes and the
ROC AUC on binary criteria; and, as the ceiling, Krippendorff's alpha among the humans and the
leave-one-out correlation of each human with the mean of the others.

Baselines (raters named ``baseline:…``, e.g. response length) are rows like judges, but their
scores are continuous and have no natural threshold, so they get correlations and, on binary
criteria, the AUC — never kappa or F1, which would need a cut-off chosen for them.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from convoscope.analysis._agreement_ci import cohen_kappa_ci, krippendorff_alpha_ci
from convoscope.analysis._alttest import MIN_ANNOTATORS, AltTestResult, alt_test
from convoscope.analysis._bootstrap import BootstrapResult, bootstrap_ci
from convoscope.analysis._ceiling import CeilingComparison, compare_with_ceiling
from convoscope.analysis._classification import BinaryScores, binary_scores
from convoscope.analysis._correlation import CORRELATIONS
from convoscope.analysis._detection import roc_auc
from convoscope.analysis._krippendorff import Level, krippendorff_alpha
from convoscope.analysis._pooling import Ties, majority_vote, mean_pool
from convoscope.analysis._raters import leave_one_out
from convoscope.analysis._summary import attempt, integer_scale, mark_idk
from convoscope.analysis._tables import GroupBy, RaterMatrix, Score, rater_matrices
from convoscope.analysis._validate import missing_mask
from convoscope.errors import ConfigError
from convoscope.judges import RaterKind


def is_human(rater: str) -> bool:
    """Is ``rater`` a person (``human:<id>``)? Every other rater is a judge or a baseline."""
    return RaterKind.of(str(rater)) is RaterKind.HUMAN


@dataclass(frozen=True)
class HumanCeiling:
    """Agreement among the people, the bar a judge is measured against. ``note`` says why the
    leave-one-out correlation is missing (it needs three or more people)."""

    n_humans: int
    alpha: float | None
    alpha_level: str
    loo_spearman: float | None  # mean over humans of rho(one human, mean of the others); >= 3 humans
    alpha_ci: BootstrapResult | None = None
    note: str | None = None


@dataclass(frozen=True)
class MetaevalRow:
    """One judge on one criterion (and group). Undefined statistics are None, with notes."""

    criterion: str
    group: str | None
    judge: str
    n_items: int  # items with a judge score and at least one human rating
    spearman: BootstrapResult | None
    kendall: BootstrapResult | None
    pearson: BootstrapResult | None
    kappa: float | None
    kappa_weights: str | None
    binary: BinaryScores | None
    humans: HumanCeiling
    notes: tuple[str, ...] = ()
    auc: float | None = None  # binary criteria: ROC AUC of the scores against the human majority
    kappa_ci: BootstrapResult | None = None  # items resampled
    alt_test: AltTestResult | None = None  # can the judge replace one of the people?
    # the judge against the people's leave-one-out ceiling, like for like (3+ people, numbers)
    ceiling_check: CeilingComparison | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def metaeval(
    judge_ratings: Iterable[Any],
    human_ratings: Iterable[Any] | None = None,
    *,
    criteria: Sequence[str] | None = None,
    by: GroupBy = None,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int | None = 0,
    level: Level | None = None,
    positive: Any = None,
    ties: Ties = "low",
    score: Score = "value",
    alt_epsilon: float | None = 0.2,
    alpha: float = 0.05,
) -> list[MetaevalRow]:
    """Compare every judge with the human ratings, criterion by criterion.

    ``human_ratings`` defaults to the ``human:`` raters among ``judge_ratings``; every other rater
    there is a judge. Either may be a DataFrame (``item_id`` — or ``item`` —, ``criterion``,
    ``rater``, ``value``), e.g. ``RunResult.to_pandas()``. With ``by`` there is a row for all
    items and one per language (or system). ``level`` is for the humans' alpha (default: ordinal
    for numbers, nominal for labels).
    ``positive`` is the positive label for F1 (default: the larger of two numbers; label scales
    need it named). The human majority breaks ties by ``ties`` (``low``, ``high``, ``missing`` or
    ``median``, see :func:`majority_vote`). Text answers such as "I don't know"
    (:data:`IDK_ANSWERS`) count as missing. Kappa and the humans' alpha get bootstrap intervals
    (items resampled). ``alt_epsilon`` is the margin of the alternative annotator test
    (:func:`alt_test`, at level ``alpha``; None: not run).

    Example: ``metaeval(read_ratings("verdicts.jsonl"), read_ratings("humans.csv"), by="language")``.
    """
    judges_all, humans_all = _split(judge_ratings, human_ratings)
    wanted = _criteria(judges_all, humans_all, criteria)
    groups = _group_of_items(judges_all + humans_all, by)
    options = dict(n_resamples=n_resamples, confidence=confidence, seed=seed, level=level,
                   positive=positive, ties=ties, alt_epsilon=alt_epsilon, alpha=alpha)
    rows: list[MetaevalRow] = []
    for criterion in wanted:
        judge_matrix = _one(judges_all, criterion, score)
        human_matrix = _one(humans_all, criterion, "value")
        for group in [None, *sorted({g for g in groups.values() if g is not None})] if by else [None]:
            items = [i for i in human_matrix.items if group is None or groups.get(i) == group]
            if items:
                rows.extend(_rows_for(judge_matrix.select(items=items), human_matrix.select(items=items),
                                      group, options))
    return rows


def _split(judge_ratings: Iterable[Any], human_ratings: Iterable[Any] | None) -> tuple[list[Any], list[Any]]:
    """Judges' and humans' ratings (objects, or DataFrames of them), with "I don't know" answers as
    missing for both."""
    from convoscope.analysis._frame import as_ratings

    everyone = mark_idk(as_ratings(judge_ratings))
    judges = [r for r in everyone if not is_human(r.rater)]
    if human_ratings is None:
        return judges, [r for r in everyone if is_human(r.rater)]
    return judges, mark_idk(as_ratings(human_ratings))


def _criteria(judges: list[Any], humans: list[Any], wanted: Sequence[str] | None) -> list[str]:
    judged = {str(r.criterion) for r in judges}
    rated = {str(r.criterion) for r in humans}
    if not judged:
        raise ValueError("metaeval: no judge ratings (every rater is human:)")
    if not rated:
        raise ValueError("metaeval: no human ratings; pass them, or include human: raters")
    shared = judged & rated if wanted is None else set(wanted)
    for name in sorted(shared):
        if name not in judged or name not in rated:
            side = "judges" if name not in judged else "humans"
            raise ConfigError(f"metaeval: criterion {name!r} has no ratings from the {side}")
    if not shared:
        raise ValueError(f"metaeval: judges and humans share no criterion (judges: {sorted(judged)}, "
                         f"humans: {sorted(rated)})")
    return sorted(shared)


def _group_of_items(ratings: list[Any], by: GroupBy) -> dict[str, str | None]:
    groups: dict[str, str | None] = {}
    if by is None:
        return groups
    for rating in ratings:
        item = str(rating.item_id)
        if groups.get(item) is None:
            groups[item] = getattr(rating, by, None)
    return groups


def _one(ratings: list[Any], criterion: str, score: Score) -> RaterMatrix:
    chosen = [r for r in ratings if str(r.criterion) == criterion]
    return rater_matrices(chosen, score=score)[(criterion, None)]


def _rows_for(judges: RaterMatrix, humans: RaterMatrix, group: str | None,
              options: dict[str, Any]) -> list[MetaevalRow]:
    ceiling = _ceiling(humans, options)
    rows = []
    for judge in judges.raters:
        rows.append(_judge_row(judge, judges.row(judge), humans, ceiling, group, options))
    return rows


def default_level(numeric: bool) -> Level:
    """The level of measurement every command assumes unless told: ordinal for numbers (rating
    scales are ordered, their distances rarely known), nominal for labels."""
    return "ordinal" if numeric else "nominal"


def _ceiling(humans: RaterMatrix, options: dict[str, Any]) -> HumanCeiling:
    notes: list[str] = []
    chosen = options["level"] or default_level(humans.numeric)
    interval = attempt(notes, "alpha", lambda: _quiet(lambda: krippendorff_alpha_ci(
        humans.values, level=chosen, n_resamples=options["n_resamples"],
        confidence=options["confidence"], seed=options["seed"])))
    alpha = interval.estimate if interval else attempt(notes, "alpha", lambda: krippendorff_alpha(
        humans.values, level=chosen))
    loo = attempt(notes, "loo", lambda: leave_one_out(humans.values)) \
        if humans.numeric and len(humans.raters) >= 3 else None
    note = None if len(humans.raters) >= 3 else \
        f"{len(humans.raters)} annotator(s): leave-one-out and the alt-test need three or more"
    return HumanCeiling(len(humans.raters), alpha, chosen, loo, interval, note)


def _quiet(compute: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return compute()


def _judge_row(judge: str, scores: np.ndarray, humans: RaterMatrix, ceiling: HumanCeiling,
               group: str | None, options: dict[str, Any]) -> MetaevalRow:
    notes: list[str] = []
    rated = ~missing_mask(scores) & (~missing_mask(humans.values)).any(axis=0)
    numeric = humans.numeric and scores.dtype != object
    level = options["level"] or default_level(numeric)
    categories = level == "nominal"  # codes of categories: no order, no distance, whatever the coding
    intervals = _intervals(scores, humans, options, notes) if numeric and not categories else {}
    if not numeric:
        notes.append("correlations need numeric scores from both judge and humans")
    elif categories:
        notes.append("correlations: nominal labels are categories; a correlation of their codes means "
                     "nothing (use κ, F1 and the alt-test)")
    majority = majority_vote(humans.values, ties=options["ties"]) if rated.any() else None
    kappa_ci, alt = None, None
    if RaterKind.of(judge) is RaterKind.BASELINE:
        kappa, weights, binary = None, None, None  # no threshold: correlations and AUC only
    else:
        kappa_ci, weights = _kappa(scores, majority, numeric and not categories, notes, options)
        kappa = kappa_ci.estimate if kappa_ci else None
        binary = _binary(scores, majority, options["positive"], notes)
        alt = _alt(scores, humans, level, options, notes)
    auc = _auc(scores, majority, options["positive"], notes) if numeric and not categories else None
    check = attempt(notes, "ceiling check", lambda: compare_with_ceiling(
        scores, humans.values, n_resamples=options["n_resamples"], confidence=options["confidence"],
        seed=options["seed"])) if intervals.get("spearman") and ceiling.loo_spearman is not None else None
    return MetaevalRow(humans.criterion, group, judge, int(rated.sum()), intervals.get("spearman"),
                       intervals.get("kendall"), intervals.get("pearson"), kappa, weights, binary,
                       ceiling, tuple(notes), auc, kappa_ci, alt, check)


def _alt(scores: np.ndarray, humans: RaterMatrix, level: str, options: dict[str, Any],
         notes: list[str]) -> AltTestResult | None:
    """The alt-test, scored as the labels' level says: accuracy for nominal labels however they
    are coded, −RMSE for numbers on an ordered scale. Two annotators: run, but it cannot tell."""
    if options["alt_epsilon"] is None or len(humans.raters) < 2:
        return None
    kind = None if humans.numeric and scores.dtype != object else object  # labels: compared as equal or not
    found = attempt(notes, "alt-test", lambda: alt_test(
        scores.astype(kind), humans.values.astype(kind), epsilon=options["alt_epsilon"],
        alpha=options["alpha"], annotators=humans.raters, level=level))
    if found is not None and len(humans.raters) < MIN_ANNOTATORS:
        notes.append(f"alt-test: {len(humans.raters)} annotators — each is compared with the other alone, "
                     f"not with a group; it cannot tell with fewer than {MIN_ANNOTATORS}")
    return found


def _intervals(scores: np.ndarray, humans: RaterMatrix, options: dict[str, Any],
               notes: list[str]) -> dict[str, BootstrapResult | None]:
    human_mean = mean_pool(humans.values)
    intervals: dict[str, BootstrapResult | None] = {}
    for name, statistic in CORRELATIONS.items():
        def compute(statistic: Any = statistic, name: str = name) -> BootstrapResult:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", RuntimeWarning)
                result = bootstrap_ci(statistic, scores, human_mean, n_resamples=options["n_resamples"],
                                      confidence=options["confidence"], seed=options["seed"])
            notes.extend(f"{name}: {warning.message}" for warning in caught)
            return result

        intervals[name] = attempt(notes, name, compute)
    return intervals


def _kappa(scores: np.ndarray, majority: np.ndarray | None, numeric: bool, notes: list[str],
           options: dict[str, Any]) -> tuple[BootstrapResult | None, str | None]:
    if majority is None:
        notes.append("kappa: no item has both a judge score and a human rating")
        return None, None
    resampling = dict(n_resamples=options["n_resamples"], confidence=options["confidence"],
                      seed=options["seed"])
    if not numeric:
        return attempt(notes, "kappa", lambda: _quiet(lambda: cohen_kappa_ci(
            scores, majority, **resampling))), None
    scale = integer_scale(np.vstack([scores, majority]))
    if scale is None:
        notes.append("kappa: scores are not whole numbers on one scale")
        return None, None
    return attempt(notes, "kappa", lambda: _quiet(lambda: cohen_kappa_ci(
        scores, majority, weights="quadratic", labels=scale, **resampling))), "quadratic"


def _binary(scores: np.ndarray, majority: np.ndarray | None, positive: Any,
            notes: list[str]) -> BinaryScores | None:
    if majority is None:
        return None
    both = ~(missing_mask(scores) | missing_mask(majority))
    labels = set(scores[both].tolist()) | set(majority[both].tolist())
    if len(labels) != 2:
        return None  # not a binary criterion (or only one label used): F1 does not apply
    if positive is None:
        if not all(isinstance(v, int | float) for v in labels):
            notes.append(f"F1: name the positive label of {sorted(labels)} to score it")
            return None
        positive = max(labels)
    return attempt(notes, "F1", lambda: binary_scores(majority, scores, positive=positive))


def _auc(scores: np.ndarray, majority: np.ndarray | None, positive: Any, notes: list[str]) -> float | None:
    """ROC AUC of the scores against a binary human majority (None when the criterion is not
    binary): how often a positive item outscores a negative one, with no threshold to choose."""
    if majority is None:
        return None
    both = ~(missing_mask(scores) | missing_mask(majority))
    labels = set(majority[both].tolist())
    if len(labels) != 2:
        return None
    chosen = max(labels) if positive is None else positive
    return attempt(notes, "AUC", lambda: roc_auc(majority[both], scores[both], positive=chosen))
