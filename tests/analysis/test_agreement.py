"""Agreement statistics against scikit-learn and statsmodels, published worked examples, and
their properties."""

import numpy as np
import pytest
from analysis_data import rating_matrix
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from convoscope.analysis import (
    cohen_kappa,
    fleiss_kappa,
    pairwise_cohen_kappa,
    percent_agreement,
    strong_agreement,
)

# Fleiss' kappa worked example of the Wikipedia article "Fleiss' kappa": 10 subjects, 14 raters,
# 5 categories, counts per subject and category; kappa = 0.210 (statsmodels: 0.20993).
WIKIPEDIA_FLEISS_COUNTS = [
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
]


def _matrix_from_counts(counts):
    """Raters x items: the ratings each subject got, in any rater order (Fleiss ignores identity)."""
    columns = [np.repeat(np.arange(1, len(row) + 1), row) for row in counts]
    return np.array(columns, dtype=float).T


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohen_kappa_matches_sklearn(seed, weights):
    matrix = rating_matrix(seed, raters=2, items=80)
    ours = cohen_kappa(matrix[0], matrix[1], weights=weights)
    assert ours == pytest.approx(cohen_kappa_score(matrix[0], matrix[1], weights=weights), abs=1e-12)


def test_cohen_kappa_with_labels_and_missing_matches_sklearn(seed):
    rng = np.random.default_rng(seed)
    names = np.array(["bad", "okay", "good"], dtype=object)
    a = names[rng.integers(0, 3, 60)]
    b = np.where(rng.random(60) < 0.6, a, names[rng.integers(0, 3, 60)])
    a_missing = a.copy()
    a_missing[:5] = None
    keep = slice(5, None)
    scale = ["bad", "okay", "good"]
    ours = cohen_kappa(a_missing, b, weights="quadratic", labels=scale)
    theirs = cohen_kappa_score(a[keep], b[keep], weights="quadratic", labels=scale)
    assert ours == pytest.approx(theirs, abs=1e-12)


def test_cohen_kappa_wikipedia_example():
    # Wikipedia, "Cohen's kappa": 50 proposals, both readers yes on 20, both no on 15, A yes / B no
    # on 5, A no / B yes on 10: p_o = 0.7, p_e = 0.5, kappa = 0.4.
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)


def test_cohen_kappa_properties(seed):
    matrix = rating_matrix(seed, raters=2, items=50)
    a, b = matrix
    assert cohen_kappa(a, b, weights="quadratic") == pytest.approx(cohen_kappa(b, a, weights="quadratic"))
    assert cohen_kappa(a, a) == 1.0
    # Renaming the categories changes nothing (unweighted kappa is nominal).
    rename = {1.0: "e", 2.0: "c", 3.0: "a", 4.0: "d", 5.0: "b"}
    renamed = [[rename[v] for v in row] for row in (a, b)]
    assert cohen_kappa(*renamed) == pytest.approx(cohen_kappa(a, b), abs=1e-12)


def test_full_scale_labels_change_weighted_distances():
    # Observed values 1, 2, 5: by default 5 is one position from 2, with labels=1..5 it is three.
    a, b = [1, 2, 5, 1, 2], [2, 5, 5, 1, 1]
    observed_only = cohen_kappa(a, b, weights="linear")
    full_scale = cohen_kappa(a, b, weights="linear", labels=range(1, 6))
    assert observed_only == pytest.approx(cohen_kappa_score(a, b, weights="linear"))
    assert full_scale == pytest.approx(cohen_kappa_score(a, b, weights="linear", labels=[1, 2, 3, 4, 5]))
    assert observed_only != pytest.approx(full_scale)


def test_cohen_kappa_errors():
    with pytest.raises(ValueError, match="single, identical category"):
        cohen_kappa([1, 1, 1], [1, 1, 1])
    with pytest.raises(ValueError, match="weights must be None, 'linear' or 'quadratic'"):
        cohen_kappa([1, 2], [1, 2], weights="cubic")
    with pytest.raises(ValueError, match="value 7 is not in labels"):
        cohen_kappa([1, 7], [1, 2], labels=[1, 2, 3])
    with pytest.raises(ValueError, match="value 'maybe' is not in labels"):
        cohen_kappa(["yes", "maybe"], ["yes", "no"], labels=["yes", "no"])
    with pytest.raises(ValueError, match="no item is rated by both"):
        cohen_kappa([1, None], [None, 2])
    with pytest.raises(ValueError, match="mixes numbers and labels"):
        cohen_kappa([1, "idk", 2], [1, 2, 2])


def test_fleiss_kappa_matches_statsmodels(seed):
    matrix = rating_matrix(seed, raters=5, items=40)
    table, _ = aggregate_raters(matrix.T.astype(int))
    assert fleiss_kappa(matrix) == pytest.approx(sm_fleiss_kappa(table), abs=1e-12)


def test_fleiss_kappa_wikipedia_example():
    matrix = _matrix_from_counts(WIKIPEDIA_FLEISS_COUNTS)
    assert matrix.shape == (14, 10)
    assert fleiss_kappa(matrix) == pytest.approx(sm_fleiss_kappa(WIKIPEDIA_FLEISS_COUNTS), abs=1e-12)
    assert round(fleiss_kappa(matrix), 3) == 0.210


def test_fleiss_kappa_skips_items_with_fewer_than_two_ratings(seed):
    matrix = rating_matrix(seed, raters=3, items=30)
    padded = np.hstack([matrix, np.full((3, 4), np.nan)])
    padded[0, -4:] = [1, 2, 3, 4]  # items rated once carry no agreement information
    assert fleiss_kappa(padded) == pytest.approx(fleiss_kappa(matrix), abs=1e-12)


def test_fleiss_kappa_with_unequal_rater_counts_uses_each_items_count():
    matrix = np.array([[1, 1, 2, 2], [1, 2, 2, 1], [np.nan, 2, 2, np.nan]])
    # Items: (1,1) agree 1; (1,2,2) 1 of 3 pairs; (2,2,2) 1; (2,1) 0 -> observed 7/12.
    # Shares over the 10 ratings: 1 -> 4/10, 2 -> 6/10, chance 0.52.
    expected = (7 / 12 - 0.52) / (1 - 0.52)
    assert fleiss_kappa(matrix) == pytest.approx(expected)


def test_fleiss_kappa_text_labels_and_permutation():
    matrix = rating_matrix(3, raters=4, items=30, categories=3)
    labels = np.array(["no", "maybe", "yes"], dtype=object)
    as_text = labels[matrix.astype(int) - 1]
    assert fleiss_kappa(as_text) == pytest.approx(fleiss_kappa(matrix), abs=1e-12)
    # Rater order is irrelevant; a perfect table gives 1.
    assert fleiss_kappa(matrix[::-1]) == pytest.approx(fleiss_kappa(matrix), abs=1e-12)
    assert fleiss_kappa(np.tile([[1, 2, 3, 1]], (3, 1))) == 1.0


def test_fleiss_kappa_errors():
    with pytest.raises(ValueError, match="every rating is in one category"):
        fleiss_kappa([[1, 1, 1], [1, 1, 1]])
    with pytest.raises(ValueError, match="no item has ratings from two or more raters"):
        fleiss_kappa([[1, np.nan], [np.nan, 2]])
    with pytest.raises(ValueError, match="rows have different lengths"):
        fleiss_kappa([[1, 2, 3], [1, 2]])


def test_percent_agreement():
    assert percent_agreement([[1, 2, 3, 4], [1, 2, 3, 5]]) == 0.75
    # Three raters on one item, two agree: one agreeing pair of three.
    assert percent_agreement([[1], [1], [2]]) == pytest.approx(1 / 3)
    assert percent_agreement([[1, 1], [1, 2], [1, 2]], unanimous=True) == 0.5
    assert percent_agreement([["a", None], ["a", "b"]]) == 1.0  # the second item has one rating


def test_pairwise_cohen_kappa_matches_sklearn_per_pair(seed):
    matrix = rating_matrix(seed, raters=4, items=40, missing=0.15)
    result = pairwise_cohen_kappa(matrix, weights="quadratic")
    assert len(result.pairs) == 6
    for pair in result.pairs:
        shared = ~np.isnan(matrix[pair.first]) & ~np.isnan(matrix[pair.second])
        reference = cohen_kappa_score(matrix[pair.first, shared], matrix[pair.second, shared],
                                      weights="quadratic", labels=[1, 2, 3, 4, 5])
        assert pair.kappa == pytest.approx(reference, abs=1e-12)
        assert pair.n_items == shared.sum()
    assert result.mean == pytest.approx(np.mean([p.kappa for p in result.pairs]))


def test_pairwise_cohen_kappa_reports_skipped_pairs():
    matrix = np.array([[1, 2, 1, 2], [1, 2, 2, 2], [np.nan, np.nan, np.nan, 1]])
    result = pairwise_cohen_kappa(matrix)
    assert [(p.first, p.second) for p in result.pairs] == [(0, 1)]
    assert {(i, j) for i, j, _ in result.skipped} == {(0, 2), (1, 2)}
    with pytest.raises(ValueError, match="no pair of raters has a defined kappa"):
        pairwise_cohen_kappa([[1, 1, 1], [1, 1, 1]])


def test_strong_agreement_removes_idk_items():
    matrix = [
        [1, 2, "idk", 3, 1],
        [1, 2, 3, 3, 2],
        [1, 3, 3, "idk", None],
    ]
    result = strong_agreement(matrix)
    assert result.n_removed == 2
    assert result.n_items == 3
    kept = np.array([[1, 2, 1], [1, 2, 2], [1, 3, np.nan]])
    assert result.percent_agreement == pytest.approx(percent_agreement(kept))
    assert result.kappa == pytest.approx(fleiss_kappa(kept))


def test_strong_agreement_several_markers_and_undefined_kappa():
    result = strong_agreement([["yes", "I don't know", "yes"], ["yes", "no", "yes"]],
                              idk={"idk", "I don't know"})
    assert (result.n_items, result.n_removed, result.percent_agreement) == (2, 1, 1.0)
    assert result.kappa is None and "chance agreement is 1" in result.note
    with pytest.raises(ValueError, match="free of 'I don't know'"):
        strong_agreement([["idk", 1], ["idk", None]])
