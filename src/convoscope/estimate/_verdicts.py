"""Estimates from the verdict table: judges and people read from the same rows.

For each group (system, language), the judge's score on every item it scored and the people's
ratings on the items they rated. Only items in the uniform random sample count as labelled
(items routed to people for a reason — disagreement, a flat distribution, a "hold" — are not a
random sample; their judge scores still count among the judged items). Without a stated sample
every human-rated item is taken as labelled, which is honest only when people rated a random
sample; the result says which it did.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from convoscope.analysis._decision import Decision, cannot_tell
from convoscope.errors import ConfigError
from convoscope.estimate._calibrate import Calibration
from convoscope.estimate._crossfit import CrossFit, cross_fit
from convoscope.estimate._ppi import Estimate, Interval, crossfit_mean, power_tuning_lambda, ppi_mean
from convoscope.judges import RaterKind

Target = Literal["mean", "shares"]
GroupField = Literal["system", "language"]


@dataclass(frozen=True)
class GroupEstimate:
    """One estimate: ``target`` is ``mean`` or ``share:<label>``; ``group`` names the system
    and/or language it is for; ``calibration`` the map applied to the judge's scores, if any."""

    criterion: str
    judge: str
    target: str
    group: dict[str, str | None]
    estimate: Estimate
    labelled: Literal["random sample", "all human-rated items"]
    calibration: str | None = None


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value))
    except ValueError:
        return None


def _judge_score(verdict: Any, score: str) -> float | None:
    if score == "expected_value" and getattr(verdict, "expected_value", None) is not None:
        return float(verdict.expected_value)
    return _number(verdict.value)


def _is_human(rater: str) -> bool:
    return RaterKind.of(rater) is RaterKind.HUMAN


@dataclass(frozen=True)
class Estimates(Sequence[GroupEstimate]):
    """The estimates of every group that could be estimated; ``skipped`` says which groups
    could not be and why (e.g. fewer than 2 human-labelled items in the random sample)."""

    rows: tuple[GroupEstimate, ...]
    skipped: tuple[str, ...] = ()
    refusals: tuple[Decision, ...] = ()  # each skipped group as a decision: cannot tell, and why

    def __getitem__(self, index: Any) -> Any:
        return self.rows[index]

    def __len__(self) -> int:
        return len(self.rows)


MIN_LABELS = 10
ESTIMATE_RULE = ("estimate a group when it has at least min_labels human-labelled items in the random "
                 "sample and at least one item only the judge scored")


def estimate(verdicts: Iterable[Any], *, criterion: str, judge: str, target: Target | None = None,
             by: Sequence[GroupField] = ("system",), random_sample: Iterable[str] | None = None,
             calibration: Calibration | None = None, cross_fit: int | None = None,
             score: str = "expected_value", confidence: float = 0.95, interval: Interval = "t",
             min_labels: int = MIN_LABELS, seed: int = 0) -> Estimates:
    """Prediction-powered estimates of what people would say, per group.

    ``judge`` is the judge's rater name as it appears in the verdicts; human raters are those
    named ``human:…``. ``target="shares"`` estimates the share of each label people give (the
    judge's probability of the label where it gave a distribution, else its label). The default
    (None) takes shares when people's labels are not numbers, else the mean; a mean of 0/1
    labels is the share of 1 and gets the share interval (never a point with no positive seen).

    ``calibration`` maps the judge's scores first; it must record the items it was fitted on
    (``fitted_on``) and none of them may be a labelled item here, or the interval loses its
    coverage. ``cross_fit=K`` instead calibrates isotonically out of fold on the same labels
    (cross-prediction). Groups with fewer than ``min_labels`` labelled items are not estimated
    (listed in ``skipped``); ``interval`` is ``t`` (default) or ``normal`` (see :func:`ppi_mean`).
    """
    rows = [v for v in verdicts if v.criterion == criterion and v.value is not None]
    if not any(v.rater == judge for v in rows):
        raters = sorted({v.rater for v in rows if not _is_human(v.rater)})
        raise ConfigError(f"no scored verdict by judge {judge!r} on {criterion!r}; judges present: "
                          f"{', '.join(raters) or 'none'}")
    if min_labels < 2:
        raise ConfigError(f"min_labels must be at least 2, not {min_labels}")
    groups = _groups(rows, judge, by)
    if not any(g["human"] for g in groups.values()):
        raise ConfigError(f"no human verdict on {criterion!r}: people must rate a sample first")
    sample = None if random_sample is None else set(random_sample)
    labelled = {key: [i for i in g["judge"] if i in g["human"] and (sample is None or i in sample)]
                for key, g in groups.items()}
    if calibration is not None:
        _check_calibration(calibration, [i for ids in labelled.values() for i in ids])
    if target is None:
        target = _default_target(groups, labelled)
    folds = _folds(groups, labelled, cross_fit, target, calibration, score, seed)
    options = dict(target=target, score=score, confidence=confidence, interval=interval)
    results, skipped, refusals = [], [], []
    for key in sorted(groups, key=lambda k: tuple(str(part) for part in k)):
        group = dict(zip(by, key, strict=True))
        judged, chosen = groups[key]["judge"], labelled[key]
        unlabelled = [i for i in judged if i not in set(chosen)]
        if len(chosen) < min_labels or not unlabelled:
            name = ", ".join(f"{k}={v}" for k, v in group.items()) or "all items"
            skipped.append(f"{name}: {len(chosen)} human-labelled and {len(unlabelled)} judge-only "
                           f"items (at least {min_labels} and 1 are needed)")
            refusals.append(cannot_tell(ESTIMATE_RULE, skipped[-1], group=name, labels=len(chosen),
                                        judge_only=len(unlabelled), min_labels=min_labels))
            continue
        found = _group_estimates(groups[key], chosen, unlabelled, calibration, folds, options)
        for name, value in found:
            results.append(GroupEstimate(
                criterion=criterion, judge=judge, target=name, group=group, estimate=value,
                labelled="all human-rated items" if sample is None else "random sample",
                calibration=folds.name if folds else (calibration.name if calibration else None)))
    if not results:
        raise ConfigError("no group could be estimated: " + "; ".join(skipped))
    return Estimates(tuple(results), tuple(skipped), tuple(refusals))


def _default_target(groups: dict[tuple[Any, ...], dict[str, Any]],
                    labelled: dict[tuple[Any, ...], list[str]]) -> Target:
    """Shares when any label people gave is not a number (categories), else the mean."""
    values = [v for key, ids in labelled.items() for i in ids for v in groups[key]["human"][i]]
    return "shares" if any(_number(v) is None for v in values) else "mean"


def _zero_one(human: dict[str, list[Any]], labelled: list[str]) -> bool:
    """Are all of people's labels 0 or 1? Their mean is then a share and needs the share interval."""
    return all(_number(v) in (0.0, 1.0) for i in labelled for v in human[i])


def _groups(rows: list[Any], judge: str, by: Sequence[str]) -> dict[tuple[Any, ...], dict[str, Any]]:
    groups: dict[tuple[Any, ...], dict[str, Any]] = defaultdict(
        lambda: {"judge": {}, "human": defaultdict(list)})
    for verdict in rows:
        key = tuple(getattr(verdict, name) for name in by)
        if verdict.rater == judge:
            groups[key]["judge"][verdict.item_id] = verdict
        elif _is_human(verdict.rater):
            groups[key]["human"][verdict.item_id].append(verdict.value)
    return groups


def _check_calibration(calibration: Calibration, labelled: list[str]) -> None:
    """Refuse a calibration learnt from the labels the estimate is about to use."""
    fix = ("fit it on items outside the random sample (`convoscope calibrate --exclude SAMPLE`, or "
           "fit_isotonic(..., item_ids=...)) or let `estimate --cross-fit K` calibrate out of fold")
    if calibration.fitted_on is None:
        raise ConfigError(f"calibration {calibration.name!r} does not record which items it was fitted "
                          f"on, so its labels cannot be kept apart from the estimate's: {fix}")
    used = set(calibration.fitted_on) & set(labelled)
    if used:
        raise ConfigError(f"calibration {calibration.name!r} was fitted on {len(used)} of the "
                          f"{len(labelled)} labelled items; an estimate from the same labels loses "
                          f"its coverage: {fix}")


def _folds(groups: dict[tuple[Any, ...], dict[str, Any]], labelled: dict[tuple[Any, ...], list[str]],
           folds: int | None, target: str, calibration: Calibration | None, score: str,
           seed: int) -> CrossFit | None:
    if folds is None:
        return None
    if calibration is not None:
        raise ConfigError("give a calibration or cross-fit one, not both")
    if target != "mean":
        raise ConfigError("cross-fitting calibrates a score onto the human scale: it needs target='mean'")
    judge = {i: _judge_score(v, score) for g in groups.values() for i, v in g["judge"].items()}
    human = {i: float(np.mean([_number(x) for x in values])) for g in groups.values()
             for i, values in g["human"].items()}
    scored = {i: x for i, x in judge.items() if x is not None}
    return cross_fit(scored, human, [i for ids in labelled.values() for i in ids], folds=folds, seed=seed)


def _group_estimates(group: dict[str, Any], labelled: list[str], unlabelled: list[str],
                     calibration: Calibration | None, folds: CrossFit | None,
                     options: dict[str, Any]) -> list[tuple[str, Estimate]]:
    judged, human = group["judge"], group["human"]
    settings = dict(confidence=options["confidence"], interval=options["interval"])
    if folds is not None:
        y = np.array([np.mean([_number(v) for v in human[i]]) for i in labelled], dtype=float)
        scores = [_judge_score(judged[i], options["score"]) for i in unlabelled]
        raw = [np.nan if score is None else score for score in scores]
        return [("mean", crossfit_mean(y, [folds.out_of_fold[i] for i in labelled],
                                       folds.unlabelled(raw), **settings))]
    targets = list(_targets(options["target"], judged, human, labelled, unlabelled, calibration,
                            options["score"]))
    # One weight for every label's share (PPI++ "overall" tuning), so the shares sum to one.
    lam = power_tuning_lambda(*(np.column_stack([t[index] for t in targets]) for index in (1, 2, 3)))
    share = options["target"] == "shares" or _zero_one(human, labelled)
    return [(name, ppi_mean(y, yhat, yhat_u, lam=lam, share=share, **settings))
            for name, y, yhat, yhat_u in targets]


def _targets(target: Target, judged: dict[str, Any], human: dict[str, list[Any]],
             labelled: list[str], unlabelled: list[str], calibration: Calibration | None,
             score: str) -> Iterable[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    if target == "mean":
        def predict(ids: list[str]) -> np.ndarray:
            raw = np.array([_judge_score(judged[i], score) for i in ids], dtype=float)
            return calibration.apply(raw) if calibration else raw

        y = np.array([np.mean([_number(v) for v in human[i]]) for i in labelled], dtype=float)
        yield "mean", y, predict(labelled), predict(unlabelled)
        return
    labels = sorted({str(v) for i in labelled for v in human[i]} |
                    {str(judged[i].value) for i in judged}, key=str)
    for label in labels:
        def share(ids: list[str], label: str = label) -> np.ndarray:
            out = []
            for i in ids:
                distribution = getattr(judged[i], "distribution", None)
                if distribution and label in distribution:
                    out.append(float(distribution[label]))
                else:
                    out.append(float(str(judged[i].value) == label))
            return np.array(out)

        y = np.array([np.mean([str(v) == label for v in human[i]]) for i in labelled])
        yield f"share:{label}", y, share(labelled), share(unlabelled)


@dataclass(frozen=True)
class Pairs:
    """Items rated by both a judge and people: the judge's score, the people's mean, the language."""

    item_ids: tuple[str, ...]
    judge: np.ndarray
    human: np.ndarray
    language: tuple[str | None, ...]


def calibration_pairs(verdicts: Iterable[Any], *, criterion: str, judge: str,
                      score: str = "expected_value") -> Pairs:
    """The items both ``judge`` and people scored on ``criterion``, for :func:`fit_isotonic`."""
    judged: dict[str, Any] = {}
    human: dict[str, list[float]] = defaultdict(list)
    for verdict in verdicts:
        if verdict.criterion != criterion or verdict.value is None:
            continue
        if verdict.rater == judge:
            judged[verdict.item_id] = verdict
        elif _is_human(verdict.rater) and (number := _number(verdict.value)) is not None:
            human[verdict.item_id].append(number)
    ids = tuple(i for i in judged if i in human and _judge_score(judged[i], score) is not None)
    if len(ids) < 2:
        raise ConfigError(f"judge {judge!r} and people share {len(ids)} scored items on {criterion!r}; "
                          "a calibration needs at least 2")
    return Pairs(item_ids=ids,
                 judge=np.array([_judge_score(judged[i], score) for i in ids], dtype=float),
                 human=np.array([np.mean(human[i]) for i in ids], dtype=float),
                 language=tuple(judged[i].language for i in ids))
