"""How a judge leans, measured against people on the items both rated.

Each diagnostic works on residuals: the judge's score minus the people's mean, both standardised
over the paired items (z-scores), so judges and people on different scales compare. A judge
without bias has residuals that do not grow with response length, average zero in every
language, and do not favour systems from its own model family. Position bias needs pairwise
verdicts (the same pair asked in both orders); :func:`position_bias` reads them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from convoscope.errors import ConfigError
from convoscope.estimate._verdicts import calibration_pairs


@dataclass(frozen=True)
class LengthBias:
    """Spearman correlation of residuals with response length (> 0: longer answers are
    over-rated by the judge relative to people), its p-value, and the residual slope per 10 words."""

    rho: float
    pvalue: float
    slope_per_10_words: float
    n: int


@dataclass(frozen=True)
class GroupGap:
    """Mean residual of one group (a language, or a system family) and its t-test against 0."""

    n: int
    mean_residual: float
    pvalue: float | None


@dataclass(frozen=True)
class BiasReport:
    criterion: str
    judge: str
    n: int
    length: LengthBias | None
    languages: dict[str, GroupGap] = field(default_factory=dict)
    self_preference: GroupGap | None = None
    notes: tuple[str, ...] = ()


def _residuals(judge: np.ndarray, human: np.ndarray) -> np.ndarray:
    def z(values: np.ndarray) -> np.ndarray:
        spread = values.std()
        return (values - values.mean()) / spread if spread > 0 else values * 0.0

    return z(judge) - z(human)


def _gap(residuals: np.ndarray) -> GroupGap:
    pvalue = float(stats.ttest_1samp(residuals, 0.0).pvalue) if len(residuals) > 2 else None
    return GroupGap(n=len(residuals), mean_residual=float(residuals.mean()), pvalue=pvalue)


def bias_diagnostics(verdicts: Iterable[Any], *, criterion: str, judge: str,
                     lengths: Mapping[str, float] | None = None, own_family: Iterable[str] = (),
                     score: str = "expected_value") -> BiasReport:
    """Length, language and self-preference diagnostics for ``judge`` on ``criterion``.

    ``lengths`` maps item id to response length in words (see
    :func:`convoscope.baselines.item_length`); ``own_family`` names the systems built on the
    judge's own model family (self-preference is only measured when the user says which)."""
    rows = list(verdicts)
    pairs = calibration_pairs(rows, criterion=criterion, judge=judge, score=score)
    residuals = _residuals(pairs.judge, pairs.human)
    notes: list[str] = []
    length = None
    if lengths is not None:
        known = [index for index, item in enumerate(pairs.item_ids) if item in lengths]
        if len(known) >= 3:
            words = np.array([float(lengths[pairs.item_ids[i]]) for i in known])
            result = stats.spearmanr(residuals[known], words)
            slope = float(np.polyfit(words, residuals[known], 1)[0] * 10) if words.std() > 0 else 0.0
            length = LengthBias(rho=float(result.statistic), pvalue=float(result.pvalue),
                                slope_per_10_words=slope, n=len(known))
        else:
            notes.append("length: fewer than 3 items with a known length")
    by_language: dict[str, list[float]] = defaultdict(list)
    for language, residual in zip(pairs.language, residuals, strict=True):
        by_language[language or "unknown"].append(float(residual))
    languages = {name: _gap(np.array(values)) for name, values in sorted(by_language.items())}
    family = set(own_family)
    self_preference = None
    if family:
        systems = {v.item_id: v.system for v in rows if v.rater == judge and v.criterion == criterion}
        own = np.array([r for item, r in zip(pairs.item_ids, residuals, strict=True)
                        if systems.get(item) in family])
        if len(own) == 0:
            notes.append(f"self-preference: no paired item from systems {sorted(family)}")
        else:
            others = residuals[[systems.get(item) not in family for item in pairs.item_ids]]
            pvalue = (float(stats.ttest_ind(own, others, equal_var=False).pvalue)
                      if len(own) > 1 and len(others) > 1 else None)
            self_preference = GroupGap(n=len(own), mean_residual=float(own.mean() - others.mean()),
                                       pvalue=pvalue)
    return BiasReport(criterion=criterion, judge=judge, n=len(residuals), length=length,
                      languages=languages, self_preference=self_preference, notes=tuple(notes))


@dataclass(frozen=True)
class PositionBias:
    """Pairs asked in both orders: ``flip_rate`` is the share whose winner changed with the
    order; ``first_rate`` the share of order-dependent answers that favoured the first slot."""

    pairs: int
    flips: int
    flip_rate: float
    first_rate: float | None


def position_bias(answers: Iterable[tuple[str, str]]) -> PositionBias:
    """``answers``: per pair, the winner the judge named in the original order and in the
    swapped order, as slot names ``"first"``/``"second"``/``"tie"`` (the slot, not the system).

    A consistent judge names opposite slots (the same system) in the two orders."""
    pairs = flips = first = 0
    opposite = {"first": "second", "second": "first", "tie": "tie"}
    for original, swapped in answers:
        if original not in opposite or swapped not in opposite:
            raise ConfigError(f"a pairwise answer must be first, second or tie, not {original!r}/{swapped!r}")
        pairs += 1
        if swapped != opposite[original]:
            flips += 1
            first += original == "first" and swapped == "first"
    if pairs == 0:
        raise ConfigError("no pairwise answers to measure position bias on")
    return PositionBias(pairs=pairs, flips=flips, flip_rate=flips / pairs,
                        first_rate=first / flips if flips else None)


def study_bias(judged: Iterable[Any], humans: Iterable[Any] | None = None, *,
               criteria: Iterable[str] | None = None, lengths: Mapping[str, float] | None = None,
               own_family: Iterable[str] = (), score: str = "expected_value") -> list[BiasReport]:
    """:func:`bias_diagnostics` for every judge and numeric criterion of a meta-evaluation.

    ``judged`` holds the judges' ratings (and people's, named ``human:…``, when ``humans`` is
    None); ``humans`` are people's ratings from their own file, whatever their rater names.
    Baselines (``baseline:…``) and panels' members are judges like any other here."""
    rows = list(judged)
    if humans is not None:
        rows = [r for r in rows if not r.rater.startswith("human:")] + [_as_human(r) for r in humans]
    wanted = set(criteria) if criteria else None
    family = tuple(own_family)
    reports = []
    names = sorted({(r.rater, r.criterion) for r in rows if not r.rater.startswith("human:")
                    and (wanted is None or r.criterion in wanted)})
    for rater, criterion in names:
        try:
            reports.append(bias_diagnostics(rows, criterion=criterion, judge=rater, lengths=lengths,
                                            own_family=family, score=score))
        except ConfigError:
            continue  # labels, or fewer than 2 items shared with people: nothing to measure
    return reports


def _as_human(rating: Any) -> Any:
    if rating.rater.startswith("human:"):
        return rating
    name = f"human:{rating.rater}"
    if hasattr(rating, "model_copy"):  # a Verdict
        return rating.model_copy(update={"rater": name})
    from dataclasses import replace

    return replace(rating, rater=name)
