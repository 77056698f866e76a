"""Krippendorff's alpha against the krippendorff package and Krippendorff's own worked example."""

import krippendorff
import numpy as np
import pytest
from analysis_data import rating_matrix

from convoscope.analysis import krippendorff_alpha

nan = np.nan
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the example with 4 observers,
# 12 units, values 1-5 and missing data. Published: nominal 0.743, ordinal 0.815, interval 0.849,
# ratio 0.797.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]
PUBLISHED = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849, "ratio": 0.797}
LEVELS = list(PUBLISHED)


@pytest.mark.parametrize("level", LEVELS)
def test_published_worked_example(level):
    assert round(krippendorff_alpha(KRIPPENDORFF_2011, level=level), 3) == PUBLISHED[level]


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("missing", [0.0, 0.3])
def test_matches_krippendorff_package(seed, level, missing):
    matrix = rating_matrix(seed, raters=4, items=50, missing=missing)
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement=level)
    assert krippendorff_alpha(matrix, level=level) == pytest.approx(expected, abs=1e-12)


def test_text_labels_match_the_package_nominal_and_ordinal(seed):
    matrix = rating_matrix(seed, raters=3, items=40, categories=4, missing=0.2)
    scale = ["never", "rarely", "often", "always"]
    names = np.array([None, *scale], dtype=object)
    as_text = names[np.nan_to_num(matrix).astype(int)]
    as_strings = np.where(as_text == None, "nan", as_text).astype(str)  # noqa: E711 (the package's missing marker)
    nominal = krippendorff.alpha(reliability_data=as_strings, level_of_measurement="nominal")
    ordinal = krippendorff.alpha(reliability_data=as_strings, level_of_measurement="ordinal",
                                 value_domain=scale)
    assert krippendorff_alpha(as_text) == pytest.approx(nominal, abs=1e-12)
    assert krippendorff_alpha(as_text, level="ordinal", labels=scale) == pytest.approx(ordinal, abs=1e-12)
    assert krippendorff_alpha(as_text, level="ordinal", labels=scale) == pytest.approx(
        krippendorff_alpha(matrix, level="ordinal"), abs=1e-12)


def test_properties(seed):
    matrix = rating_matrix(seed, raters=3, items=30, missing=0.1)
    for level in LEVELS:
        assert krippendorff_alpha(matrix[::-1], level=level) == pytest.approx(
            krippendorff_alpha(matrix, level=level), abs=1e-12)
    perfect = np.tile(np.arange(1, 11, dtype=float), (3, 1))
    perfect[0, 0] = nan
    assert all(krippendorff_alpha(perfect, level=level) == pytest.approx(1.0) for level in LEVELS)
    # Nominal alpha ignores what the categories are called.
    shuffled = np.vectorize({1: 4, 2: 1, 3: 5, 4: 2, 5: 3}.get)(np.nan_to_num(matrix, nan=1)).astype(float)
    shuffled[np.isnan(matrix)] = nan
    assert krippendorff_alpha(shuffled) == pytest.approx(krippendorff_alpha(matrix), abs=1e-12)
    # Interval alpha is unchanged by a linear rescaling of the scale.
    assert krippendorff_alpha(matrix * 20 + 7, level="interval") == pytest.approx(
        krippendorff_alpha(matrix, level="interval"), abs=1e-12)


def test_items_rated_once_drop_out():
    matrix = np.array(KRIPPENDORFF_2011)
    with_singletons = np.hstack([matrix, [[5], [nan], [nan], [nan]]])
    assert krippendorff_alpha(with_singletons) == pytest.approx(krippendorff_alpha(matrix), abs=1e-12)


def test_errors_state_the_rule():
    with pytest.raises(ValueError, match="no disagreement is expected by chance"):
        krippendorff_alpha([[2, 2, 2], [2, 2, nan]])
    with pytest.raises(ValueError, match="no item has ratings from two or more raters"):
        krippendorff_alpha([[1, nan], [nan, 2]])
    with pytest.raises(ValueError, match="level must be one of"):
        krippendorff_alpha([[1, 2], [1, 2]], level="likert")
    with pytest.raises(ValueError, match="the interval level needs numeric ratings"):
        krippendorff_alpha([["a", "b"], ["a", "a"]], level="interval")
    with pytest.raises(ValueError, match="ordinal text labels need labels"):
        krippendorff_alpha([["a", "b"], ["a", "a"]], level="ordinal")
    with pytest.raises(ValueError, match="expected a 2-D array"):
        krippendorff_alpha([1, 2, 3])
