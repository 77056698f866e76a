"""Invariants of the agreement statistics, checked on generated rating tables (issue 12)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from convoscope.analysis import (
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
    pairwise_correlation,
    percent_agreement,
)

FAST = settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def tables(draw, *, missing=True, min_raters=2):
    raters = draw(st.integers(min_raters, 5))
    items = draw(st.integers(4, 25))
    levels = draw(st.integers(2, 5))
    cells = draw(st.lists(st.integers(0, levels - 1), min_size=raters * items, max_size=raters * items))
    table = np.array(cells, dtype=float).reshape(raters, items)
    if missing:
        holes = draw(st.lists(st.booleans(), min_size=raters * items, max_size=raters * items))
        table[np.array(holes).reshape(raters, items) & (np.arange(raters) > 1)[:, None]] = np.nan
    return table


def _defined(statistic, *tables, **options):
    try:
        return statistic(*tables, **options)
    except ValueError:
        assume(False)


@FAST
@given(tables(), st.randoms(use_true_random=False))
def test_alpha_and_fleiss_ignore_the_order_of_raters_and_items(table, rng):
    raters, items = list(range(table.shape[0])), list(range(table.shape[1]))
    rng.shuffle(raters)
    rng.shuffle(items)
    shuffled = table[raters][:, items]
    for level in ("nominal", "ordinal", "interval"):
        alpha = _defined(krippendorff_alpha, table, level=level)
        assert krippendorff_alpha(shuffled, level=level) == pytest.approx(alpha, abs=1e-12)
    kappa = _defined(fleiss_kappa, table)
    assert fleiss_kappa(shuffled) == pytest.approx(kappa, abs=1e-12)
    assert percent_agreement(shuffled) == pytest.approx(percent_agreement(table), abs=1e-12)


@FAST
@given(tables(), st.permutations(["x", "y", "z", "v", "w"]))
def test_nominal_statistics_do_not_depend_on_the_label_names(table, names):
    named = np.array(names, dtype=object)[np.nan_to_num(table).astype(int)]
    relabelled = np.where(np.isnan(table), None, named)
    alpha = _defined(krippendorff_alpha, table)
    assert krippendorff_alpha(relabelled) == pytest.approx(alpha, abs=1e-12)
    assert fleiss_kappa(relabelled) == pytest.approx(_defined(fleiss_kappa, table), abs=1e-12)
    first, second = table[0], table[1]
    kappa = _defined(cohen_kappa, first, second)
    assert cohen_kappa(relabelled[0], relabelled[1]) == pytest.approx(kappa, abs=1e-12)


@FAST
@given(tables(), st.lists(st.floats(0.5, 10), min_size=5, max_size=5))
def test_ordinal_statistics_survive_any_increasing_relabelling(table, steps):
    scale = np.cumsum(steps)  # an increasing map of the levels 0..4
    relabelled = np.where(np.isnan(table), np.nan, scale[np.nan_to_num(table).astype(int)])
    alpha = _defined(krippendorff_alpha, table, level="ordinal")
    assert krippendorff_alpha(relabelled, level="ordinal") == pytest.approx(alpha, abs=1e-9)
    rho = _defined(pairwise_correlation, table)
    assert pairwise_correlation(relabelled) == pytest.approx(rho, abs=1e-9)


@FAST
@given(st.integers(2, 6), st.lists(st.integers(1, 5), min_size=3, max_size=30))
def test_identical_raters_agree_perfectly(raters, row):
    assume(len(set(row)) > 1)
    table = np.tile(np.array(row, dtype=float), (raters, 1))
    assert percent_agreement(table) == 1.0
    assert fleiss_kappa(table) == pytest.approx(1.0)
    for level in ("nominal", "ordinal", "interval", "ratio"):
        assert krippendorff_alpha(table, level=level) == pytest.approx(1.0)
    assert cohen_kappa(table[0], table[1], weights="quadratic") == pytest.approx(1.0)
    assert pairwise_correlation(table) == pytest.approx(1.0)
