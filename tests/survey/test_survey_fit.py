"""Ridge, alpha choice, threshold selection and the fitted-model file."""

from __future__ import annotations

import numpy as np
import pytest

from convoscope.analysis import roc_curve
from convoscope.survey import (
    FittedModel,
    choose_alpha,
    choose_threshold,
    fit_model,
    load_model,
    ridge_fit,
    save_model,
)


@pytest.mark.parametrize("alpha", [0.0, 0.1, 1.0, 25.0])
def test_ridge_matches_scikit_learn(alpha: float) -> None:
    linear_model = pytest.importorskip("sklearn.linear_model")
    rng = np.random.default_rng(7)
    x = rng.normal(size=(60, 3))
    y = x @ np.array([0.5, -1.0, 2.0]) + 0.3 + rng.normal(scale=0.1, size=60)
    weights, intercept = ridge_fit(x, y, alpha=alpha)
    reference = linear_model.Ridge(alpha=alpha).fit(x, y)
    np.testing.assert_allclose(weights, reference.coef_, rtol=1e-6, atol=1e-9)
    assert intercept == pytest.approx(reference.intercept_, abs=1e-9)


def test_ridge_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="alpha must be >= 0"):
        ridge_fit([[1.0], [2.0]], [1.0, 2.0], alpha=-1)
    with pytest.raises(ValueError, match="one row per target"):
        ridge_fit([[1.0], [2.0]], [1.0], alpha=1)
    with pytest.raises(ValueError, match="no missing values"):
        ridge_fit([[1.0], [np.nan]], [1.0, 2.0], alpha=1)


def test_choose_alpha_prefers_small_penalty_on_clean_linear_data() -> None:
    rng = np.random.default_rng(1)
    x = rng.uniform(size=(50, 3))
    y = x @ np.array([1.0, 2.0, 3.0])
    assert choose_alpha(x, y, alphas=(0.001, 100.0)) == 0.001
    # Pure noise: shrinking everything is best, and the larger alpha wins.
    assert choose_alpha(x, rng.normal(size=50), alphas=(0.001, 1000.0)) == 1000.0


def test_threshold_at_eer_on_a_hand_computed_roc() -> None:
    # Scores 0.9 (acc), 0.6 (rej), 0.5 (acc), 0.2 (rej). ROC points (fpr, tpr): (0,0), (0,.5)@0.9,
    # (.5,.5)@0.6, (.5,1)@0.5, (1,1)@0.2. fpr = 1 - tpr is crossed at (.5,.5): threshold 0.6.
    accepted, scores = [1, 0, 1, 0], [0.9, 0.6, 0.5, 0.2]
    fpr, tpr, thresholds = roc_curve(accepted, scores)
    np.testing.assert_allclose(fpr, [0, 0, 0.5, 0.5, 1])
    np.testing.assert_allclose(tpr, [0, 0.5, 0.5, 1, 1])
    assert choose_threshold(accepted, scores) == (0.6, "eer")
    # No false accepts allowed: only 0.9 qualifies.
    assert choose_threshold(accepted, scores, target_fpr=0.0) == (0.9, "fpr<=0")
    assert choose_threshold(accepted, scores, target_fpr=0.5) == (0.5, "fpr<=0.5")


def _labelled(n: int = 40) -> tuple[np.ndarray, list[str]]:
    rng = np.random.default_rng(3)
    x = rng.uniform(size=(n, 3))
    quality = x @ np.array([0.2, 0.5, 0.3])
    labels = ["accept" if q > 0.55 else "hold" if q > 0.45 else "reject" for q in quality]
    return x, labels


def test_fit_model_separates_labels_and_round_trips(tmp_path) -> None:
    x, labels = _labelled()
    fitted = fit_model(x, labels, aggregate="ridge")
    assert fitted.auc_in_sample is not None and fitted.auc_in_sample > 0.9
    assert fitted.auc_cv is not None and fitted.labelled == 40
    assert fitted.weights[1] > fitted.weights[0]  # relevance carries the most weight here
    path = tmp_path / "fitted.json"
    save_model(fitted, path)
    loaded = load_model(path)
    assert loaded == fitted
    raw = float(x[0] @ fitted.weights + fitted.intercept)
    assert loaded.predict(x[0]) == pytest.approx(min(1.0, max(0.0, raw)))


def test_fit_model_errors_state_the_rule(tmp_path) -> None:
    x, _ = _labelled(6)
    with pytest.raises(ValueError, match="accept, hold or reject"):
        fit_model(x, ["accept", "maybe", "reject", "accept", "hold", "reject"])
    with pytest.raises(ValueError, match="both accepted and not-accepted"):
        fit_model(x, ["reject"] * 6)
    with pytest.raises(ValueError, match="labels .* or overall ratings"):
        fit_model(x)
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(ValueError, match="bad.json: not a fitted survey model"):
        load_model(bad)
    with pytest.raises(FileNotFoundError):
        load_model(tmp_path / "missing.json")


def test_fitted_model_is_frozen() -> None:
    fitted = FittedModel(accept_at=0.5, reject_below=0.5)
    with pytest.raises(ValueError):
        fitted.accept_at = 0.1  # type: ignore[misc]
