"""Issue 38, observation 4 (the interval): the line a survey run prints about its decision rule
gives the cross-validated AUC beside answer length's, each with a 95% interval, and says "mostly
answer length" only when the intervals say so.

The shipped model keeps its AUCs and class counts, not its out-of-fold scores, so the interval is
Hanley and McNeil's (1982) from the AUC and the counts. It is pinned to a percentile bootstrap of
scikit-learn's roc_auc_score (fixed seed) on simulated scores with the shipped model's counts."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from convoscope.survey import FeatureSetScore, FittedModel, describe_shipped, shipped_model
from convoscope.survey._interval import class_counts, compare_with_length, hanley_mcneil_interval


def _bootstrap(n_pos: int, n_neg: int, separation: float, seed: int) -> tuple[float, float, float]:
    rng = np.random.default_rng(seed)
    labels = np.r_[np.ones(n_pos, bool), np.zeros(n_neg, bool)]
    scores = np.r_[rng.normal(separation, 1, n_pos), rng.normal(0, 1, n_neg)]
    found = []
    for _ in range(2000):
        pos = rng.choice(np.flatnonzero(labels), n_pos)  # stratified, as the counts are fixed
        neg = rng.choice(np.flatnonzero(~labels), n_neg)
        pick = np.r_[pos, neg]
        found.append(roc_auc_score(labels[pick], scores[pick]))
    low, high = np.percentile(found, [2.5, 97.5])
    return float(roc_auc_score(labels, scores)), float(low), float(high)


@pytest.mark.parametrize(("n_pos", "n_neg", "separation", "seed"),
                         [(53, 87, 1.6, 0), (53, 87, 0.9, 1), (200, 300, 1.2, 2)])
def test_the_hanley_mcneil_interval_matches_a_bootstrap_of_sklearn(n_pos, n_neg, separation, seed) -> None:
    auc, low, high = _bootstrap(n_pos, n_neg, separation, seed)
    found_low, found_high = hanley_mcneil_interval(auc, n_pos, n_neg)
    assert found_low == pytest.approx(low, abs=0.02) and found_high == pytest.approx(high, abs=0.02)


def test_the_shipped_models_class_counts_are_its_own() -> None:
    model = shipped_model()
    accepted, others = class_counts(model)
    assert accepted + others == model.labelled == 140
    # The in-sample ROC steps by one answer of each class: its grid is the counts.
    assert round(1 / min(np.diff(sorted(set(model.roc_fpr))))) == others
    assert round(1 / min(np.diff(sorted(set(model.roc_tpr))))) == accepted


def test_the_printed_line_gives_both_intervals_and_the_paired_difference() -> None:
    # The shipped model keeps its out-of-fold scores since the DeLong change: the line pairs them.
    line = describe_shipped(shipped_model())
    assert line.count("95% interval") == 3 and "DeLong" in line and "paired p" in line


def test_a_model_saved_without_out_of_fold_scores_keeps_the_hanley_mcneil_line() -> None:
    from convoscope.survey._interval import METHOD, method

    old = shipped_model().model_copy(update={"out_of_fold": (), "out_of_fold_accepted": ()})
    assert method(old) == METHOD and "Hanley" in METHOD
    assert describe_shipped(old).count("95% interval") == 2


def _model(rule_auc: float, length_auc: float, accepted: int, others: int) -> FittedModel:
    length = FeatureSetScore(name="length", features=("log_words",), aggregate="ridge", auc_cv=length_auc,
                             eer_cv=0.3, auc_in_sample=length_auc, eer_in_sample=0.3)
    return FittedModel(aggregate="ridge", accept_at=0.5, reject_below=0.5, auc_cv=rule_auc, eer_cv=0.2,
                       labelled=accepted + others, n_accepted=accepted, n_not_accepted=others,
                       compared=(length,), source="simulated", fitted_for="embedded judge (test)")


def test_length_inside_the_rules_interval_is_mostly_length() -> None:
    # 40 answers: 0.87 against 0.80 differ by more than the old fixed margin (0.05), yet the
    # interval of 0.87 on 40 answers reaches well below 0.80: they cannot be told apart.
    verdict = compare_with_length(_model(0.87, 0.80, 16, 24))
    assert "mostly answer length" in verdict


def test_many_answers_can_show_the_rule_beats_length_by_a_little() -> None:
    # 4000 answers: 0.87 against 0.83 (within the old margin, so it used to say "mostly length"),
    # but the intervals no longer overlap.
    verdict = compare_with_length(_model(0.87, 0.83, 1600, 2400))
    assert "mostly answer length" not in verdict and "better than answer length" in verdict


def test_overlapping_intervals_without_length_inside_say_they_cannot_tell() -> None:
    verdict = compare_with_length(_model(0.90, 0.80, 53, 87))
    assert "mostly answer length" not in verdict and "better than answer length" not in verdict
    assert "cannot tell" in verdict


def test_the_report_of_a_run_shows_the_intervals_too() -> None:
    from convoscope.survey import SurveyResult, render_survey_report

    model = shipped_model()
    page = render_survey_report(SurveyResult(answers=(), aggregation="sum", accept_at=model.accept_at,
                                             reject_below=model.reject_below, fitted=model))
    # Both AUCs and their paired difference, each with its interval.
    assert page.count("95% interval") == 3 and "mostly answer length" in page and "DeLong" in page
