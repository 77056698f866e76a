"""Calibrating a judge on people: monotone, pinned to scikit-learn, measured out of fold."""

import numpy as np
import pytest

from convoscope.errors import ConfigError
from convoscope.estimate import Calibration, cross_validate, fit_isotonic


def test_isotonic_fit_equals_scikit_learn():
    sklearn_isotonic = pytest.importorskip("sklearn.isotonic")
    rng = np.random.default_rng(0)
    x = rng.integers(1, 6, 200).astype(float)
    y = np.clip(np.round(0.5 * x + rng.normal(0, 1, 200)), 0, 4)
    ours = fit_isotonic(x, y)
    reference = sklearn_isotonic.IsotonicRegression(out_of_bounds="clip").fit(x, y)
    grid = np.linspace(0, 7, 57)
    assert ours.apply(grid) == pytest.approx(reference.predict(grid), abs=1e-12)


def test_calibration_is_monotone_and_clipped_to_the_scale():
    rng = np.random.default_rng(1)
    x = rng.normal(size=300)
    y = np.clip(np.round(2 + x + rng.normal(0, 2, 300)), 0, 4)
    calibration = fit_isotonic(x, y, scale=(0, 4))
    grid = np.linspace(-5, 5, 101)
    mapped = calibration.apply(grid)
    assert np.all(np.diff(mapped) >= 0)
    assert mapped.min() >= 0 and mapped.max() <= 4


def test_calibration_round_trips_through_a_dict():
    calibration = fit_isotonic([1, 2, 3, 4], [0, 1, 1, 4], name="isotonic:judge->overall", scale=(0, 4))
    again = Calibration.from_dict(calibration.to_dict())
    assert again == calibration
    assert again.apply([2.5]) == pytest.approx([1.0])


def test_calibration_repairs_a_judge_on_the_wrong_scale_out_of_fold():
    """A judge that says 5–10 where people say 0–4: accuracy rises only after calibration."""
    rng = np.random.default_rng(2)
    human = rng.integers(0, 5, 400).astype(float)
    judge = human + 5 + rng.normal(0, 0.4, 400)
    report = cross_validate(judge, human, levels=range(5), groups=np.where(np.arange(400) % 2, "en", "ko"))
    assert report.before.accuracy < 0.25  # only the items people rated 4 (every score rounds to 4)
    assert report.after.accuracy > 0.7
    assert report.after.qwk > report.before.qwk
    assert set(report.groups) == {"en", "ko"}
    assert report.groups["ko"][1].accuracy > 0.6


def test_calibration_needs_paired_items():
    with pytest.raises(ConfigError, match="pair up"):
        fit_isotonic([1, 2, 3], [1, 2])
    with pytest.raises(ConfigError, match="at least 2"):
        fit_isotonic([1, np.nan], [1, 2])


def test_people_means_between_levels_are_rounded_for_kappa_and_accuracy():
    rng = np.random.default_rng(4)
    human = rng.integers(1, 6, 300) + rng.choice([0.0, 1 / 3, -1 / 3], 300)  # means of 3 raters
    judge = human + rng.normal(0, 0.2, 300)
    report = cross_validate(judge, human, levels=range(1, 6))
    assert report.before.qwk is not None and report.before.qwk > 0.8
    assert report.before.accuracy > 0.6
