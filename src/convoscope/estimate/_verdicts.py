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

from convoscope.errors import ConfigError
from convoscope.estimate._calibrate import Calibration
from convoscope.estimate._ppi import Estimate, power_tuning_lambda, ppi_mean
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

    def __getitem__(self, index: Any) -> Any:
        return self.rows[index]

    def __len__(self) -> int:
        return len(self.rows)


def estimate(verdicts: Iterable[Any], *, criterion: str, judge: str, target: Target = "mean",
             by: Sequence[GroupField] = ("system",), random_sample: Iterable[str] | None = None,
             calibration: Calibration | None = None, score: str = "expected_value",
             confidence: float = 0.95) -> Estimates:
    """Prediction-powered estimates of what people would say, per group.

    ``judge`` is the judge's rater name as it appears in the verdicts; human raters are those
    named ``human:…``. ``target="shares"`` estimates the share of each label people give (the
    judge's probability of the label where it gave a distribution, else its label).
    """
    rows = [v for v in verdicts if v.criterion == criterion and v.value is not None]
    if not any(v.rater == judge for v in rows):
        raters = sorted({v.rater for v in rows if not _is_human(v.rater)})
        raise ConfigError(f"no scored verdict by judge {judge!r} on {criterion!r}; judges present: "
                          f"{', '.join(raters) or 'none'}")
    sample = None if random_sample is None else set(random_sample)
    groups: dict[tuple[Any, ...], dict[str, dict[str, Any]]] = defaultdict(
        lambda: {"judge": {}, "human": defaultdict(list)})
    for verdict in rows:
        key = tuple(getattr(verdict, name) for name in by)
        if verdict.rater == judge:
            groups[key]["judge"][verdict.item_id] = verdict
        elif _is_human(verdict.rater):
            groups[key]["human"][verdict.item_id].append(verdict.value)
    if not any(g["human"] for g in groups.values()):
        raise ConfigError(f"no human verdict on {criterion!r}: people must rate a sample first")
    results, skipped = [], []
    for key in sorted(groups, key=lambda k: tuple(str(part) for part in k)):
        judged, human = groups[key]["judge"], groups[key]["human"]
        labelled = [i for i in judged if i in human and (sample is None or i in sample)]
        unlabelled = [i for i in judged if i not in labelled]
        group = dict(zip(by, key, strict=True))
        if len(labelled) < 2 or not unlabelled:
            name = ", ".join(f"{k}={v}" for k, v in group.items()) or "all items"
            skipped.append(f"{name}: {len(labelled)} human-labelled and {len(unlabelled)} "
                           "judge-only items (at least 2 and 1 are needed)")
            continue
        targets = list(_targets(target, judged, human, labelled, unlabelled, calibration, score))
        # One weight for every label's share (PPI++ "overall" tuning), so the shares sum to one.
        lam = power_tuning_lambda(*(np.column_stack([t[index] for t in targets]) for index in (1, 2, 3)))
        for name, y, yhat, yhat_u in targets:
            results.append(GroupEstimate(
                criterion=criterion, judge=judge, target=name, group=group,
                estimate=ppi_mean(y, yhat, yhat_u, confidence=confidence, lam=lam),
                labelled="all human-rated items" if sample is None else "random sample",
                calibration=calibration.name if calibration else None))
    if not results:
        raise ConfigError("no group could be estimated: " + "; ".join(skipped))
    return Estimates(tuple(results), tuple(skipped))


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
