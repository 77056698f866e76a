"""System-level intervals and run-vs-run agreement."""

import numpy as np
import pytest
from scipy import stats

from convoscope.analysis import run_agreement, system_bootstrap_ci, system_correlation
from convoscope.analysis._system import _row_correlations


@pytest.mark.parametrize(("method", "reference"), [("pearson", stats.pearsonr), ("spearman", stats.spearmanr),
                                                   ("kendall", stats.kendalltau)])
def test_row_correlations_equal_scipy_row_by_row(method, reference):
    rng = np.random.default_rng(3)
    x = np.round(rng.normal(size=(40, 6)), 1)
    y = np.round(x + rng.normal(size=(40, 6)), 1)
    x[0] = 1.0  # a constant row is undefined
    found = _row_correlations(x, y, method)
    assert np.isnan(found[0])
    expected = [reference(a, b)[0] for a, b in zip(x[1:], y[1:], strict=True)]
    assert found[1:] == pytest.approx(expected, abs=1e-12)


def test_system_interval_brackets_the_system_level_estimate():
    rng = np.random.default_rng(5)
    systems = np.repeat(list("abcdef"), 30)
    quality = np.repeat(rng.normal(size=6), 30)
    human = quality + rng.normal(scale=0.5, size=180)
    metric = quality + rng.normal(scale=0.5, size=180)
    result = system_bootstrap_ci(metric, human, systems, method="pearson", n_resamples=300, seed=1)
    expected = system_correlation(metric, human, systems, method="pearson").statistic
    assert result.estimate == pytest.approx(expected)
    assert result.low <= result.estimate <= result.high and result.n_items == 6
    again = system_bootstrap_ci(metric, human, systems, method="pearson", n_resamples=300, seed=1)
    assert (again.low, again.high) == (result.low, result.high)


def test_run_agreement_needs_three_shared_systems():
    with pytest.raises(ValueError, match="share 2 system"):
        run_agreement({"A": 1, "B": 2}, {"A": 1, "B": 3, "C": 2})
