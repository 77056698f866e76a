"""metaeval: each number in a row equals the statistic computed directly on the same data."""

from itertools import combinations

import numpy as np
import pytest
from analysis_data import rating_matrix
from scipy import stats

from convoscope.analysis import (
    Rating,
    binary_scores,
    bootstrap_ci,
    cohen_kappa,
    kendall,
    krippendorff_alpha,
    leave_one_out,
    majority_vote,
    mean_pool,
    metaeval,
    pairwise_correlation,
    pearson,
    spearman,
)

HUMANS = ("human:a", "human:b", "human:c")


def _data(seed=0, n=30):
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, n)
    humans = np.clip(truth + rng.integers(-1, 2, (3, n)), 1, 5)
    judge = np.clip(truth + rng.integers(-2, 3, n), 1, 5)
    languages = np.where(np.arange(n) % 3 == 0, "ko", "en")
    ratings = [Rating(f"i{i}", "overall", HUMANS[r], int(humans[r, i])) for r in range(3) for i in range(n)]
    judged = [Rating(f"i{i}", "overall", "model:x", int(judge[i]), language=str(languages[i]))
              for i in range(n)]
    return judged, ratings, humans.astype(float), judge.astype(float), languages


def test_row_values_equal_direct_computation():
    judged, ratings, humans, judge, _ = _data()
    (row,) = metaeval(judged, ratings, n_resamples=300, seed=4)
    human_mean = mean_pool(humans)
    assert (row.criterion, row.group, row.judge, row.n_items) == ("overall", None, "model:x", 30)
    for name, statistic in (("spearman", spearman), ("kendall", kendall), ("pearson", pearson)):
        expected = bootstrap_ci(statistic, judge, human_mean, n_resamples=300, seed=4)
        assert getattr(row, name) == expected
    majority = majority_vote(humans, ties="low")
    assert row.kappa == pytest.approx(cohen_kappa(judge, majority, weights="quadratic",
                                                  labels=range(int(min(judge.min(), majority.min())),
                                                               int(max(judge.max(), majority.max())) + 1)))
    assert row.kappa_weights == "quadratic"
    assert row.humans.n_humans == 3
    assert row.humans.alpha == pytest.approx(krippendorff_alpha(humans, level="ordinal"))
    assert row.humans.loo_spearman == pytest.approx(leave_one_out(humans))
    assert row.binary is None  # five levels: not a binary criterion


def test_leave_one_out_by_hand():
    humans = np.array([[1, 2, 3, 4, 5], [2, 1, 3, 5, 4], [1, 3, 2, 4, 5.0]])
    expected = np.mean([spearman(humans[k], np.delete(humans, k, axis=0).mean(axis=0)) for k in range(3)])
    assert leave_one_out(humans) == pytest.approx(expected)
    with pytest.raises(ValueError, match="at least three raters"):
        leave_one_out(humans[:2])


def test_by_language_adds_a_row_per_language():
    judged, ratings, humans, judge, languages = _data()
    rows = metaeval(judged, ratings, by="language", n_resamples=200)
    assert [row.group for row in rows] == [None, "en", "ko"]
    korean = rows[2]
    mask = languages == "ko"
    assert korean.n_items == mask.sum()
    assert korean.spearman.estimate == pytest.approx(spearman(judge[mask], mean_pool(humans[:, mask])))
    assert korean.humans.alpha == pytest.approx(krippendorff_alpha(humans[:, mask], level="ordinal"))


def test_binary_criterion_gets_f1_for_both_classes():
    rng = np.random.default_rng(3)
    truth = rng.integers(0, 2, 40)
    humans = np.where(rng.random((3, 40)) < 0.9, truth, 1 - truth)
    judge = np.where(rng.random(40) < 0.75, truth, 1 - truth)
    ratings = [Rating(f"i{i}", "issue", HUMANS[r], int(humans[r, i])) for r in range(3) for i in range(40)]
    judged = [Rating(f"i{i}", "issue", "model:x", int(judge[i])) for i in range(40)]
    (row,) = metaeval(judged, ratings, n_resamples=100)
    expected = binary_scores(majority_vote(humans), judge, positive=1)
    assert row.binary == expected
    assert row.humans.alpha_level == "ordinal"


def test_label_scale_needs_a_named_positive():
    labels = ["issue", "fine"]
    ratings = [Rating(f"i{i}", "c", h, labels[(i + k) % 5 == 0])
               for k, h in enumerate(HUMANS) for i in range(20)]
    judged = [Rating(f"i{i}", "c", "model:x", labels[i % 4 == 0]) for i in range(20)]
    (row,) = metaeval(judged, ratings, n_resamples=50)
    assert row.spearman is None and row.binary is None
    assert any("name the positive label" in note for note in row.notes)
    assert row.kappa is not None and row.kappa_weights is None  # unweighted on labels
    assert row.humans.alpha_level == "nominal" and row.humans.loo_spearman is None
    (named,) = metaeval(judged, ratings, n_resamples=50, positive="issue")
    assert named.binary.f1_pos == binary_scores(majority_vote([[r.value for r in ratings if r.rater == h]
                                                               for h in HUMANS]),
                                                [r.value for r in judged], positive="issue").f1_pos


def test_humans_can_come_from_the_same_table_and_idk_is_missing():
    judged, ratings, *_ = _data()
    ratings[0] = Rating(ratings[0].item_id, "overall", ratings[0].rater, "I don't know")
    (together,) = metaeval(judged + ratings, n_resamples=100)
    (separate,) = metaeval(judged, ratings, n_resamples=100)
    assert together == separate
    assert together.humans.n_humans == 3


def test_degenerate_statistics_become_notes_not_failures():
    judged, ratings, *_ = _data()
    constant = [Rating(r.item_id, r.criterion, r.rater, 3, language=r.language) for r in judged]
    (row,) = metaeval(constant, ratings, n_resamples=100)
    assert row.spearman is None and row.pearson is None
    assert any("x is constant" in note for note in row.notes)
    assert row.kappa is not None  # kappa is defined: the humans vary


def test_errors():
    judged, ratings, *_ = _data()
    with pytest.raises(ValueError, match="share no criterion"):
        metaeval(judged, [Rating("i1", "other", "human:a", 1)])
    with pytest.raises(ValueError, match="criterion 'style' has no ratings from the judges"):
        metaeval(judged, ratings, criteria=["style"])
    with pytest.raises(ValueError, match="no human ratings"):
        metaeval(judged)


def test_pairwise_correlation_is_the_mean_over_rater_pairs(seed):
    matrix = rating_matrix(seed, raters=3, items=40, missing=0.1)
    expected = []
    for i, j in combinations(range(3), 2):
        shared = ~np.isnan(matrix[i]) & ~np.isnan(matrix[j])
        expected.append(stats.spearmanr(matrix[i, shared], matrix[j, shared]).statistic)
    assert pairwise_correlation(matrix) == pytest.approx(np.mean(expected), abs=1e-12)
    assert pairwise_correlation(matrix, statistic=pearson) == pytest.approx(np.mean(
        [pearson(matrix[i], matrix[j]) for i, j in combinations(range(3), 2)]))
    with pytest.raises(ValueError, match="at least two raters"):
        pairwise_correlation(matrix[:1])


def test_expected_value_and_system_breakdown():
    judged, ratings, humans, judge, _ = _data()
    systems = ["bot-a" if i % 2 else "bot-b" for i in range(30)]
    judged = [Rating(r.item_id, r.criterion, r.rater, r.value, system=systems[i],
                     expected_value=r.value + 0.25 * (i % 3)) for i, r in enumerate(judged)]
    rows = metaeval(judged, ratings, by="system", score="expected_value", n_resamples=100)
    assert [row.group for row in rows] == [None, "bot-a", "bot-b"]
    expected_scores = judge + 0.25 * (np.arange(30) % 3)
    assert rows[0].spearman.estimate == pytest.approx(spearman(expected_scores, mean_pool(humans)))
    assert rows[0].kappa is None  # fractional scores are not on the integer scale
