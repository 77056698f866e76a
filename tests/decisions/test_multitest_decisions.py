"""Issue 36, observation 5: in a large table a corrected permutation p can still reach
significance (the permutation count grows with the family), and resample counts are honoured."""

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from convoscope.analysis import Rating, metaeval_study
from convoscope.analysis._multitest import permutations_for, pvalue_floor


def _table(rng, criteria=6, judges=6, n=60):
    """On every criterion judge 0 copies people's mean closely and the others are pure noise:
    every "worse than the best" test is truly significant."""
    rows = []
    for c in range(criteria):
        truth = rng.normal(size=n)
        for i in range(n):
            for h in range(3):
                rows.append(Rating(f"i{i}", f"c{c}", f"human:h{h}", float(truth[i] + rng.normal(0, 0.3))))
            rows.append(Rating(f"i{i}", f"c{c}", "model:j0", float(truth[i] + rng.normal(0, 0.1))))
            rows.extend(Rating(f"i{i}", f"c{c}", f"model:j{j}", float(rng.normal()))
                        for j in range(1, judges))
    return rows


def test_a_large_table_can_still_mark_a_permutation_test_significant():
    study = metaeval_study(_table(np.random.default_rng(0)), n_resamples=20, permutations=1000,
                           alt_epsilon=None)
    family = 6 * 5
    assert study.permutations == permutations_for(1000, family, 0.05) > 1000
    assert pvalue_floor(1000, family) > 0.05  # what the old count could show at best
    tested = [r for r in study.records() if r["permutation_p"] is not None]
    adjusted, raw = [r["permutation_p_adjusted"] for r in tested], [r["permutation_p"] for r in tested]
    assert len(adjusted) == family and max(adjusted) < 0.05
    assert adjusted == pytest.approx(list(multipletests(raw, method="holm")[1]), abs=1e-12)


def test_a_small_table_keeps_the_permutations_asked_for():
    assert permutations_for(1000, 3, 0.05) == 1000 and permutations_for(0, 50, 0.05) == 0


def test_system_level_resamples_are_honoured():
    rng = np.random.default_rng(1)
    rows = []
    for s in range(5):
        for i in range(10):
            truth = s + rng.normal()
            rows.extend(Rating(f"s{s}:{i}", "q", f"human:h{h}", float(truth + rng.normal()), system=f"s{s}")
                        for h in range(3))
            rows.append(Rating(f"s{s}:{i}", "q", "model:j", float(truth + rng.normal()), system=f"s{s}"))
    study = metaeval_study(rows, n_resamples=1500, permutations=0, system=True, alt_epsilon=None)
    assert study.systems[0].spearman.n_resamples == 1500


def test_the_ceiling_interval_uses_the_resamples_asked_for():
    from convoscope.analysis import metaeval

    rng = np.random.default_rng(2)
    rows = []
    for i in range(30):
        truth = rng.normal()
        rows.extend(Rating(f"i{i}", "q", f"human:h{h}", float(np.round(3 + truth + rng.normal(0, 0.5))))
                    for h in range(3))
        rows.append(Rating(f"i{i}", "q", "model:j", float(truth)))
    (row,) = metaeval(rows, n_resamples=1200, alt_epsilon=None)
    assert row.humans.alpha_ci.n_resamples == 1200
