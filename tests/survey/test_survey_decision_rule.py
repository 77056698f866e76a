"""Issue 13, observation 1: seed 000's decision rule.

Ridge weights are fitted to experts' overall-quality ratings, the accept threshold sits at the
EER of the chosen aggregate (Sum by default) with hold counted as not accepted, a hold band comes
from two ROC operating points and can never make a class unreachable, scores are clipped to 0-1,
and AUC / EER are cross-validated beside the in-sample figures."""

from __future__ import annotations

import numpy as np
import pytest

from convoscope.analysis import equal_error_rate, roc_auc
from convoscope.survey import (
    aggregate_scores,
    cross_validated_scores,
    decide,
    fit_model,
    hold_band,
    ridge_fit,
)


def _survey(n: int = 40, seed: int = 5) -> tuple[np.ndarray, list[str], np.ndarray]:
    """Dimension scores, accept/hold/reject labels and overall ratings (0-4) that disagree a
    little, as experts do."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=(n, 3))
    quality = x @ np.array([0.2, 0.5, 0.3]) + rng.normal(scale=0.08, size=n)
    overall = np.clip(np.round(quality * 5 - 0.3), 0, 4)
    labels = ["accept" if q > 0.6 else "hold" if q > 0.5 else "reject" for q in quality]
    return x, labels, overall


def test_ridge_is_fitted_to_the_experts_overall_ratings_not_to_decision_grades() -> None:
    x, labels, overall = _survey()
    fitted = fit_model(x, labels, overall=overall, aggregate="ridge")
    weights, intercept = ridge_fit(x, overall / 4, alpha=fitted.alpha)
    np.testing.assert_allclose(fitted.weights, weights)
    assert fitted.intercept == pytest.approx(intercept)
    assert "overall quality" in fitted.target


def test_the_accept_threshold_is_the_eer_of_the_sum_score_with_hold_as_reject() -> None:
    x, labels, overall = _survey()
    fitted = fit_model(x, labels, overall=overall)
    assert fitted.aggregate == "sum"
    accepted = [label == "accept" for label in labels]  # hold is not accepted (seed 000, 5.2)
    sum_score = x.mean(axis=1)
    assert fitted.accept_at == pytest.approx(equal_error_rate(accepted, sum_score).threshold)
    assert fitted.reject_below == fitted.accept_at  # no band unless asked
    assert fitted.auc_in_sample == pytest.approx(roc_auc(accepted, sum_score))


def test_the_fitted_accept_cut_is_always_reachable_so_some_answers_are_accepted() -> None:
    # The observed failure: a hold band laid on top of the EER threshold put the accept cut
    # above the highest score any answer reached, so nothing could ever be accepted.
    for seed in range(20):
        x, labels, overall = _survey(seed=seed)
        for aggregate in ("sum", "ridge"):
            fitted = fit_model(x, labels, overall=overall, aggregate=aggregate,
                               hold_far=0.05, hold_frr=0.05)
            scores = aggregate_scores(x, aggregate=aggregate, weights=fitted.weights,
                                      intercept=fitted.intercept)
            decisions = {decide(s, accept_at=fitted.accept_at, reject_below=fitted.reject_below)[0]
                         for s in scores}
            assert {"accept", "reject"} <= decisions, (seed, aggregate)
            assert fitted.reject_below <= fitted.accept_at <= scores.max()


def test_the_hold_band_comes_from_two_operating_points_on_the_roc() -> None:
    # Scores and labels by hand: accepted answers 0.9 0.8 0.6 0.45; the rest 0.7 0.5 0.3 0.2.
    accepted = [1, 1, 1, 1, 0, 0, 0, 0]
    scores = [0.9, 0.8, 0.6, 0.45, 0.7, 0.5, 0.3, 0.2]
    eer = equal_error_rate(accepted, scores).threshold
    upper, lower, rule, notes = hold_band(accepted, scores, accept_at=eer, hold_far=0.0, hold_frr=0.0)
    assert upper == 0.8  # the lowest score with no false accept (0.7 is a reject)
    assert lower == 0.45  # the highest score with no false reject
    assert lower <= eer <= upper and "FRR<=0 " in rule and notes == ()


def test_overall_scores_are_clipped_to_the_unit_interval() -> None:
    x, labels, overall = _survey()
    fitted = fit_model(x, labels, overall=overall, aggregate="ridge")
    assert fitted.predict([5.0, 5.0, 5.0]) == 1.0 and fitted.predict([-5.0, -5.0, -5.0]) == 0.0
    outside = fitted.model_copy(update={"intercept": 0.9, "weights": (1.0, 1.0, 1.0)})
    assert outside.predict([0.5, 0.5, 0.5]) == 1.0


def test_auc_is_cross_validated_and_reported_beside_the_in_sample_figure() -> None:
    x, labels, overall = _survey(n=60)
    fitted = fit_model(x, labels, overall=overall, aggregate="ridge", folds=5)
    accepted = np.array([label == "accept" for label in labels])
    out_of_fold = cross_validated_scores(x, overall / 4, accepted, folds=5)
    assert fitted.auc_cv == pytest.approx(roc_auc(accepted, out_of_fold))
    assert fitted.cv_folds == 5 and "cross-validation" in fitted.cv_note
    # Noise features: in-sample AUC flatters, cross-validated AUC does not.
    rng = np.random.default_rng(0)
    noise = rng.uniform(size=(60, 3))
    fitted = fit_model(noise, labels, overall=overall, aggregate="ridge", alphas=(0.0,))
    assert fitted.auc_cv < fitted.auc_in_sample


def test_accept_labels_alone_or_ratings_alone_are_enough() -> None:
    x, labels, overall = _survey()
    from_labels = fit_model(x, labels, aggregate="ridge")
    assert "acceptance" in from_labels.target and from_labels.positives == "label == accept"
    from_ratings = fit_model(x, overall=overall, accept_min=3)
    assert from_ratings.positives == "overall >= 3"
