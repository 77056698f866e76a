"""Can this judge replace an annotator? The alternative annotator test (alt-test) of Calderon,
Reichart and Dror (ACL 2025, "The Alternative Annotator Test for LLM-as-a-Judge").

Leave one annotator out at a time. On each item that annotator rated, score how well the
annotator and the judge each agree with the remaining annotators (``accuracy``: the share of
them given the same label; ``neg_rmse``: minus the root-mean-square difference). The judge
"wins" an item when its score is at least the annotator's, the annotator when the reverse
holds (ties count for both). With d = annotator wins − judge wins per item, a one-sided
t-test asks whether mean(d) < ``epsilon`` — the cost-benefit margin granted to the judge (the
authors suggest .2 for experts, .15 for skilled annotators, .1 for crowd workers). The
p-values of all annotators are corrected with Benjamini–Yekutieli at ``alpha``; the *winning
rate* is the share of annotators the judge beats, and the judge passes at a winning rate of at
least .5. The *advantage probability* (mean judge-win rate) compares judges with each other.

Defaults follow the authors' code (``alt_test`` in github.com/nitaytech/AltTest): items need 2
annotators, an annotator needs 30 items to be tested, epsilon .2, alpha .05.
``benchmarks/alt_test_authors.py`` reproduces every winning rate and advantage probability the
authors' notebook prints on their data; the tests pin the procedure to a loop written from the
paper and to scipy / statsmodels.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from convoscope.analysis._decision import Decision, cannot_tell, decide
from convoscope.analysis._multitest import reject
from convoscope.analysis._validate import as_array, missing_mask

Scoring = Literal["accuracy", "neg_rmse"]
MIN_ANNOTATORS = 3  # the authors recommend three or more; two only compare one person with another


@dataclass(frozen=True)
class AltTestAnnotator:
    """One left-out annotator: items compared, the judge's win rate on them, the test's p-value,
    and whether the judge beat this annotator after the correction."""

    annotator: str
    n_items: int
    advantage: float
    pvalue: float
    beaten: bool


@dataclass(frozen=True)
class AltTestResult:
    """The test's numbers and its :class:`Decision`: ``pass`` at a winning rate of .5 or more with
    three or more annotators, ``cannot_tell`` with fewer (each person is then compared with one
    other person, not with a group). ``level`` is the labels' level of measurement that chose
    ``scoring`` (None when the caller chose the scoring)."""

    winning_rate: float
    advantage_probability: float
    decision: Decision
    epsilon: float
    alpha: float
    scoring: str
    annotators: tuple[AltTestAnnotator, ...]
    skipped: tuple[str, ...] = ()
    level: str | None = None

    @property
    def n_annotators(self) -> int:
        return len(self.annotators)

    @property
    def passed(self) -> bool:
        return self.decision.passed


def alt_test(y_pred: Any, human_matrix: Any, *, epsilon: float = 0.2, alpha: float = 0.05,
             scoring: Scoring | None = None, annotators: Sequence[str] | None = None,
             min_annotators_per_item: int = 2, min_items_per_annotator: int = 30,
             level: str | None = None) -> AltTestResult:
    """The alt-test of the judge's ``y_pred`` (one value per item) against ``human_matrix``
    (annotators x items, NaN / None where an annotator did not rate an item).

    The labels' ``level`` of measurement chooses the scoring: ``nominal`` labels are categories,
    scored by ``accuracy`` however they are coded (``0/1/2`` or ``"a"/"b"/"c"``); ordinal,
    interval and ratio numbers by ``neg_rmse``. Without a level: ``neg_rmse`` for numbers,
    ``accuracy`` for labels. An explicit ``scoring`` overrides the level (the authors' own runs).
    Raises a ValueError when fewer than two annotators can be tested (nothing to leave out).
    """
    judge = as_array(y_pred, name="alt_test: y_pred", ndim=1)
    humans = as_array(human_matrix, name="alt_test: human_matrix", ndim=2)
    if humans.shape[1] != len(judge):
        raise ValueError(f"alt_test: {len(judge)} judge values but {humans.shape[1]} items")
    numeric = humans.dtype != object and judge.dtype != object
    chosen = _scoring(scoring, level, numeric)
    names = list(annotators) if annotators is not None else [str(i) for i in range(len(humans))]
    if len(names) < 2:
        raise ValueError("alt_test: needs at least two annotators (one to leave out, one to compare with)")
    present = ~missing_mask(humans)
    kept = (present.sum(axis=0) >= min_annotators_per_item) & ~missing_mask(judge)
    tested, skipped = [], []
    for index, name in enumerate(names):
        items = np.flatnonzero(present[index] & kept)
        if len(items) < min_items_per_annotator:
            skipped.append(f"{name}: {len(items)} items (fewer than {min_items_per_annotator})")
            continue
        tested.append((name, *_one_out(humans, present, judge, index, items, chosen, epsilon)))
    if not tested:
        raise ValueError("alt_test: no annotator has enough items to be tested (" + "; ".join(skipped) + ")")
    pvalues = [p if np.isfinite(p) else 1.0 for _, _, _, p in tested]
    beaten = reject(pvalues, alpha=alpha, method="by", inclusive=True)
    rows = tuple(AltTestAnnotator(name, n, advantage, p, bool(won))
                 for (name, n, advantage, p), won in zip(tested, beaten, strict=True))
    winning = float(np.mean([row.beaten for row in rows]))
    return AltTestResult(winning, float(np.mean([row.advantage for row in rows])),
                         _decision(winning, len(names), len(rows), epsilon), epsilon, alpha, chosen, rows,
                         tuple(skipped), level)


RULE = "the judge replaces an annotator when it beats at least half of them (winning rate ω ≥ .5), " \
       f"each tested at margin ε, with {MIN_ANNOTATORS} or more annotators"


def _decision(winning: float, n_annotators: int, n_tested: int, epsilon: float) -> Decision:
    numbers = dict(winning_rate=winning, annotators=n_annotators, tested=n_tested, epsilon=epsilon)
    if n_annotators < MIN_ANNOTATORS:
        return cannot_tell(RULE, f"{n_annotators} annotators: leaving one out compares the judge with a "
                           f"single person, not a group; {MIN_ANNOTATORS} or more are needed", **numbers)
    return decide(winning >= 0.5, RULE, **numbers)


def _scoring(scoring: str | None, level: str | None, numeric: bool) -> str:
    if level is not None and level not in ("nominal", "ordinal", "interval", "ratio"):
        raise ValueError(f"alt_test: level must be nominal, ordinal, interval or ratio, got {level!r}")
    if scoring is None:
        scoring = "accuracy" if level == "nominal" or not numeric else "neg_rmse"
    if scoring not in ("accuracy", "neg_rmse") or (scoring == "neg_rmse" and not numeric):
        raise ValueError(f"alt_test: scoring must be 'accuracy' or (numbers only) 'neg_rmse', "
                         f"got {scoring!r}")
    if scoring == "neg_rmse" and level == "nominal":
        raise ValueError("alt_test: nominal labels are categories; their codes have no distance to "
                         "take a root-mean-square of (use scoring='accuracy')")
    return scoring


def _one_out(humans: np.ndarray, present: np.ndarray, judge: np.ndarray, left_out: int, items: np.ndarray,
             scoring: str, epsilon: float) -> tuple[int, float, float]:
    """Items compared, the judge's win rate, and the one-sided t-test's p-value for one annotator."""
    from scipy import stats

    others = np.delete(np.arange(len(humans)), left_out)
    mask = present[others][:, items]
    person, machine = humans[left_out, items], judge[items]
    rest = humans[others][:, items]
    person_score = _alignment(person, rest, mask, scoring)
    judge_score = _alignment(machine, rest, mask, scoring)
    judge_wins = (judge_score >= person_score).astype(float)
    person_wins = (person_score >= judge_score).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # constant differences: p is NaN, not rejected
        pvalue = float(stats.ttest_1samp(person_wins - judge_wins, epsilon, alternative="less").pvalue)
    return len(items), float(judge_wins.mean()), pvalue


def _alignment(values: np.ndarray, rest: np.ndarray, mask: np.ndarray, scoring: str) -> np.ndarray:
    """Per item, how well ``values`` agree with the remaining annotators' ratings."""
    count = mask.sum(axis=0)
    if scoring == "accuracy":
        same = mask & np.asarray(rest == values[None, :], dtype=bool)
        return same.sum(axis=0) / count
    squared = np.where(mask, (rest.astype(float) - values.astype(float)[None, :]) ** 2, 0.0)
    return -np.sqrt(squared.sum(axis=0) / count)
