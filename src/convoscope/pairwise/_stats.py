"""Win rates, Bradley–Terry strengths and position bias from pairwise verdicts.

A pairwise verdict's ``system`` is ``A~B`` and its ``value`` the winning system or ``tie``.
A tie counts half a win for each side, as Chatbot Arena counts it.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize

from convoscope.errors import ConfigError
from convoscope.pairwise._judge import FLIP, TIE


@dataclass(frozen=True)
class Outcome:
    a: str
    b: str
    score_a: float  # 1 A won, 0 B won, 0.5 tie


def outcomes(verdicts: Iterable[Any], *, rater: str | None = None) -> list[Outcome]:
    """The scored pairwise verdicts as outcomes (``rater`` picks one judge's)."""
    out = []
    for verdict in verdicts:
        if verdict.value is None or not verdict.criterion.startswith("pairwise:"):
            continue
        if rater is not None and verdict.rater != rater:
            continue
        a, _, b = (verdict.system or "").partition("~")
        if not a or not b:
            raise ConfigError(f"pairwise verdict on {verdict.item_id!r} has no 'A~B' system")
        value = str(verdict.value)
        if value not in (a, b, TIE):
            raise ConfigError(f"pairwise verdict on {verdict.item_id!r} names {value!r}, neither {a} nor {b}")
        out.append(Outcome(a, b, 0.5 if value == TIE else float(value == a)))
    if not out:
        raise ConfigError("no scored pairwise verdicts")
    return out


def majority(verdicts: Iterable[Any]) -> dict[str, tuple[str, str]]:
    """Per pair item: its ``A~B`` system and the most frequent scored answer (a system or
    ``tie``); an even split between the top answers is a tie, stated rather than broken."""
    votes: dict[str, list[str]] = defaultdict(list)
    systems: dict[str, str] = {}
    for verdict in verdicts:
        if verdict.value is None or not verdict.criterion.startswith("pairwise:"):
            continue
        votes[verdict.item_id].append(str(verdict.value))
        systems[verdict.item_id] = verdict.system or ""
    found = {}
    for item, answers in votes.items():
        counts = Counter(answers).most_common()
        split = len(counts) > 1 and counts[0][1] == counts[1][1]
        found[item] = (systems[item], TIE if split else counts[0][0])
    return found


def majority_outcomes(verdicts: Iterable[Any]) -> list[Outcome]:
    """One outcome per pair from its :func:`majority` answer (several raters judged each pair)."""
    out = []
    for system, winner in majority(verdicts).values():
        a, _, b = system.partition("~")
        out.append(Outcome(a, b, 0.5 if winner == TIE else float(winner == a)))
    return out


@dataclass(frozen=True)
class WinRate:
    system: str
    comparisons: int
    wins: float
    rate: float
    ci: tuple[float, float] | None  # None when no resampling was asked for


def win_rates(results: list[Outcome], *, n_resamples: int = 2000, seed: int = 0,
              confidence: float = 0.95) -> list[WinRate]:
    """Each system's share of points over all its comparisons, with a percentile bootstrap
    interval over comparisons (``n_resamples=0``: none). Sorted best first."""
    systems = sorted({o.a for o in results} | {o.b for o in results})
    index = {name: i for i, name in enumerate(systems)}
    a = np.array([index[o.a] for o in results])
    b = np.array([index[o.b] for o in results])
    score = np.array([o.score_a for o in results])

    def points(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        won = (np.bincount(a[rows], score[rows], len(systems))
               + np.bincount(b[rows], 1 - score[rows], len(systems)))
        played = np.bincount(a[rows], minlength=len(systems)) + np.bincount(b[rows], minlength=len(systems))
        return won, played

    won, played = points(np.arange(len(results)))
    if n_resamples <= 0:
        return sorted((WinRate(name, int(played[i]), float(won[i]), float(won[i] / played[i]), None)
                       for i, name in enumerate(systems)), key=lambda row: -row.rate)
    rng = np.random.default_rng(seed)
    samples = rng.integers(0, len(results), size=(n_resamples, len(results)))
    rates = np.empty((n_resamples, len(systems)))
    for row, rows in enumerate(samples):
        resampled_won, resampled_played = points(rows)
        with np.errstate(invalid="ignore", divide="ignore"):
            rates[row] = resampled_won / resampled_played
    tail = (1 - confidence) / 2 * 100
    low, high = np.nanpercentile(rates, [tail, 100 - tail], axis=0)
    table = [WinRate(name, int(played[i]), float(won[i]), float(won[i] / played[i]),
                     (float(low[i]), float(high[i]))) for i, name in enumerate(systems)]
    return sorted(table, key=lambda row: -row.rate)


@dataclass(frozen=True)
class Strength:
    """A system's Bradley–Terry log-strength (centred on zero) and its rank (1 = strongest),
    each with a percentile bootstrap interval over comparisons when resamples were asked for."""

    system: str
    strength: float
    ci: tuple[float, float] | None
    rank: float = float("nan")
    rank_ci: tuple[float, float] | None = None


def _bradley_terry_fit(n: int, a: np.ndarray, b: np.ndarray, score: np.ndarray, alpha: float) -> np.ndarray:
    """Maximum-likelihood log-strengths with an L2 penalty ``alpha`` (keeps an unbeaten system
    finite), the same objective as choix.opt_pairwise."""
    def objective(theta: np.ndarray) -> tuple[float, np.ndarray]:
        diff = theta[a] - theta[b]
        loss = np.sum(score * np.logaddexp(0, -diff) + (1 - score) * np.logaddexp(0, diff))
        loss += alpha * theta @ theta
        residual = 1 / (1 + np.exp(-diff)) - score
        grad = np.bincount(a, residual, n) - np.bincount(b, residual, n) + 2 * alpha * theta
        return float(loss), grad

    result = optimize.minimize(objective, np.zeros(n), jac=True, method="L-BFGS-B")
    return result.x - result.x.mean()


def bradley_terry(results: list[Outcome], *, alpha: float = 1e-3, n_resamples: int = 200,
                  seed: int = 0, confidence: float = 0.95) -> list[Strength]:
    """Bradley–Terry log-strengths and ranks of every system (a tie is half a win each), with
    percentile bootstrap intervals over comparisons for both (``n_resamples=0``: none); tied
    strengths share the average rank. Sorted strongest first."""
    systems = sorted({o.a for o in results} | {o.b for o in results})
    index = {name: i for i, name in enumerate(systems)}
    a = np.array([index[o.a] for o in results])
    b = np.array([index[o.b] for o in results])
    score = np.array([o.score_a for o in results])
    from scipy import stats

    theta = _bradley_terry_fit(len(systems), a, b, score, alpha)
    ranks = stats.rankdata(-theta)
    cis: list[tuple[float, float] | None] = [None] * len(systems)
    rank_cis: list[tuple[float, float] | None] = [None] * len(systems)
    if n_resamples:
        rng = np.random.default_rng(seed)
        draws = np.array([_bradley_terry_fit(len(systems), a[rows], b[rows], score[rows], alpha)
                          for rows in rng.integers(0, len(results), size=(n_resamples, len(results)))])
        tail = (1 - confidence) / 2 * 100
        low, high = np.percentile(draws, [tail, 100 - tail], axis=0)
        rank_low, rank_high = np.percentile(stats.rankdata(-draws, axis=1), [tail, 100 - tail], axis=0)
        cis = [(float(low[i]), float(high[i])) for i in range(len(systems))]
        rank_cis = [(float(rank_low[i]), float(rank_high[i])) for i in range(len(systems))]
    table = [Strength(name, float(theta[i]), cis[i], float(ranks[i]), rank_cis[i])
             for i, name in enumerate(systems)]
    return sorted(table, key=lambda row: -row.strength)


@dataclass(frozen=True)
class JudgePositionBias:
    rater: str
    pairs: int
    flips: int
    rate: float


def position_bias_rates(verdicts: Iterable[Any]) -> list[JudgePositionBias]:
    """Per judge, the share of scored pairs whose answer followed the order (``position_flip``)."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for verdict in verdicts:
        if verdict.value is None or not verdict.criterion.startswith("pairwise:"):
            continue
        counts[verdict.rater][0] += 1
        counts[verdict.rater][1] += FLIP in verdict.options
    return [JudgePositionBias(rater, pairs, flips, flips / pairs)
            for rater, (pairs, flips) in sorted(counts.items())]
