"""`cs.compare`'s statistics pinned to scipy, statsmodels and scikit-learn (issue 40)."""

from __future__ import annotations

import numpy as np
import pytest
from made_runs import run as verdicts
from scipy import stats

import convoscope as cs
from convoscope.comparison import mean_change_interval, stuart_maxwell
from convoscope.judges import Verdict


def scores(seed=0, n=60, shift=0.0, scale=(0, 7)):
    rng = np.random.default_rng(seed)
    a = rng.integers(scale[0], scale[1] + 1, n)
    b = np.clip(np.round(a + rng.normal(shift, 1.0, n)), scale[0], scale[1]).astype(int)
    return a.tolist(), b.tolist()


def test_the_mean_change_and_its_interval_are_scipys_paired_t():
    a, b = scores(seed=1, shift=0.6)
    row = cs.compare(verdicts(a), verdicts(b, rater="model:b")).criterion("effort")
    reference = stats.ttest_rel(b, a).confidence_interval(0.95)
    assert row.change == pytest.approx(np.mean(b) - np.mean(a), abs=1e-12)
    assert (row.change_low, row.change_high) == pytest.approx((reference.low, reference.high), abs=1e-12)
    assert mean_change_interval(np.array(a, float), np.array(a, float)) == (0.0, 0.0)


def test_scores_are_tested_with_scipys_wilcoxon_signed_rank():
    a, b = scores(seed=2, shift=0.4)
    row = cs.compare(verdicts(a), verdicts(b, rater="model:b")).criterion("effort")
    reference = stats.wilcoxon(b, a, zero_method="wilcox")
    assert row.level == "ordinal" and row.test == "Wilcoxon signed-rank"
    assert row.statistic == pytest.approx(reference.statistic)
    assert row.pvalue == pytest.approx(reference.pvalue, rel=1e-12)


def test_binary_values_are_tested_with_statsmodels_mcnemar():
    from statsmodels.stats.contingency_tables import mcnemar

    rng = np.random.default_rng(3)
    a = rng.integers(0, 2, 80)
    b = np.where(rng.random(80) < 0.3, 1 - a, a)
    row = cs.compare(verdicts(a.tolist()), verdicts(b.tolist(), rater="model:b")).criterion("effort")
    table = [
        [np.sum((a == 1) & (b == 1)), np.sum((a == 1) & (b == 0))],
        [np.sum((a == 0) & (b == 1)), np.sum((a == 0) & (b == 0))],
    ]
    discordant = table[0][1] + table[1][0]
    reference = mcnemar(table, exact=discordant < 25, correction=True)
    assert row.level == "binary" and row.test.startswith("McNemar")
    assert row.pvalue == pytest.approx(reference.pvalue, rel=1e-9)


def test_labels_are_tested_with_statsmodels_stuart_maxwell():
    from statsmodels.stats.contingency_tables import SquareTable

    rng = np.random.default_rng(4)
    labels = np.array(["good", "fair", "poor"])
    a = labels[rng.integers(0, 3, 90)]
    b = np.where(rng.random(90) < 0.35, labels[rng.integers(0, 3, 90)], a)
    b[:12] = "poor"  # B hands out more "poor": the margins move
    ours = stuart_maxwell(a.tolist(), b.tolist())
    table = np.zeros((3, 3))
    index = {label: n for n, label in enumerate(sorted(labels))}
    for x, y in zip(a, b, strict=True):
        table[index[x], index[y]] += 1
    reference = SquareTable(table, shift_zeros=False).homogeneity(method="stuart_maxwell")
    assert ours.statistic == pytest.approx(reference.statistic, rel=1e-9)
    assert ours.pvalue == pytest.approx(reference.pvalue, rel=1e-9)
    row = cs.compare(verdicts(a.tolist()), verdicts(b.tolist(), rater="model:b")).criterion("effort")
    assert row.level == "nominal" and row.mean_a is None and row.pvalue == pytest.approx(ours.pvalue)


def test_agreement_between_the_runs_is_sklearns_kappa():
    from sklearn.metrics import cohen_kappa_score

    a, b = scores(seed=5, shift=0.2)
    row = cs.compare(verdicts(a), verdicts(b, rater="model:b")).criterion("effort")
    assert row.agreement_name.startswith("weighted")
    labels = sorted(set(a) | set(b))
    assert row.agreement == pytest.approx(cohen_kappa_score(a, b, weights="quadratic", labels=labels))


def test_p_values_are_holm_adjusted_across_criteria_as_statsmodels_does():
    from statsmodels.stats.multitest import multipletests

    first, second = [], []
    for n, name in enumerate(["effort", "relevance", "completeness"]):
        a, b = scores(seed=10 + n, shift=0.3 * n)
        first += verdicts(a, criterion=name)
        second += verdicts(b, criterion=name, rater="model:b")
    comparison = cs.compare(first, second)
    raw = [row.pvalue for row in comparison.criteria]
    assert [row.pvalue_adjusted for row in comparison.criteria] == pytest.approx(
        multipletests(raw, method="holm")[1].tolist(), rel=1e-12
    )
    assert comparison.correction == "holm"


def test_which_run_agrees_with_people_better_is_williams_test():
    rng = np.random.default_rng(6)
    truth = rng.normal(size=50)
    close = np.round(truth * 2 + rng.normal(0, 0.5, 50)).astype(int) + 5
    far = np.round(truth * 2 + rng.normal(0, 2.5, 50)).astype(int) + 5
    people = [
        Verdict(item_id=f"i{n}", criterion="effort", rater="human:p", value=int(round(t * 3)))
        for n, t in enumerate(truth)
    ]
    row = cs.compare(
        verdicts(far.tolist()), verdicts(close.tolist(), rater="model:b"), human=people
    ).criterion("effort")
    from convoscope.analysis import williams_test

    reference = williams_test([int(round(t * 3)) for t in truth], far, close, method="spearman")
    assert row.human is not None
    assert (row.human.r_a, row.human.r_b, row.human.pvalue) == pytest.approx(
        (reference.r_a, reference.r_b, reference.pvalue)
    )
    assert row.human.r_b > row.human.r_a
