"""Prediction-powered inference, pinned to the ppi-python reference and checked by simulation."""

import numpy as np
import pytest

from convoscope.errors import ConfigError
from convoscope.estimate import power_tuning_lambda, ppi_difference, ppi_mean


def _study(rng, n=80, big_n=800, bias=0.7, noise=0.8):
    """Human scores on a 0–4 scale and a judge that is biased upwards and noisy."""
    levels = np.arange(5)
    probabilities = np.array([0.1, 0.2, 0.3, 0.25, 0.15])
    truth = (levels * probabilities).sum()
    y_all = rng.choice(levels, size=n + big_n, p=probabilities).astype(float)
    yhat_all = np.clip(0.6 * y_all + bias + rng.normal(0, noise, n + big_n), 0, 4)
    return y_all[:n], yhat_all[:n], yhat_all[n:], truth


@pytest.fixture
def reference():
    return pytest.importorskip("ppi_py")


@pytest.mark.parametrize("lam", [None, 1.0, 0.0, 0.37])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ppi_mean_equals_the_reference_implementation(reference, lam, seed):
    y, yhat, yhat_u, _ = _study(np.random.default_rng(seed))
    ours = ppi_mean(y, yhat, yhat_u, confidence=0.95, lam=lam, interval="normal")
    point = reference.ppi_mean_pointestimate(y, yhat, yhat_u, lam=lam)
    low, high = reference.ppi_mean_ci(y, yhat, yhat_u, alpha=0.05, lam=lam)
    assert ours.value == pytest.approx(float(np.squeeze(point)), abs=1e-9)
    assert ours.ci[0] == pytest.approx(float(np.squeeze(low)), abs=1e-9)
    assert ours.ci[1] == pytest.approx(float(np.squeeze(high)), abs=1e-9)


def test_classical_interval_equals_the_reference_at_lambda_zero(reference):
    y, yhat, yhat_u, _ = _study(np.random.default_rng(5))
    ours = ppi_mean(y, yhat, yhat_u, lam=0.0, interval="normal")
    low, high = reference.ppi_mean_ci(y, yhat, yhat_u, alpha=0.05, lam=0.0)
    assert ours.human_only_ci == pytest.approx((float(np.squeeze(low)), float(np.squeeze(high))), abs=1e-9)
    assert ours.value == pytest.approx(y.mean())


def test_power_tuning_equals_the_reference_lambda(reference):
    from ppi_py.ppi import _calc_lam_glm

    y, yhat, yhat_u, _ = _study(np.random.default_rng(3))
    point = y.mean()  # the centring cancels; any constant gives the same lambda
    expected = _calc_lam_glm((y - point)[:, None], (yhat - point)[:, None], (yhat_u - point)[:, None],
                             np.eye(1), clip=True)
    assert power_tuning_lambda(y, yhat, yhat_u) == pytest.approx(float(expected), abs=1e-12)


def test_intervals_cover_the_truth_in_simulated_studies_with_a_biased_judge():
    """≥ 1,000 simulated studies: the nominal 95 % interval must cover the true mean ≥ 94 %."""
    rng = np.random.default_rng(2026)
    studies = 1200
    covered = covered_human = 0
    gained = []
    for _ in range(studies):
        y, yhat, yhat_u, truth = _study(rng)
        result = ppi_mean(y, yhat, yhat_u)
        covered += result.ci[0] <= truth <= result.ci[1]
        covered_human += result.human_only_ci[0] <= truth <= result.human_only_ci[1]
        gained.append(result.effective_n / result.n_human)
    assert covered / studies >= 0.94
    assert covered_human / studies >= 0.93  # the classical interval, for comparison
    assert np.mean(gained) > 1.2  # an informative judge saves labels, biased or not


def test_a_useless_judge_costs_nothing_with_power_tuning():
    rng = np.random.default_rng(7)
    y = rng.integers(0, 5, 60).astype(float)
    noise_labelled, noise_unlabelled = rng.normal(size=60), rng.normal(size=600)
    result = ppi_mean(y, noise_labelled, noise_unlabelled)
    assert result.lam < 0.2
    assert result.width <= (result.human_only_ci[1] - result.human_only_ci[0]) * 1.05


def test_a_perfect_judge_gives_a_much_narrower_interval():
    rng = np.random.default_rng(8)
    y_all = rng.integers(0, 5, 1060).astype(float)
    result = ppi_mean(y_all[:60], y_all[:60], y_all[60:])
    assert result.lam == pytest.approx(1 / (1 + 60 / 1000), rel=0.05)
    assert result.effective_n > 10 * result.n_human


def test_difference_of_two_systems_combines_independent_intervals():
    rng = np.random.default_rng(9)
    a = ppi_mean(*_study(rng)[:3], interval="normal")
    b = ppi_mean(*_study(rng, bias=0.2)[:3], interval="normal")
    diff = ppi_difference(a, b)
    assert diff.value == pytest.approx(a.value - b.value)
    half = np.hypot(a.width / 2, b.width / 2)
    assert diff.ci == pytest.approx((diff.value - half, diff.value + half))


def test_bad_inputs_say_what_is_wrong():
    with pytest.raises(ConfigError, match="pair up"):
        ppi_mean([1, 2, 3], [1, 2], [1, 2])
    with pytest.raises(ConfigError, match="at least 2"):
        ppi_mean([1], [1], [1, 2])
    with pytest.raises(ConfigError, match="missing"):
        ppi_mean([1, np.nan], [1, 2], [1, 2])


def test_one_lambda_for_several_shares_equals_the_reference_overall_tuning(reference):
    rng = np.random.default_rng(11)
    labels = rng.integers(0, 3, 500)
    predicted = np.where(rng.random(500) < 0.7, labels, rng.integers(0, 3, 500))
    y, yhat = np.eye(3)[labels[:50]], np.eye(3)[predicted[:50]]
    yhat_u = np.eye(3)[predicted[50:]]
    lam = power_tuning_lambda(y, yhat, yhat_u)
    expected = reference.ppi_mean_pointestimate(y, yhat, yhat_u)  # "overall" tuning by default
    ours = [ppi_mean(y[:, k], yhat[:, k], yhat_u[:, k], lam=lam).value for k in range(3)]
    assert ours == pytest.approx(list(np.squeeze(expected)), abs=1e-9)
    assert sum(ours) == pytest.approx(1.0)
