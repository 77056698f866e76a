"""Issue 38: the survey run compares the rule's cross-validated AUC with answer length's on the
same answers, so the comparison is paired (DeLong, DeLong and Clarke-Pearson 1988) on the
out-of-fold scores the fit now keeps. Pinned to scikit-learn's AUC, to DeLong's placement values
computed here from their definition (every positive against every negative), to MLstatkit's
independent fast DeLong, and to simulated data whose right answer is known."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from convoscope.survey import compare_feature_sets, fit_model
from convoscope.survey._interval import compare_with_length, delong_paired, hanley_mcneil_interval, method


def _scores(rng: np.random.Generator, n_pos: int, n_neg: int, gain: float, *,
            length_signal: float = 1.0, noise: float = 0.5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Labels, a length-like score and a rule that is length plus ``gain`` more signal."""
    labels = np.r_[np.ones(n_pos, bool), np.zeros(n_neg, bool)]
    length = length_signal * labels + rng.normal(0, 1, labels.size)
    rule = length + gain * labels + rng.normal(0, noise, labels.size)
    return labels, rule, length


def _by_definition(labels: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Variance of AUC(a) - AUC(b) from DeLong's definition: psi over all positive-negative pairs."""
    rows = []
    for score in (a, b):
        pos, neg = score[labels][:, None], score[~labels][None, :]
        psi = (pos > neg) + 0.5 * (pos == neg)
        rows.append((psi.mean(axis=1), psi.mean(axis=0), psi.mean()))
    s10 = np.cov(np.vstack([rows[0][0], rows[1][0]]))
    s01 = np.cov(np.vstack([rows[0][1], rows[1][1]]))
    covariance = s10 / labels.sum() + s01 / (~labels).sum()
    return rows[0][2] - rows[1][2], covariance[0, 0] + covariance[1, 1] - 2 * covariance[0, 1]


def test_the_aucs_are_sklearns_and_the_variance_is_delongs_definition_with_ties() -> None:
    rng = np.random.default_rng(1)
    labels, rule, length = _scores(rng, 53, 87, 0.5)
    rule, length = np.round(rule, 1), np.round(length)  # ties inside and across classes
    found = delong_paired(labels, rule, length)
    assert found.auc_a == pytest.approx(roc_auc_score(labels, rule), abs=1e-12)
    assert found.auc_b == pytest.approx(roc_auc_score(labels, length), abs=1e-12)
    difference, variance = _by_definition(labels, rule, length)
    assert found.difference == pytest.approx(difference, abs=1e-12)
    se = (found.difference_interval[1] - found.difference) / 1.959963984540054
    assert se ** 2 == pytest.approx(variance, rel=1e-9)


def test_the_paired_test_matches_mlstatkits_delong() -> None:
    mlstatkit = pytest.importorskip("MLstatkit")
    rng = np.random.default_rng(2)
    labels, rule, length = _scores(rng, 40, 60, 0.4)
    found = delong_paired(labels, rule, length)
    z, p, *_ = mlstatkit.Delong_test(labels.astype(int), length, rule)  # its z is B - A
    assert found.z == pytest.approx(z, rel=1e-9) and found.p_value == pytest.approx(p, rel=1e-9)


def test_with_equal_true_aucs_the_paired_test_rejects_about_one_time_in_twenty() -> None:
    # Two noisy copies of one score: the same true AUC, strongly correlated.
    rng = np.random.default_rng(3)
    rejected, differences, ses = 0, [], []
    for _ in range(400):
        labels = np.r_[np.ones(53, bool), np.zeros(87, bool)]
        base = labels + rng.normal(0, 1, labels.size)
        a, b = base + rng.normal(0, 0.5, labels.size), base + rng.normal(0, 0.5, labels.size)
        found = delong_paired(labels, a, b)
        rejected += found.p_value < 0.05
        differences.append(found.difference)
        ses.append((found.difference_interval[1] - found.difference) / 1.959963984540054)
    assert 0.02 <= rejected / 400 <= 0.085
    # The standard error it reports is the spread the difference really has.
    assert np.mean(ses) == pytest.approx(np.std(differences), rel=0.15)


def test_pairing_finds_a_real_gain_that_unpaired_intervals_cannot_show() -> None:
    rng = np.random.default_rng(4)
    paired_found = unpaired_found = 0
    for _ in range(100):
        labels, rule, length = _scores(rng, 53, 87, 0.35, noise=0.3)
        found = delong_paired(labels, rule, length)
        paired_found += found.difference_interval[0] > 0
        rule_interval = hanley_mcneil_interval(found.auc_a, 53, 87)
        length_interval = hanley_mcneil_interval(found.auc_b, 53, 87)
        unpaired_found += rule_interval[0] > length_interval[1]
    assert paired_found >= 60 and unpaired_found <= 10


def _fitted(seed: int, gain: float):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    labels, _, _ = _scores(rng, 60, 90, 0.0)
    log_words = labels * 1.0 + rng.normal(0, 1, labels.size)
    judge = gain * labels + rng.normal(0, 1, labels.size)
    columns = {"log_words": log_words, "effort": judge, "relevance": judge + rng.normal(0, 0.2, labels.size),
               "completeness": judge + rng.normal(0, 0.2, labels.size)}
    named = ["accept" if label else "reject" for label in labels]
    features = ("effort", "relevance", "completeness", "log_words")
    fitted = fit_model(np.column_stack([columns[f] for f in features]), named, aggregate="ridge",
                       features=features)
    compared = compare_feature_sets(columns, named, sets={"length": ("log_words",)})
    return fitted.model_copy(update={"compared": compared})


def test_a_fit_keeps_out_of_fold_scores_and_the_run_compares_them_paired() -> None:
    fitted = _fitted(5, gain=1.5)
    assert len(fitted.out_of_fold) == fitted.labelled == 150
    found = roc_auc_score(fitted.out_of_fold_accepted, fitted.out_of_fold)
    assert found == pytest.approx(fitted.auc_cv, abs=1e-4)
    assert "DeLong" in method(fitted)
    verdict = compare_with_length(fitted)
    assert "paired p" in verdict and "does better than answer length alone" in verdict


def test_a_judge_that_adds_nothing_is_called_mostly_answer_length() -> None:
    verdict = compare_with_length(_fitted(6, gain=0.0))
    assert "mostly answer length" in verdict and "does better than answer length" not in verdict
