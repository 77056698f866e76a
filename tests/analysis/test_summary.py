"""agreement_table: one row per criterion (and group), undefined statistics as notes."""

import numpy as np
import pytest

from convoscope.analysis import (
    Rating,
    agreement_table,
    fleiss_kappa,
    krippendorff_alpha,
    pairwise_cohen_kappa,
    percent_agreement,
)


def _ratings():
    values = {
        "a": [1, 2, 3, 4, 5, 3, 2, "I don't know"],
        "b": [1, 2, 3, 5, 5, 3, 1, 4],
        "c": [2, 2, 3, 4, None, 3, 2, 4],
    }
    ratings = [Rating(f"i{i}", "overall", rater, value, language="en" if i < 4 else "ko")
               for rater, row in values.items() for i, value in enumerate(row)]
    ratings += [Rating(f"i{i}", "safe", rater, "yes") for rater in "ab" for i in range(3)]
    return ratings, values


def test_rows_match_the_single_statistics():
    ratings, values = _ratings()
    rows = agreement_table(ratings, level="ordinal")
    assert [row.criterion for row in rows] == ["overall", "safe"]
    overall = rows[0]
    matrix = np.array([[np.nan if v in (None, "I don't know") else v for v in row]
                       for row in values.values()])
    assert (overall.n_items, overall.n_raters) == (8, 3)
    assert overall.percent_agreement == pytest.approx(percent_agreement(matrix))
    assert overall.fleiss_kappa == pytest.approx(fleiss_kappa(matrix))
    assert overall.krippendorff_alpha == pytest.approx(krippendorff_alpha(matrix, level="ordinal"))
    assert overall.mean_cohen_kappa == pytest.approx(
        pairwise_cohen_kappa(matrix, weights="linear", labels=[1, 2, 3, 4, 5]).mean)
    assert overall.strong.n_removed == 1 and overall.strong.n_items == 7


def test_degenerate_criterion_keeps_its_row_with_notes():
    ratings, _ = _ratings()
    safe = agreement_table(ratings)[1]
    assert safe.percent_agreement == 1.0
    assert safe.fleiss_kappa is None and safe.krippendorff_alpha is None
    assert any("Fleiss' kappa" in note and "one category" in note for note in safe.notes)


def test_by_language():
    ratings, _ = _ratings()
    rows = agreement_table(ratings, by="language", level="interval")
    # An item's language is known from any of its ratings, so "safe" items i0-i2 are English too.
    assert [(row.criterion, row.group) for row in rows] == [
        ("overall", "en"), ("overall", "ko"), ("safe", "en")]
    assert rows[0].cohen_weights == "quadratic" and rows[0].n_items == 4
    with pytest.raises(ValueError, match="level must be one of"):
        agreement_table(ratings, level="likert")
