"""Issue 36, observation 6: the outlier screen flags a system off the judge–people trend, not the
best system for being best; the leave-one-system-out influence is shown beside the main figure."""

import numpy as np
import pytest
import statsmodels.api as sm

from convoscope.analysis import Rating, outlier_systems, system_level
from convoscope.analysis._influence import bonferroni_outliers, influence


def _means(rng, n=8, best=False, off_trend=False):
    quality = rng.normal(0, 0.3, n)
    if best:
        quality[0] = 1.5  # far ahead of the rest, and both the judge and people see it
    judge = {f"s{i}": float(q + rng.normal(0, 0.05)) for i, q in enumerate(quality)}
    human = {f"s{i}": float(q + rng.normal(0, 0.05)) for i, q in enumerate(quality)}
    if off_trend:  # people rank s1 far ahead; the judge puts it in the middle
        human["s1"] = float(max(human.values()) + 0.6)
        judge["s1"] = float(np.median(list(judge.values())))
    return judge, human


@pytest.mark.parametrize("seed", range(10))
def test_the_best_system_is_not_flagged_for_being_best(seed):
    judge, human = _means(np.random.default_rng(seed), best=True)
    assert "s0" in outlier_systems(human)  # the old screen on the means flags it
    assert "s0" not in bonferroni_outliers(judge, human)


@pytest.mark.parametrize("seed", range(10))
def test_a_system_the_judge_misplaces_is_flagged(seed):
    judge, human = _means(np.random.default_rng(seed), off_trend=True)
    assert bonferroni_outliers(judge, human) == ("s1",)
    found = influence(judge, human)
    assert found.pearson_without_outliers > np.corrcoef(list(judge.values()), list(human.values()))[0, 1]


@pytest.mark.parametrize("seed", range(5))
def test_the_outlier_test_equals_statsmodels(seed):
    judge, human = _means(np.random.default_rng(seed), n=7, off_trend=seed % 2 == 0)
    names = sorted(judge)
    x, y = np.array([judge[n] for n in names]), np.array([human[n] for n in names])
    table = sm.OLS(y, sm.add_constant(x)).fit().outlier_test(method="bonf")
    expected = tuple(name for name, p in zip(names, table[:, 2], strict=True) if p < 0.05)
    assert bonferroni_outliers(judge, human) == expected


def test_the_most_influential_system_is_reported_with_r_without_it():
    judge, human = _means(np.random.default_rng(3), n=6)
    found = influence(judge, human)
    names = sorted(judge)
    by_hand = {}
    for left in names:
        kept = [n for n in names if n != left]
        by_hand[left] = np.corrcoef([judge[n] for n in kept], [human[n] for n in kept])[0, 1]
    weakest = min(by_hand, key=by_hand.get)
    assert found.weakest[0] == weakest and found.weakest[1] == pytest.approx(by_hand[weakest], abs=1e-12)


def test_system_level_rows_carry_the_screen():
    rng = np.random.default_rng(0)
    rows = []
    for s in range(8):
        quality = 2.0 if s == 0 else rng.normal(0, 0.3)
        for i in range(20):
            truth = quality + rng.normal(0, 0.3)
            for rater in ("human:h0", "human:h1", "human:h2", "model:j"):
                score = float(truth + rng.normal(0, 0.2))
                rows.append(Rating(f"s{s}:{i}", "q", rater, score, system=f"s{s}"))
    judge = [r for r in rows if r.rater == "model:j"]
    humans = [r for r in rows if r.rater != "model:j"]
    (row,) = system_level(judge, humans, n_resamples=50)
    assert row.outliers == () and row.weakest is not None and row.weakest[0] in {f"s{s}" for s in range(8)}
